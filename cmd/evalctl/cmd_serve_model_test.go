package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl/cmd/evalctl/internal/cli"
	"github.com/evalctl/evalctl/internal/poll"
)

func TestServeModelErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"allocation failure above the limit", []string{"serve-model", "--ctx-size", "262144", "--fail-above-ctx", "225280"}, 1, "failed to allocate buffer for kv cache"},
		{"stray argument", []string{"serve-model", "extra"}, 2, "takes no arguments"},
		{"bad draft rate", []string{"serve-model", "--draft-acceptance", "1.5"}, 2, "not in [0, 1]"},
		{"missing suite", []string{"serve-model", "--suite", t.TempDir()}, 2, "suite.yaml: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.stderr)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe to read while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The command serves until its context ends, then exits 0.
func TestServeModelServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int)
	go func() {
		done <- run(ctx, &cli.Env{Stdout: &out, Stderr: &errb}, []string{"serve-model", "--addr", "127.0.0.1:0", "--ctx-size", "4096"})
	}()
	var url string
	poll.For(10*time.Second, func() bool {
		if f := strings.Fields(out.String()); len(f) > 4 && strings.HasPrefix(f[4], "http://") {
			url = f[4]
		}
		return url != ""
	})
	if url == "" {
		t.Fatalf("no URL announced: %q %q", out.String(), errb.String())
	}
	resp, err := http.Get(url + "/props")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"n_ctx":4096`) || !strings.Contains(string(body), `"build_info":"evalctl-scripted-`) {
		t.Errorf("props = %s", body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after the context ended", code)
	}
	if !strings.Contains(errb.String(), "GET /props") {
		t.Errorf("no request log: %q", errb.String())
	}
	// Every model it answers to is announced.
	for _, m := range []string{"reference", "flawed", "busy", "control:<name>"} {
		if !strings.Contains(out.String(), m) {
			t.Errorf("start-up line does not name model %s: %q", m, out.String())
		}
	}
}
