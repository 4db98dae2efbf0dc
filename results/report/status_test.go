package report

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
)

// fourSlots is a run of four slots of one arm: two completed, the rest in
// the states given (with a start time when started).
func fourSlots(t *testing.T, third, fourth evalctl.State) (string, *runstore.Store) {
	t.Helper()
	spec := &reporttest.RunSpec{ID: "live", Suite: evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: "fp"}, ImageID: "sha256:img"}
	for i, st := range []evalctl.State{evalctl.Completed, evalctl.Completed, third, fourth} {
		spec.Attempts = append(spec.Attempts, reporttest.AttemptSpec{Arm: "a", Case: []string{"c1", "c2", "c3", "c4"}[i], Language: "python",
			Repeat: "repeat-1", Slot: i, State: st, Phases: 1, Terminations: []evalctl.Termination{evalctl.TermCompleted},
			Solved: []bool{i == 0}, Tokens: 600, Decode: 10, Task: 12})
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	st, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		at := time.Date(2026, 10, 10, 12, a.Slot*10, 0, 0, time.UTC)
		released := at.Add(5 * time.Minute)
		if a.StartedAt == nil && a.State != evalctl.Planned && a.State != evalctl.CancelledBeforeStart {
			a.StartedAt = &at
		}
		if a.State == evalctl.Completed {
			a.StartedAt, a.EndpointReleasedAt = &at, &released
			none := []string{}
			a.OverlappedAttempts = &none
		}
		if err := st.WriteAttempt(a); err != nil {
			t.Fatal(err)
		}
	}
	st.AppendEvent(runstore.Event{Time: time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC), Kind: "registered"})
	return dir, st
}

// TestRunInProgressIsAState: while a runner works on a run, the report says
// "running, N of M" with each attempt in flight and its phase, and counts
// no running or waiting attempt as a failure, unscored or never completed;
// its endpoint idle share waits for the run instead of blaming a stopped
// runner. Once no runner holds it, the same records read "stopped,
// resumable".
func TestRunInProgressIsAState(t *testing.T) {
	dir, st := fourSlots(t, evalctl.Running, evalctl.Planned)
	all, _ := st.Attempts()
	if err := st.WritePhases(map[string]string{all[2].ID: "turn 1, agent step 3, 120 tokens"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Lock(); err != nil {
		t.Fatal(err)
	}
	rep := build(t, []string{dir}, Options{})
	st.Unlock()
	p := rep.Runs[0].Progress
	if p.State != ProgressRunning || p.Planned != 4 || p.Ended != 2 || p.Running != 1 || p.Waiting != 1 || len(p.InFlight) != 1 || p.InFlight[0].Phase != "turn 1, agent step 3, 120 tokens" {
		t.Errorf("progress %+v", p)
	}
	want := "running, 2 of 4 attempts ended; 1 in flight: " + all[2].ID + " a/c3/repeat-1 (turn 1, agent step 3, 120 tokens); 1 waiting to run"
	if p.Words != want {
		t.Errorf("words\n %q\nwant %q", p.Words, want)
	}
	a := rep.Arms[0]
	if a.Unscored != 0 || a.Pending != 2 || a.Scored != 2 || a.Functional.Of != 2 {
		t.Errorf("arm counts %d unscored, %d pending, %d scored, functional of %d: want 0, 2, 2, 2", a.Unscored, a.Pending, a.Scored, a.Functional.Of)
	}
	var text bytes.Buffer
	if err := Write(&text, rep, FormatTable); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"never completed", "ended without an outcome", "runner stopped during it", "unscored (-"} {
		if strings.Contains(text.String(), bad) {
			t.Errorf("a running run's report says %q:\n%s", bad, text.String())
		}
	}
	for _, good := range []string{want, "still running: the share is known once"} {
		if !strings.Contains(text.String(), good) {
			t.Errorf("the report lacks %q:\n%s", good, text.String())
		}
	}

	stopped := build(t, []string{dir}, Options{})
	if p := stopped.Runs[0].Progress; p.State != ProgressStopped || !strings.HasPrefix(p.Words, "stopped, resumable: 2 of 4 attempts ended; 1 left running by a runner that stopped") {
		t.Errorf("no runner: progress %+v", p)
	}
}

// TestReplacedAttemptsApartByStatus: attempts replaced by a rerun of their
// slot are counted apart from the cohort and by what happened to them
// (the symptom: "8 infrastructure-failed attempt(s) were replaced" where 2
// were infrastructure failures and 6 interrupted).
func TestReplacedAttemptsApartByStatus(t *testing.T) {
	spec := &reporttest.RunSpec{ID: "replaced", Suite: evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: "fp"}, ImageID: "sha256:img"}
	for i := 0; i < 8; i++ {
		st := evalctl.Interrupted
		if i < 2 {
			st = evalctl.InfraFailed
		}
		spec.Attempts = append(spec.Attempts, reporttest.AttemptSpec{Arm: "a", Case: "c", Language: "python", Repeat: "repeat-1", Slot: i, State: st, Phases: 1})
	}
	for i := 0; i < 8; i++ {
		spec.Attempts = append(spec.Attempts, reporttest.AttemptSpec{Arm: "a", Case: "c", Language: "python", Repeat: "repeat-1", Slot: i,
			Replaces: true, ReplacementOf: i, Phases: 1, Terminations: []evalctl.Termination{evalctl.TermCompleted}, Solved: []bool{true}, Tokens: 100, Decode: 1, Task: 2})
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	rep := build(t, []string{dir}, Options{})
	a := rep.Arms[0]
	if a.Attempts != 8 || a.States["completed"] != 8 || len(a.States) != 1 || a.Replaced["interrupted"] != 6 || a.Replaced["infra_failed"] != 2 || a.Unscored != 0 {
		t.Errorf("states %v, replaced %v, %d attempts, %d unscored", a.States, a.Replaced, a.Attempts, a.Unscored)
	}
	want := "8 attempt(s) were replaced by a rerun of the same slot (6 interrupted, 2 infrastructure failure(s)): listed apart, not counted in the cohort"
	if !containsString(rep.Notes, want) {
		t.Errorf("notes %q lack %q", rep.Notes, want)
	}
}

// TestCancelledBeforeAndAfterStart: records written before the two were
// told apart ("cancelled") read as cancelled before or after start by
// whether they started, and their files are left exactly as stored.
func TestCancelledBeforeAndAfterStart(t *testing.T) {
	dir, st := fourSlots(t, evalctl.Cancelled, evalctl.Cancelled)
	all, _ := st.Attempts()
	started := time.Date(2026, 10, 10, 12, 30, 0, 0, time.UTC)
	all[2].StartedAt = &started
	all[3].StartedAt = nil
	for _, a := range all[2:] {
		if err := st.WriteAttempt(a); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string][]byte{}
	for _, a := range all {
		before[a.ID], _ = os.ReadFile(filepath.Join(st.AttemptDir(a.ID), runstore.AttemptFile))
	}
	in, err := Load(context.Background(), []string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	if in.Rows[2].State != string(evalctl.CancelledAfterStart) || in.Rows[3].State != string(evalctl.CancelledBeforeStart) || in.Rows[2].Status != Unscored {
		t.Errorf("old cancelled records read as %s (%s) and %s", in.Rows[2].State, in.Rows[2].Status, in.Rows[3].State)
	}
	rep, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "2 attempt(s) ended without an outcome (1 cancelled before start, 1 cancelled after start): null, not counted"
	if !containsString(rep.Notes, want) {
		t.Errorf("notes %q lack %q", rep.Notes, want)
	}
	if p := rep.Runs[0].Progress; p.State != ProgressComplete {
		t.Errorf("a run whose slots all ended (two cancelled) is %q", p.State)
	}
	for _, a := range all {
		after, _ := os.ReadFile(filepath.Join(st.AttemptDir(a.ID), runstore.AttemptFile))
		if !bytes.Equal(after, before[a.ID]) {
			t.Errorf("reading changed the stored record of %s", a.ID)
		}
	}
}

// TestUngradedWhenRecordsDoNotMatchUp: a finished attempt whose grade
// cannot be computed from its records (a grade file, but no snapshot
// record for its turn) is ungraded, not a failure.
func TestUngradedWhenRecordsDoNotMatchUp(t *testing.T) {
	dir, st := fourSlots(t, evalctl.Completed, evalctl.Completed)
	all, _ := st.Attempts()
	a := all[1] // graded unsolved: a failure, until its snapshot record goes
	a.Snapshots = nil
	if err := st.WriteAttempt(a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.GradePath(a.ID, "dev@1.0.0", 1)); err != nil {
		t.Fatal(err)
	}
	rep := build(t, []string{dir}, Options{})
	s := rep.Arms[0]
	if s.Ungraded != 1 || s.Scored != 3 || s.Functional.Of != 3 {
		t.Errorf("%d ungraded, %d scored, functional of %d: want 1, 3, 3", s.Ungraded, s.Scored, s.Functional.Of)
	}
	for _, c := range rep.Cases {
		for _, ca := range c.Arms {
			for _, cell := range ca.Attempts {
				if cell.AttemptID == a.ID && (cell.Status != Ungraded || cell.Functional != nil) {
					t.Errorf("the attempt without a snapshot record is %s (functional %v)", cell.Status, cell.Functional)
				}
			}
		}
	}
}

// TestSameAttemptInTwoRunsRefused: two run directories holding the same
// attempt ids (another run id, one in another slot, so no record is a copy
// of another) are refused when pooled, naming both directories.
func TestSameAttemptInTwoRunsRefused(t *testing.T) {
	a, _ := fourSlots(t, evalctl.Completed, evalctl.Completed)
	b, stb := fourSlots(t, evalctl.Completed, evalctl.Completed)
	run, _ := stb.ReadRun()
	run.ID = "other"
	if err := stb.WriteRun(run); err != nil {
		t.Fatal(err)
	}
	all, _ := stb.Attempts()
	all[0].Slot, all[0].RunID = 3, "other"
	if err := stb.WriteAttempt(all[0]); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), []string{a, b}, "")
	if !errors.Is(err, ErrDuplicateAttempt) || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), "attempt id live-a0000") {
		t.Errorf("pooling one attempt id twice: %v", err)
	}
}

// TestGradesWithoutCountsAreNotContradictions: grades that record only
// verdicts (no per-group test counts, as imported from another harness)
// pool as recorded; the export's evidence has null counts and both
// checkers accept it.
func TestGradesWithoutCountsAreNotContradictions(t *testing.T) {
	dir, st := fourSlots(t, evalctl.Completed, evalctl.Completed)
	all, _ := st.Attempts()
	for _, a := range all {
		p := st.GradePath(a.ID, "dev@1.0.0", 1)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{`"passed": 13,`, `"failed": 0,`, `"total": 13,`, `"passed": 12,`, `"failed": 1,`} {
			data = bytes.ReplaceAll(data, []byte(f), nil)
		}
		if bytes.Contains(data, []byte(`"total"`)) {
			t.Fatalf("counts left in %s", data)
		}
		os.WriteFile(p, data, 0o644)
	}
	out := filepath.Join(t.TempDir(), "export")
	rep, err := Export(context.Background(), []string{dir}, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Arms[0].Functional; f.Count != 1 || f.Of != 4 {
		t.Errorf("functional %d/%d, want the verdicts as recorded: 1/4", f.Count, f.Of)
	}
	data, _ := os.ReadFile(filepath.Join(out, AttemptsJSON))
	if !bytes.Contains(data, []byte(`"passed": null`)) || !bytes.Contains(data, []byte(`"total": null`)) {
		t.Error("unknown counts are not null in the export's evidence")
	}
	if err := Verify(out); err != nil {
		t.Errorf("evalctl verify: %v", err)
	}
	if err := runChecker(t, out); err != nil {
		t.Errorf("check.py: %v", err)
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
