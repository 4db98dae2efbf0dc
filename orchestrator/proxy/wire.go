package proxy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/evalctl/evalctl/orchestrator/model"
)

// chatRequest is the part of an OpenAI-compatible chat request the proxy
// reads from the agent; everything else the agent sends is dropped: the
// arm, not the agent, decides sampling.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []wireMessage `json:"messages"`
	Tools               []wireTool    `json:"tools"`
	ToolChoice          any           `json:"tool_choice"`
	Stream              bool          `json:"stream"`
	MaxTokens           int           `json:"max_tokens"`
	MaxCompletionTokens int           `json:"max_completion_tokens"`
}

type wireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []wireCall      `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

type wireCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// text is a message's content: a string, or the text parts of a list.
func text(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither text nor a list of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content part of type %q: only text reaches a local model", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// messages converts the agent's conversation to the client's messages.
func (r *chatRequest) messages() ([]model.Message, error) {
	out := make([]model.Message, 0, len(r.Messages))
	for i, m := range r.Messages {
		content, err := text(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		msg := model.Message{Role: m.Role, Content: content, ReasoningContent: m.ReasoningContent, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		out = append(out, msg)
	}
	return out, nil
}

func (r *chatRequest) tools() []model.Tool {
	var out []model.Tool
	for _, t := range r.Tools {
		out = append(out, model.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out
}

// toolChoice keeps the string forms; a forced function is sent as auto.
func (r *chatRequest) toolChoice() string {
	if s, ok := r.ToolChoice.(string); ok {
		return s
	}
	if len(r.Tools) > 0 {
		return "auto"
	}
	return ""
}

// completion is the response as the agent receives it: the server's
// content, calls, finish reason and usage, re-encoded.
func completion(resp *model.Response, modelName string) map[string]any {
	msg := map[string]any{"role": "assistant", "content": resp.Content}
	if resp.ReasoningContent != "" {
		msg["reasoning_content"] = resp.ReasoningContent
	}
	if len(resp.ToolCalls) > 0 {
		msg["tool_calls"] = calls(resp.ToolCalls)
	}
	out := map[string]any{
		"id": resp.ID, "object": "chat.completion", "model": modelName,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish(resp)}},
	}
	if u := usage(resp); u != nil {
		out["usage"] = u
	}
	return out
}

func calls(tcs []model.ToolCall) []map[string]any {
	var out []map[string]any
	for i, tc := range tcs {
		out = append(out, map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
	}
	return out
}

func finish(resp *model.Response) any {
	if resp.FinishReason == "" {
		return nil
	}
	return resp.FinishReason
}

// usage is the server's own count as the agent would have seen it.
func usage(resp *model.Response) map[string]any {
	if resp.Usage == nil {
		return nil
	}
	return map[string]any{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens, "total_tokens": resp.Usage.TotalTokens}
}

// chunks are the response as server-sent events: the message in one
// delta, then the finish reason, then the usage.
func chunks(resp *model.Response, modelName string) []map[string]any {
	delta := map[string]any{"role": "assistant", "content": resp.Content}
	if resp.ReasoningContent != "" {
		delta["reasoning_content"] = resp.ReasoningContent
	}
	if len(resp.ToolCalls) > 0 {
		delta["tool_calls"] = calls(resp.ToolCalls)
	}
	base := func(choices []any) map[string]any {
		return map[string]any{"id": resp.ID, "object": "chat.completion.chunk", "model": modelName, "choices": choices}
	}
	out := []map[string]any{
		base([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}),
		base([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish(resp)}}),
	}
	if u := usage(resp); u != nil {
		last := base([]any{})
		last["usage"] = u
		out = append(out, last)
	}
	return out
}
