package grader

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestNodeBoundaryIsTransparent is the differential test of the node
// boundary: testdata/nodediff's honest answer (promise combinators with
// aggregated errors, async iteration, generators both ways, identity, test
// doubles called back, exceptions with attributes, numeric edges, nested
// records and containers changed in place, the Jest layer) is graded
// through the boundary and run directly, the answer in the tests' own
// process; every test must come out the same, the honest bug failing in
// both, but for the tests the boundary cannot represent
// (checks/unrepresentable.test.ts: a symbol, an array too deep, the tests'
// console handed over), which pass directly and through it fail with the
// grade's unrepresentable status, each with what could not cross.
func TestNodeBoundaryIsTransparent(t *testing.T) {
	sandboxtest.Engine(t)
	ctx := context.Background()
	box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}})
	copyTree(t, box, "testdata/nodediff")
	g := &tasks.Group{Name: "diff", Runner: tasks.RunnerNodeTest, TSConfig: "/checks/tsconfig.json",
		Paths: []string{"checks/honest.test.js", "checks/jest.test.js", "checks/unrepresentable.test.js"}, Timeout: 12 * time.Minute, Required: true}
	res, err := runGroup(ctx, box, g)
	if err != nil {
		t.Fatal(err)
	}
	total, passed, failed, out := runDirect(t, box, g)
	want := []string{"an honest bug", "an honest bug fails the same way"}
	sort.Strings(failed)
	// The tests the boundary cannot represent (checks/unrepresentable.test.ts)
	// fail through it with its mark, and only they: the grade says so (their
	// own status); every other test comes out as run directly.
	wantUnrep := map[string]string{
		"unrepresentable: a symbol as an argument":     "a symbol (blue)",
		"unrepresentable: a symbol a callback returns": "a symbol (green)",
		"unrepresentable: an array 230 levels deep":    "a value nested deeper than 200 levels",
		"unrepresentable: the console in an object":    "the tests' console handed to the answer",
	}
	marked := map[string]bool{}
	for _, u := range res.Unrepresentable {
		if wantUnrep[u.Test] != u.Construct || marked[u.Test] {
			t.Errorf("marked %+v, want one of %v once", u, wantUnrep)
		}
		marked[u.Test] = true
	}
	if res.UnrepresentableCount != len(wantUnrep) || len(marked) != len(wantUnrep) {
		t.Errorf("%d test(s) marked unrepresentable %+v, want %d", res.UnrepresentableCount, res.Unrepresentable, len(wantUnrep))
	}
	var bfailed []string
	for _, f := range res.FailedTests {
		if !marked[f] {
			bfailed = append(bfailed, f)
		}
	}
	sort.Strings(bfailed)
	if res.Total != total || res.Passed+len(marked) != passed || strings.Join(bfailed, "|") != strings.Join(failed, "|") {
		t.Errorf("through the boundary %d/%d, failed %q (unrepresentable %d); run directly %d/%d, failed %q\nboundary:\n%s\ndirect:\n%s",
			res.Passed, res.Total, bfailed, len(marked), passed, total, failed, res.Output, out)
	}
	if total < 20 || strings.Join(failed, "|") != strings.Join(want, "|") {
		t.Errorf("run directly: %d/%d, failed %q, want every test but %q to pass\n%s", passed, total, failed, want, out)
	}
}

// copyTree puts dir/workspace in /workspace and dir/checks in /checks.
func copyTree(t *testing.T, box *sandbox.Container, dir string) {
	t.Helper()
	ctx := context.Background()
	checks, err := sandbox.DirEntries(dir+"/checks", nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := sandbox.DirEntries(dir+"/workspace", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := box.CopyIn(ctx, "/workspace", ws); err != nil {
		t.Fatal(err)
	}
	if err := box.CopyInReadOnly(ctx, "/checks", checks); err != nil {
		t.Fatal(err)
	}
}

// runDirect runs a node-test group without the boundary: compiled as the
// grader compiles it, the answer loaded in the tests' own process.
func runDirect(t *testing.T, box *sandbox.Container, g *tasks.Group) (total, passed int, failed []string, output string) {
	t.Helper()
	outDir := "/tmp/direct-build"
	script := `tsc -p "$1" --outDir "$2" --pretty false >&2; printf '{"type": "commonjs"}\n' > "$2/package.json" && cd "$2" && shift 2 && exec node --test --test-reporter=tap "$@"`
	cmd := []string{"sh", "-c", script, "direct", g.TSConfig, outDir}
	for _, p := range g.Paths {
		cmd = append(cmd, outDir+"/"+p)
	}
	out, err := box.Exec(context.Background(), cmd, sandbox.ExecOptions{Timeout: g.Timeout, MaxOutput: reportCap, User: sandbox.HarnessUser})
	if err != nil {
		t.Fatal(err)
	}
	total, passed, failed = ParseTAP(out.Stdout)
	return total, passed, failed, tail(out.Stderr, []byte(failureLines(out.Stdout)))
}
