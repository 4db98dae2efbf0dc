package serving

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client speaks llama-server's native endpoints (/tokenize, /completion,
// /props) with plain HTTP: a screen needs exact prompt sizes and raw
// timings, which the OpenAI-shaped API does not give.
type Client struct {
	BaseURL string
	// HTTP is the client used; nil means one without a global timeout
	// (each call gets its own through ctx).
	HTTP *http.Client
}

// Timings is llama-server's timings object. Figures the server did not send
// are nil; draft counts are left out as the server leaves them out when no
// speculative decoding ran.
type Timings struct {
	CacheN              *int64   `json:"cache_n"`
	PromptN             *int64   `json:"prompt_n"`
	PromptMS            *float64 `json:"prompt_ms"`
	PromptPerTokenMS    *float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     *float64 `json:"prompt_per_second"`
	PredictedN          *int64   `json:"predicted_n"`
	PredictedMS         *float64 `json:"predicted_ms"`
	PredictedPerTokenMS *float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  *float64 `json:"predicted_per_second"`
	DraftN              *int64   `json:"draft_n,omitempty"`
	DraftNAccepted      *int64   `json:"draft_n_accepted,omitempty"`
}

// CompletionRequest asks /completion for exactly NPredict tokens.
type CompletionRequest struct {
	Prompt   string
	NPredict int
	Seed     int64
	// Temperature is sent when set; nil keeps the server's default.
	Temperature *float64
	// Extra fields are added to the body last (a mode's request fields).
	Extra map[string]any
}

// Completion is one /completion answer and how long it took.
type Completion struct {
	Timings Timings
	// TokensPredicted is the body's tokens_predicted; StopType why it
	// stopped ("limit" when the token count was reached).
	TokensPredicted *int64
	StopType        string
	Truncated       bool
	// WallSeconds runs from sending the request to the last byte of the
	// answer, as a client experiences it.
	WallSeconds float64
	StartedAt   time.Time
}

// HTTPError is a non-200 answer. Type is the error type llama-server
// reports ("exceed_context_size_error"), when there is one.
type HTTPError struct {
	Endpoint string
	Status   int
	Type     string
	Message  string
}

func (e *HTTPError) Error() string {
	if e.Type != "" {
		return fmt.Sprintf("%s: HTTP %d %s: %s", e.Endpoint, e.Status, e.Type, e.Message)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Endpoint, e.Status, e.Message)
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// post sends body as JSON and returns the raw answer.
func (c *Client) post(ctx context.Context, endpoint string, body any) ([]byte, time.Time, time.Duration, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, time.Time{}, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+endpoint, bytes.NewReader(data))
	if err != nil {
		return nil, time.Time{}, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, start, 0, fmt.Errorf("%s: %w", endpoint, err)
	}
	raw, err := io.ReadAll(resp.Body)
	wall := time.Since(start)
	resp.Body.Close()
	if err != nil {
		return nil, start, wall, fmt.Errorf("%s: read answer: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, start, wall, httpError(endpoint, resp.StatusCode, raw)
	}
	return raw, start, wall, nil
}

func httpError(endpoint string, status int, raw []byte) *HTTPError {
	he := &HTTPError{Endpoint: endpoint, Status: status}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && (body.Error.Message != "" || body.Error.Type != "") {
		he.Type, he.Message = body.Error.Type, body.Error.Message
	} else {
		msg := strings.TrimSpace(string(raw))
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		he.Message = msg
	}
	return he
}

// Tokenize counts the tokens of text as /completion will see it (with the
// model's special tokens, e.g. BOS, added).
func (c *Client) Tokenize(ctx context.Context, text string) (int, error) {
	raw, _, _, err := c.post(ctx, "/tokenize", map[string]any{"content": text, "add_special": true})
	if err != nil {
		return 0, err
	}
	var body struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return 0, fmt.Errorf("/tokenize: answer not understood: %w", err)
	}
	if body.Tokens == nil {
		return 0, fmt.Errorf("/tokenize: answer has no tokens field")
	}
	return len(body.Tokens), nil
}

// Complete asks /completion for exactly r.NPredict tokens with ignore_eos
// and without reusing any cached prompt. Encoding the request and decoding
// the answer happen outside the timed span, so WallSeconds is the HTTP
// exchange alone.
func (c *Client) Complete(ctx context.Context, r CompletionRequest) (*Completion, error) {
	raw, start, wall, err := c.post(ctx, "/completion", completionBody(r))
	if err != nil {
		return nil, err
	}
	comp, err := parseCompletion(raw)
	if err != nil {
		return nil, err
	}
	comp.WallSeconds, comp.StartedAt = wall.Seconds(), start.UTC()
	return comp, nil
}

func completionBody(r CompletionRequest) map[string]any {
	body := map[string]any{
		"prompt":       r.Prompt,
		"n_predict":    r.NPredict,
		"ignore_eos":   true,
		"seed":         r.Seed,
		"cache_prompt": false,
		"stream":       false,
	}
	if r.Temperature != nil {
		body["temperature"] = *r.Temperature
	}
	for k, v := range r.Extra {
		body[k] = v
	}
	return body
}

func parseCompletion(raw []byte) (*Completion, error) {
	var ans struct {
		Timings         *Timings `json:"timings"`
		TokensPredicted *int64   `json:"tokens_predicted"`
		StopType        string   `json:"stop_type"`
		Truncated       bool     `json:"truncated"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("/completion: answer not understood: %w", err)
	}
	if ans.Timings == nil {
		return nil, fmt.Errorf("/completion: answer has no timings (is this llama-server?)")
	}
	return &Completion{Timings: *ans.Timings, TokensPredicted: ans.TokensPredicted, StopType: ans.StopType, Truncated: ans.Truncated}, nil
}

// get fetches a JSON document.
func (c *Client) get(ctx context.Context, endpoint string) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+endpoint, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, httpError(endpoint, resp.StatusCode, raw)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: answer not understood: %w", endpoint, err)
	}
	return m, nil
}
