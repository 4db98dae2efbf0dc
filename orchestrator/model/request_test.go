package model

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestChatBodyExtraSameBytes checks that merging Extra without re-encoding
// the messages gives exactly the bytes of the whole request decoded into a
// map, merged and encoded again.
func TestChatBodyExtraSameBytes(t *testing.T) {
	seed := int64(7)
	base := Request{
		Model: "m",
		Messages: []Message{
			{Role: RoleSystem, Content: "sys <b> & \u2028"},
			{Role: RoleUser, Content: ""},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls && echo <x>"}`}, {ID: "c2", Name: "grep"}}},
			{Role: RoleTool, ToolCallID: "c1", Content: "a\nb"},
		},
		Tools:      []Tool{{Name: "bash", Description: "run", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "none"}},
		ToolChoice: "auto",
		Params:     Params{Temperature: f64(0), Seed: &seed, MaxTokens: 64},
		Stream:     true,
	}
	for name, extra := range map[string]map[string]any{
		"plain":             {"top_k": 40, "n_probs": 2},
		"overrides a field": {"temperature": 0.5, "stream": false},
		"replaces messages": {"messages": []any{map[string]any{"role": "user", "content": "x"}}},
		"null messages":     {"messages": nil},
	} {
		t.Run(name, func(t *testing.T) {
			req := base
			req.Params.Extra = extra
			got, err := ChatBody(req)
			if err != nil {
				t.Fatal(err)
			}
			req.Params.Extra = nil
			whole, err := ChatBody(req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := mergeExtra(whole, extra)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
