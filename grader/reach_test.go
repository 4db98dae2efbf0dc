package grader_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// reacher is appended to the cache case's reference: the first time
// get_or_load gets a loader from the tests, it sends the test process the
// raw requests an answer would use to reach the tests' globals, import or
// run something there, or change the tests' functions. Each must be
// refused; one that is not makes the answer wrong (get_or_load returns
// None), so the grade says which way it went.
const reacher = `

import sys as _sys

_reached = []


def _try(*req):
    ep = _sys.modules["__main__"].session.endpoint()
    try:
        ep.request(req[0], req[1:])
        _reached.append(req[0])
    except (PermissionError, AttributeError):
        pass  # refused, as it must be


_orig_get_or_load = TTLCache.get_or_load


def _get_or_load(self, key, loader):
    if not getattr(_get_or_load, "done", False):
        _get_or_load.done = True
        for name in ("__globals__", "__code__", "__closure__", "__builtins__", "__module__x", "_private"):
            _try("getattr", loader, name)
        _try("setattr", loader, "__code__", None)
        _try("setattr", loader, "anything", 1)
        _try("import", "os")
        _try("run", ["true"])
    if _reached:
        return None
    return _orig_get_or_load(self, key, loader)


TTLCache.get_or_load = _get_or_load
`

// TestAnswerCannotReachTheTestsThroughCallbacks: what the tests hand the
// answer (a loader function here) can be called, and nothing else: the
// test process refuses private attributes (the way to a function's globals
// or code), changes to the tests' functions, imports and programs.
func TestAnswerCannotReachTheTestsThroughCallbacks(t *testing.T) {
	_, g := setup(t)
	if _, err := os.Stat("../cases/cache"); err != nil {
		t.Skip("development suite not here")
	}
	s, err := tasks.LoadSuite("../cases")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Case("cache")
	tree, err := grader.PhaseStart(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := sandbox.DirEntries(c.Phases[0].ReferenceDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tree = grader.Overlay(tree, ref)
	for i, e := range tree {
		if e.Name == "cache.py" {
			e.Data = append(append([]byte(nil), e.Data...), reacher...)
			tree[i] = e
		}
	}
	snap, err := sandbox.NewSnapshot(tree)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := g.Grade(context.Background(), s, c, 1, snap, grader.Labels{Run: sandboxtest.RunLabel(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !gr.Solved {
		var out []string
		for _, x := range gr.Groups {
			out = append(out, x.Name+": "+x.Output)
		}
		t.Fatalf("a request the test process should have refused went through (or the answer broke):\n%s", strings.Join(out, "\n"))
	}
}
