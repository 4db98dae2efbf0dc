package orchestrator

import (
	"encoding/json"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// fence matches a fenced block of docs/agents.md: its language and body.
var fence = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```$")

// TestDocsAgentExamples holds docs/agents.md to what the code accepts: every
// `agent:` example there (the stand-in's and each real agent's) is a valid
// arm of a plan, its templates render, the prompt reaches the agent the way
// the example says, the agent is pointed at the proxy (the base URL appears
// in its command, environment or files), and a configuration file it writes
// as JSON is JSON. Every Dockerfile example installs on top of the sandbox
// image (ARG BASE / FROM ${BASE}, or a bare install step of one).
func TestDocsAgentExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	vars := evalctl.AgentVars{Prompt: "fix the bug in adder.py", PromptFile: evalctl.AgentPromptFile,
		Model: "qwen2.5-coder-7b", BaseURL: "http://127.0.0.1:4000/v1", MaxTokens: 8192,
		GeneratedTokens: 65536, ToolCalls: 120, WallSeconds: 900}
	agents, dockerfiles := 0, 0
	for _, m := range fence.FindAllStringSubmatch(string(doc), -1) {
		lang, body := m[1], m[2]
		switch {
		case lang == "dockerfile":
			dockerfiles++
			checkDockerfileExample(t, body)
			continue
		case lang != "yaml":
			continue
		}
		arm := armOfExample(body)
		if arm == "" {
			continue
		}
		agents++
		plan := "name: t\nsuite: SUITE\ncases: [adder]\nrepeats: [{label: repeat-1, seed: 1}]\narms:\n" + arm
		p, _, err := LoadPlan(writePlan(t, plan, ""))
		if err != nil {
			t.Errorf("docs/agents.md example is not a valid arm:\n%s\n%v", body, err)
			continue
		}
		ag := p.Arms[0].Agent
		if ag == nil {
			t.Errorf("docs/agents.md example has no agent command:\n%s", body)
			continue
		}
		argv, env, files, err := ag.Render(vars)
		if err != nil {
			t.Errorf("docs/agents.md example does not render: %v\n%s", err, body)
			continue
		}
		all := strings.Join(argv, "\n") + "\n" + strings.Join(env, "\n")
		for _, c := range files {
			all += "\n" + c
		}
		if !strings.Contains(all, vars.BaseURL) {
			t.Errorf("docs/agents.md example never gives the agent the proxy's base URL (command, env or files):\n%s", body)
		}
		switch ag.Prompt {
		case evalctl.PromptArgument:
			if !strings.Contains(strings.Join(argv, "\n"), vars.Prompt) {
				t.Errorf("prompt: argument, but the prompt is not in the command %q", argv)
			}
		case evalctl.PromptFile:
			if !strings.Contains(strings.Join(argv, "\n")+strings.Join(env, "\n"), vars.PromptFile) {
				t.Errorf("prompt: file, but the command and env never name %s: %q", vars.PromptFile, argv)
			}
		}
		for f, c := range files {
			if path.Ext(f) == ".json" && !json.Valid([]byte(c)) {
				t.Errorf("docs/agents.md example writes %s, which is not JSON once rendered:\n%s", f, c)
			}
		}
	}
	// The stand-in's arm and the four real agents' (OpenCode, Aider,
	// mini-swe-agent, Qwen Code), beside the image-naming fragment.
	if agents < 5 || dockerfiles < 5 {
		t.Errorf("found %d agent examples and %d Dockerfile examples in docs/agents.md; want at least 5 of each", agents, dockerfiles)
	}
}

// armOfExample turns a YAML example of docs/agents.md into one arm of a
// plan's arms list: a whole arm (it starts "arms:") as it is, a bare
// `agent:` block under an arm with an endpoint; "" for anything else.
func armOfExample(body string) string {
	switch {
	case strings.HasPrefix(body, "arms:\n"):
		return strings.TrimPrefix(body, "arms:\n")
	case strings.HasPrefix(body, "agent:\n"):
		var b strings.Builder
		b.WriteString("  - name: a\n    endpoint: {base_url: \"http://127.0.0.1:1\", model: m}\n")
		for _, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
			b.WriteString("    " + l + "\n")
		}
		return b.String()
	}
	return ""
}

// checkDockerfileExample: a whole Dockerfile starts from the sandbox image
// the build passes as BASE and ends as its keeper user; a fragment is one
// install step.
func checkDockerfileExample(t *testing.T, body string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) == 1 {
		if !strings.HasPrefix(lines[0], "RUN ") {
			t.Errorf("Dockerfile fragment is not an install step: %q", lines[0])
		}
		return
	}
	if len(lines) < 3 || lines[0] != "ARG BASE" || lines[1] != "FROM ${BASE}" || lines[len(lines)-1] != "USER 65534:65534" {
		t.Errorf("Dockerfile example does not start ARG BASE / FROM ${BASE} and end USER 65534:65534:\n%s", body)
	}
}
