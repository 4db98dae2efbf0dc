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

// labelled records the run label of every container a gate starts.
type labelled struct {
	grader.Engine
	mu   sync.Mutex
	runs map[string]bool
}

func (l *labelled) Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error) {
	l.mu.Lock()
	l.runs[spec.Run] = true
	l.mu.Unlock()
	return l.Engine.Start(ctx, spec)
}

// TestConcurrentGatesHaveTheirOwnLabels: two gates given no label (as
// 'cases check' by two users at once) each label their containers with a
// run label of their own, so pruning one gate's label leaves the other's
// containers alone: gate A's label is pruned while gate B runs, and B still
// meets every expectation.
func TestConcurrentGatesHaveTheirOwnLabels(t *testing.T) {
	s, _ := setup(t)
	eng, img := sandboxtest.Engine(t)
	adder := s.Cases[:1]
	a := &labelled{Engine: eng, runs: map[string]bool{}}
	b := &labelled{Engine: eng, runs: map[string]bool{}}
	var resB []grader.CheckResult
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		resB, errB = grader.New(b, img.Ref, img.ID, grader.Options{Concurrency: 1}).CheckCases(context.Background(), s, adder)
	}()
	resA, err := grader.New(a, img.Ref, img.ID, grader.Options{Concurrency: 1}).CheckCases(context.Background(), s, adder)
	if err != nil {
		t.Fatal(err)
	}
	for run := range a.runs {
		t.Cleanup(func() { eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: run}) })
		if _, err := eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: run}); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	for run := range b.runs {
		t.Cleanup(func() { eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: run}) })
	}
	if errB != nil {
		t.Fatalf("gate B, with gate A's label pruned while it ran: %v", errB)
	}
	if len(a.runs) != 1 || len(b.runs) != 1 {
		t.Fatalf("gate A used labels %v, gate B %v: want one each", a.runs, b.runs)
	}
	for run := range a.runs {
		if b.runs[run] || run == "" || run == "cases-check" {
			t.Errorf("gate A's label %q is not its own (gate B: %v)", run, b.runs)
		}
	}
	for _, rs := range [][]grader.CheckResult{resA, resB} {
		for _, r := range rs {
			if !r.Met {
				t.Errorf("%s %s: %v", r.Case, r.Variant, r.Problems)
			}
		}
	}
}
