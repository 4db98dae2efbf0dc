package model

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestScreenOptions: what throughput screens and capacity probes need of
// the one client, on the real captures: a cold /completion with the
// server's own rates and stop type, token counts with the special tokens
// /completion adds, a configurable health path, and no retries.
func TestScreenOptions(t *testing.T) {
	ctx := context.Background()
	rp, srv := newReplay(t, map[string]string{"/completion": "completion_ignore_eos", "/tokenize": "tokenize", "/ready": "health"})
	c := New(Config{BaseURL: srv.URL, AddSpecial: true, HealthPath: "/ready", Retry: RetryPolicy{MaxRetries: -1}})

	seed, temp, cache := int64(42), 0.0, false
	resp, err := c.Complete(ctx, CompletionRequest{Prompt: "Once upon a time", NPredict: 32, IgnoreEOS: true, Seed: &seed,
		Temperature: &temp, CachePrompt: &cache, Extra: map[string]any{"logit_bias": [][]int{{50259, 50}}}})
	if err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	if err := json.Unmarshal(rp.got[0], &sent); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"n_predict": 32.0, "ignore_eos": true, "seed": 42.0, "cache_prompt": false, "temperature": 0.0} {
		if sent[k] != want {
			t.Errorf("request %s = %v, want %v (sent %s)", k, sent[k], want, rp.got[0])
		}
	}
	if _, ok := sent["logit_bias"]; !ok {
		t.Errorf("extra field not sent: %s", rp.got[0])
	}
	tm := resp.Timings
	if resp.StopType != "limit" || *tm.PredictedN != 32 || *tm.PredictedMS != 33.012 || *tm.PromptN != 4 || *tm.CacheN != 0 ||
		tm.PredictedPerSecond == nil || *tm.PredictedPerSecond != 939.052465770023 || *tm.PromptPerSecond != 2250.9848058525604 {
		t.Errorf("stop %q timings %+v", resp.StopType, tm)
	}
	if tm.DraftN != nil {
		t.Error("no speculative decoding ran: draft_n must stay unknown")
	}
	if resp.WallSeconds <= 0 {
		t.Errorf("wall seconds %v", resp.WallSeconds)
	}

	n, err := c.CountTokens(ctx, "Hello world! <|im_start|>user\nhi<|im_end|>")
	if err != nil || n != 9 {
		t.Fatalf("count = %d, %v; want 9", n, err)
	}
	if json.Unmarshal(rp.got[1], &sent); sent["add_special"] != true {
		t.Errorf("AddSpecial: sent %s", rp.got[1])
	}
	if _, err := New(Config{BaseURL: srv.URL}).Tokenize(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if json.Unmarshal(rp.got[2], &sent); sent["add_special"] != false {
		t.Errorf("default: sent %s, want add_special false", rp.got[2])
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("health at /ready: %v", err)
	}
	if err := New(Config{BaseURL: srv.URL}).Health(ctx); err == nil {
		t.Error("health at /health (not served here) passed")
	}

	// No retries: a server that is gone is asked once.
	gone := httptest.NewServer(nil)
	gone.Close()
	_, err = New(Config{BaseURL: gone.URL, Retry: RetryPolicy{MaxRetries: -1}}).Complete(ctx, CompletionRequest{Prompt: "x", NPredict: 1})
	var me *Error
	if !asError(err, &me) || me.Tries != 1 || len(me.Retries) != 0 {
		t.Fatalf("err = %v (%+v), want one try", err, me)
	}
}

func TestParseTokenizeRefusesAnAnswerWithoutTokens(t *testing.T) {
	for body, want := range map[string]int{`{"tokens": []}`: 0, `{"tokens": [1, {"id": 2, "piece": "b"}]}`: 2} {
		if ids, err := ParseTokenize([]byte(body)); err != nil || len(ids) != want {
			t.Errorf("%s: %v, %v; want %d ids", body, ids, err, want)
		}
	}
	for _, body := range []string{`{}`, `{"token": [1]}`, `[1, 2]`} {
		if ids, err := ParseTokenize([]byte(body)); err == nil {
			t.Errorf("%s: %v, want an error (no count is not a count of 0)", body, ids)
		}
	}
}
