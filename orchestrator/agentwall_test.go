package orchestrator

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/proxy"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestAgentCommandWallTime: in a real container, an agent that keeps
// working past the wall-time budget is ended with its process tree, and
// the turn records wall_time_limit as the built-in loop does; the exit
// code is unknown (null), never a made-up status.
func TestAgentCommandWallTime(t *testing.T) {
	sandboxtest.Long(t)
	box := sandboxtest.Start(t, sandbox.Spec{Role: sandbox.RoleAgent, ProxySocket: true, Volumes: []string{agentHome}})
	s, err := scripted.New(scripted.Config{StallDelay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := DefaultBudgets()
	wall := 12.0
	b.WallSeconds = &wall
	arm := &Arm{Name: "a", Endpoint: Endpoint{BaseURL: s.URL(), Model: "stall"}, Budgets: b,
		Agent: &evalctl.AgentCommand{Command: []string{"standin-agent", "--base-url", "{{.BaseURL}}", "--model", "{{.Model}}", "--prompt", "{{.Prompt}}"}, Prompt: evalctl.PromptArgument, Usage: "standin"}}
	ctx := context.Background()
	client := model.New(model.Config{BaseURL: s.URL()})
	c, err := startCommandAgent(ctx, arm, box, proxy.Config{Model: client, ModelName: "stall", Budgets: agent.Budgets{WallTime: seconds(wall)}, Transcript: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	start := time.Now()
	turn, err := c.RunPhase(ctx, 1, "keep checking")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Termination != evalctl.TermWallTimeLimit || turn.Responses == 0 {
		t.Fatalf("turn %+v, want wall_time_limit after some responses", turn)
	}
	if el := time.Since(start); el > 45*time.Second {
		t.Errorf("the agent was ended %s after a %gs budget", el, wall)
	}
	ph := c.rec.Phases[0]
	if !ph.TimedOut || ph.ExitCode != nil {
		t.Errorf("agent phase %+v: want timed out, exit code null", ph)
	}
	res, err := box.Exec(ctx, []string{"sh", "-c", "ps -eo user:20,args | grep -c '[s]tandin-agent' || true"}, sandbox.ExecOptions{User: sandbox.HarnessUser})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "0" {
		t.Errorf("agent processes left: %q %v", res.Stdout, err)
	}
}
