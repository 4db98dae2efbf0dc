package grader

import (
	"context"
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
// EVALCTL_LONG_TESTS=1 every variant of the development suite's Python
// cases runs too.
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
			for _, v := range vs {
				t.Run(c.Name+"/"+v.Name, func(t *testing.T) { compareDirect(t, g, suite, c, v) })
			}
		}
	}
}

func compareDirect(t *testing.T, g *Grader, suite *tasks.Suite, c *tasks.Case, v Variant) {
	ctx := context.Background()
	snap, err := sandbox.NewSnapshot(v.Entries)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := g.Grade(ctx, suite, c, v.Phase, snap, Labels{Run: sandboxtest.RunLabel(t)})
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
	compared := 0
	for _, grp := range c.Phases[v.Phase-1].Groups {
		if grp.Runner != tasks.RunnerPytest {
			continue
		}
		for _, cmd := range directCommands(grp) {
			if _, err := box.Exec(ctx, cmd, sandbox.ExecOptions{Timeout: grp.Timeout, Env: []string{"EVALCTL_WORKSPACE=/workspace", "PYTHONPATH=/workspace"}}); err != nil {
				t.Fatal(err)
			}
		}
		report, err := box.Exec(ctx, []string{"cat", "/tmp/direct-" + grp.Name + ".xml"}, sandbox.ExecOptions{MaxOutput: reportCap})
		if err != nil || report.ExitCode != 0 {
			t.Fatalf("%s: no direct report: %v %s", grp.Name, err, report.Stderr)
		}
		total, passed, failed, err := ParseJUnit(report.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		got := gr.Group(grp.Name)
		sort.Strings(failed)
		through := append([]string(nil), got.FailedTests...)
		sort.Strings(through)
		if got.Total != total || got.Passed != passed || strings.Join(through, ",") != strings.Join(failed, ",") {
			t.Errorf("%s: through the boundary %d/%d failing %v; run directly %d/%d failing %v\n%s",
				grp.Name, got.Passed, got.Total, through, passed, total, failed, got.Output)
		}
		compared += total
	}
	if compared == 0 {
		t.Errorf("no test compared")
	}
}
