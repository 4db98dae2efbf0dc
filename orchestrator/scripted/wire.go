package scripted

import (
	"encoding/json"
	"strings"
)

// The server's own JSON types: llama-server's protocol as the captures in
// orchestrator/model/testdata/llama-server show it. The scripted server deliberately shares
// no type with the client, so a misunderstanding of the protocol cannot
// hide on both sides at once.

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	Tools               []tool          `json:"tools"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	NPredict            *int            `json:"n_predict"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	Seed                *int64          `json:"seed"`
	ChatTemplateKwargs  map[string]any  `json:"chat_template_kwargs"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	// CachePrompt false makes the whole prompt be processed again, as
	// llama-server does; absent means true.
	CachePrompt *bool `json:"cache_prompt"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type message struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	ToolCalls        []toolCall      `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
}

// text is the message content: a string, or the text parts of an array.
func (m *message) text() string {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(m.Content)
}

type toolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Response side.

type chatResponse struct {
	Choices           []choice `json:"choices"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	SystemFingerprint string   `json:"system_fingerprint"`
	Object            string   `json:"object"`
	Usage             *usage   `json:"usage,omitempty"`
	ID                string   `json:"id"`
	Timings           *timings `json:"timings,omitempty"`
}

type choice struct {
	FinishReason *string   `json:"finish_reason"`
	Index        int       `json:"index"`
	Message      *outMsg   `json:"message,omitempty"`
	Delta        *outDelta `json:"delta,omitempty"`
	Text         *string   `json:"text,omitempty"`
}

type outMsg struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

// outDelta marshals "content": null in the first chunk, as llama-server.
type outDelta struct {
	Role             string     `json:"role,omitempty"`
	Content          *string    `json:"content,omitempty"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
	nullContent      bool
}

func (d outDelta) MarshalJSON() ([]byte, error) {
	type plain outDelta
	b, err := json.Marshal(plain(d))
	if err != nil || !d.nullContent {
		return b, err
	}
	// {"role":"assistant"} -> {"role":"assistant","content":null}
	return append(b[:len(b)-1], []byte(`,"content":null}`)...), nil
}

type usage struct {
	CompletionTokens    int64          `json:"completion_tokens"`
	PromptTokens        int64          `json:"prompt_tokens"`
	TotalTokens         int64          `json:"total_tokens"`
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// timings has llama-server's field names and order; draft fields appear
// only when speculative decoding is emulated, as llama-server does.
type timings struct {
	CacheN              int64   `json:"cache_n"`
	PromptN             int64   `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int64   `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
	DraftN              *int64  `json:"draft_n,omitempty"`
	DraftNAccepted      *int64  `json:"draft_n_accepted,omitempty"`
}

type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Code          int    `json:"code"`
	Message       string `json:"message"`
	Type          string `json:"type"`
	NPromptTokens *int64 `json:"n_prompt_tokens,omitempty"`
	NCtx          *int64 `json:"n_ctx,omitempty"`
}

// Native /completion.

type completionRequest struct {
	Prompt    json.RawMessage `json:"prompt"`
	NPredict  *int            `json:"n_predict"`
	MaxTokens *int            `json:"max_tokens"`
	IgnoreEOS bool            `json:"ignore_eos"`
	Stream    bool            `json:"stream"`
	Seed      *int64          `json:"seed"`
	Model     string          `json:"model"`
	// CachePrompt: as in chatRequest.
	CachePrompt *bool `json:"cache_prompt"`
}

type nativeChunk struct {
	Index           int      `json:"index"`
	Content         string   `json:"content"`
	Tokens          []int64  `json:"tokens"`
	Stop            bool     `json:"stop"`
	IDSlot          int      `json:"id_slot"`
	Model           string   `json:"model,omitempty"`
	TokensPredicted int64    `json:"tokens_predicted"`
	TokensEvaluated int64    `json:"tokens_evaluated"`
	Prompt          *string  `json:"prompt,omitempty"`
	StopType        string   `json:"stop_type,omitempty"`
	TokensCached    *int64   `json:"tokens_cached,omitempty"`
	Timings         *timings `json:"timings,omitempty"`
}
