package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// golden compares got with testdata/NAME, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func mustJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := runstore.WriteJSON(path, v); err != nil {
		t.Fatal(err)
	}
}

func appendEvents(t *testing.T, dir string, evs ...runstore.Event) {
	t.Helper()
	st, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := st.AppendEvent(e); err != nil {
			t.Fatal(err)
		}
	}
}

// runsFixture writes a folder of runs in each state a listing tells apart:
// a complete cohort with a regrade (no event log: counted from records), a
// stopped cohort and a running one (event logs as the runner writes them),
// and a stopped screen. It returns the folder and a function releasing the
// running run's lock.
func runsFixture(t *testing.T) (string, func()) {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	suite := evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: strings.Repeat("ab", 32)}
	// Complete: two arms x two cases, one attempt unsolved; one regrade.
	var atts []reporttest.AttemptSpec
	for i, arm := range []string{"mtp4", "mtp2", "mtp4", "mtp2"} {
		c := []string{"ledger", "ledger", "wallet", "wallet"}[i]
		atts = append(atts, reporttest.AttemptSpec{Arm: arm, Case: c, Language: "python", Repeat: "repeat-1", Seed: 101, Slot: i,
			Phases: 1, Terminations: []evalctl.Termination{evalctl.TermCompleted}, Solved: []bool{i != 3},
			Tokens: 1000, Decode: 10, Task: 20})
	}
	complete := filepath.Join(root, "mtp4-vs-mtp2-0192a000-0000-7000-8000-000000000001")
	if err := reporttest.Write(complete, &reporttest.RunSpec{ID: "0192a000-0000-7000-8000-000000000001", Name: "mtp4-vs-mtp2",
		CreatedAt: day, Suite: suite, ImageID: "sha256:img", Attempts: atts}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(complete, runstore.RegradesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	mustJSON(t, filepath.Join(complete, runstore.RegradesDir, "20261103T000000Z-dev@1.0.1.json"), map[string]any{"suite": "dev@1.0.1"})

	// Cohorts written the way the runner writes them: plan.json with
	// slots and arms, an event log.
	cohort := func(name, id string, created time.Time, evs ...runstore.Event) string {
		dir := filepath.Join(root, runstore.DirName(name, id))
		st, err := runstore.Create(dir)
		if err != nil {
			t.Fatal(err)
		}
		plan := map[string]any{"name": name, "arms": []map[string]any{{"name": "q4"}, {"name": "q8"}},
			"slots": []map[string]any{{"index": 0}, {"index": 1}, {"index": 2}, {"index": 3}}}
		mustJSON(t, st.Path(runstore.PlanFile), plan)
		mustJSON(t, st.Path(runstore.RunFile), &runstore.Run{ID: id, Name: name, CreatedAt: created, Kind: "cohort", Suite: suite})
		appendEvents(t, dir, append([]runstore.Event{{Kind: "registered", Detail: "plan sha256 x, 4 attempts"}}, evs...)...)
		return dir
	}
	cohort("quant sweep", "0192b000-0000-7000-8000-000000000002", day.Add(time.Hour),
		runstore.Event{Kind: "start", Attempt: "a1"}, runstore.Event{Kind: "completed", Attempt: "a1"},
		runstore.Event{Kind: "start", Attempt: "a2"}, runstore.Event{Kind: "infra_failed", Attempt: "a2", Detail: "docker"},
		runstore.Event{Kind: "replace_infra", Attempt: "a3", Detail: "replaces a2"},
		runstore.Event{Kind: "start", Attempt: "a3"}, runstore.Event{Kind: "completed", Attempt: "a3"},
		runstore.Event{Kind: "start", Attempt: "a4"}, runstore.Event{Kind: "interrupted", Attempt: "a4"})
	running := cohort("temp-0.6", "0192c000-0000-7000-8000-000000000003", day.Add(2*time.Hour),
		runstore.Event{Kind: "start", Attempt: "b1"}, runstore.Event{Kind: "completed", Attempt: "b1"},
		runstore.Event{Kind: "start", Attempt: "b2"})
	l := flock.New(filepath.Join(running, ".lock"))
	if ok, err := l.TryLock(); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}

	// A stopped screen, as serving registers it.
	sdir := filepath.Join(root, "modes-20261102-080000")
	if _, err := runstore.Create(sdir); err != nil {
		t.Fatal(err)
	}
	mustJSON(t, filepath.Join(sdir, runstore.RunFile), &runstore.Run{ID: "0192d000-0000-7000-8000-000000000004", Name: "modes", CreatedAt: day.Add(-time.Hour), Kind: "screen"})
	appendEvents(t, sdir, runstore.Event{Kind: "screen_start", Detail: "0 of 6 finished"},
		runstore.Event{Kind: "sample", Attempt: "k1", Detail: "ok"}, runstore.Event{Kind: "sample", Attempt: "k2", Detail: "ok"})
	return root, func() { l.Unlock() }
}

func TestRunsCommand(t *testing.T) {
	root, unlock := runsFixture(t)
	defer unlock()
	code, out, errs := runCLI(t, "runs", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "runs.golden", out)

	code, out, errs = runCLI(t, "runs", root, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var list []runstore.Summary
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	want := map[string][3]string{ // state, scored, planned
		"temp-0.6":     {"running", "1", "4"},
		"quant sweep":  {"stopped", "2", "4"},
		"mtp4-vs-mtp2": {"complete", "4", "4"},
		"modes":        {"stopped", "-", "6"},
	}
	if len(list) != len(want) {
		t.Fatalf("listed %d runs, want %d", len(list), len(want))
	}
	for i, s := range list {
		w := want[s.Name]
		if got := [3]string{s.State, count(s.Scored), count(s.Planned)}; got != w {
			t.Errorf("%s: state/scored/planned %v, want %v", s.Name, got, w)
		}
		if i > 0 && list[i-1].CreatedAt < s.CreatedAt {
			t.Errorf("not newest first: %s before %s", list[i-1].CreatedAt, s.CreatedAt)
		}
	}
	// The same counts as the attempt records give, where both exist.
	if list[2].Name != "mtp4-vs-mtp2" || strings.Join(list[2].Arms, ",") != "mtp4,mtp2" || list[2].Regrades != 1 {
		t.Errorf("complete run: %+v", list[2])
	}
}

func TestRunLookup(t *testing.T) {
	root, unlock := runsFixture(t)
	defer unlock()
	t.Setenv("EVALCTL_RUNS", root)
	complete := filepath.Join(root, "mtp4-vs-mtp2-0192a000-0000-7000-8000-000000000001")
	tests := []struct {
		name string
		args []string
		code int
		out  string
		err  string
	}{
		{"by directory", []string{"report", complete, "--format", "json"}, 0, `"id": "0192a000-0000-7000-8000-000000000001"`, ""},
		{"by id", []string{"report", "0192a000-0000-7000-8000-000000000001", "--format", "json"}, 0, `"graded_suite": "dev@1.0.0"`, ""},
		{"by id prefix", []string{"report", "0192a", "--format", "json"}, 0, `"graded_suite": "dev@1.0.0"`, ""},
		{"by name prefix", []string{"report", "mtp4-vs", "--format", "json"}, 0, `"graded_suite": "dev@1.0.0"`, ""},
		{"ambiguous prefix", []string{"report", "0192"}, 2, "", "matches 4 runs"},
		{"runs of a missing folder", []string{"runs", filepath.Join(root, "nope")}, 2, "", "no folder of runs at " + filepath.Join(root, "nope")},
		{"no such run", []string{"report", "nosuchrun"}, 2, "", `run "nosuchrun": no such run under ` + root},
		{"a folder of runs: its cohorts", []string{"report", root, "--format", "json"}, 0, `"id": "0192a000-0000-7000-8000-000000000001"`, ""},
		{"export by prefix", []string{"export", "mtp4-vs", "--out", filepath.Join(t.TempDir(), "x")}, 0, "exported 1 run(s)", ""},
		{"screen report by id prefix", []string{"screen", "report", "0192d", "--format", "json"}, 1, "", "modes"},
		{"cancel by name prefix", []string{"run", "--cancel", "quant"}, 0, "0 attempt(s) recorded as cancelled in " + root + "/quant-sweep-0192b000", ""},
		{"cancel a screen: not a cohort", []string{"run", "--cancel", "0192d"}, 2, "", "modes-20261102-080000 is a screen run, not a cohort"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errs, tt.err) {
				t.Errorf("exit %d\nstdout %.600s\nstderr %s\nwant exit %d, stdout with %q, stderr with %q", code, out, errs, tt.code, tt.out, tt.err)
			}
		})
	}
}

func count(n *int) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}
