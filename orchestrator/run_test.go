package orchestrator_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

const fixtureSuite = "../grader/testdata/suite"

// startServer starts the scripted model server in-process on the fixture
// suite.
func startServer(t *testing.T) *scripted.Server {
	t.Helper()
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.New(scripted.Config{Suite: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func plan(t *testing.T, url, extra string) string {
	t.Helper()
	return writePlan(t, url, "cases: [adder, tsadd]\nrepeats:\n  - {label: repeat-1, seed: 1}\n  - {label: repeat-2, seed: 2}\n", extra)
}

// pyPlan is plan's cohort of eight slots over the Python case alone (four
// repeats): for the tests of the runner's state machine (kills, resumes,
// guards), whose assertions do not depend on the case's language, and
// which would otherwise spend most of their time in TypeScript grades
// (five compiles each). TestCohortRecordsExpectedOutcomes keeps both
// languages.
func pyPlan(t *testing.T, url, extra string) string {
	t.Helper()
	return writePlan(t, url, "cases: [adder]\nrepeats:\n  - {label: repeat-1, seed: 1}\n  - {label: repeat-2, seed: 2}\n  - {label: repeat-3, seed: 3}\n  - {label: repeat-4, seed: 4}\n", extra)
}

func writePlan(t *testing.T, url, cohort, extra string) string {
	t.Helper()
	suite, _ := filepath.Abs(fixtureSuite)
	dir := t.TempDir()
	p := `name: t
suite: ` + suite + `
` + cohort + `arms:
  - name: good
    endpoint: {base_url: "` + url + `", model: reference}
    max_tokens: 8192
  - name: idle
    endpoint: {base_url: "` + url + `", model: noop}
    max_tokens: 8192
` + extra
	f := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// adderPlan writes a one-repeat plan over the adder case of suite (the
// fixture suite when empty) with the given arms, each a YAML flow mapping,
// plus extra top-level lines, and returns the plan file's path.
func adderPlan(t *testing.T, suite string, arms []string, extra string) string {
	t.Helper()
	if suite == "" {
		suite, _ = filepath.Abs(fixtureSuite)
	}
	p := "suite: " + suite + "\ncases: [adder]\nrepeats: [{label: r1, seed: 1}]\narms:\n"
	for _, a := range arms {
		p += "  - " + a + "\n"
	}
	f := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(f, []byte(p+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func countStates(as []*evalctl.Attempt) map[evalctl.State]int {
	n := map[evalctl.State]int{}
	for _, a := range as {
		n[a.State]++
	}
	return n
}

func TestCohortRecordsExpectedOutcomes(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	var log strings.Builder
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{
		Plan: loadPlan(t, plan(t, srv.URL(), "")), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2, Progress: &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 8 || countStates(res.Attempts)[evalctl.Completed] != 8 {
		t.Fatalf("attempts %d, states %v; want 8 completed", len(res.Attempts), countStates(res.Attempts))
	}
	// The run directory is named for the plan, and run.json keeps the name.
	store, _ := runstore.Open(res.Dir)
	if base := filepath.Base(res.Dir); base != "t-"+res.RunID {
		t.Errorf("run directory %s, want t-%s (plan name, then id)", base, res.RunID)
	}
	if r, err := store.ReadRun(); err != nil || r.Name != "t" {
		t.Errorf("run.json name: %+v %v", r, err)
	}
	ids := map[string]bool{}
	for _, a := range res.Attempts {
		if ids[a.ID] {
			t.Errorf("duplicate attempt id %s", a.ID)
		}
		ids[a.ID] = true
		grades, err := store.Grades(a, "graderfixture@0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		o := evalctl.Score(a, grades)
		want := a.Arm == "good"
		if o == nil || o.Functional != want || o.Delivered != want {
			t.Errorf("%s %s %s: outcome %+v, want functional=delivered=%v (turns %+v)", a.Arm, a.Case, a.Repeat, o, want, a.Turns)
		}
		if a.Endpoint == nil || a.Endpoint.Props == nil || a.ImageID != img.ID || a.Suite.Fingerprint == "" || a.ArmUnchanged == nil || !*a.ArmUnchanged {
			t.Errorf("identity not recorded: endpoint %+v image %s suite %+v", a.Endpoint, a.ImageID, a.Suite)
		}
		m := a.Measurements
		if m == nil || m.NativeOutputTokens == nil || *m.NativeOutputTokens <= 0 || m.DecodeSeconds == nil || *m.DecodeSeconds <= 0 || m.TimingsSource != "server" {
			t.Errorf("measurements %+v", m)
		}
		for _, s := range a.Snapshots {
			sum, err := runstore.FileSHA256(store.SnapshotPath(a.ID, s.Phase))
			if err != nil || sum != s.SHA256 {
				t.Errorf("snapshot %s phase %d: %s %v, recorded %s", a.ID, s.Phase, sum, err, s.SHA256)
			}
		}
		if fi, err := os.Stat(filepath.Join(store.AttemptDir(a.ID), runstore.TranscriptFile)); err != nil || fi.Size() == 0 {
			t.Errorf("transcript of %s missing", a.ID)
		}
	}
	// Nothing left running, and each attempt removed its own containers:
	// the end-of-run sweep (for containers a killed runner left) found none.
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: res.RunID}); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}
	if strings.Contains(log.String(), "left behind") {
		t.Errorf("attempts did not remove their own containers:\n%s", log.String())
	}
	// The run's identity: evalctl's version and each arm's hash, the one its
	// attempts record; the plan's SHA-256 is printed before any attempt.
	run, err := store.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	if run.EvalctlVersion == "" || len(run.ArmHashes) != 2 {
		t.Errorf("run.json: version %q, arm hashes %v", run.EvalctlVersion, run.ArmHashes)
	}
	for _, a := range res.Attempts {
		if h := run.ArmHashes[a.Arm]; h == "" || h != a.ArmHash {
			t.Errorf("arm %s: run.json has hash %q, the attempt %q", a.Arm, h, a.ArmHash)
		}
	}
	if i, j := strings.Index(log.String(), "plan sha256 "+run.PlanSHA256), strings.Index(log.String(), " start "); i < 0 || j < 0 || i > j {
		t.Errorf("the plan's SHA-256 is not printed before the first attempt:\n%s", log.String())
	}
}

// hotAfter reads cool for n calls, then hot.
type hotAfter struct {
	n     int32
	calls atomic.Int32
	hot   bool
}

func (h *hotAfter) CPUTemperature(ctx context.Context) (*float64, string, error) {
	v := 50.0
	if h.hot && h.calls.Add(1) > h.n {
		v = 99
	}
	return &v, "", nil
}

func TestGuardStopsCleanlyAndResumeFinishes(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	f := pyPlan(t, srv.URL(), "guards: {max_temperature_c: 90}\n")
	// The guard is read before an attempt waits for its device and again
	// when it takes it: two cool readings per attempt, then hot.
	src := &hotAfter{n: 4, hot: true}
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img, Temperature: src})
	if !errors.Is(err, orchestrator.ErrGuard) || !strings.Contains(err.Error(), "99.0") {
		t.Fatalf("got %v, want the temperature guard", err)
	}
	n := countStates(res.Attempts)
	if n[evalctl.Completed] != 2 || n[evalctl.Planned] != 6 || n[evalctl.Running] != 0 {
		t.Fatalf("after the guard: %v, want 2 completed and 6 planned", n)
	}
	res2, err := orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img, Temperature: &hotAfter{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := countStates(res2.Attempts); n[evalctl.Completed] != 8 || len(res2.Attempts) != 8 {
		t.Fatalf("after resume: %v (%d records), want 8 completed", n, len(res2.Attempts))
	}
}

func TestResumeRefusesChangedPlanAndSecondRunner(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	stop := filepath.Join(t.TempDir(), "STOP")
	os.WriteFile(stop, nil, 0o644)
	f := plan(t, srv.URL(), "guards: {stop_file: "+stop+"}\n")
	// The stop file is there before the first attempt: registration only.
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
	if !errors.Is(err, orchestrator.ErrGuard) || !strings.Contains(err.Error(), "stop file") {
		t.Fatalf("got %v, want the stop-file guard", err)
	}
	if n := countStates(res.Attempts); n[evalctl.Planned] != 8 {
		t.Fatalf("states %v, want 8 planned", n)
	}
	// Cancelling ends it for good: the slots are cancelled, unscored, and a
	// resume has nothing left to run.
	defer func() {
		os.Remove(stop)
		n, err := orchestrator.Cancel(context.Background(), res.Dir, "")
		if err != nil || n != 8 {
			t.Fatalf("cancel: %d, %v", n, err)
		}
		store, _ := runstore.Open(res.Dir)
		all, _ := store.Attempts()
		for _, a := range all {
			if a.State != evalctl.CancelledBeforeStart || evalctl.Score(a, nil) != nil {
				t.Errorf("after cancel: %s %s", a.ID, a.State)
			}
		}
	}()
	store, _ := runstore.Open(res.Dir)
	if err := store.Lock(); err != nil {
		t.Fatal(err)
	}
	_, err = orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img})
	if !errors.Is(err, runstore.ErrLocked) {
		t.Errorf("second runner: got %v, want ErrLocked", err)
	}
	store.Unlock()
	planFile := filepath.Join(res.Dir, runstore.PlanFile)
	data, _ := os.ReadFile(planFile)
	os.WriteFile(planFile, []byte(strings.Replace(string(data), `"max_tokens": 8192`, `"max_tokens": 8193`, 1)), 0o644)
	_, err = orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img})
	if !errors.Is(err, orchestrator.ErrChanged) || !strings.Contains(err.Error(), "plan.json") {
		t.Errorf("changed plan: got %v, want ErrChanged naming plan.json", err)
	}
}

// TestInfraFailureIsUnscoredAndReplaced: an endpoint that is down before
// any token makes the attempt infra_failed with null outcomes and
// measurements; --replace-infra re-runs it as a registered replacement that
// keeps its predecessor's record.
func TestInfraFailureIsUnscoredAndReplaced(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "http://` + addr + `", model: reference}}`}, "")
	// The preflight would refuse to register against a dead endpoint; this
	// test is about an endpoint that goes away after registration.
	res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if !errors.Is(err, orchestrator.ErrIncomplete) || !strings.Contains(err.Error(), "--replace-infra") {
		t.Fatalf("got %v, want ErrIncomplete naming --replace-infra", err)
	}
	first := res.Attempts[0]
	if len(res.Attempts) != 1 || first.State != evalctl.InfraFailed || first.Measurements != nil || evalctl.Score(first, nil) != nil {
		t.Fatalf("got %+v, want one infra_failed attempt with null measurements and outcome", first)
	}
	// The endpoint comes up; the slot is re-run as a replacement.
	s, _ := tasks.LoadSuite(fixtureSuite)
	srv, _ := scripted.New(scripted.Config{Suite: s, Addr: addr})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res, err = orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, ReplaceInfra: true, Engine: eng, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 {
		t.Fatalf("%d records, want the predecessor and its replacement", len(res.Attempts))
	}
	var kept, repl *evalctl.Attempt
	for _, a := range res.Attempts {
		if a.ID == first.ID {
			kept = a
		} else {
			repl = a
		}
	}
	if kept.State != evalctl.InfraFailed || repl.State != evalctl.Completed || repl.ReplacementOf != first.ID || repl.Slot != first.Slot {
		t.Errorf("predecessor %s, replacement %s of %q", kept.State, repl.State, repl.ReplacementOf)
	}
}

// TestRunSweepsContainersCreatedLate stands in for a runner killed while the
// engine was still creating a container: one labelled with the run appears
// after the run has started (so after any start-up prune). The run must not
// end with it still there, and must say it removed it.
func TestRunSweepsContainersCreatedLate(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	planFile := adderPlan(t, "", []string{
		`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`,
		`{name: idle, endpoint: {base_url: "` + srv.URL() + `", model: noop}}`}, "")
	out := t.TempDir()
	var log syncBuffer
	done := make(chan error, 1)
	var res *orchestrator.Result
	go func() {
		var err error
		res, err = orchestrator.Run(context.Background(), orchestrator.Options{
			Plan: loadPlan(t, planFile), OutDir: out, Engine: eng, Image: img, Progress: &log,
		})
		done <- err
	}()
	var runID string
	poll.Until(t, "the run to register", 2*time.Minute, func() bool {
		if m, _ := filepath.Glob(filepath.Join(out, "*", runstore.RunFile)); len(m) == 1 {
			// The directory is named for the plan; the containers carry the id.
			if st, err := runstore.Open(filepath.Dir(m[0])); err == nil {
				if r, err := st.ReadRun(); err == nil {
					runID = r.ID
				}
			}
		}
		return runID != ""
	})
	sandboxtest.Start(t, sandbox.Spec{Role: sandbox.RoleAgent, Run: runID, Attempt: "stray"})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: runID}); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}
	if !strings.Contains(log.String(), "removed 1 container(s) left behind") {
		t.Errorf("the sweep was not reported:\n%s", log.String())
	}
	if res == nil || len(res.Attempts) == 0 {
		t.Errorf("no attempts recorded")
	}
}

// syncBuffer is a strings.Builder safe for the runner's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// TestRefusalsAreScored: an endpoint that answers the first request with a
// refusal (a context overflow, an unknown model) has not failed as
// infrastructure: the attempt is completed and scored as a model error
// (functional false), never set aside as infra_failed.
func TestRefusalsAreScored(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	f := adderPlan(t, "", []string{
		`{name: overflow, endpoint: {base_url: "` + srv.URL() + `", model: overflow}}`,
		`{name: unknown, endpoint: {base_url: "` + srv.URL() + `", model: no-such-model}}`}, "")
	// Both refusals would stop the preflight; this test is about what the
	// runner records when they come mid-run.
	res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if err != nil {
		t.Fatal(err)
	}
	store, _ := runstore.Open(res.Dir)
	want := map[string]string{"overflow": "context_overflow", "unknown": "request_error"}
	for _, a := range res.Attempts {
		grades, _ := store.Grades(a, "graderfixture@0.1.0")
		o := evalctl.Score(a, grades)
		if a.State != evalctl.Completed || o == nil || o.Functional || len(a.Turns) != 1 {
			t.Errorf("%s: state %s outcome %+v turns %d; want completed and scored not functional", a.Arm, a.State, o, len(a.Turns))
			continue
		}
		if tu := a.Turns[0]; tu.Termination != evalctl.TermModelError || tu.ModelErrorKind != want[a.Arm] {
			t.Errorf("%s: turn ended %s (%q), want model_error (%s)", a.Arm, tu.Termination, tu.ModelErrorKind, want[a.Arm])
		}
	}
	if len(res.Attempts) != 2 {
		t.Errorf("%d attempts, want 2", len(res.Attempts))
	}
}

// TestResumeRefusesChangedSuite: a suite edited after registration (one
// byte of a frozen check) makes resume refuse, naming the fingerprints,
// rather than grade the rest of the run by other checks.
func TestResumeRefusesChangedSuite(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	suite := filepath.Join(t.TempDir(), "suite")
	if err := os.CopyFS(suite, os.DirFS(fixtureSuite)); err != nil {
		t.Fatal(err)
	}
	stop := filepath.Join(t.TempDir(), "STOP")
	os.WriteFile(stop, nil, 0o644)
	f := adderPlan(t, suite, []string{`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`}, "guards: {stop_file: "+stop+"}\n")
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
	if !errors.Is(err, orchestrator.ErrGuard) {
		t.Fatalf("registration: %v, want the stop-file guard", err)
	}
	os.Remove(stop)
	check, err := os.OpenFile(filepath.Join(suite, "adder", "checks", "acceptance", "test_acc.py"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	check.WriteString("#")
	check.Close()
	_, err = orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img})
	if !errors.Is(err, orchestrator.ErrChanged) || !strings.Contains(err.Error(), "fingerprint") || !strings.Contains(err.Error(), "regrade") {
		t.Errorf("changed suite: got %v, want ErrChanged naming the fingerprints and regrade", err)
	}
}

// TestSandboxThatWillNotStartIsInfra: an agent container the engine
// refuses to create (here a memory limit below the engine's minimum) is an
// infrastructure failure: unscored, null measurements, never a model
// failure.
func TestSandboxThatWillNotStartIsInfra(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	f := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`}, "")
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img,
		Limits: sandbox.Limits{MemoryBytes: 1 << 10}})
	if !errors.Is(err, orchestrator.ErrIncomplete) {
		t.Fatalf("got %v, want ErrIncomplete: an infrastructure failure is left to re-run", err)
	}
	a := res.Attempts[0]
	if len(res.Attempts) != 1 || a.State != evalctl.InfraFailed || !strings.Contains(a.Error, "agent sandbox would not start") || a.Measurements != nil || evalctl.Score(a, nil) != nil {
		t.Fatalf("got %s (%q) measurements %v, want one unscored infra_failed attempt", a.State, a.Error, a.Measurements)
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: res.RunID}); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}
}

// breakLogAfter is a cool temperature source that, at its n+1th reading
// (the guard check before attempt n+1), makes the run's event log
// unwritable: a directory where the file was, the file kept aside.
type breakLogAfter struct {
	n     int32
	dir   func() string
	calls atomic.Int32
}

func (b *breakLogAfter) CPUTemperature(ctx context.Context) (*float64, string, error) {
	if b.calls.Add(1) == b.n+1 {
		log := filepath.Join(b.dir(), runstore.EventsFile)
		if err := os.Rename(log, log+".kept"); err == nil {
			os.Mkdir(log, 0o755)
		}
	}
	v := 50.0
	return &v, "", nil
}

// TestEventLogFailureStopsResumably: once the event log cannot be written,
// the runner takes up no further attempt and stops with ErrEventLog (how
// many events were lost, and the resume command); with the log repaired,
// the resume finishes the run.
func TestEventLogFailureStopsResumably(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	var arms []string
	for _, name := range []string{"a", "b", "c", "d"} {
		arms = append(arms, `{name: `+name+`, endpoint: {base_url: "`+srv.URL()+`", model: reference}, max_tokens: 8192}`)
	}
	f := adderPlan(t, "", arms, "guards: {max_temperature_c: 90}\n")
	out := t.TempDir()
	runDir := func() string {
		m, _ := filepath.Glob(filepath.Join(out, "*", runstore.RunFile))
		if len(m) != 1 {
			t.Errorf("run directories under %s: %v", out, m)
			return out
		}
		return filepath.Dir(m[0])
	}
	// The log breaks at the guard check before the second attempt: the
	// first attempt runs whole, and some attempt's events are lost before
	// the check before the fourth.
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: out, Engine: eng, Image: img, Temperature: &breakLogAfter{n: 1, dir: runDir}})
	var le *runstore.EventLogError
	if !errors.Is(err, runstore.ErrEventLog) || !errors.As(err, &le) || le.Lost < 1 || !strings.Contains(err.Error(), "resume with") {
		t.Fatalf("got %v, want the run stopped for its event log, with the events lost and the resume command", err)
	}
	n := countStates(res.Attempts)
	if n[evalctl.Completed] < 1 || n[evalctl.Completed] > 3 || n[evalctl.Completed]+n[evalctl.Planned] != 4 {
		t.Fatalf("after the event log failed: %v, want 1 to 3 completed and the rest still planned", n)
	}
	log := filepath.Join(res.Dir, runstore.EventsFile)
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(log+".kept", log); err != nil {
		t.Fatal(err)
	}
	res2, err := orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	if n := countStates(res2.Attempts); n[evalctl.Completed] != 4 || len(res2.Attempts) != 4 {
		t.Fatalf("after resume: %v (%d records), want 4 completed", n, len(res2.Attempts))
	}
}
