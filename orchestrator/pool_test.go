package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// startScripted starts a scripted server on the fixture suite with cfg
// (its Suite filled in).
func startScripted(t *testing.T, cfg scripted.Config) *scripted.Server {
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

// poolPlanFile writes a plan of one arm on a pool of the given URLs, each
// replica on its own device (dev0, dev1, ...), over the fixture's Python
// case x 4 repeats: 4 attempts. What the pool tests assert does not depend
// on the case's language, and a TypeScript grade costs five compiles.
func poolPlanFile(t *testing.T, urls ...string) string {
	t.Helper()
	return writePoolPlan(t, "cases: [adder]\nrepeats: [{label: r1, seed: 1}, {label: r2, seed: 2}, {label: r3, seed: 3}, {label: r4, seed: 4}]\n", urls)
}

// writePoolPlan writes poolPlanFile's plan over the given cohort lines.
func writePoolPlan(t *testing.T, cohort string, urls []string) string {
	t.Helper()
	suite, _ := filepath.Abs(fixtureSuite)
	var reps []string
	for i, u := range urls {
		reps = append(reps, fmt.Sprintf(`{base_url: "%s", device: dev%d}`, u, i))
	}
	p := fmt.Sprintf("suite: %s\n%sarms:\n  - {name: a, endpoint: {model: reference, replicas: [%s]}, max_tokens: 8192}\n", suite, cohort, strings.Join(reps, ", "))
	f := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestEndpointPool: an arm on two replicas (scripted servers on two device
// labels) runs its attempts on both, side by side, never two at once on
// one device; each attempt records its replica and device; preflight
// recorded each replica; the report gives the arm's decode TPS per
// replica, over the attempts that ran there.
func TestEndpointPool(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	r0, r1 := startScripted(t, scripted.Config{}), startScripted(t, scripted.Config{})
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, poolPlanFile(t, r0.URL(), r1.URL())), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if n := countStates(res.Attempts); n[evalctl.Completed] != 4 {
		t.Fatalf("states %v, want 4 completed", n)
	}
	device := map[string]string{r0.URL(): "dev0", r1.URL(): "dev1"}
	per := map[string]int{}
	sideBySide := false
	for i, a := range res.Attempts {
		if d, ok := device[a.Replica]; !ok || a.Device != d {
			t.Errorf("attempt %s: replica %q on device %q", a.ID, a.Replica, a.Device)
		}
		per[a.Replica]++
		for _, b := range res.Attempts[i+1:] {
			if !intersect(a, b) {
				continue
			}
			if a.Device == b.Device {
				t.Errorf("attempts %s and %s held device %s together", a.ID, b.ID, a.Device)
			} else {
				sideBySide = true
			}
		}
	}
	if len(per) != 2 {
		t.Errorf("attempts per replica %v: want both used", per)
	}
	if !sideBySide {
		t.Error("the replicas never ran attempts side by side")
	}
	st, _ := runstore.Open(res.Dir)
	run, err := st.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Preflight) != 2 || run.Preflight[0].BaseURL != r0.URL() || run.Preflight[1].Device != "dev1" || run.Preflight[1].Info == nil {
		t.Errorf("preflight %+v, want each replica", run.Preflight)
	}
	in, err := report.Load(context.Background(), []string{res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs := rep.Arm("a").Replicas
	if len(rs) != 2 {
		t.Fatalf("replica speeds %+v", rs)
	}
	for _, r := range rs {
		if r.Attempts != per[r.Replica] || r.DecodeTPS == nil || *r.DecodeTPS <= 0 {
			t.Errorf("replica %s: %d attempts (ran %d), decode TPS %v", r.Replica, r.Attempts, per[r.Replica], r.DecodeTPS)
		}
	}
}

// TestPoolOfDifferingReplicasRefused: replicas that report different
// builds are refused at preflight, naming the arm, the replica and the
// difference; nothing is registered.
func TestPoolOfDifferingReplicasRefused(t *testing.T) {
	r0 := startScripted(t, scripted.Config{BuildInfo: "b7000-aaaa"})
	r1 := startScripted(t, scripted.Config{BuildInfo: "b7001-bbbb"})
	out := t.TempDir()
	eng, img := sandboxtest.Engine(t)
	_, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, poolPlanFile(t, r0.URL(), r1.URL())), OutDir: out, Engine: eng, Image: img})
	var pe *orchestrator.PreflightError
	if !errors.Is(err, orchestrator.ErrPreflight) || !errors.As(err, &pe) {
		t.Fatalf("got %v, want a preflight error", err)
	}
	for _, w := range []string{"arm a", r1.URL(), "replica 1 differs", "props.build_info", "b7000-aaaa", "b7001-bbbb"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused pool left %d entries in the run folder", len(entries))
	}
}

// TestPoolFailsOverADeadReplica: a replica that dies as its first attempt
// asks who it is (every connection from then on reset, its health probe
// too) costs that one attempt, recorded as an infrastructure
// failure; the replica leaves the rotation (replica_out) and every other
// attempt runs on the healthy one, the failed slot's too: it runs again in
// the same session as a replacement (the failure kept, replaced), so the
// run is neither stopped by the breaker nor left incomplete.
func TestPoolFailsOverADeadReplica(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	r0, r1 := startScripted(t, scripted.Config{}), startScripted(t, scripted.Config{})
	var models atomic.Int32
	var dead atomic.Bool
	dying := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/models") && models.Add(1) == 2 {
			dead.Store(true) // the preflight's was the first
		}
		if dead.Load() {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		r1.ServeHTTP(w, req)
	}))
	t.Cleanup(dying.Close)
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, poolPlanFile(t, r0.URL(), dying.URL)), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2})
	if err != nil {
		t.Fatalf("run: %v, want it to end without error (not stopped by the breaker, the failed slot re-run)", err)
	}
	if !dead.Load() {
		t.Fatal("the replica never died: no attempt was sent to it")
	}
	on := map[string]map[evalctl.State]int{}
	for _, a := range res.Attempts {
		if on[a.Replica] == nil {
			on[a.Replica] = map[evalctl.State]int{}
		}
		on[a.Replica][a.State]++
	}
	if n := on[dying.URL]; n[evalctl.InfraFailed] != 1 || n[evalctl.Completed] != 0 {
		t.Errorf("attempts on the dead replica %v, want one infrastructure failure", n)
	}
	if n := on[r0.URL()]; n[evalctl.Completed] != len(res.Attempts)-1 {
		t.Errorf("attempts on the healthy replica %v, want all %d others completed", n, len(res.Attempts)-1)
	}
	if len(res.Attempts) != 5 {
		t.Errorf("%d attempt records, want the 4 slots' and one replaced", len(res.Attempts))
	}
	for _, a := range res.Attempts {
		if a.ReplacementOf != "" && a.Replica != r0.URL() {
			t.Errorf("replacement %s ran on %s, want the healthy replica", a.ID, a.Replica)
		}
	}
	st, err := runstore.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	events, err := st.Events()
	if err != nil {
		t.Fatal(err)
	}
	var out time.Time
	for _, e := range events {
		if e.Kind == evalctl.EventReplicaOut && strings.Contains(e.Detail, dying.URL) {
			out = e.Time
		}
		if !out.IsZero() && e.Kind == evalctl.EventStart {
			t.Logf("from the replica leaving the rotation to the next attempt's start: %s", e.Time.Sub(out))
			break
		}
	}
	if out.IsZero() {
		t.Error("no replica_out event for the dead replica")
	}
}

// TestPoolReplicaDiesMidStream: one of two replicas is killed while it
// streams an attempt's response (as kill -9 does: the stream breaks, then
// nothing answers). The attempt in flight is an infrastructure failure
// naming the vanished endpoint with its health probe's error, not the
// model's server_error: unscored, without measurements. Its replica leaves
// the rotation, and the same slot runs again, in the same session, on the
// other replica and completes; the failed record is kept, replaced and
// listed apart. Every slot ends completed and the run ends without error:
// nothing is lost or counted twice.
func TestPoolReplicaDiesMidStream(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	// The first replica to stream a running attempt's response (the
	// preflight's are one token) dies after its tenth token: cut while it
	// streams, whatever the machine's load.
	var dead atomic.Int32 // 1 + the index of the replica that died
	dieAt := func(i int) func(int) bool {
		return func(tokens int) bool { return tokens == 10 && dead.CompareAndSwap(0, int32(i+1)) }
	}
	r0 := startScripted(t, scripted.Config{DieMidStream: dieAt(0)})
	r1 := startScripted(t, scripted.Config{DieMidStream: dieAt(1)})
	byURL := map[string]*scripted.Server{r0.URL(): r0, r1.URL(): r1}
	type result struct {
		res *orchestrator.Result
		err error
	}
	done := make(chan result, 1)
	out := t.TempDir()
	p := loadPlan(t, poolPlanFile(t, r0.URL(), r1.URL()))
	go func() {
		res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: p, OutDir: out, Engine: eng, Image: img, GradeConcurrency: 2})
		done <- result{res, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Minute):
		t.Fatal("the run did not end")
	}
	if dead.Load() == 0 {
		t.Fatalf("no replica died: no response streamed ten tokens (run: %v)", r.err)
	}
	killed := []string{r0.URL(), r1.URL()}[dead.Load()-1]
	var other string
	for u := range byURL {
		if u != killed {
			other = u
		}
	}
	if r.err != nil {
		t.Fatalf("run: %v, want it to end without error (the slot re-run on the healthy replica)", r.err)
	}
	var failed []*evalctl.Attempt
	byID := map[string]*evalctl.Attempt{}
	for _, a := range r.res.Attempts {
		byID[a.ID] = a
		if a.Replica == killed && a.State == evalctl.InfraFailed {
			failed = append(failed, a)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("%d infrastructure failures on the killed replica, want the one in flight: %+v", len(failed), r.res.Attempts)
	}
	f := failed[0]
	for _, w := range []string{"endpoint vanished", "health probe failed"} {
		if !strings.Contains(f.Error, w) {
			t.Errorf("the failed attempt's note %q lacks %q", f.Error, w)
		}
	}
	if f.Measurements != nil {
		t.Errorf("the infrastructure failure kept measurements %+v", f.Measurements)
	}
	var repl *evalctl.Attempt
	for _, a := range r.res.Attempts {
		if a.ReplacementOf == f.ID {
			if repl != nil {
				t.Fatalf("slot %d re-run twice", f.Slot)
			}
			repl = a
		}
	}
	if repl == nil || repl.State != evalctl.Completed || repl.Replica != other || repl.Slot != f.Slot {
		t.Fatalf("replacement of %s: %+v, want it completed on %s in slot %d", f.ID, repl, other, f.Slot)
	}
	if repl.StartedAt.Before(*f.FinishedAt) {
		t.Errorf("the replacement started (%s) before the failed attempt ended (%s)", repl.StartedAt, f.FinishedAt)
	}
	// Every slot's latest attempt completed; 4 slots, one replaced record.
	latest := runstore.Current(r.res.Attempts)
	if len(latest) != 4 || len(r.res.Attempts) != 5 {
		t.Errorf("%d slots, %d records; want 4 slots and 5 records (one replaced)", len(latest), len(r.res.Attempts))
	}
	for slot, a := range latest {
		if a.State != evalctl.Completed {
			t.Errorf("slot %d ended %s (%s)", slot, a.State, a.Error)
		}
	}
	st, err := runstore.Open(r.res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	events, err := st.Events()
	if err != nil {
		t.Fatal(err)
	}
	var wentOut, replaced bool
	for _, e := range events {
		wentOut = wentOut || e.Kind == evalctl.EventReplicaOut && strings.Contains(e.Detail, killed)
		replaced = replaced || e.Kind == evalctl.EventReplaceInfra && e.Attempt == repl.ID && e.Detail == "replaces "+f.ID
		if e.Kind == evalctl.EventStart && e.Time.After(*f.FinishedAt) {
			if a := byID[e.Attempt]; a != nil && a.Replica == killed {
				t.Errorf("attempt %s started on the killed replica after its failure", a.ID)
			}
		}
	}
	if !wentOut || !replaced {
		t.Errorf("events: replica_out for the killed replica %v, replace_infra for the re-run %v", wentOut, replaced)
	}
	// The report: four scored slots, the failure listed apart as replaced,
	// not as the model's failure.
	in, err := report.Load(context.Background(), []string{r.res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Arm("a").Stats
	if s.Attempts != 4 || s.Scored != 4 || s.Unscored != 0 || s.Replaced[string(evalctl.InfraFailed)] != 1 {
		t.Errorf("report: %d attempts, %d scored, %d unscored, replaced %v; want 4, 4, 0 and one infra_failed replaced", s.Attempts, s.Scored, s.Unscored, s.Replaced)
	}
	// The runs listing counts from the event log: 4 slots, each once.
	sum, err := runstore.Summarize(r.res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Planned == nil || sum.Ended == nil || sum.Scored == nil || *sum.Planned != 4 || *sum.Ended != 4 || *sum.Scored != 4 {
		t.Errorf("listing: planned %v, ended %v, scored %v; want 4 each", sum.Planned, sum.Ended, sum.Scored)
	}
}
