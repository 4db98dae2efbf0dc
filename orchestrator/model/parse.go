package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// parser decodes one endpoint's answers, whole or streamed.
type parser struct {
	body   func(data []byte) (*Response, error)
	stream func(r io.Reader, start time.Time, maxBytes int64) (*Response, error)
}

var (
	chatParser = parser{body: ParseChat, stream: func(r io.Reader, start time.Time, maxBytes int64) (*Response, error) {
		return readStream(r, start, false, maxBytes)
	}}
	nativeParser = parser{body: ParseNative, stream: func(r io.Reader, start time.Time, maxBytes int64) (*Response, error) {
		return readStream(r, start, true, maxBytes)
	}}
)

// UnmarshalJSON keeps the whole object in Raw besides the typed fields.
func (t *Timings) UnmarshalJSON(b []byte) error {
	type plain Timings
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = Timings(p)
	t.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the object as the server sent it.
func (t Timings) MarshalJSON() ([]byte, error) {
	if len(t.Raw) > 0 {
		return t.Raw, nil
	}
	type plain Timings
	p := plain(t)
	p.Raw = nil
	return json.Marshal(struct {
		plain
		Raw json.RawMessage `json:"raw,omitempty"`
	}{plain: p})
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *wireUsage) usage() *Usage {
	if u == nil {
		return nil
	}
	out := &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string by the protocol; some servers send
		// an object, kept as its JSON text.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

func (w *wireToolCall) arguments() string {
	a := bytes.TrimSpace(w.Function.Arguments)
	if len(a) == 0 || string(a) == "null" {
		return ""
	}
	if a[0] == '"' {
		var s string
		if json.Unmarshal(a, &s) == nil {
			return s
		}
	}
	return string(a)
}

type wireMsg struct {
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

// wireChat is a chat completion body or one stream chunk of it (and, for
// /v1/completions, a text completion).
type wireChat struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		FinishReason *string `json:"finish_reason"`
		Message      wireMsg `json:"message"`
		Delta        wireMsg `json:"delta"`
		Text         *string `json:"text"`
	} `json:"choices"`
	Usage   *wireUsage `json:"usage"`
	Timings *Timings   `json:"timings"`
	Error   *wireError `json:"error"`
}

// ParseChat decodes a non-streamed chat (or text) completion body.
func ParseChat(data []byte) (*Response, error) {
	var w wireChat
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, &Error{Kind: KindBadResponse, Message: "chat completion body is not JSON: " + string(truncate(data, 200)), Err: err}
	}
	if w.Error != nil {
		return nil, errorChunk(w.Error, nil)
	}
	r := &Response{ID: w.ID, Model: w.Model, SystemFingerprint: w.SystemFingerprint, Usage: w.Usage.usage(), Timings: w.Timings}
	if len(w.Choices) == 0 {
		return nil, &Error{Kind: KindBadResponse, Message: "chat completion body has no choices"}
	}
	ch := w.Choices[0]
	if ch.FinishReason != nil {
		r.FinishReason = *ch.FinishReason
	}
	if ch.Message.Content != nil {
		r.Content = *ch.Message.Content
	} else if ch.Text != nil {
		r.Content = *ch.Text
	}
	if ch.Message.ReasoningContent != nil {
		r.ReasoningContent = *ch.Message.ReasoningContent
	}
	for i := range ch.Message.ToolCalls {
		tc := &ch.Message.ToolCalls[i]
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.arguments()})
	}
	return r, nil
}

// wireNative is llama-server's /completion body or stream chunk.
type wireNative struct {
	Content         string     `json:"content"`
	Stop            bool       `json:"stop"`
	StopType        string     `json:"stop_type"`
	Model           string     `json:"model"`
	TokensPredicted *int64     `json:"tokens_predicted"`
	TokensEvaluated *int64     `json:"tokens_evaluated"`
	Timings         *Timings   `json:"timings"`
	Error           *wireError `json:"error"`
}

// ParseNative decodes a non-streamed /completion body.
func ParseNative(data []byte) (*Response, error) {
	var w wireNative
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, &Error{Kind: KindBadResponse, Message: "completion body is not JSON: " + string(truncate(data, 200)), Err: err}
	}
	if w.Error != nil {
		return nil, errorChunk(w.Error, nil)
	}
	r := &Response{Model: w.Model, Content: w.Content}
	w.finish(r)
	return r, nil
}

func (w *wireNative) finish(r *Response) {
	r.Timings, r.StopType = w.Timings, w.StopType
	if w.Model != "" {
		r.Model = w.Model
	}
	switch w.StopType {
	case "limit":
		r.FinishReason = FinishLength
	case "eos", "word":
		r.FinishReason = FinishStop
	}
	if w.TokensPredicted != nil && w.TokensEvaluated != nil {
		r.Usage = &Usage{PromptTokens: *w.TokensEvaluated, CompletionTokens: *w.TokensPredicted, TotalTokens: *w.TokensEvaluated + *w.TokensPredicted}
	}
}

// errorChunk turns an error object found in a 200 body or stream into an
// *Error: a broken stream when tokens had been generated already.
func errorChunk(w *wireError, partial *Response) *Error {
	status := 500
	if c, ok := w.Code.(float64); ok {
		status = int(c)
	}
	e := &Error{Status: status, Type: w.Type, Message: w.Message, NPromptTokens: w.NPromptTokens, NCtx: w.NCtx, Partial: partial}
	e.Kind = classify(status, w.Type, w.Message)
	if partial != nil && partial.generated() {
		e.Kind = KindBrokenStream
	}
	return e
}

func (r *Response) generated() bool {
	return r.Content != "" || r.ReasoningContent != "" || len(r.ToolCalls) > 0
}

// readStream decodes server-sent events into one Response, timing the
// first and last generated token. Chat streams end with "data: [DONE]";
// native /completion streams with a chunk whose "stop" is true. With
// maxBytes > 0 the generated text kept (and any one event) is bounded by
// it: past it the stream is cut and returned as truncated.
func readStream(r io.Reader, start time.Time, native bool, maxBytes int64) (*Response, error) {
	acc := &streamAcc{resp: &Response{Stream: true}, calls: map[int]*ToolCall{}, args: map[int]*strings.Builder{}, start: start}
	br := bufio.NewReaderSize(r, 64<<10)
	var data, line []byte
	dispatch := func() (done bool, err error) {
		payload := bytes.TrimSpace(data)
		data = data[:0]
		if len(payload) == 0 {
			return false, nil
		}
		if string(payload) == "[DONE]" {
			return true, nil
		}
		acc.chunks++
		if native {
			return acc.native(payload)
		}
		return false, acc.chat(payload)
	}
	for {
		var readErr error
		line, readErr = readLine(br, line[:0], maxBytes)
		if errors.Is(readErr, errLineTooLong) || (maxBytes > 0 && (acc.size > maxBytes || int64(len(data)+len(line)) > maxBytes)) {
			return acc.cut(maxBytes), nil
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		switch {
		case len(trimmed) == 0 && len(line) > 0:
			if done, err := dispatch(); err != nil || done {
				return acc.end(err, done)
			}
		case bytes.HasPrefix(trimmed, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(trimmed, []byte("data:")), []byte(" "))...)
		case bytes.HasPrefix(trimmed, []byte("error:")):
			// Older llama-server builds send "error: {...}" lines.
			data = append(data[:0], bytes.TrimSpace(bytes.TrimPrefix(trimmed, []byte("error:")))...)
			if bytes.HasPrefix(data, []byte(`{"code"`)) || bytes.HasPrefix(data, []byte(`{"message"`)) {
				data = append(append([]byte(`{"error":`), data...), '}')
			}
		case bytes.HasPrefix(trimmed, []byte("{")) && acc.chunks == 0 && len(data) == 0:
			// A plain JSON body on an event stream (an error sent as is).
			data = append(data, trimmed...)
		}
		if readErr != nil {
			if done, err := dispatch(); err != nil || done {
				return acc.end(err, done)
			}
			if errors.Is(readErr, io.EOF) {
				readErr = nil
			}
			return acc.end(readErr, false)
		}
		if maxBytes > 0 && acc.size > maxBytes {
			return acc.cut(maxBytes), nil
		}
	}
}

var errLineTooLong = errors.New("event line longer than the response size cap")

// readLine appends the next line (with its newline) to buf; a line longer
// than limit (when positive) is not read further.
func readLine(br *bufio.Reader, buf []byte, limit int64) ([]byte, error) {
	for {
		frag, err := br.ReadSlice('\n')
		buf = append(buf, frag...)
		if limit > 0 && int64(len(buf)) > limit {
			return buf, errLineTooLong
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

type streamAcc struct {
	resp *Response
	// content, reasoning and the calls' arguments grow in builders: a long
	// response is tens of thousands of deltas.
	content, reasoning strings.Builder
	args               map[int]*strings.Builder
	calls              map[int]*ToolCall
	chunks             int
	// size is the generated text kept so far, in bytes.
	size        int64
	start       time.Time
	first, last time.Time
}

func (a *streamAcc) token() {
	now := time.Now()
	if a.first.IsZero() {
		a.first = now
	}
	a.last = now
}

func (a *streamAcc) chat(payload []byte) error {
	var w wireChat
	if err := json.Unmarshal(payload, &w); err != nil {
		return &Error{Kind: KindBadResponse, Message: "stream chunk is not JSON: " + string(truncate(payload, 200)), Err: err}
	}
	if w.Error != nil {
		return errorChunk(w.Error, a.partial())
	}
	r := a.resp
	if w.ID != "" {
		r.ID = w.ID
	}
	if w.Model != "" {
		r.Model = w.Model
	}
	if w.SystemFingerprint != "" {
		r.SystemFingerprint = w.SystemFingerprint
	}
	if w.Usage != nil {
		r.Usage = w.Usage.usage()
	}
	if w.Timings != nil {
		r.Timings = w.Timings
	}
	for _, ch := range w.Choices {
		got := false
		if d := ch.Delta.Content; d != nil && *d != "" {
			a.content.WriteString(*d)
			a.size += int64(len(*d))
			got = true
		} else if ch.Text != nil && *ch.Text != "" {
			a.content.WriteString(*ch.Text)
			a.size += int64(len(*ch.Text))
			got = true
		}
		if d := ch.Delta.ReasoningContent; d != nil && *d != "" {
			a.reasoning.WriteString(*d)
			a.size += int64(len(*d))
			got = true
		}
		for i := range ch.Delta.ToolCalls {
			tc := &ch.Delta.ToolCalls[i]
			idx := len(a.calls)
			if tc.Index != nil {
				idx = *tc.Index
			}
			c := a.calls[idx]
			if c == nil {
				c = &ToolCall{}
				a.calls[idx] = c
				a.args[idx] = &strings.Builder{}
			}
			if tc.ID != "" {
				c.ID = tc.ID
			}
			if tc.Function.Name != "" {
				c.Name += tc.Function.Name
			}
			args := tc.arguments()
			a.args[idx].WriteString(args)
			a.size += int64(len(args))
			got = true
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			r.FinishReason = *ch.FinishReason
		}
		if got {
			a.token()
		}
	}
	return nil
}

func (a *streamAcc) native(payload []byte) (bool, error) {
	var w wireNative
	if err := json.Unmarshal(payload, &w); err != nil {
		return false, &Error{Kind: KindBadResponse, Message: "stream chunk is not JSON: " + string(truncate(payload, 200)), Err: err}
	}
	if w.Error != nil {
		return false, errorChunk(w.Error, a.partial())
	}
	if w.Content != "" {
		a.content.WriteString(w.Content)
		a.size += int64(len(w.Content))
		a.token()
	}
	if w.Stop {
		w.finish(a.resp)
		return true, nil
	}
	return false, nil
}

// partial is the response so far with its tool calls in index order.
func (a *streamAcc) partial() *Response {
	if a.chunks == 0 {
		return nil
	}
	idx := make([]int, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	a.resp.Content, a.resp.ReasoningContent = a.content.String(), a.reasoning.String()
	a.resp.ToolCalls = a.resp.ToolCalls[:0]
	for _, i := range idx {
		c := *a.calls[i]
		c.Arguments = a.args[i].String()
		a.resp.ToolCalls = append(a.resp.ToolCalls, c)
	}
	if len(a.resp.ToolCalls) == 0 {
		a.resp.ToolCalls = nil
	}
	if !a.first.IsZero() {
		a.resp.TTFTSeconds = ptr(a.first.Sub(a.start).Seconds())
		a.resp.ClientDecodeSeconds = ptr(a.last.Sub(a.first).Seconds())
	}
	return a.resp
}

// cut ends a stream at the size cap: what arrived is kept, marked as cut
// and finished by length; the server's counts never came, so they are
// unknown (not the partial count of what was seen).
func (a *streamAcc) cut(maxBytes int64) *Response {
	r := a.partial()
	if r == nil {
		r = a.resp
	}
	r.FinishReason = FinishLength
	r.Usage, r.Timings = nil, nil
	r.Cut = &Cut{Bytes: maxBytes, Reason: fmt.Sprintf("the response passed the size cap of %d bytes", maxBytes)}
	return r
}

// end finishes the stream: complete on its end marker, else a broken stream.
func (a *streamAcc) end(err error, done bool) (*Response, error) {
	if err != nil {
		var me *Error
		if errors.As(err, &me) {
			return nil, me
		}
		return nil, &Error{Kind: KindBrokenStream, Message: "stream read failed", Partial: a.partial(), Err: err}
	}
	if !done {
		return nil, &Error{Kind: KindBrokenStream, Message: fmt.Sprintf("stream ended after %d chunks without its end marker", a.chunks), Partial: a.partial()}
	}
	r := a.partial()
	if r == nil {
		return nil, &Error{Kind: KindBadResponse, Message: "stream carried no chunk"}
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }
