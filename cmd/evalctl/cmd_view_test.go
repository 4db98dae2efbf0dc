package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/evalctl/evalctl/cmd/evalctl/internal/cli"
)

// TestViewCommand: 'evalctl view DIR' serves on loopback, says where, serves
// the page and the runs, and stops on Ctrl-C (the context).
func TestViewCommand(t *testing.T) {
	root := copyRecorded(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &cli.Env{Stdout: &out, Stderr: &errb}, []string{"view", root, "--addr", "127.0.0.1:0"})
	}()
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)/`)
	var base string
	if !poll.For(10*time.Second, func() bool {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		return base != ""
	}) {
		cancel()
		t.Fatalf("view did not say where it serves: %q %q", out.String(), errb.String())
	}
	for path, want := range map[string]string{"/": "evalctl view", "/api/runs": `"name":"fixture-ab"`, "/assets/app.js": "use strict"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.200s", path, res.StatusCode, body)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("view did not stop")
	}
	if strings.Contains(errb.String(), "warning") {
		t.Errorf("loopback warned: %s", errb.String())
	}
	code, _, errs := runCLI(t, "view", root, "--addr", "nonsense")
	if code != 2 || !strings.Contains(errs, "--addr") {
		t.Errorf("bad --addr: exit %d %q", code, errs)
	}
}
