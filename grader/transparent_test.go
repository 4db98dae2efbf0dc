package grader

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestBoundaryIsTransparent is the differential test of the boundary:
// each Python variant is graded through it and its pytest groups are run
// directly (answer and tests in one process, as bench_test.go's
// directCommands), and the per-test outcomes must be the same. The corpus
// (testdata/boundary) is honest code using ordinary semantics: keyword
// arguments of any name, nested containers changed in place now and in
// later calls, identity, test doubles and mocks called back, generators,
// exceptions with attributes, edge numbers, and one honest failure. With
// EVALCTL_LONG_TESTS=1 the development suite's Python cases run too:
// every reference and each case's first control (CI's share of the time
// budget); EVALCTL_TRANSPARENCY_ALL=1 adds every other variant (starters,
// all controls), about three times as long.
func TestBoundaryIsTransparent(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	suites := []string{"testdata/boundary"}
	if os.Getenv(sandboxtest.LongEnv) != "" {
		suites = append(suites, "../cases")
	}
	g := New(eng, img.Ref, img.ID, Options{Concurrency: 1})
	for _, dir := range suites {
		suite, err := tasks.LoadSuite(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range suite.Cases {
			if c.Language != "python" {
				continue
			}
			vs, err := Variants(c)
			if err != nil {
				t.Fatal(err)
			}
			controls := 0
			for _, v := range vs {
				if dir != "testdata/boundary" && os.Getenv("EVALCTL_TRANSPARENCY_ALL") == "" {
					if v.Control != nil {
						controls++
					}
					if v.Name != "reference" && (v.Control == nil || controls > 1) {
						continue
					}
				}
				t.Run(c.Name+"/"+v.Name, func(t *testing.T) { compareDirect(t, g, suite, c, v) })
			}
		}
	}
}

// compareRounds bounds the gradings of a variant whose per-test outcomes
// differ: a test that races (a negative control's concurrency bug) may
// come out either way in both modes, so the boundary is transparent when
// one of its outcomes is one of the direct runs'. A boundary that changes
// an outcome changes it every time.
const compareRounds = 3

func compareDirect(t *testing.T, g *Grader, suite *tasks.Suite, c *tasks.Case, v Variant) {
	ctx := context.Background()
	snap, err := sandbox.NewSnapshot(v.Entries)
	if err != nil {
		t.Fatal(err)
	}
	box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}})
	checks, err := sandbox.DirEntries(c.ChecksDir, tasks.Ignored)
	if err != nil {
		t.Fatal(err)
	}
	if err := box.CopyIn(ctx, "/workspace", v.Entries); err != nil {
		t.Fatal(err)
	}
	if err := box.CopyInReadOnly(ctx, "/checks", checks); err != nil {
		t.Fatal(err)
	}
	through, direct := map[string]map[string]bool{}, map[string]map[string]bool{}
	// The last grading's failed tests and totals per group, and every
	// direct run's failed tests and totals, for raceExplains.
	lastThrough := map[string][]string{}
	lastTotal, directTotal := map[string]int{}, map[string]map[int]bool{}
	directFailed := map[string][][]string{}
	var first []string
	for round := 0; round < compareRounds; round++ {
		gr, err := g.Grade(ctx, suite, c, v.Phase, snap, Labels{Run: sandboxtest.RunLabel(t)})
		if err != nil {
			t.Fatal(err)
		}
		var differ []string
		compared := 0
		for _, grp := range c.Phases[v.Phase-1].Groups {
			if grp.Runner != tasks.RunnerPytest {
				continue
			}
			total, passed, failed := runPytestDirect(t, box, grp)
			got := gr.Group(grp.Name)
			mine := append([]string(nil), got.FailedTests...)
			sort.Strings(mine)
			b := fmt.Sprintf("%d/%d failing %v", got.Passed, got.Total, mine)
			d := fmt.Sprintf("%d/%d failing %v", passed, total, failed)
			addOutcome(through, grp.Name, b)
			addOutcome(direct, grp.Name, d)
			lastThrough[grp.Name], lastTotal[grp.Name] = mine, got.Total
			if directTotal[grp.Name] == nil {
				directTotal[grp.Name] = map[int]bool{}
			}
			directTotal[grp.Name][total] = true
			directFailed[grp.Name] = append(directFailed[grp.Name], failed)
			if !meets(through[grp.Name], direct[grp.Name]) {
				differ = append(differ, fmt.Sprintf("%s: through the boundary %s; run directly %s\n%s", grp.Name, b, d, got.Output))
			}
			compared += total
		}
		if compared == 0 {
			t.Fatalf("no test compared")
		}
		if len(differ) == 0 {
			return
		}
		if first == nil {
			first = differ
		}
	}
	why := raceExplains(t, box, c.Phases[v.Phase-1].Groups, lastThrough, lastTotal, directTotal, directFailed)
	if why == "" {
		t.Logf("outcomes differ only in tests that race, each outcome through the boundary also seen run directly: through %v, directly %v", through, direct)
		return
	}
	t.Errorf("%s", strings.Join(first, "\n"))
	t.Errorf("in %d gradings each way, no outcome through the boundary was one of the direct runs': through %v, directly %v; %s", compareRounds, through, direct, why)
}

// raceRounds bounds the direct runs of one test whose outcome through the
// boundary was not seen in the direct runs of its group: a test that
// races may fail far more often one way than the other (the boundary's
// calls overlap more tightly than one process's threads), yet each of its
// outcomes is one the code can give without the boundary.
const raceRounds = 40

// raceExplains says why the last grading's outcome is not one the tests
// give run directly ("" when it is): the groups' totals must be ones the
// direct runs had, and every test whose state through the boundary (failed
// or passed) no direct run of its group showed must show it when run
// alone directly, within raceRounds runs. A boundary that changes an
// outcome changes it every time, so such a test never shows it.
func raceExplains(t *testing.T, box *sandbox.Container, groups []*tasks.Group, through map[string][]string, total map[string]int, directTotal map[string]map[int]bool, directFailed map[string][][]string) string {
	t.Helper()
	for _, grp := range groups {
		if grp.Runner != tasks.RunnerPytest {
			continue
		}
		if !directTotal[grp.Name][total[grp.Name]] {
			return fmt.Sprintf("%s: %d tests through the boundary, directly %v", grp.Name, total[grp.Name], directTotal[grp.Name])
		}
		failedThrough := map[string]bool{}
		for _, id := range through[grp.Name] {
			failedThrough[id] = true
		}
		names := map[string]bool{}
		for id := range failedThrough {
			names[id] = true
		}
		for _, run := range directFailed[grp.Name] {
			for _, id := range run {
				names[id] = true
			}
		}
		for id := range names {
			seen := false
			for _, run := range directFailed[grp.Name] {
				if slices.Contains(run, id) == failedThrough[id] {
					seen = true
				}
			}
			if seen {
				continue
			}
			if !runAloneShows(t, box, grp, id, failedThrough[id]) {
				state := "passed"
				if failedThrough[id] {
					state = "failed"
				}
				return fmt.Sprintf("%s: %s %s through the boundary and never in %d direct runs of it alone", grp.Name, id, state, raceRounds)
			}
			t.Logf("%s: %s races: its outcome through the boundary also came run directly", grp.Name, id)
		}
	}
	return ""
}

// runAloneShows runs the test id of grp directly, alone, up to raceRounds
// times, and says whether it ever failed (wantFailed) or passed.
func runAloneShows(t *testing.T, box *sandbox.Container, grp *tasks.Group, id string, wantFailed bool) bool {
	t.Helper()
	alone := *grp
	alone.Name = grp.Name + "-alone"
	ctx := context.Background()
	for range raceRounds {
		for _, cmd := range directCommands(&alone) {
			// -k takes a name, not a parameter set: test_x of test_x[1-2].
			cmd = append(cmd, "-k", strings.SplitN(id, "[", 2)[0])
			if _, err := box.Exec(ctx, cmd, sandbox.ExecOptions{Timeout: grp.Timeout, Env: []string{"EVALCTL_WORKSPACE=/workspace", "PYTHONPATH=/workspace"}}); err != nil {
				t.Fatal(err)
			}
		}
		report, err := box.Exec(ctx, []string{"cat", "/tmp/direct-" + alone.Name + ".xml"}, sandbox.ExecOptions{MaxOutput: reportCap})
		if err != nil || report.ExitCode != 0 {
			t.Fatalf("%s: no direct report: %v %s", alone.Name, err, report.Stderr)
		}
		n, _, failed, err := ParseJUnit(report.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("%s: -k %s selected no test", grp.Name, id)
		}
		if slices.Contains(failed, id) == wantFailed {
			return true
		}
	}
	return false
}

func addOutcome(m map[string]map[string]bool, group, outcome string) {
	if m[group] == nil {
		m[group] = map[string]bool{}
	}
	m[group][outcome] = true
}

// meets says whether two sets of outcomes share one.
func meets(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// runPytestDirect runs a pytest group's tests in box without the boundary and
// returns the report's counts and the failed test ids, sorted.
func runPytestDirect(t *testing.T, box *sandbox.Container, grp *tasks.Group) (total, passed int, failed []string) {
	t.Helper()
	ctx := context.Background()
	for _, cmd := range directCommands(grp) {
		if _, err := box.Exec(ctx, cmd, sandbox.ExecOptions{Timeout: grp.Timeout, Env: []string{"EVALCTL_WORKSPACE=/workspace", "PYTHONPATH=/workspace"}}); err != nil {
			t.Fatal(err)
		}
	}
	report, err := box.Exec(ctx, []string{"cat", "/tmp/direct-" + grp.Name + ".xml"}, sandbox.ExecOptions{MaxOutput: reportCap})
	if err != nil || report.ExitCode != 0 {
		t.Fatalf("%s: no direct report: %v %s", grp.Name, err, report.Stderr)
	}
	total, passed, failed, err = ParseJUnit(report.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(failed)
	return total, passed, failed
}

// TestRaceExplains holds the differential test's rule for tests that race
// to what it must tell apart: a test whose outcome is a coin toss failed
// through the boundary though every direct run passed it (it shows the
// failure when run alone), while a test that always passes directly and
// failed through the boundary is a change the boundary made, and so is a
// total no direct run had.
func TestRaceExplains(t *testing.T) {
	box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}})
	test := []byte("import random\n\ndef test_steady():\n    assert True\n\ndef test_coin():\n    assert random.random() < 0.5\n")
	if err := box.CopyInReadOnly(context.Background(), "/checks", []sandbox.Entry{
		{Name: "acceptance", Mode: fs.ModeDir | 0o755},
		{Name: "acceptance/test_race.py", Mode: 0o644, Data: test},
	}); err != nil {
		t.Fatal(err)
	}
	grp := &tasks.Group{Name: "acceptance", Runner: tasks.RunnerPytest, Paths: []string{"/checks/acceptance"}, Timeout: tasks.DefaultGroupTimeout}
	groups := []*tasks.Group{grp}
	passedDirectly := map[string][][]string{"acceptance": {nil, nil, nil}}
	totals := map[string]map[int]bool{"acceptance": {2: true}}
	for _, tt := range []struct {
		name    string
		through []string
		total   int
		want    string // in the verdict; "" for none
	}{
		{"a test that races", []string{"test_coin"}, 2, ""},
		{"a test the boundary changed", []string{"test_steady"}, 2, "test_steady failed through the boundary and never"},
		{"a total no direct run had", nil, 3, "3 tests through the boundary"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := raceExplains(t, box, groups, map[string][]string{"acceptance": tt.through}, map[string]int{"acceptance": tt.total}, totals, passedDirectly)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("verdict %q, want %q", got, tt.want)
			}
		})
	}
}
