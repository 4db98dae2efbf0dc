package grader

import (
	"context"
	"fmt"
	"os"
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
	t.Errorf("%s", strings.Join(first, "\n"))
	t.Errorf("in %d gradings each way, no outcome through the boundary was one of the direct runs': through %v, directly %v", compareRounds, through, direct)
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
