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

// TestNodeUnrepresentableHasItsOwnStatus is the node boundary's side of
// TestUnrepresentableHasItsOwnStatus: Jest-layer tests handing the answer a
// symbol, an array nested 250 levels deep and the tests' console
// (testdata/unrepresentable/tsdescribe) pass run in one process and fail
// through the boundary. The test processes mark them, the grade records
// them by title with what could not cross, the reference is ungraded (not
// failed, not an infrastructure error) and cases check says why. An answer
// that throws and prints lines shaped like the mark, with whatever nonce it
// can find, gets no mark for its own failure: a failure, as before.
func TestNodeUnrepresentableHasItsOwnStatus(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	s, err := tasks.LoadSuite("testdata/unrepresentable")
	if err != nil {
		t.Fatal(err)
	}
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 1})
	c := s.Case("tsdescribe")
	labels := grader.Labels{Run: sandboxtest.RunLabel(t)}
	ctx := context.Background()

	ref, err := g.Grade(ctx, s, c, 1, answer(t, c, true), labels)
	if err != nil {
		t.Fatal(err)
	}
	acc := ref.Group("acceptance")
	if acc.Total != 4 || acc.Passed != 1 || acc.ExitCode != evalctl.ExitTestsFailed || acc.UnrepresentableCount != 3 || len(acc.Unrepresentable) != 3 {
		t.Fatalf("acceptance %d/%d exit %d, unrepresentable %d %+v:\n%s", acc.Passed, acc.Total, acc.ExitCode, acc.UnrepresentableCount, acc.Unrepresentable, acc.Output)
	}
	want := map[string]string{"names a symbol": "a symbol (red)", "measures depth": "a value nested deeper than 200 levels",
		"knows the console": "the tests' console handed to the answer"}
	for _, u := range acc.Unrepresentable {
		if want[u.Test] != u.Construct {
			t.Errorf("unrepresentable %+v, want one of %v", u, want)
		}
	}
	// Not an infrastructure failure either: the grade came back (no error)
	// from a test run that ended as runs with failed tests end, in time.
	if !acc.OnlyUnrepresentable() || !ref.BlockedByBoundary() || ref.Solved || acc.TimedOut {
		t.Errorf("only unrepresentable %v, blocked %v, solved %v, timed out %v", acc.OnlyUnrepresentable(), ref.BlockedByBoundary(), ref.Solved, acc.TimedOut)
	}
	if !strings.HasPrefix(acc.Output, "evalctl: 3 test(s) the boundary cannot represent: ") || strings.Contains(acc.Output, "evalctl_unrepresentable") {
		t.Errorf("output does not say so first:\n%s", acc.Output)
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
		!strings.Contains(r.Problems[0], "3 test(s) the boundary cannot represent: ") {
		t.Errorf("cases check on %s: %v", vs[0].Name, r.Problems)
	}

	// An answer forging the mark: its add throws, and it prints, lines
	// shaped like it for every test, with the nonce if it can find one (its
	// environment, any process's /proc/PID/environ) and a made-up one else.
	bad, err := g.Grade(ctx, s, c, 1, answer(t, c, false, file("src/describe.ts", forgingAnswer)), labels)
	if err != nil {
		t.Fatal(err)
	}
	acc = bad.Group("acceptance")
	for _, u := range acc.Unrepresentable {
		if u.Construct == "forged" || u.Test == "adds" {
			t.Errorf("the forged mark counted: %+v", u)
		}
	}
	if acc.Failed != 4 || acc.UnrepresentableCount != 3 || acc.OnlyUnrepresentable() || bad.BlockedByBoundary() || !strings.Contains(acc.Output, `{"test":"adds","construct":"forged"}`) {
		t.Errorf("forging answer: failed %d, unrepresentable %d %+v, blocked %v (want the forged line in the report):\n%s",
			acc.Failed, acc.UnrepresentableCount, acc.Unrepresentable, bad.BlockedByBoundary(), acc.Output)
	}
	if o, ungraded := evalctl.ScoreGraded(a, []*evalctl.Grade{bad}); o == nil || ungraded || o.Functional {
		t.Errorf("forging answer scored %+v ungraded %v, want not functional", o, ungraded)
	}
}

// forgingAnswer throws (and prints) the node boundary's mark for every
// test, with the best nonce it can find.
const forgingAnswer = `declare const require: any;
declare const process: any;
const fs = require("fs");
function nonce(): string {
  let found: string = process.env.EVALCTL_NONCE || "";
  try {
    for (const p of fs.readdirSync("/proc")) {
      try {
        const m = /EVALCTL_NONCE=([^\0]*)/.exec(fs.readFileSync("/proc/" + p + "/environ", "utf8"));
        if (m) found = m[1];
      } catch (e) {}
    }
  } catch (e) {}
  return found || "0123456789abcdef";
}
const line = (test: string) => "\nevalctl_unrepresentable " + nonce() + " " + JSON.stringify({ test, construct: "forged" }) + "\n";
const forge = (test: string): never => {
  process.stdout.write(line(test));
  process.stderr.write(line(test));
  throw new Error(line(test));
};
export function add(a: number, b: number): number {
  return forge("adds");
}
export function symbolName(s: symbol): string {
  return forge("names a symbol");
}
export function depth(xs: unknown): number {
  return forge("measures depth");
}
export function kindOf(v: unknown): string {
  return forge("knows the console");
}
`
