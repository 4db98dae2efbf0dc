package orchestrator

import (
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestPlanAgentCommand: an arm's agent is a command; its mistakes are
// reported with file, line and field path, and a valid one renders its
// templates with the prompt where the agent expects it.
func TestPlanAgentCommand(t *testing.T) {
	plan := `name: t
suite: SUITE
cases: [adder]
repeats: [{label: repeat-1, seed: 1}]
arms:
  - name: a
    endpoint: {base_url: "http://127.0.0.1:1", model: m}
    agent:
      command: [standin-agent, "--model={{.Modle}}"]
      prompt: stdn
      files: {relative/config.json: "{}"}
  - name: b
    endpoint: {base_url: "http://127.0.0.1:1", model: m}
    agent: {command: []}
`
	file := writePlan(t, plan, "")
	_, _, err := LoadPlan(file)
	if err == nil {
		t.Fatal("a bad agent command was accepted")
	}
	for _, w := range []string{
		file + `:10: arms[0].agent.prompt: "stdn" is not one of argument, file, stdin`,
		file + `:14: arms[1].agent.command: is required`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("lacks %s\nin:\n%s", w, err)
		}
	}
	good := strings.Replace(strings.Replace(strings.Replace(plan, "stdn", "file", 1), "Modle", "Model", 1), "relative/", "/home/agent/", 1)
	good = strings.Replace(good, "command: []", "command: [agent, -p, \"{{.Prompt}}\"]", 1)
	p, _, err := LoadPlan(writePlan(t, good, ""))
	if err != nil {
		t.Fatal(err)
	}
	argv, _, files, err := p.Arms[0].Agent.Render(evalctl.AgentVars{Prompt: "fix it", Model: "qwen", PromptFile: evalctl.AgentPromptFile})
	if err != nil || strings.Join(argv, " ") != "standin-agent --model=qwen" || files["/home/agent/config.json"] != "{}" {
		t.Errorf("file mode: %q %v %v", argv, files, err)
	}
	argv, _, _, _ = p.Arms[1].Agent.Render(evalctl.AgentVars{Prompt: "fix it"})
	if strings.Join(argv, "|") != "agent|-p|fix it" || p.Arms[1].Agent.Prompt != evalctl.PromptArgument {
		t.Errorf("argument mode: %q (prompt %q)", argv, p.Arms[1].Agent.Prompt)
	}
}
