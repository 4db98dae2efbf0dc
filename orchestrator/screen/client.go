package screen

import (
	"context"
	"errors"
	"time"

	"github.com/evalctl/evalctl/orchestrator/model"
)

// newClient is the one llama-server client as screens and probes use it:
// token counts include the special tokens /completion adds (prompts are
// sized as the server sees them), and nothing is retried (a sample sent
// twice is not the sample planned).
func newClient(baseURL string) *model.Client {
	return model.New(model.Config{BaseURL: baseURL, AddSpecial: true, Retry: model.RetryPolicy{MaxRetries: -1}, InfoTimeout: time.Minute})
}

// errNoTimings: a screen measures from the server's timings; an answer
// without them measures nothing.
var errNoTimings = errors.New("/completion: answer has no timings (is this llama-server?)")

// complete asks /completion for exactly n tokens (ignore_eos) without
// reusing any cached prompt; temp is sent when set, extra (a mode's
// request fields) last.
func complete(ctx context.Context, c *model.Client, prompt string, n int, seed int64, temp *float64, extra map[string]any) (*model.Response, error) {
	cold := false
	resp, err := c.Complete(ctx, model.CompletionRequest{Prompt: prompt, NPredict: n, IgnoreEOS: true, Seed: &seed,
		Temperature: temp, CachePrompt: &cold, Extra: extra})
	if err != nil {
		return nil, err
	}
	if resp.Timings == nil {
		return nil, errNoTimings
	}
	return resp, nil
}
