package grader_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// flaky fails the first n container starts, as a Docker Engine under load
// does now and then, and passes the others to the real engine.
type flaky struct {
	grader.Engine
	mu sync.Mutex
	n  int
}

func (f *flaky) Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error) {
	f.mu.Lock()
	fail := f.n > 0
	f.n--
	f.mu.Unlock()
	if fail {
		return nil, errors.New("docker: connection reset by peer")
	}
	return f.Engine.Start(ctx, spec)
}

// TestGateInfraErrorIsPerVariant: an infrastructure error is retried; when
// retries run out it costs only that variant's row, every other row is
// complete, the rows arrive one by one, and the run's label is its own.
func TestGateInfraErrorIsPerVariant(t *testing.T) {
	s, _ := setup(t)
	eng, img := sandboxtest.Engine(t)
	run := fmt.Sprintf("test-gate-%d", time.Now().UnixNano())
	t.Cleanup(func() { eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: run}) })
	adder := s.Cases[:1]

	g := grader.New(&flaky{Engine: eng, n: 1}, img.Ref, img.ID, grader.Options{Concurrency: 1})
	var streamed []string
	results, err := g.CheckCasesWith(context.Background(), s, adder, grader.CheckOptions{Run: run, Retries: 1,
		OnResult: func(r grader.CheckResult) { streamed = append(streamed, r.Variant) }})
	if err != nil {
		t.Fatalf("with a retry: %v", err)
	}
	for _, r := range results {
		if !r.Met {
			t.Errorf("with a retry, %s: %v", r.Variant, r.Problems)
		}
	}
	if len(streamed) != len(results) {
		t.Errorf("streamed %v for %d rows", streamed, len(results))
	}

	g = grader.New(&flaky{Engine: eng, n: 1}, img.Ref, img.ID, grader.Options{Concurrency: 1})
	results, err = g.CheckCasesWith(context.Background(), s, adder, grader.CheckOptions{Run: run, Retries: 0})
	var ie *grader.InfraError
	if !errors.As(err, &ie) {
		t.Fatalf("no retry: error %v, want an InfraError", err)
	}
	bad := 0
	for _, r := range results {
		switch {
		case r.Grade == nil:
			bad++
			if r.Met || !strings.Contains(strings.Join(r.Problems, ";"), "infrastructure error after 1 tries: ") {
				t.Errorf("%s: %+v", r.Variant, r)
			}
		case !r.Met:
			t.Errorf("%s lost to another variant's error: %v", r.Variant, r.Problems)
		}
	}
	if bad != 1 {
		t.Errorf("%d rows without a grade, want 1", bad)
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: run}); len(left) != 0 {
		t.Errorf("containers of the run left: %v", left)
	}
}
