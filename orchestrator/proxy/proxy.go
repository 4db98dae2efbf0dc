// Package proxy is the recording proxy of agent-command arms: an agent CLI
// in the sandbox talks the OpenAI-compatible chat API to it, and it makes
// each call through the model client as the built-in loop does
// (orchestrator/agent), records it in the same transcript format, sums the
// server's own figures with the loop's meter and enforces the token and
// tool-call budgets. Sampling is the arm's: what the agent asks for besides
// the conversation, its tools and an output cap is not forwarded.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/transcript"
)

// Config sets up a proxy for one attempt.
type Config struct {
	Model     agent.Model
	ModelName string
	// Params are the arm's generation settings; Params.MaxTokens caps each
	// response.
	Params   model.Params
	NoStream bool
	// Budgets: the generated-token and tool-call budgets are enforced
	// here; the caller enforces the wall time on the agent's process.
	Budgets    agent.Budgets
	Transcript io.Writer
}

// Proxy serves one attempt's agent. Its methods are safe for concurrent
// use; model calls are made one at a time, in the order they arrive.
type Proxy struct {
	cfg   Config
	mu    sync.Mutex
	tr    *transcript.Writer
	meter *agent.Meter
	seq   int
	setup bool
	used  int // tool calls forwarded to the agent
	// open are the forwarded calls not yet answered, by id.
	open map[string]model.ToolCall
	// The phase running (nil between phases).
	turn      *evalctl.Turn
	ctx       context.Context
	start     time.Time
	last      *model.Response
	lastCheck [2]*evalctl.SelfCheck
	stopped   chan struct{}
	// toolStop: the tool-call budget ran out inside a response; the turn
	// stops at the agent's next request.
	toolStop bool
	// abortMu guards cancel (the phase's model calls) and abortWhy, which
	// Abort sets without waiting for a call in flight.
	abortMu  sync.Mutex
	cancel   context.CancelFunc
	abortWhy evalctl.Termination
}

// New returns a proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Model == nil || cfg.ModelName == "" {
		return nil, errors.New("proxy: a model and its name are required")
	}
	return &Proxy{cfg: cfg, tr: transcript.NewWriter(cfg.Transcript), meter: agent.NewMeter(), open: map[string]model.ToolCall{}}, nil
}

// Begin starts a phase: prompt is the case prompt the agent is given.
// Model calls are made under ctx. The returned channel is closed when the
// proxy stops the turn (a budget, a failed model call): the caller then
// ends the agent's process.
func (p *Proxy) Begin(ctx context.Context, phase int, prompt string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.turn = &evalctl.Turn{Phase: phase, ToolCalls: map[string]int{}, FinishReasons: []string{}}
	pctx, cancel := context.WithCancel(ctx)
	p.abortMu.Lock()
	p.cancel, p.abortWhy = cancel, ""
	p.abortMu.Unlock()
	p.ctx, p.start, p.last, p.stopped = pctx, time.Now(), nil, make(chan struct{})
	p.lastCheck = [2]*evalctl.SelfCheck{}
	user := model.Message{Role: model.RoleUser, Content: prompt}
	p.tr.Write(transcript.Event{Kind: transcript.EventPhaseStart, Phase: phase, Message: &user})
	return p.stopped
}

// Abort ends a model call in flight once the agent's process is gone
// (call it before End): the call's response is unknown, and the turn ends
// with why (wall_time_limit when the wall time ended the agent).
func (p *Proxy) Abort(why evalctl.Termination) {
	p.abortMu.Lock()
	defer p.abortMu.Unlock()
	p.abortWhy = why
	if p.cancel != nil {
		p.cancel()
	}
}

// Exit is how the agent's process of a phase ended.
type Exit struct {
	// Code is the exit status; nil when it is unknown (killed).
	Code *int
	// WallTime is true when the wall-time budget ended the process.
	WallTime bool
	// Err is a failure of the sandbox running the agent.
	Err error
}

// End closes the phase with how the agent ended and returns its turn,
// the termination decided as the built-in loop decides it.
func (p *Proxy) End(x Exit) (evalctl.Turn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.turn
	switch {
	case t.Termination != "":
	case x.Err != nil:
		p.stop(evalctl.TermSandboxError, "the agent's sandbox failed: %v", x.Err)
	case x.WallTime:
		p.stop(evalctl.TermWallTimeLimit, "wall-time budget of %s ran out: the agent's processes were ended", p.cfg.Budgets.WallTime)
	case p.last != nil && len(p.last.ToolCalls) == 0 && x.Code != nil && *x.Code == 0:
		t.Termination, t.AgentFinished = evalctl.TermCompleted, true
	case p.last == nil:
		p.stop(evalctl.TermAgentExited, "the agent exited (%s) without calling the model", status(x.Code))
	default:
		p.stop(evalctl.TermAgentExited, "the agent exited (%s) without handing over", status(x.Code))
	}
	t.LastTest, t.LastTypecheck = p.lastCheck[0], p.lastCheck[1]
	t.Seconds = time.Since(p.start).Seconds()
	p.Abort(t.Termination)
	p.meter.AddTaskSeconds(t.Seconds)
	p.tr.Write(transcript.Event{Kind: transcript.EventPhaseEnd, Phase: t.Phase, Turn: t})
	p.turn = nil
	return *t, p.tr.Err()
}

func status(code *int) string {
	if code == nil {
		return "status unknown"
	}
	return fmt.Sprintf("status %d", *code)
}

// Measurements are the attempt's sums so far.
func (p *Proxy) Measurements() *evalctl.Measurements {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.meter.Result()
}

// stop ends the turn with a termination (the first one stands).
func (p *Proxy) stop(t evalctl.Termination, format string, a ...any) {
	if p.turn.Termination != "" {
		return
	}
	p.turn.Termination = t
	p.turn.Error = fmt.Sprintf(format, a...)
	close(p.stopped)
}

// ServeHTTP answers the agent: chat completions and the model list.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	switch {
	case r.Method == http.MethodGet && path == "/models":
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{"id": p.cfg.ModelName, "object": "model"}}})
	case r.Method == http.MethodPost && path == "/chat/completions":
		p.chat(w, r)
	default:
		refuse(w, http.StatusNotFound, "evalctl's proxy serves only POST /v1/chat/completions and GET /v1/models")
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func refuse(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": "evalctl_proxy"}})
}

func (p *Proxy) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&req); err != nil {
		refuse(w, http.StatusBadRequest, "not a chat request: "+err.Error())
		return
	}
	msgs, err := req.messages()
	if err != nil {
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.turn == nil {
		refuse(w, http.StatusConflict, "no phase of the attempt is running")
		return
	}
	p.answered(msgs)
	params, ok := p.admit(req)
	if !ok {
		refuse(w, http.StatusTooManyRequests, "stopped by evalctl: "+p.turn.Error)
		return
	}
	resp, ok := p.call(msgs, req, params)
	if !ok {
		refuse(w, http.StatusBadGateway, "the model call failed: "+p.turn.Error)
		return
	}
	if p.forward(resp, params) {
		p.reply(w, resp, req.Stream)
		return
	}
	refuse(w, http.StatusTooManyRequests, "stopped by evalctl: "+p.turn.Error)
}

// admit decides whether a request goes to the server, and with which
// output cap: the arm's, the agent's if lower, and never more than the
// generated-token budget has left.
func (p *Proxy) admit(req chatRequest) (model.Params, bool) {
	b := p.cfg.Budgets
	params := p.cfg.Params
	if p.turn.Termination != "" {
		return params, false
	}
	if p.toolStop {
		p.stop(evalctl.TermToolCallLimit, "tool-call budget of %d exhausted", b.ToolCalls)
		return params, false
	}
	asked := req.MaxTokens
	if req.MaxCompletionTokens > 0 {
		asked = req.MaxCompletionTokens
	}
	if asked > 0 && (params.MaxTokens <= 0 || asked < params.MaxTokens) {
		params.MaxTokens = asked
	}
	if b.GeneratedTokens > 0 {
		left := b.GeneratedTokens - p.meter.Spent()
		if left <= 0 {
			p.stop(evalctl.TermGeneratedTokenLimit, "generated-token budget of %d exhausted", b.GeneratedTokens)
			return params, false
		}
		if params.MaxTokens <= 0 || int64(params.MaxTokens) > left {
			params.MaxTokens = int(left)
		}
	}
	return params, true
}

// call makes the model call and records it; false when it failed (the
// turn is then stopped as the loop stops it).
func (p *Proxy) call(msgs []model.Message, req chatRequest, params model.Params) (*model.Response, bool) {
	p.seq++
	tools := req.tools()
	ev := transcript.Event{Kind: transcript.EventRequest, Phase: p.turn.Phase, Seq: p.seq, MessageCount: len(msgs), MaxTokens: params.MaxTokens}
	if !p.setup {
		p.setup = true
		sys := ""
		if len(msgs) > 0 && msgs[0].Role == model.RoleSystem {
			sys = msgs[0].Content
		}
		ev.Setup = &transcript.RequestSetup{Model: p.cfg.ModelName, Stream: !p.cfg.NoStream, Params: p.cfg.Params, Tools: tools, SystemPrompt: sys}
	}
	p.tr.Write(ev)
	resp, err := p.cfg.Model.Chat(p.ctx, model.Request{Model: p.cfg.ModelName, Messages: msgs, Tools: tools, ToolChoice: req.toolChoice(), Params: params, Stream: !p.cfg.NoStream})
	if err != nil {
		p.failed(err)
		return nil, false
	}
	p.turn.Responses++
	p.turn.FinishReasons = append(p.turn.FinishReasons, resp.FinishReason)
	p.meter.Add(resp)
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].ID == "" {
			resp.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", p.seq, i)
		}
	}
	p.tr.Write(transcript.Event{Kind: transcript.EventResponse, Phase: p.turn.Phase, Seq: p.seq, Response: resp})
	p.last = resp
	return resp, true
}

// failed records a failed model call by the one classification rule, as
// the loop's modelFailed does.
func (p *Proxy) failed(err error) {
	ev := transcript.Event{Kind: transcript.EventModelError, Phase: p.turn.Phase, Seq: p.seq, Error: err.Error()}
	var me *model.Error
	if errors.As(err, &me) {
		ev.ErrorKind, ev.ErrorClass = string(me.Kind), string(me.Class())
		ev.Retries, ev.Response = me.Retries, me.Partial
	}
	p.tr.Write(ev)
	switch {
	case p.ctx.Err() != nil:
		p.meter.Unknown()
		p.abortMu.Lock()
		why := p.abortWhy
		p.abortMu.Unlock()
		if why == "" {
			why = evalctl.TermWallTimeLimit
		}
		p.stop(why, "the agent's process ended during a model response (its tokens are unknown)")
	case me == nil || me.Class() == model.ClassServerFailed:
		p.meter.Unknown()
		p.stop(evalctl.TermServerError, "%v", err)
		if me != nil {
			p.turn.ModelErrorKind = string(me.Kind)
		}
	default:
		p.stop(evalctl.TermModelError, "%v", err)
		p.turn.ModelErrorKind = string(me.Kind)
	}
}

// forward applies the loop's rules to a response: false when the turn
// stops at it (the agent then gets no usable step).
func (p *Proxy) forward(resp *model.Response, params model.Params) bool {
	b := p.cfg.Budgets
	budgetHit := b.GeneratedTokens > 0 && p.meter.Spent() >= b.GeneratedTokens
	if len(resp.ToolCalls) == 0 {
		p.turn.FinalText = strings.TrimSpace(resp.Content) != ""
		switch {
		case resp.FinishReason == model.FinishLength && budgetHit:
			p.stop(evalctl.TermGeneratedTokenLimit, "generated-token budget of %d exhausted", b.GeneratedTokens)
		case resp.Cut != nil:
			p.stop(evalctl.TermOutputTruncated, "a response was cut at the size cap: %s", resp.Cut.Reason)
		case resp.FinishReason == model.FinishLength:
			p.stop(evalctl.TermOutputTruncated, "a response hit its output cap of %d tokens without a usable step", params.MaxTokens)
		}
		return true // a hand-over, or text the agent may go on from
	}
	p.turn.FinalText = false
	switch {
	case resp.FinishReason == model.FinishLength:
		p.stop(evalctl.TermOutputTruncated, "a response hit its output cap of %d tokens inside a tool call (%s); the call was not run", params.MaxTokens, resp.ToolCalls[len(resp.ToolCalls)-1].Name)
	case budgetHit:
		p.stop(evalctl.TermGeneratedTokenLimit, "generated-token budget of %d exhausted", b.GeneratedTokens)
	case b.ToolCalls > 0 && p.used >= b.ToolCalls:
		p.stop(evalctl.TermToolCallLimit, "tool-call budget of %d exhausted", b.ToolCalls)
	}
	if p.turn.Termination != "" {
		return false
	}
	if b.ToolCalls > 0 && p.used+len(resp.ToolCalls) > b.ToolCalls {
		// The calls the budget has room for run; the turn stops after.
		resp.ToolCalls = resp.ToolCalls[:b.ToolCalls-p.used]
		p.toolStop = true
	}
	for _, tc := range resp.ToolCalls {
		p.used++
		p.turn.ToolCalls[tc.Name]++
		p.open[tc.ID] = tc
	}
	return true
}

func (p *Proxy) reply(w http.ResponseWriter, resp *model.Response, stream bool) {
	if !stream {
		writeJSON(w, http.StatusOK, completion(resp, p.cfg.ModelName))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, c := range chunks(resp, p.cfg.ModelName) {
		data, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// exitRE finds the exit status an agent's tool result states.
var exitRE = regexp.MustCompile(`(?i)exit(?:\s+code|\s+status|_code|ed\s+with)?\s*[:=]?\s*(-?\d+)`)

// answered records the tool results the agent sends for calls it was
// given, as tool events: a result stating an exit status is a failed
// tool call when non-zero, and a test or typecheck command's result is
// the turn's self-check.
func (p *Proxy) answered(msgs []model.Message) {
	for _, m := range msgs {
		tc, ok := p.open[m.ToolCallID]
		if m.Role != model.RoleTool || !ok {
			continue
		}
		delete(p.open, m.ToolCallID)
		te := &transcript.ToolEvent{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Result: m.Content}
		if sub := exitRE.FindAllStringSubmatch(m.Content, -1); sub != nil {
			var code int
			fmt.Sscan(sub[len(sub)-1][1], &code)
			te.ExitCode, te.Error = &code, code != 0
		}
		p.meter.Tool(te.Error)
		if te.Error {
			p.turn.ToolErrors++
		}
		p.selfCheck(tc, te)
		p.tr.Write(transcript.Event{Kind: transcript.EventTool, Phase: p.turn.Phase, Seq: p.seq, Tool: te})
	}
}

// selfCheck records a shell command that ran tests or a type check, by
// the loop's rule (agent.ClassifyCommand), when its exit status is known.
func (p *Proxy) selfCheck(tc model.ToolCall, te *transcript.ToolEvent) {
	var args map[string]any
	if te.ExitCode == nil || json.Unmarshal([]byte(tc.Arguments), &args) != nil {
		return
	}
	cmd, _ := args["command"].(string)
	if cmd == "" {
		cmd, _ = args["cmd"].(string)
	}
	test, tsc := agent.ClassifyCommand(cmd)
	sc := &evalctl.SelfCheck{Command: cmd, ExitCode: *te.ExitCode, Passed: *te.ExitCode == 0}
	if test {
		p.lastCheck[0] = sc
	}
	if tsc {
		p.lastCheck[1] = sc
	}
}
