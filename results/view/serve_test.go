package view

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/evalctl/evalctl"
)

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8765": false, "localhost:1": false, "[::1]:2": false, "0.0.0.0:8765": true, ":8765": true, "example.org:80": true} {
		got, err := Public(addr)
		if err != nil || got != want {
			t.Errorf("Public(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := Public("nonsense"); err == nil {
		t.Error("an address without a port was accepted")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServe: the viewer says where it listens, serves the page, and stops
// when its context ends.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, t.TempDir(), "127.0.0.1:0", &out) }()
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)/`)
	var base string
	if !poll.For(10*time.Second, func() bool {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		return base != ""
	}) {
		cancel()
		t.Fatalf("Serve did not say where it listens: %q", out.String())
	}
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "evalctl view") {
		t.Errorf("/: %d %.200s", res.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}

// TestServeRunsRefuses: what 'evalctl view' is given that names no folder
// of runs, or no address, is a usage error, found before listening.
func TestServeRunsRefuses(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644)
	for _, tt := range []struct{ root, dir, addr, want string }{
		{filepath.Join(root, "nope"), "", "127.0.0.1:0", "nope is not a directory of runs"},
		{root, "nosuchrun", "127.0.0.1:0", `run "nosuchrun": no such run`},
		{root, "", "no-port", `--addr "no-port"`},
		{root, "file", "127.0.0.1:0", `run "file": no such run`},
	} {
		err := ServeRuns(context.Background(), tt.root, tt.dir, tt.addr, io.Discard, io.Discard)
		var ue *evalctl.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ServeRuns(%s, %q, %s) = %v; want a usage error with %q", tt.root, tt.dir, tt.addr, err, tt.want)
		}
	}
}
