package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

const (
	fxV1 = "../../grader/regrade/testdata/suite-v1"
	fxV2 = "../../grader/regrade/testdata/suite-v2"
)

// referenceRun writes a run of one completed attempt whose phase answers
// are the case's references, registered under suite-v1 and not graded.
func referenceRun(t *testing.T) string {
	t.Helper()
	s, err := tasks.LoadSuite(fxV1)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Case("wordcount")
	dir := filepath.Join(t.TempDir(), "run")
	st, err := runstore.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := evalctl.SuiteRef{Name: s.Name, Version: s.Version, Fingerprint: s.Fingerprint}
	if err := st.WriteRun(&runstore.Run{ID: "cli-run", Suite: ref, Kind: "cohort"}); err != nil {
		t.Fatal(err)
	}
	yes := true
	a := &evalctl.Attempt{ID: "att-1", RunID: "cli-run", Arm: "armA", Case: c.Name, Language: "python", Repeat: "repeat-1",
		State: evalctl.Completed, Suite: ref, ExpectedTurns: 2, ArmUnchanged: &yes}
	vs, err := grader.Variants(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Kind != grader.KindReference {
			continue
		}
		snap, err := sandbox.NewSnapshot(v.Entries)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(st.AttemptDir(a.ID), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := runstore.WriteFileAtomic(st.SnapshotPath(a.ID, v.Phase), snap.Tar, 0o644); err != nil {
			t.Fatal(err)
		}
		a.Snapshots = append(a.Snapshots, evalctl.Snapshot{Phase: v.Phase, File: fmt.Sprintf("phase-%d.tar", v.Phase), SHA256: snap.SHA256})
		a.Turns = append(a.Turns, evalctl.Turn{Phase: v.Phase, Termination: evalctl.TermCompleted, AgentFinished: true, FinalText: true,
			LastTest: &evalctl.SelfCheck{Passed: true}})
	}
	if err := st.WriteAttempt(a); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRegradeCommandUsage(t *testing.T) {
	run := referenceRun(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no run", []string{"regrade", "--suite", fxV2}, 2, "at least one run directory"},
		{"no suite", []string{"regrade", run}, 2, "--suite DIR is required"},
		{"bad concurrency", []string{"regrade", run, "--suite", fxV2, "--concurrency", "0"}, 2, "at least 1"},
		{"bad suite", []string{"regrade", run, "--suite", t.TempDir()}, 2, "suite.yaml: no such file"},
		{"controls without case", []string{"controls", "--suite", fxV1}, 2, "--case NAME is required"},
		{"controls without suite", []string{"controls", "--case", "wordcount"}, 2, "give --suite once"},
		{"controls with three suites", []string{"controls", "--case", "wordcount", "--suite", fxV1, "--suite", fxV2, "--suite", fxV2}, 2, "got 3"},
		{"controls unknown case", []string{"controls", "--case", "nope", "--suite", fxV1}, 2, `no case "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.stderr) {
				t.Errorf("exit %d stderr %q; want %d and %q", code, errs, tt.code, tt.stderr)
			}
		})
	}
}

// One real regrade through the command: JSON out, then a no-op re-run,
// then a refused tampered copy (exit 1, named attempt and phase).
func TestRegradeCommand(t *testing.T) {
	sandboxtest.Engine(t) // real grades; skipped under -short
	run := referenceRun(t)
	code, out, errs := runCLI(t, "regrade", run, "--suite", fxV2, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res regrade.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Graded != 1 || len(res.Arms) != 1 || res.Arms[0].Before != (regrade.Counts{Ungraded: 1}) ||
		res.Arms[0].After != (regrade.Counts{Functional: 1, Delivered: 1, Of: 1}) || res.ModelsCalled {
		t.Errorf("result %+v", res)
	}
	code, out, errs = runCLI(t, "regrade", "--suite", fxV2, run)
	if code != 0 || !strings.Contains(out, "0 graded, 1 skipped") || !strings.Contains(out, "armA  functional - -> 1/1  delivered - -> 1/1") {
		t.Errorf("re-run: exit %d\n%s\n%s", code, out, errs)
	}
	snap := filepath.Join(run, "attempts", "att-1", "phase-1.tar")
	data, _ := os.ReadFile(snap)
	data[len(data)/3] ^= 1
	os.WriteFile(snap, data, 0o644)
	os.RemoveAll(filepath.Join(run, "attempts", "att-1", "grades", "regradefx@1.0.1"))
	code, _, errs = runCLI(t, "regrade", run, "--suite", fxV2)
	if code != 1 || !strings.Contains(errs, "attempt att-1") || !strings.Contains(errs, "phase 1") || !strings.Contains(errs, "SHA-256") {
		t.Errorf("tampered: exit %d: %s", code, errs)
	}
	// The fixture diagnosis refuses the changed answer too, before grading.
	code, _, errs = runCLI(t, "controls", "--case", "wordcount", "--suite", fxV1, "--suite", fxV2, "--answers", run)
	if code != 1 || !strings.Contains(errs, "attempt att-1") || !strings.Contains(errs, "refusing to grade a changed answer") {
		t.Errorf("controls on a tampered answer: exit %d: %s", code, errs)
	}
}
