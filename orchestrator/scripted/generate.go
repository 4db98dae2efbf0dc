package scripted

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// output is what a script wants the model to say next.
type output struct {
	Reasoning string
	Content   string
	Calls     []call
	// Delay is extra time the response takes (the stall script).
	Delay time.Duration
	// Garble makes the response fail after it was generated, as
	// llama-server does when its parser rejects the output (invalid
	// UTF-8): HTTP 500 without content, usage or timings; streamed, the
	// deltas and then an in-band error event, no [DONE]. The tokens are
	// counted in /metrics like a success's.
	Garble bool
}

// garbleMessage is llama-server's error text for output its parser rejects
// (orchestrator/model/testdata/llama-server/responses/fault_500_nonstream.json).
const garbleMessage = "The model produced output that does not match the expected peg-native format"

type call struct {
	Name string
	Args string
}

// scriptError is an HTTP error a script answers with instead of a response.
type scriptError struct {
	status int
	body   apiErrorBody
	// retryAfter is sent as the Retry-After header when set.
	retryAfter string
}

// Token kinds of a generated sequence.
const (
	tokReasoning = iota
	tokContent
	tokArgs   // a tool call's arguments, streamed as fragments
	tokSyntax // tool-call syntax: generated and counted, never sent
)

type token struct {
	kind int
	text string
	call int // index of the tool call (tokArgs, tokSyntax)
}

// generation is one response, token by token, as the emulated model
// produced it.
type generation struct {
	tokens []token
	calls  []generatedCall
	finish string
	draft  *[2]int64 // draft_n, draft_n_accepted
	steps  int64     // decode steps (verification steps when speculating)
}

type generatedCall struct {
	id, name, args string
}

func callSyntax(c call) (prefix, suffix string) {
	return "<tool_call>\n{\"name\": \"" + c.Name + "\", \"arguments\": ", "}\n</tool_call>"
}

// generate lays out out's tokens: reasoning, content, then each tool call
// (syntax and arguments). When more than limit tokens would be generated
// (the response's max_tokens or the context left), generation stops at
// limit: finish "length", and a cut tool call is plain content, as a real
// server's parser leaves it.
func (s *Server) generate(out *output, limit int) *generation {
	g := &generation{}
	var prefixEnd []int // per call: tokens generated once its name is out
	for _, p := range Pieces(out.Reasoning) {
		g.tokens = append(g.tokens, token{kind: tokReasoning, text: p})
	}
	for _, p := range Pieces(out.Content) {
		g.tokens = append(g.tokens, token{kind: tokContent, text: p})
	}
	for i, c := range out.Calls {
		pre, suf := callSyntax(c)
		for _, p := range Pieces(pre) {
			g.tokens = append(g.tokens, token{kind: tokSyntax, text: p, call: i})
		}
		prefixEnd = append(prefixEnd, len(g.tokens))
		for _, p := range Pieces(c.Args) {
			g.tokens = append(g.tokens, token{kind: tokArgs, text: p, call: i})
		}
		for _, p := range Pieces(suf) {
			g.tokens = append(g.tokens, token{kind: tokSyntax, text: p, call: i})
		}
		g.calls = append(g.calls, generatedCall{id: s.newID(), name: c.Name, args: c.Args})
	}
	switch {
	case limit >= 0 && len(g.tokens) > limit:
		// As llama-server: a call whose name was out when the cap hit is
		// returned with the arguments generated so far (invalid JSON, as
		// in fault_toolcall_truncated); the syntax of a call cut before
		// its name is plain content.
		g.tokens = g.tokens[:limit]
		kept := 0
		for kept < len(prefixEnd) && prefixEnd[kept] <= limit {
			kept++
		}
		g.calls = g.calls[:kept]
		for i := range g.calls {
			var b strings.Builder
			for _, t := range g.tokens {
				if t.kind == tokArgs && t.call == i {
					b.WriteString(t.text)
				}
			}
			g.calls[i].args = b.String()
		}
		for i := range g.tokens {
			if (g.tokens[i].kind == tokArgs || g.tokens[i].kind == tokSyntax) && g.tokens[i].call >= kept {
				g.tokens[i].kind = tokContent
			}
		}
		g.finish = "length"
	case len(g.calls) > 0:
		g.finish = "tool_calls"
	default:
		g.finish = "stop"
	}
	n := int64(len(g.tokens))
	g.steps = n
	if p := s.cfg.DraftAcceptance; p > 0 && n > 0 {
		// Each verification step yields one token of the target model plus
		// the drafts it accepted; p of DraftMax drafts are accepted.
		perStep := 1 + p*float64(s.cfg.DraftMax)
		g.steps = int64(float64(n)/perStep + 0.999999)
		if g.steps < 1 {
			g.steps = 1
		}
		g.draft = &[2]int64{g.steps * int64(s.cfg.DraftMax), n - g.steps}
	}
	return g
}

func (g *generation) text(kind int) string {
	var b strings.Builder
	for _, t := range g.tokens {
		if t.kind == kind {
			b.WriteString(t.text)
		}
	}
	return b.String()
}

// rendered is the generated sequence as the next prompt will contain it.
func (g *generation) rendered() string {
	var b strings.Builder
	for _, t := range g.tokens {
		b.WriteString(t.text)
	}
	return b.String()
}

// renderPrompt renders a chat request the way a ChatML template would; its
// token count is the prompt's length.
func renderPrompt(req *chatRequest) string {
	var b strings.Builder
	if len(req.Tools) > 0 {
		b.WriteString("<|im_start|>system\n# Tools\n<tools>")
		for _, t := range req.Tools {
			j, _ := json.Marshal(t)
			b.WriteString("\n")
			b.Write(j)
		}
		b.WriteString("\n</tools><|im_end|>\n")
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		b.WriteString("<|im_start|>" + m.Role + "\n")
		if m.Role == "assistant" {
			b.WriteString(m.ReasoningContent)
		}
		b.WriteString(m.text())
		for _, tc := range m.ToolCalls {
			pre, suf := callSyntax(call{Name: tc.Function.Name, Args: tc.Function.Arguments})
			b.WriteString(pre + tc.Function.Arguments + suf)
		}
		b.WriteString("<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

// admit charges the prompt against the single slot's cache: the tokens
// shared with the previous sequence are reused (cache_n), at least one is
// always processed, as in llama-server; with cache_prompt false (reuse nil
// or true otherwise) none is. The slot then holds prompt+output.
func (s *Server) admit(prompt []string, g *generation, reuse *bool) (cacheN int) {
	out := Pieces(g.rendered())
	s.mu.Lock()
	defer s.mu.Unlock()
	for (reuse == nil || *reuse) && cacheN < len(prompt) && cacheN < len(s.slot) && prompt[cacheN] == s.slot[cacheN] {
		cacheN++
	}
	if cacheN >= len(prompt) {
		cacheN = len(prompt) - 1
	}
	if cacheN < 0 {
		cacheN = 0
	}
	s.slot = append(append(s.slot[:0], prompt...), out...)
	return cacheN
}

func (s *Server) timingsFor(promptN, cacheN, predictedN int, g *generation) (*timings, int64, int64) {
	pus := micros(promptN, s.cfg.PromptTPS)
	dus := micros(predictedN, s.cfg.DecodeTPS)
	t := &timings{CacheN: int64(cacheN), PromptN: int64(promptN), PromptMS: float64(pus) / 1000, PredictedN: int64(predictedN), PredictedMS: float64(dus) / 1000}
	if promptN > 0 && pus > 0 {
		t.PromptPerTokenMS = t.PromptMS / float64(promptN)
		t.PromptPerSecond = 1e3 / t.PromptMS * float64(promptN)
	}
	// llama-server's generation rates leave out the first token (it comes
	// with the prompt's last decode): (n-1)/ms, as in every capture; the
	// decode TPS evalctl reports is n/ms.
	if predictedN > 1 && dus > 0 {
		t.PredictedPerTokenMS = t.PredictedMS / float64(predictedN-1)
		t.PredictedPerSecond = 1e3 / t.PredictedMS * float64(predictedN-1)
	}
	if g != nil && g.draft != nil {
		t.DraftN, t.DraftNAccepted = &g.draft[0], &g.draft[1]
	}
	return t, pus, dus
}

// account adds a finished response to the /metrics counters.
func (s *Server) account(t *timings, pus, dus, steps int64, g *generation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.promptTokens += t.PromptN
	s.m.promptCached += t.CacheN
	s.m.promptMicros += pus
	s.m.predicted += t.PredictedN
	s.m.predictedMicros += dus
	s.m.nDecode += steps
	s.m.nTokensMax = max(s.m.nTokensMax, t.PromptN+t.CacheN+t.PredictedN)
	if g != nil && g.draft != nil {
		s.m.draftTokens += g.draft[0]
		s.m.draftAccepted += g.draft[1]
		s.m.drafts += g.steps
	}
	s.m.decodes = true
}

// outputLimit is the most tokens a response may generate: its max_tokens
// (or n_predict), and never more than the context has left.
func outputLimit(caps []*int, ctxLeft int) int {
	for _, c := range caps {
		if c != nil && *c > 0 {
			if ctxLeft < 0 {
				return *c
			}
			return min(ctxLeft, *c)
		}
	}
	return ctxLeft
}

func overflowError(promptTokens, nCtx int) *scriptError {
	n, c := int64(promptTokens), int64(nCtx)
	return &scriptError{status: 400, body: apiErrorBody{Code: 400, Type: "exceed_context_size_error",
		Message:       fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", n, c),
		NPromptTokens: &n, NCtx: &c}}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	var req chatRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	if s.waitSlot(r.Context()) != nil {
		return
	}
	if s.cfg.NoJinja && len(req.Tools) > 0 {
		// llama-server's chat parser throws this before any generation;
		// the exception becomes a 500 server_error.
		writeError(w, http.StatusInternalServerError, "server_error", "tools param requires --jinja flag")
		return
	}
	// llama-server renders the conversation through its template, which
	// parses every tool call's arguments: invalid JSON is a 500 before any
	// generation, as plain JSON even for a stream.
	if msg := invalidToolArgs(&req); msg != "" {
		writeError(w, 500, "server_error", msg)
		return
	}
	prompt := Pieces(renderPrompt(&req))
	caps := []*int{req.MaxTokens, req.MaxCompletionTokens, req.NPredict}
	limit := outputLimit(caps, s.cfg.CtxSize-len(prompt))
	var out *output
	var serr *scriptError
	capN := outputLimit(caps, -1)
	exact := req.IgnoreEOS && capN > 0
	if exact {
		// Throughput screens: exactly max_tokens tokens, whatever the script.
		out = &output{Content: filler(min(capN, max(limit, 0)))}
	} else {
		out, serr = s.respond(&req, len(prompt), max(limit, 0))
	}
	if serr == nil && len(prompt) > s.cfg.CtxSize {
		serr = overflowError(len(prompt), s.cfg.CtxSize)
	}
	if serr != nil {
		if serr.retryAfter != "" {
			w.Header().Set("Retry-After", serr.retryAfter)
		}
		writeJSON(w, serr.status, apiError{Error: serr.body})
		return
	}
	g := s.generate(out, limit)
	if exact {
		g.finish = "length"
	}
	cacheN := s.admit(prompt, g, req.CachePrompt)
	t, pus, dus := s.timingsFor(len(prompt)-cacheN, cacheN, len(g.tokens), g)
	if err := sleepCtx(r.Context(), out.Delay); err != nil {
		return
	}
	resp := chatResponse{
		Created: time.Now().Unix(), Model: req.Model, SystemFingerprint: "evalctl-scripted",
		ID: "chatcmpl-" + s.newID(),
		Usage: &usage{CompletionTokens: t.PredictedN, PromptTokens: t.PromptN + t.CacheN, TotalTokens: t.PromptN + t.CacheN + t.PredictedN,
			PromptTokensDetails: &promptDetails{CachedTokens: t.CacheN}},
	}
	if !req.Stream {
		s.whole(w, r, out, g, t, pus, dus, &resp)
		return
	}
	// Counted when the last token is generated, before the final chunks go
	// out, as llama-server updates its metrics when the task completes.
	sent, err := s.stream(w, r, &req, &resp, g, t, pus, out.Garble, func() { s.account(t, pus, dus, g.steps, g) })
	if err != nil && sent < len(g.tokens) {
		s.accountPartial(t, g, sent, pus)
	}
	// llama-server closes the connection right after every streamed
	// response (orchestrator/model/testdata/llama-server/responses/keepalive_probe.txt).
	if st := connOf(r); st != nil {
		st.streamed.Store(true)
	}
}

// whole answers a request that asked for no stream: after as long as its
// timings say, so a reader never sees more decode seconds than the request
// really took.
func (s *Server) whole(w http.ResponseWriter, r *http.Request, out *output, g *generation, t *timings, pus, dus int64, resp *chatResponse) {
	// The response takes as long as its timings say: a reader never
	// sees more decode seconds than the request really took.
	begun := time.Now()
	if sleepCtx(r.Context(), time.Duration(pus+dus)*time.Microsecond) != nil {
		s.accountPartial(t, g, min(len(g.tokens), s.decodedBy(time.Since(begun), pus)), pus)
		return
	}
	s.account(t, pus, dus, g.steps, g)
	if out.Garble {
		writeError(w, 500, "server_error", garbleMessage)
		return
	}
	finish := g.finish
	msg := &outMsg{Role: "assistant", Content: g.text(tokContent), ReasoningContent: g.text(tokReasoning)}
	for _, c := range g.calls {
		tc := toolCall{ID: c.id, Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.name, c.args
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	resp.Object = "chat.completion"
	resp.Choices = []choice{{FinishReason: &finish, Message: msg}}
	resp.Timings = t
	writeJSON(w, 200, *resp)
}

// invalidToolArgs is llama-server's error for a conversation holding a
// tool call whose arguments are not JSON; "" when there is none.
func invalidToolArgs(req *chatRequest) string {
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			a := tc.Function.Arguments
			if a == "" || json.Valid([]byte(a)) {
				continue
			}
			var v any
			err := json.Unmarshal([]byte(a), &v)
			return fmt.Sprintf("Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error: %v", err)
		}
	}
	return ""
}

// accountPartial counts a response whose client went away after sent
// tokens: llama-server still counts the prompt and the tokens generated
// until it noticed. With CancelDelay it notices that much later: it goes
// on generating, keeps the slot busy, and counts only at release.
func (s *Server) accountPartial(t *timings, g *generation, sent int, pus int64) {
	count := func(n int) {
		p := *t
		p.PredictedN = int64(n)
		s.account(&p, pus, micros(n, s.cfg.DecodeTPS), int64(n), nil)
	}
	d := s.cfg.CancelDelay
	if d <= 0 {
		count(sent)
		return
	}
	n := min(len(g.tokens), sent+int(d.Seconds()*s.cfg.DecodeTPS))
	s.mu.Lock()
	s.cancelling++
	s.mu.Unlock()
	time.AfterFunc(d, func() {
		count(n)
		s.mu.Lock()
		s.cancelling--
		s.mu.Unlock()
	})
}

// decodedBy is how many tokens a response paced at the emulated rates has
// generated after elapsed, its prompt taking pus microseconds.
func (s *Server) decodedBy(elapsed time.Duration, pus int64) int {
	dec := elapsed - time.Duration(pus)*time.Microsecond
	if dec <= 0 {
		return 0
	}
	return int(dec.Seconds() * s.cfg.DecodeTPS)
}

// errKilled ends a stream cut by Config.DieMidStream.
var errKilled = errors.New("scripted server killed mid-stream")

type chunkWriter struct {
	w   http.ResponseWriter
	f   http.Flusher
	err error
}

func (c *chunkWriter) event(v any) {
	if c.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		c.err = err
		return
	}
	if _, err := fmt.Fprintf(c.w, "data: %s\n\n", b); err != nil {
		c.err = err
	}
}

func (c *chunkWriter) flush() {
	if c.err == nil && c.f != nil {
		c.f.Flush()
	}
}

// stream sends the generation as server-sent events, chunk by token, like
// llama-server: a role chunk, content/reasoning/tool-call deltas, a finish
// chunk, a usage+timings chunk when include_usage, then [DONE]. It returns
// how many tokens were generated before a failure; generated is called once
// the last token is.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *chatRequest, base *chatResponse, g *generation, t *timings, pus int64, garble bool, generated func()) (int, error) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	cw := &chunkWriter{w: w, f: f}
	chunk := func(d *outDelta, finish *string) chatResponse {
		c := *base
		c.Object, c.Usage = "chat.completion.chunk", nil
		c.Choices = []choice{{FinishReason: finish, Delta: d}}
		return c
	}
	cw.event(chunk(&outDelta{Role: "assistant", nullContent: true}, nil))
	cw.flush()
	// Paced at the rates the timings report: prompt processing, then each
	// token when it is due.
	if err := sleepCtx(r.Context(), time.Duration(pus)*time.Microsecond); err != nil {
		return 0, err
	}
	decodeStart := time.Now()
	started := make([]bool, len(g.calls))
	for i, tok := range g.tokens {
		due := decodeStart.Add(time.Duration(float64(i+1) / s.cfg.DecodeTPS * float64(time.Second)))
		if d := time.Until(due); d > 2*time.Millisecond {
			cw.flush()
			if err := sleepCtx(r.Context(), d); err != nil {
				return i, err
			}
		}
		d := tokenDelta(tok, g, started)
		if d != nil {
			cw.event(chunk(d, nil))
		}
		if cw.err != nil && i+1 < len(g.tokens) {
			return i + 1, cw.err
		}
		if s.cfg.DieMidStream != nil && i+1 < len(g.tokens) && s.cfg.DieMidStream(i+1) {
			cw.flush()
			s.Close()
			return i + 1, errKilled
		}
	}
	// Tokens less than 2 ms early go out without a sleep; the finish waits
	// for the last one's due time, so the response never ends sooner than
	// the predicted_ms it reports.
	cw.flush()
	if err := sleepCtx(r.Context(), time.Until(decodeStart.Add(time.Duration(float64(len(g.tokens))/s.cfg.DecodeTPS*float64(time.Second))))); err != nil {
		return len(g.tokens), err
	}
	generated()
	if garble {
		// The in-band error is the last event: no finish chunk, no usage
		// or timings, no [DONE] (fault_500_stream.sse).
		cw.event(apiError{Error: apiErrorBody{Code: 500, Message: garbleMessage, Type: "server_error"}})
		cw.flush()
		return len(g.tokens), cw.err
	}
	finish := g.finish
	return len(g.tokens), finishStream(w, cw, req, base, t, chunk(&outDelta{}, &finish))
}

// tokenDelta is the stream delta that carries tok: reasoning, content, a
// tool call's arguments (its first delta also names the call), or nil for
// syntax that llama-server does not stream; started marks the calls named.
func tokenDelta(tok token, g *generation, started []bool) *outDelta {
	switch tok.kind {
	case tokReasoning:
		return &outDelta{ReasoningContent: tok.text}
	case tokContent:
		text := tok.text
		return &outDelta{Content: &text}
	case tokArgs:
		tc := toolCall{Index: &[]int{tok.call}[0]}
		if !started[tok.call] {
			started[tok.call] = true
			tc.ID, tc.Type, tc.Function.Name = g.calls[tok.call].id, "function", g.calls[tok.call].name
		}
		tc.Function.Arguments = tok.text
		return &outDelta{ToolCalls: []toolCall{tc}}
	case tokSyntax:
		// The end of a call's syntax announces a call without arguments.
		if c := tok.call; c < len(started) && !started[c] && g.calls[c].args == "" && strings.HasSuffix(tok.text, "</tool_call>") {
			started[c] = true
			tc := toolCall{Index: &[]int{c}[0], ID: g.calls[c].id, Type: "function"}
			tc.Function.Name = g.calls[c].name
			return &outDelta{ToolCalls: []toolCall{tc}}
		}
	}
	return nil
}

// finishStream writes the stream's end: the finish chunk (last), usage
// and timings where the request asked for usage, and [DONE]. Once [DONE]
// is out the response is complete, even if the client hangs up at once.
func finishStream(w http.ResponseWriter, cw *chunkWriter, req *chatRequest, base *chatResponse, t *timings, last chatResponse) error {
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		cw.event(last)
		fin := *base
		fin.Object, fin.Choices, fin.Timings = "chat.completion.chunk", []choice{}, t
		cw.event(fin)
	} else {
		last.Timings = t
		cw.event(last)
	}
	if cw.err == nil {
		_, cw.err = fmt.Fprint(w, "data: [DONE]\n\n")
	}
	cw.flush()
	return cw.err
}

// completion serves /completion (llama-server's native endpoint) and
// /v1/completions: a raw prompt, n_predict (or max_tokens) tokens; with
// ignore_eos exactly that many, else up to 32 before an end of sequence.
func (s *Server) completion(w http.ResponseWriter, r *http.Request, openAI bool) {
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	var req completionRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	var promptText string
	if json.Unmarshal(req.Prompt, &promptText) != nil {
		writeError(w, 400, "invalid_request_error", "prompt must be a string")
		return
	}
	if s.waitSlot(r.Context()) != nil {
		return
	}
	prompt := Pieces(promptText)
	if len(prompt) > s.cfg.CtxSize {
		e := overflowError(len(prompt), s.cfg.CtxSize)
		writeJSON(w, e.status, apiError{Error: e.body})
		return
	}
	limit := outputLimit([]*int{req.NPredict, req.MaxTokens}, s.cfg.CtxSize-len(prompt))
	n := limit
	stopType := "limit"
	if !req.IgnoreEOS && n > 32 {
		n, stopType = 32, "eos"
	}
	g := s.generate(&output{Content: filler(n)}, limit)
	g.finish = map[string]string{"limit": "length", "eos": "stop"}[stopType]
	cacheN := s.admit(prompt, g, req.CachePrompt)
	t, pus, dus := s.timingsFor(len(prompt)-cacheN, cacheN, len(g.tokens), g)
	begun := time.Now()
	if sleepCtx(r.Context(), time.Duration(pus+dus)*time.Microsecond) != nil {
		s.accountPartial(t, g, min(len(g.tokens), s.decodedBy(time.Since(begun), pus)), pus)
		return
	}
	s.account(t, pus, dus, g.steps, g)
	text := g.text(tokContent)
	if openAI {
		finish := g.finish
		resp := chatResponse{Created: time.Now().Unix(), Model: req.Model, SystemFingerprint: "evalctl-scripted", Object: "text_completion",
			ID: "cmpl-" + s.newID(), Choices: []choice{{FinishReason: &finish, Text: &text}}, Timings: t,
			Usage: &usage{CompletionTokens: t.PredictedN, PromptTokens: t.PromptN + t.CacheN, TotalTokens: t.PromptN + t.CacheN + t.PredictedN,
				PromptTokensDetails: &promptDetails{CachedTokens: t.CacheN}}}
		writeJSON(w, 200, resp)
		return
	}
	total := int64(len(prompt))
	final := nativeChunk{Content: text, Tokens: []int64{}, Stop: true, Model: ModelPath, TokensPredicted: t.PredictedN,
		TokensEvaluated: total, Prompt: &promptText, StopType: stopType, TokensCached: &[]int64{total + t.PredictedN}[0], Timings: t}
	if !req.Stream {
		writeJSON(w, 200, final)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	cw := &chunkWriter{w: w, f: f}
	for i, tok := range g.tokens {
		cw.event(nativeChunk{Content: tok.text, Tokens: []int64{TokenID(tok.text)}, IDSlot: -1, TokensPredicted: int64(i + 1), TokensEvaluated: total})
	}
	final.Content = ""
	cw.event(final)
	cw.flush()
}
