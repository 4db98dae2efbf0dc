package model

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Finish reasons a server reports for one response.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishToolCalls = "tool_calls"
)

// Message is one chat message. It is evalctl's own type so that nothing
// outside this package depends on the OpenAI library.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ReasoningContent is the model's thinking as llama-server returns it
	// separately from the answer (reasoning_format deepseek).
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID answers the call with that id (role "tool").
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call the model asked for. Arguments is the raw JSON
// text as the model wrote it, possibly malformed: the agent decides.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool describes a function the model may call; Parameters is a JSON Schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Params are the generation settings of an arm. Pointers are unset when nil:
// the server's own default applies, and nothing is sent.
type Params struct {
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"top_p,omitempty"`
	TopK          *int     `json:"top_k,omitempty"`
	MinP          *float64 `json:"min_p,omitempty"`
	RepeatPenalty *float64 `json:"repeat_penalty,omitempty"`
	Seed          *int64   `json:"seed,omitempty"`
	// MaxTokens is the per-response output cap (max_tokens); 0 leaves it to
	// the server. It is distinct from an attempt's generated-token budget.
	MaxTokens int `json:"max_tokens,omitempty"`
	// ReasoningEffort is sent as reasoning_effort ("low", "medium", "high").
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// EnableThinking is sent as chat_template_kwargs.enable_thinking.
	EnableThinking *bool `json:"enable_thinking,omitempty"`
	// IgnoreEOS makes llama-server generate exactly MaxTokens tokens
	// (throughput screens).
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
	// Extra is merged into the JSON body last, so an arm can pass any field
	// the server accepts (and override one evalctl sets).
	Extra map[string]any `json:"extra,omitempty"`
	// Timeout bounds one HTTP request (all of a stream); 0 means none beyond
	// the caller's context.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Request is one chat completion call.
type Request struct {
	Model    string
	Messages []Message
	Tools    []Tool
	// ToolChoice is "auto", "required", "none" or "" (not sent).
	ToolChoice string
	Params     Params
	// Stream asks for server-sent events with stream_options.include_usage;
	// it is what lets the client measure time to first token.
	Stream bool
	// CachePrompt is sent as cache_prompt when set: false keeps
	// llama-server from reusing its prompt cache for this request.
	CachePrompt *bool
}

// Usage is the OpenAI-style token count of one response.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// CachedTokens is prompt_tokens_details.cached_tokens; nil when absent.
	CachedTokens *int64 `json:"cached_tokens"`
}

// Timings is llama-server's timings object, the one type for it in
// evalctl: in transcripts, screen samples and capacity results. The typed
// fields are the ones evalctl reads; figures the server did not send are
// nil. Raw keeps the whole object as the server sent it, so that a field
// this version does not know survives in what is stored.
type Timings struct {
	CacheN         *int64   `json:"cache_n"`
	PromptN        *int64   `json:"prompt_n"`
	PromptMS       *float64 `json:"prompt_ms"`
	PredictedN     *int64   `json:"predicted_n"`
	PredictedMS    *float64 `json:"predicted_ms"`
	DraftN         *int64   `json:"draft_n"`
	DraftNAccepted *int64   `json:"draft_n_accepted"`
	// The server's own rates, as it computed them (predicted_per_second is
	// (predicted_n - 1) / predicted_ms, not evalctl's decode rate).
	PromptPerTokenMS    *float64 `json:"prompt_per_token_ms,omitempty"`
	PromptPerSecond     *float64 `json:"prompt_per_second,omitempty"`
	PredictedPerTokenMS *float64 `json:"predicted_per_token_ms,omitempty"`
	PredictedPerSecond  *float64 `json:"predicted_per_second,omitempty"`
	// Raw is the timings object byte for byte.
	Raw json.RawMessage `json:"raw"`
}

// Response is one model response with everything the client observed.
type Response struct {
	ID                string     `json:"id"`
	Model             string     `json:"model"`
	SystemFingerprint string     `json:"system_fingerprint,omitempty"`
	Content           string     `json:"content"`
	ReasoningContent  string     `json:"reasoning_content,omitempty"`
	ToolCalls         []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason is as the server sent it ("stop", "length",
	// "tool_calls"); empty when it sent none.
	FinishReason string `json:"finish_reason"`
	// StopType is /completion's own reason ("limit", "eos", "word");
	// empty for chat.
	StopType string   `json:"stop_type,omitempty"`
	Usage    *Usage   `json:"usage"`
	Timings  *Timings `json:"timings"`
	// Stream is whether the response came as server-sent events.
	Stream bool `json:"stream"`
	// WallSeconds runs from sending the request to the end of the body.
	WallSeconds float64 `json:"wall_seconds"`
	// TTFTSeconds is the time to the first generated token (content,
	// reasoning or tool call) of a stream; nil for a non-streamed response.
	TTFTSeconds *float64 `json:"ttft_seconds"`
	// ClientDecodeSeconds is the client-measured time from the first to the
	// last generated token of a stream; nil when not streamed.
	ClientDecodeSeconds *float64 `json:"client_decode_seconds"`
	// Tries counts HTTP requests made for this response (1 = no retry).
	Tries int `json:"tries"`
	// Retries are the failed tries before this response (never reached
	// the server: see Class), with the waits between them.
	Retries []Retry `json:"retries,omitempty"`
	// Cut is set when the client cut the response at its size cap; its
	// token count and timings are then unknown.
	Cut *Cut `json:"cut,omitempty"`
	// Anomalies say why the server's figures of this response were
	// rejected as implausible (negative or non-finite timings, a token
	// count disagreeing with usage, zero decode time with tokens); the
	// response's measurement is then unknown, never the implausible value.
	Anomalies []string `json:"anomalies,omitempty"`
}

// Cut records a response cut at the client's size cap.
type Cut struct {
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// Measured is whether the response's server figures can be used: not cut
// and without anomalies.
func (r *Response) Measured() bool { return r.Cut == nil && len(r.Anomalies) == 0 }

// checkMeasurement records what makes the response's figures implausible.
func (r *Response) checkMeasurement() {
	var bad []string
	count := func(name string, v *int64) {
		if v != nil && *v < 0 {
			bad = append(bad, fmt.Sprintf("%s is negative (%d)", name, *v))
		}
	}
	ms := func(name string, v *float64) {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
			bad = append(bad, fmt.Sprintf("%s is negative or not finite (%v)", name, *v))
		}
	}
	if t := r.Timings; t != nil {
		count("timings.predicted_n", t.PredictedN)
		count("timings.prompt_n", t.PromptN)
		count("timings.cache_n", t.CacheN)
		count("timings.draft_n", t.DraftN)
		count("timings.draft_n_accepted", t.DraftNAccepted)
		ms("timings.predicted_ms", t.PredictedMS)
		ms("timings.prompt_ms", t.PromptMS)
		if t.PredictedN != nil && t.PredictedMS != nil && *t.PredictedN > 0 && *t.PredictedMS == 0 {
			bad = append(bad, fmt.Sprintf("timings.predicted_ms is 0 with %d tokens generated", *t.PredictedN))
		}
		if t.PredictedN != nil && r.Usage != nil && r.Usage.CompletionTokens != *t.PredictedN {
			bad = append(bad, fmt.Sprintf("usage.completion_tokens %d disagrees with timings.predicted_n %d", r.Usage.CompletionTokens, *t.PredictedN))
		}
	}
	if u := r.Usage; u != nil {
		count("usage.completion_tokens", &u.CompletionTokens)
		count("usage.prompt_tokens", &u.PromptTokens)
	}
	if r.ClientDecodeSeconds != nil {
		ms("client decode seconds", r.ClientDecodeSeconds)
	}
	r.Anomalies = bad
}

// SpentTokens is a lower bound of what the response generated, for
// budgets: the largest non-negative count the server gave, whether or not
// the measurement was accepted, so that a budget never counts backwards.
func (r *Response) SpentTokens() int64 {
	var n int64
	if r.Timings != nil && r.Timings.PredictedN != nil {
		n = max(n, *r.Timings.PredictedN)
	}
	if r.Usage != nil {
		n = max(n, r.Usage.CompletionTokens)
	}
	return n
}

// Message returns the assistant message to append to the conversation.
func (r *Response) Message() Message {
	return Message{Role: RoleAssistant, Content: r.Content, ReasoningContent: r.ReasoningContent, ToolCalls: r.ToolCalls}
}

// OutputTokens is the number of generated tokens the server reported:
// timings.predicted_n when present (it includes reasoning and tool-call
// syntax), else usage.completion_tokens. ok is false when neither was sent
// or the response's measurement was rejected (see Measured).
func (r *Response) OutputTokens() (n int64, ok bool) {
	if !r.Measured() {
		return 0, false
	}
	if r.Timings != nil && r.Timings.PredictedN != nil {
		return *r.Timings.PredictedN, true
	}
	if r.Usage != nil {
		return r.Usage.CompletionTokens, true
	}
	return 0, false
}

// DecodeSeconds is the decode time of the response: the server's
// timings.predicted_ms when present (server=true); else the client-measured
// first-to-last-token time of a stream, or the wall time of a non-streamed
// response, with server=false.
func (r *Response) DecodeSeconds() (seconds float64, server bool) {
	if r.Timings != nil && r.Timings.PredictedMS != nil {
		return *r.Timings.PredictedMS / 1000, true
	}
	if r.ClientDecodeSeconds != nil {
		return *r.ClientDecodeSeconds, false
	}
	return r.WallSeconds, false
}

// SequenceTokens is prompt plus output tokens of this response (the context
// it occupied), from timings when present, else usage; ok false if unknown.
func (r *Response) SequenceTokens() (n int64, ok bool) {
	if !r.Measured() {
		return 0, false
	}
	if t := r.Timings; t != nil && t.PromptN != nil && t.PredictedN != nil {
		n = *t.PromptN + *t.PredictedN
		if t.CacheN != nil {
			n += *t.CacheN
		}
		return n, true
	}
	if r.Usage != nil {
		return r.Usage.PromptTokens + r.Usage.CompletionTokens, true
	}
	return 0, false
}
