package serving

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// wireServer answers with genuine llama-server bodies from testdata/wire
// (copied from shared/wire/llama-server) and records what it was sent.
func wireServer(t *testing.T, status int, file string, got *map[string]any) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata/wire", file))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got != nil {
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, got)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClientParsesRealLlamaServerAnswers(t *testing.T) {
	ctx := context.Background()
	var sent map[string]any
	c := &Client{BaseURL: wireServer(t, 200, "completion_ignore_eos.json", &sent).URL}
	temp := 0.0
	comp, err := c.Complete(ctx, CompletionRequest{Prompt: "Once upon a time", NPredict: 32, Seed: 42, Temperature: &temp})
	if err != nil {
		t.Fatal(err)
	}
	tm := comp.Timings
	if *tm.PredictedN != 32 || *tm.PredictedMS != 33.012 || *tm.PromptN != 4 || *tm.PromptMS != 1.777 || *tm.CacheN != 0 {
		t.Fatalf("timings = %+v", tm)
	}
	if tm.DraftN != nil {
		t.Fatal("no speculative decoding ran: draft_n must stay unknown")
	}
	if comp.StopType != "limit" || *comp.TokensPredicted != 32 || comp.WallSeconds <= 0 {
		t.Fatalf("completion = %+v", comp)
	}
	for k, want := range map[string]any{"n_predict": 32.0, "ignore_eos": true, "seed": 42.0, "cache_prompt": false, "temperature": 0.0} {
		if sent[k] != want {
			t.Fatalf("request %s = %v, want %v (sent %v)", k, sent[k], want, sent)
		}
	}

	c = &Client{BaseURL: wireServer(t, 200, "tokenize.json", &sent).URL}
	n, err := c.Tokenize(ctx, "Hello world! <|im_start|>user\nhi<|im_end|>")
	if err != nil || n != 9 {
		t.Fatalf("tokenize = %d, %v; want 9", n, err)
	}
	if sent["add_special"] != true {
		t.Fatal("tokenize must count special tokens as /completion adds them")
	}

	c = &Client{BaseURL: wireServer(t, 400, "context_overflow.json", nil).URL}
	_, err = c.Complete(ctx, CompletionRequest{Prompt: "x", NPredict: 1})
	var he *HTTPError
	if !errors.As(err, &he) || he.Type != "exceed_context_size_error" {
		t.Fatalf("err = %v, want a context-exceeded error", err)
	}
	if he := err.(*HTTPError); he.Status != 400 || he.Message == "" {
		t.Fatalf("HTTPError = %+v", he)
	}
}
