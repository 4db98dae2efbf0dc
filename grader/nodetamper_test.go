package grader

import (
	"context"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestNodeTamperRawProtocol holds the node rows of the tamper suite that
// drive the boundary from the answer's side (testdata/nodetamper): the
// raw protocol asking the tests' side for trusted accessors and applying
// them to the tests' console by name, typecheck pragmas, an answer-written
// /tmp/package.json, a program of the answer's connecting to its host's
// socket. An honest answer passes the same checks, so a row
// fails for its cheat, not for the harness.
func TestNodeTamperRawProtocol(t *testing.T) {
	sandboxtest.Engine(t)
	tests := []struct {
		name, answer string
		passed       int // of the 3 behaviour tests
		typecheck    map[string]bool
	}{
		{name: "honest", answer: "honest", passed: 3, typecheck: map[string]bool{"answer": true}},
		// Wrong by one everywhere: no forged report may make it pass.
		{name: "a trusted accessor applied to the tests' console", answer: "raw", passed: 0},
		{name: "answer-written /tmp/package.json", answer: "tmppkg", passed: 3},
		// Right only when its own program's connection to the host's
		// socket was refused (nodegate.py: the harness user's alone).
		{name: "a second client on the host's socket", answer: "second", passed: 3},
		{name: "@ts-nocheck, @ts-ignore, @ts-expect-error", answer: "pragmas", passed: 3,
			typecheck: map[string]bool{"answer": true, "nocheck": false, "ignore": false, "expecterror": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}})
			checks, err := sandbox.DirEntries("testdata/nodetamper/checks", nil)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := sandbox.DirEntries("testdata/nodetamper/"+tt.answer, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := box.CopyIn(ctx, "/workspace", ws); err != nil {
				t.Fatal(err)
			}
			if err := box.CopyInReadOnly(ctx, "/checks", checks); err != nil {
				t.Fatal(err)
			}
			g := &tasks.Group{Name: "acceptance", Runner: tasks.RunnerNodeTest, TSConfig: "/checks/tsconfig.json",
				Paths: []string{"checks/a.test.js", "checks/b.test.js"}, Timeout: 10 * time.Minute, Tests: 3, Required: true}
			res, err := runGroup(ctx, box, g)
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != 3 || res.Passed != tt.passed || res.Success != (tt.passed == 3) {
				t.Errorf("acceptance %d/%d (success %v), want %d/3\n%s", res.Passed, res.Total, res.Success, tt.passed, res.Output)
			}
			for name, ok := range tt.typecheck {
				tg := &tasks.Group{Name: "typecheck", Runner: tasks.RunnerTSC, TSConfig: "/checks/tsconfig." + name + ".json", Timeout: 5 * time.Minute, Required: true}
				tr, err := runGroup(ctx, box, tg)
				if err != nil {
					t.Fatal(err)
				}
				if tr.Success != ok {
					t.Errorf("typecheck of %s.ts: success %v, want %v\n%s", name, tr.Success, ok, tr.Output)
				}
			}
		})
	}
}
