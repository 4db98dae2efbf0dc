package grader

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestNodeBoundaryKeepsSemantics runs testdata/nodeboundary's checks (what
// crosses the node boundary by value, errors by class, promises, callbacks,
// handles, identity, rigged objects) through the real node runner: the
// answer in its host as the command user, the tests as the harness user.
func TestNodeBoundaryKeepsSemantics(t *testing.T) {
	sandboxtest.Engine(t)
	ctx := context.Background()
	box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}})
	checks, err := sandbox.DirEntries("testdata/nodeboundary/checks", nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := sandbox.DirEntries("testdata/nodeboundary/workspace", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := box.CopyIn(ctx, "/workspace", ws); err != nil {
		t.Fatal(err)
	}
	if err := box.CopyInReadOnly(ctx, "/checks", checks); err != nil {
		t.Fatal(err)
	}
	g := &tasks.Group{Name: "boundary", Runner: tasks.RunnerNodeTest, TSConfig: "/checks/tsconfig.json",
		Paths: []string{"checks/boundary.test.js"}, Timeout: 5 * time.Minute, Tests: 15, Required: true}
	res, err := runGroup(ctx, box, g)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Passed != 15 {
		t.Fatalf("boundary checks: %d/%d passed (failed %s), exit %d\n%s", res.Passed, res.Total, strings.Join(res.FailedTests, ", "), res.ExitCode, res.Output)
	}
}
