package grader_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestUnrepresentableHasItsOwnStatus: tests that hand the answer what the
// boundary truly refuses (a module of the tests', a list nested 250
// levels deep; testdata/unrepresentable) fail through it though they pass
// run in one process. The trusted side marks them, the grade records them
// by id with what could not cross, the reference is then ungraded (not
// failed) and cases check says why; an answer that also fails an ordinary
// test is a failure as before.
func TestUnrepresentableHasItsOwnStatus(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	s, err := tasks.LoadSuite("testdata/unrepresentable")
	if err != nil {
		t.Fatal(err)
	}
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 1})
	c := s.Case("describe")
	labels := grader.Labels{Run: sandboxtest.RunLabel(t)}
	ctx := context.Background()

	ref, err := g.Grade(ctx, s, c, 1, answer(t, c, true), labels)
	if err != nil {
		t.Fatal(err)
	}
	acc := ref.Group("acceptance")
	if acc.Total != 3 || acc.Passed != 1 || acc.UnrepresentableCount != 2 || len(acc.Unrepresentable) != 2 {
		t.Fatalf("acceptance %d/%d, unrepresentable %d %+v:\n%s", acc.Passed, acc.Total, acc.UnrepresentableCount, acc.Unrepresentable, acc.Output)
	}
	want := map[string]string{"test_describe.test_module": "a module of the tests' side handed to the answer",
		"test_describe.test_deep": "a value nested deeper than 200 levels"}
	for _, u := range acc.Unrepresentable {
		found := false
		for id, what := range want {
			if strings.HasSuffix(u.Test, id) && u.Construct == what {
				found = true
			}
		}
		if !found {
			t.Errorf("unrepresentable %+v, want one of %v", u, want)
		}
	}
	if !acc.OnlyUnrepresentable() || !ref.BlockedByBoundary() || ref.Solved {
		t.Errorf("only unrepresentable %v, blocked %v, solved %v", acc.OnlyUnrepresentable(), ref.BlockedByBoundary(), ref.Solved)
	}
	yes := true
	a := &evalctl.Attempt{State: evalctl.Completed, ExpectedTurns: 1, ArmUnchanged: &yes, Turns: []evalctl.Turn{{}}}
	if o, ungraded := evalctl.ScoreGraded(a, []*evalctl.Grade{ref}); o != nil || !ungraded {
		t.Errorf("scored %+v ungraded %v, want ungraded (null functional)", o, ungraded)
	}
	vs, err := grader.Variants(c)
	if err != nil {
		t.Fatal(err)
	}
	r := grader.Expect(vs[0], ref)
	if vs[0].Kind != grader.KindReference || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "reference is ungraded: ") ||
		!strings.Contains(r.Problems[0], "2 test(s) the boundary cannot represent: ") {
		t.Errorf("cases check on %s: %v", vs[0].Name, r.Problems)
	}

	// A wrong add besides: an ordinary failure, graded as one.
	src, err := os.ReadFile("testdata/unrepresentable/describe/reference/phase-1/describe.py")
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(string(src), "a + b", "a - b", 1)
	bad, err := g.Grade(ctx, s, c, 1, answer(t, c, false, file("describe.py", wrong)), labels)
	if err != nil {
		t.Fatal(err)
	}
	if acc := bad.Group("acceptance"); acc.Failed != 3 || acc.UnrepresentableCount != 2 || acc.OnlyUnrepresentable() || bad.BlockedByBoundary() {
		t.Errorf("wrong answer: failed %d, unrepresentable %d, blocked %v", acc.Failed, acc.UnrepresentableCount, bad.BlockedByBoundary())
	}
	if o, ungraded := evalctl.ScoreGraded(a, []*evalctl.Grade{bad}); o == nil || ungraded || o.Functional {
		t.Errorf("wrong answer scored %+v ungraded %v, want not functional", o, ungraded)
	}
}
