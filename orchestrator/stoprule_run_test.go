package orchestrator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// A plan with a stop rule stops cleanly, resumably, once the speed ratio
// is settled after its minimum of complete pairs; the event log says why,
// and a resume runs the rest of the plan without stopping again.
func TestStopRuleStopsAndResumesToFullPlan(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	suite, _ := filepath.Abs(fixtureSuite)
	p := "name: stop\nsuite: " + suite + "\ncases: [adder]\nrepeats:\n" +
		"  - {label: r1, seed: 1}\n  - {label: r2, seed: 2}\n  - {label: r3, seed: 3}\n  - {label: r4, seed: 4}\n" +
		"arms:\n  - {name: a, endpoint: {base_url: \"" + srv.URL() + "\", model: reference}, max_tokens: 8192}\n" +
		"  - {name: b, endpoint: {base_url: \"" + srv.URL() + "\", model: reference}, max_tokens: 8192}\n" +
		"stop: {half_width: 0.5, min_pairs: 3, mixing: 10}\n"
	f := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
	if !errors.Is(err, orchestrator.ErrStoppedByRule) || !orchestrator.Resumable(err) || !strings.Contains(err.Error(), "over 3 complete pairs") {
		t.Fatalf("got %v, want stopped by rule after 3 pairs", err)
	}
	if n := countStates(res.Attempts); n[evalctl.Completed] != 6 || n[evalctl.Planned] != 2 {
		t.Fatalf("after the stop: %v, want 6 completed and 2 planned", n)
	}
	st, err := runstore.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	events, _ := st.Events()
	if !hasEvent(events, evalctl.EventStopRule) {
		t.Error("no stop_rule event in the log")
	}
	res2, err := orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if n := countStates(res2.Attempts); n[evalctl.Completed] != 8 {
		t.Fatalf("after resume: %v, want all 8 completed", n)
	}
}

func hasEvent(events []runstore.Event, k evalctl.EventKind) bool {
	for _, e := range events {
		if e.Kind == k {
			return true
		}
	}
	return false
}
