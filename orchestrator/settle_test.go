package orchestrator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// startServerWith starts a scripted server over the fixture suite with cfg
// (its Suite is set here).
func startServerWith(t *testing.T, cfg scripted.Config) *scripted.Server {
	t.Helper()
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Suite = s
	srv, err := scripted.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestCutAttemptCountedWhenSettled: the server notices a wall-time cut
// 0.6 s late and counts the cut response only then, as llama-server does
// (docs/llama-server.md). The cut attempt's closing read waits until the
// slot is idle, so its delta holds all its tokens and the next attempt's
// window none of them: the next attempt's recorded sum matches its delta,
// the two deltas add up to what the server counted, and the wait is
// recorded on the cut attempt, not on the next one.
func TestCutAttemptCountedWhenSettled(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServerWith(t, scripted.Config{CancelDelay: 600 * time.Millisecond, DecodeTPS: 2000})
	f := adderPlan(t, "", []string{
		`{name: cut, endpoint: {base_url: "` + srv.URL() + `", model: runaway}, budgets: {wall_seconds: 1}}`,
		`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`,
	}, "concurrency: 1\n")
	client := model.New(model.Config{BaseURL: srv.URL()})
	before, err := client.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if err != nil {
		t.Fatal(err)
	}
	after, err := client.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byArm := map[string]*evalctl.Attempt{}
	for _, a := range res.Attempts {
		byArm[a.Arm] = a
	}
	cut, good := byArm["cut"], byArm["good"]
	if cut.Turns[0].Termination != evalctl.TermWallTimeLimit {
		t.Fatalf("cut attempt ended %s, want wall_time_limit", cut.Turns[0].Termination)
	}
	cd, gd := cut.ServerCounters, good.ServerCounters
	if cd == nil || gd == nil || cd.GeneratedTokens == nil || gd.GeneratedTokens == nil {
		t.Fatalf("counters cut %+v good %+v; want both deltas", cd, gd)
	}
	total := int64(*after.GeneratedTokens - *before.GeneratedTokens)
	if *cd.GeneratedTokens+*gd.GeneratedTokens != total || *cd.GeneratedTokens == 0 {
		t.Errorf("deltas cut %d + good %d, server counted %d in all; want the sum, cut > 0", *cd.GeneratedTokens, *gd.GeneratedTokens, total)
	}
	if cd.SettleSeconds < 0.3 || cd.Unattributed != "" {
		t.Errorf("cut attempt waited %.3f s for the slot (%q); want the late cancel waited for", cd.SettleSeconds, cd.Unattributed)
	}
	if gd.StartWaitSeconds != 0 {
		t.Errorf("next attempt waited %.3f s at its start; the cut attempt should have settled the server", gd.StartWaitSeconds)
	}
	in, err := report.Load(context.Background(), []string{res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, in, good.ID); r.CounterCheck == nil || *r.CounterCheck != report.CounterMatch {
		t.Errorf("next attempt's check %v, want match", r.CounterCheck)
	}
	if r := rowOf(t, in, cut.ID); r.NativeOutputTokens == nil || *r.NativeOutputTokens != *cd.GeneratedTokens {
		t.Errorf("cut attempt's recovered tokens %v, want its delta %d", r.NativeOutputTokens, *cd.GeneratedTokens)
	}
}

// TestCountersPastAMillion: a server whose token counters passed 10^6
// prints them with six significant digits (metrics_big_counter.txt), so a
// delta is known only within the printed precision. A clean attempt's
// recorded sum is then "plausible", not a match, and a failed response's
// unknown count is not recovered from the counters: it stays unknown, and
// the notes say why.
func TestCountersPastAMillion(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServerWith(t, scripted.Config{CountersFrom: 1_033_640})
	f := adderPlan(t, "", []string{
		`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`,
		`{name: garble, endpoint: {base_url: "` + srv.URL() + `", model: garble}, max_tokens: 4096}`,
	}, "concurrency: 1\n")
	res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if err != nil {
		t.Fatal(err)
	}
	byArm := map[string]*evalctl.Attempt{}
	for _, a := range res.Attempts {
		byArm[a.Arm] = a
	}
	good, garble := byArm["good"], byArm["garble"]
	if d := good.ServerCounters; d == nil || d.GeneratedTokensWithin < 5 || d.PromptTokensWithin < 5 {
		t.Fatalf("good counters %+v; want deltas known within the printed precision", d)
	}
	in, err := report.Load(context.Background(), []string{res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, in, good.ID); r.CounterCheck == nil || *r.CounterCheck != report.CounterPlausible || r.TokensSource == nil || *r.TokensSource != report.TokensResponses {
		t.Errorf("good row: check %v source %v; want plausible, the responses' count", r.CounterCheck, r.TokensSource)
	}
	if r := rowOf(t, in, garble.ID); r.NativeOutputTokens != nil || r.TokensSource != nil || r.DecodeSeconds != nil {
		t.Errorf("garble row: tokens %v source %v; want unknown, not recovered from imprecise counters", r.NativeOutputTokens, r.TokensSource)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "only within the counters' printed precision") || !strings.Contains(notes, "kept it unknown") {
		t.Errorf("notes do not say the counters were past their precision: %s", notes)
	}
}
