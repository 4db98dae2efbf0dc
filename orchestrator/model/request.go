package model

import (
	"encoding/json"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// wireRequest is go-openai's chat request extended with what llama-server
// accepts beyond OpenAI's API. Fields declared here shadow the embedded ones
// of the same JSON name (encoding/json prefers the shallower field):
//   - temperature and top_p, because go-openai's float32 with omitempty
//     cannot send 0 (greedy decoding) and rounds 0.7 to 0.699999988;
//   - seed, to carry an int64;
//   - messages, because go-openai drops an empty "content", which
//     llama-server rejects for an assistant message without tool calls.
type wireRequest struct {
	openai.ChatCompletionRequest
	Messages      []wireMessage `json:"messages"`
	Temperature   *float64      `json:"temperature,omitempty"`
	TopP          *float64      `json:"top_p,omitempty"`
	Seed          *int64        `json:"seed,omitempty"`
	TopK          *int          `json:"top_k,omitempty"`
	MinP          *float64      `json:"min_p,omitempty"`
	RepeatPenalty *float64      `json:"repeat_penalty,omitempty"`
	IgnoreEOS     bool          `json:"ignore_eos,omitempty"`
	CachePrompt   *bool         `json:"cache_prompt,omitempty"`
}

// wireMessage always carries "content" (llama-server requires it unless
// tool calls are present; an empty string is accepted everywhere).
type wireMessage struct {
	Role             string            `json:"role"`
	Content          string            `json:"content"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	ToolCalls        []openai.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string            `json:"tool_call_id,omitempty"`
}

// ChatBody renders the JSON body of a chat completion request exactly as the
// client sends it: go-openai's request, llama-server's sampling fields, and
// last the arm's Extra map, whose keys win over anything set before.
func ChatBody(req Request) ([]byte, error) {
	p := req.Params
	w := wireRequest{
		ChatCompletionRequest: openai.ChatCompletionRequest{
			Model:           req.Model,
			MaxTokens:       p.MaxTokens,
			Stream:          req.Stream,
			ReasoningEffort: p.ReasoningEffort,
		},
		Temperature:   p.Temperature,
		TopP:          p.TopP,
		Seed:          p.Seed,
		TopK:          p.TopK,
		MinP:          p.MinP,
		RepeatPenalty: p.RepeatPenalty,
		IgnoreEOS:     p.IgnoreEOS,
		CachePrompt:   req.CachePrompt,
	}
	if req.Stream {
		w.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	if p.EnableThinking != nil {
		w.ChatTemplateKwargs = map[string]any{"enable_thinking": *p.EnableThinking}
	}
	if req.ToolChoice != "" {
		w.ToolChoice = req.ToolChoice
	}
	for _, t := range req.Tools {
		params := any(t.Parameters)
		if len(t.Parameters) == 0 {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		w.Tools = append(w.Tools, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	w.Messages = make([]wireMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		wm := wireMessage{Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if args == "" {
				args = "{}"
			}
			wm.ToolCalls = append(wm.ToolCalls, openai.ToolCall{
				ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: args},
			})
		}
		w.Messages = append(w.Messages, wm)
	}
	if len(p.Extra) == 0 {
		body, err := json.Marshal(w)
		if err != nil {
			return nil, fmt.Errorf("encode chat request: %w", err)
		}
		return body, nil
	}
	// With Extra the body is re-encoded as a map: only the request without
	// its messages goes through that round trip, the conversation (the bulk
	// of it, growing every step) is encoded once and added as it is, unless
	// Extra replaces it.
	msgs := w.Messages
	w.Messages = nil
	head, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode chat request: %w", err)
	}
	var late map[string]json.RawMessage
	if _, ok := p.Extra["messages"]; !ok {
		raw, err := json.Marshal(msgs)
		if err != nil {
			return nil, fmt.Errorf("encode chat request: %w", err)
		}
		late = map[string]json.RawMessage{"messages": raw}
	}
	return mergeFields(head, late, p.Extra)
}

// mergeExtra sets each key of extra at the top level of the JSON object body.
func mergeExtra(body []byte, extra map[string]any) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	return mergeFields(body, nil, extra)
}

// mergeFields sets at the top level of the JSON object body each already
// encoded field of raw, then each key of extra (which wins). The result is
// a map's encoding: its keys are sorted.
func mergeFields(body []byte, raw map[string]json.RawMessage, extra map[string]any) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("merge extra fields: %w", err)
	}
	for k, v := range raw {
		obj[k] = v
	}
	for k, v := range extra {
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("merge extra field %q: %w", k, err)
		}
		obj[k] = enc
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("merge extra fields: %w", err)
	}
	return out, nil
}

// CompletionRequest is a call to llama-server's native /completion endpoint,
// used by throughput screens and capacity probes: a raw prompt and exactly
// NPredict tokens when IgnoreEOS is set.
type CompletionRequest struct {
	Prompt    string
	NPredict  int
	IgnoreEOS bool
	Seed      *int64
	// Temperature is sent when set; nil keeps the server's default.
	Temperature *float64
	// CachePrompt is sent when set: false keeps the server from reusing a
	// cached prefix of the prompt (a cold measurement).
	CachePrompt *bool
	Stream      bool
	// Extra is merged into the body last, as for chat.
	Extra   map[string]any
	Timeout time.Duration
}

func completionBody(req CompletionRequest) ([]byte, error) {
	body, err := json.Marshal(struct {
		Prompt      string   `json:"prompt"`
		NPredict    int      `json:"n_predict,omitempty"`
		IgnoreEOS   bool     `json:"ignore_eos,omitempty"`
		Seed        *int64   `json:"seed,omitempty"`
		Temperature *float64 `json:"temperature,omitempty"`
		CachePrompt *bool    `json:"cache_prompt,omitempty"`
		Stream      bool     `json:"stream,omitempty"`
	}{req.Prompt, req.NPredict, req.IgnoreEOS, req.Seed, req.Temperature, req.CachePrompt, req.Stream})
	if err != nil {
		return nil, fmt.Errorf("encode completion request: %w", err)
	}
	return mergeExtra(body, req.Extra)
}
