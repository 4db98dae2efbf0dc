package orchestrator_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

func rowOf(t *testing.T, in *report.Input, id string) *report.Row {
	t.Helper()
	for i := range in.Rows {
		if in.Rows[i].AttemptID == id {
			return &in.Rows[i]
		}
	}
	t.Fatalf("no row for attempt %s", id)
	return nil
}

// TestServerFailuresAreScoredNotInfra runs, one after another, an arm whose
// server answers 500 after generating (llama-server's fault_500_*), one
// whose response is cut inside a tool call, and one whose endpoint is
// down. Only the last is an infrastructure failure; the 500 is scored as
// server_error with its token count recovered from the server's /metrics
// delta (the run had the server to itself); the cut call is
// output_truncated with its exact count, matching /metrics. A resume with
// --replace-infra re-runs the infrastructure failure only.
func TestServerFailuresAreScoredNotInfra(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	f := adderPlan(t, "", []string{
		`{name: garble, endpoint: {base_url: "` + srv.URL() + `", model: garble}, max_tokens: 4096}`,
		`{name: cut, endpoint: {base_url: "` + srv.URL() + `", model: cutcall}, max_tokens: 64}`,
		`{name: down, endpoint: {base_url: "http://` + down + `", model: reference}}`,
	}, "concurrency: 1\n")
	// No preflight: it would refuse the garble and down arms before the run.
	res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if !errors.Is(err, orchestrator.ErrIncomplete) {
		t.Fatalf("got %v, want ErrIncomplete: the down arm's attempt is left to re-run", err)
	}
	byArm := map[string]*evalctl.Attempt{}
	for _, a := range res.Attempts {
		byArm[a.Arm] = a
	}
	g, c, d := byArm["garble"], byArm["cut"], byArm["down"]
	if g.State != evalctl.Completed || len(g.Turns) != 1 || g.Turns[0].Termination != evalctl.TermServerError {
		t.Fatalf("garble: state %s turns %+v; want completed, server_error", g.State, g.Turns)
	}
	if g.Measurements.NativeOutputTokens != nil || g.ServerCounters == nil || g.ServerCounters.GeneratedTokens == nil || *g.ServerCounters.GeneratedTokens <= 0 {
		t.Fatalf("garble: recorded %v tokens, counters %+v; want null and a positive delta", g.Measurements.NativeOutputTokens, g.ServerCounters)
	}
	if c.State != evalctl.Completed || c.Turns[0].Termination != evalctl.TermOutputTruncated || c.Measurements.NativeOutputTokens == nil || *c.Measurements.NativeOutputTokens != 64 {
		t.Fatalf("cut: state %s turn %+v tokens %v", c.State, c.Turns, c.Measurements)
	}
	if d.State != evalctl.InfraFailed || d.Measurements != nil {
		t.Fatalf("down: state %s, want infra_failed without measurements", d.State)
	}

	in, err := report.Load(context.Background(), []string{res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	gr, cr := rowOf(t, in, g.ID), rowOf(t, in, c.ID)
	if gr.Status != report.Scored || *gr.Functional || gr.TokensSource == nil || *gr.TokensSource != report.TokensServerCounters ||
		gr.NativeOutputTokens == nil || *gr.NativeOutputTokens != *g.ServerCounters.GeneratedTokens || gr.DecodeSeconds == nil {
		t.Errorf("garble row %+v; want scored, tokens recovered from the counters", gr)
	}
	if cr.CounterCheck == nil || *cr.CounterCheck != report.CounterMatch {
		t.Errorf("cut row counter check %v, want match", cr.CounterCheck)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.Arm("garble"); a.Measured != 1 || a.Terminations["server_error"] != 1 {
		t.Errorf("garble pooled: measured %d terminations %v", a.Measured, a.Terminations)
	}
	if a := rep.Arm("down"); a.Scored != 0 || a.Unscored != 1 {
		t.Errorf("down pooled: scored %d unscored %d", a.Scored, a.Unscored)
	}

	// Resume with --replace-infra: only the infrastructure failure runs
	// again (still down: infra again), the scored ones stay as they were.
	// No preflight: it would stop the resume at the down endpoint.
	res2, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{ResumeDir: res.Dir, ReplaceInfra: true, Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if !errors.Is(err, orchestrator.ErrIncomplete) {
		t.Fatalf("got %v, want ErrIncomplete: the endpoint is still down", err)
	}
	if len(res2.Attempts) != 4 {
		t.Fatalf("%d records after the resume, want 4 (one replacement)", len(res2.Attempts))
	}
	for _, a := range res2.Attempts {
		if a.ReplacementOf != "" && a.ReplacementOf != d.ID {
			t.Errorf("attempt %s (%s) replaces %s: only the infra failure may be re-run", a.ID, a.Arm, a.ReplacementOf)
		}
	}
}

// TestCounterCrossCheck: a clean run's recorded sums equal the server's
// counter deltas attempt by attempt; a record edited by one token is shown
// as a mismatch.
func TestCounterCrossCheck(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	f := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`, `{name: idle, endpoint: {base_url: "` + srv.URL() + `", model: noop}}`}, "concurrency: 1\n")
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.Load(context.Background(), []string{res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in.Rows {
		if r.CounterCheck == nil || *r.CounterCheck != report.CounterMatch || r.TokensSource == nil || *r.TokensSource != report.TokensResponses {
			t.Errorf("%s: check %v source %v; want a match", r.Arm, r.CounterCheck, r.TokensSource)
		}
	}
	st, err := runstore.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Attempts[0]
	*a.Measurements.NativeOutputTokens++
	if err := st.WriteAttempt(a); err != nil {
		t.Fatal(err)
	}
	in, err = report.Load(context.Background(), []string{res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, in, a.ID); r.CounterCheck == nil || *r.CounterCheck != report.CounterMismatch {
		t.Errorf("edited record: check %v, want mismatch", r.CounterCheck)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "MISMATCH: attempt "+a.ID) {
		t.Errorf("notes do not show the mismatch: %q", rep.Notes)
	}
}

// TestResumeFollowsReplacementChain: a slot whose replacement has a smaller
// id than the record it replaces (ids follow the clock, which can step
// back) is where its chain ends, not where the greatest id is: the resume
// finds the slot done and runs nothing again.
func TestResumeFollowsReplacementChain(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	f := adderPlan(t, "", []string{`{name: down, endpoint: {base_url: "http://` + down + `", model: reference}}`}, "")
	res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if !errors.Is(err, orchestrator.ErrIncomplete) {
		t.Fatalf("got %v, want ErrIncomplete", err)
	}
	first := res.Attempts[0]
	if first.State != evalctl.InfraFailed {
		t.Fatalf("state %s", first.State)
	}
	// Its replacement ran (recorded cancelled: done, nothing to grade) and
	// got an id below its predecessor's.
	repl := *first
	repl.ID, repl.ReplacementOf, repl.State, repl.Error = "00000000-0000-7000-8000-000000000001", first.ID, evalctl.Cancelled, "test"
	st, err := runstore.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteAttempt(&repl); err != nil {
		t.Fatal(err)
	}
	res, err = orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, ReplaceInfra: true, Engine: eng, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 {
		t.Errorf("%d records after the resume, want 2: the slot's chain ends in a finished record", len(res.Attempts))
	}
}
