package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// acceptance is the command that runs a phase's frozen acceptance tests
// the way cases/README.md says the grader does (a sketch of it: enough to
// tell a solved workspace from an unsolved one).
func acceptance(t *testing.T, cs *tasks.Case, ph *tasks.Phase) string {
	g := ph.Group("acceptance")
	if cs.Language == tasks.TypeScript {
		cmd := "tsc -p " + g.TSConfig + " --outDir /tmp/acc && node --test"
		for _, p := range g.Paths {
			cmd += " /tmp/acc/" + p
		}
		return cmd
	}
	return "PYTHONPATH=/workspace python3 -m pytest -q -p no:cacheprovider " + strings.Join(g.Paths, " ")
}

// On the real sandbox, with real cases: the reference script solves them
// (its own runs of the public tests pass inside the sandbox, phase after
// phase, and the frozen acceptance tests pass on its answer); noop does not.
func TestRealSandboxSolvesCases(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Docker Engine and the sandbox image")
	}
	for _, name := range []string{"cache", "async_pool"} {
		cs, err := tasks.LoadCase(filepath.Join("..", "..", "cases", name))
		if err != nil {
			t.Fatalf("case %s: %v", name, err)
		}
		suite := &tasks.Suite{Name: "subset", Version: "test", Cases: []*tasks.Case{cs}}
		for _, modelName := range []string{"reference", "noop"} {
			t.Run(name+"/"+modelName, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				c := sandboxtest.Start(t, sandbox.Spec{Role: sandbox.RoleAgent})
				if err := c.CopyDir(ctx, cs.WorkspaceDir, "/workspace"); err != nil {
					t.Fatal(err)
				}
				_, client := startServer(t, scripted.Config{Suite: suite})
				overlay := func(dir string) {
					if err := c.CopyDir(ctx, dir, "/workspace"); err != nil {
						t.Fatal(err)
					}
				}
				a := run(t, client, c, overlay, cs, Config{ModelName: modelName, Budgets: DefaultBudgets, Params: model.Params{MaxTokens: 32768}})
				a.checkComplete(t)
				a.checkAccounting(t)
				if len(a.turns) != len(cs.Phases) {
					t.Fatalf("%d turns for %d phases: %+v", len(a.turns), len(cs.Phases), a.turns)
				}
				for i, turn := range a.turns {
					if turn.Termination != evalctl.TermCompleted || !turn.AgentFinished || !turn.FinalText {
						t.Errorf("phase %d: %+v", i+1, turn)
					}
					if modelName == "noop" {
						if turn.LastTest != nil || turn.LastTypecheck != nil {
							t.Errorf("noop ran checks: %+v", turn)
						}
						continue
					}
					if turn.LastTest == nil || !turn.LastTest.Passed {
						t.Errorf("phase %d: the agent's last test run did not pass: %+v", i+1, turn.LastTest)
					}
					if cs.Language == tasks.TypeScript && (turn.LastTypecheck == nil || !turn.LastTypecheck.Passed) {
						t.Errorf("phase %d: the agent's last typecheck did not pass: %+v", i+1, turn.LastTypecheck)
					}
					if turn.ToolErrors != 0 {
						t.Errorf("phase %d: %d tool errors", i+1, turn.ToolErrors)
					}
				}
				// Judge the answer as the grader would: a snapshot of the
				// workspace and the frozen checks in a fresh container.
				snap, err := c.Snapshot(ctx, "/workspace", tasks.Ignored)
				if err != nil {
					t.Fatal(err)
				}
				entries, err := snap.Entries()
				if err != nil {
					t.Fatal(err)
				}
				checks, err := sandbox.DirEntries(cs.ChecksDir, nil)
				if err != nil {
					t.Fatal(err)
				}
				g := sandboxtest.Start(t, sandbox.Spec{Role: sandbox.RoleGrader, Volumes: []string{"/checks"}})
				if err := g.CopyIn(ctx, "/workspace", entries); err != nil {
					t.Fatal(err)
				}
				if err := g.CopyInReadOnly(ctx, "/checks", checks); err != nil {
					t.Fatal(err)
				}
				last := cs.Phases[len(cs.Phases)-1]
				res, err := g.Exec(ctx, []string{"bash", "-c", acceptance(t, cs, last)}, sandbox.ExecOptions{Timeout: 2 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				if solved := res.ExitCode == 0; solved != (modelName == "reference") {
					t.Errorf("acceptance exit %d after %s:\n%s%s", res.ExitCode, modelName, res.Stdout, res.Stderr)
				}
			})
		}
	}
}
