package evalctl

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"text/template"
)

// This file holds an arm's agent command: an agent CLI run inside the
// attempt's agent container instead of the built-in tool loop, talking to
// the model only through evalctl's recording proxy.

// Prompt modes: how the case prompt reaches an agent command.
const (
	PromptArgument = "argument"
	PromptFile     = "file"
	PromptStdin    = "stdin"
)

// AgentHome is the command user's home in an agent command's container,
// writable (the root file system is not): configuration files go there
// or under /tmp.
const AgentHome = "/home/agent"

// AgentPromptFile is where the prompt is written for prompt: file.
const AgentPromptFile = "/tmp/evalctl-prompt.txt"

// AgentCommand is an arm's agent CLI. Command, env values and file
// contents are Go templates over AgentVars ({{.Prompt}}, {{.Model}},
// {{.BaseURL}}, ...).
type AgentCommand struct {
	// Command is the program and its arguments, run in /workspace as the
	// command user (required; the program is an absolute path or found on
	// the image's PATH).
	Command []string `json:"command" yaml:"command"`
	// Env is added to the command's environment.
	Env map[string]string `json:"env,omitempty" yaml:"env"`
	// Files are the agent's configuration files: absolute path in the
	// container to content, written before the start; their SHA-256 is
	// recorded and a file changed at the end makes the attempt not
	// functional.
	Files map[string]string `json:"files,omitempty" yaml:"files"`
	// Prompt is how the case prompt reaches the agent: argument (the
	// command's {{.Prompt}}, else appended as the last argument), file
	// (/tmp/evalctl-prompt.txt, written before the start) or stdin.
	Prompt string `json:"prompt" yaml:"prompt" enum:"argument,file,stdin" default:"argument"`
	// VersionArgs are the arguments that make the program print its
	// version (empty: --version); the text and the program's SHA-256 are
	// part of the arm's identity.
	VersionArgs []string `json:"version_args,omitempty" yaml:"version_args"`
	// Usage names the adapter that reads the agent's own usage report from
	// its output (none, or standin: a line 'usage: prompt_tokens=N
	// completion_tokens=M').
	Usage string `json:"usage" yaml:"usage" enum:"none,standin" default:"none"`
	// Image is an image derived from the sandbox image that holds the
	// agent CLI (built with 'evalctl image build --agent DOCKERFILE --tag
	// NAME'); the agent container runs it instead of the sandbox image.
	// It must exist on the sandbox engine when the run starts, and its
	// image ID (not the name) is part of the arm's identity.
	Image string `json:"image,omitempty" yaml:"image"`
}

// AgentVars are what an agent command's templates may use.
type AgentVars struct {
	Prompt     string
	PromptFile string
	Model      string
	// BaseURL is the proxy's OpenAI-compatible base URL inside the
	// container (ending in /v1).
	BaseURL         string
	MaxTokens       int
	GeneratedTokens int64
	ToolCalls       int
	WallSeconds     float64
}

// Validate checks the command; the error names the field.
func (c *AgentCommand) Validate() error {
	if len(c.Command) == 0 || strings.TrimSpace(c.Command[0]) == "" {
		return errors.New("command: is required: the agent program and its arguments, e.g. [standin-agent, --prompt, '{{.Prompt}}']")
	}
	if c.Image != "" && (strings.TrimSpace(c.Image) != c.Image || strings.ContainsAny(c.Image, " \t\n")) {
		return fmt.Errorf("image: %q is not an image name: give the NAME passed to 'evalctl image build --agent DOCKERFILE --tag NAME', e.g. evalctl-agent-opencode", c.Image)
	}
	switch c.Prompt {
	case PromptArgument, PromptFile, PromptStdin:
	default:
		return fmt.Errorf("prompt: %q is not argument, file or stdin", c.Prompt)
	}
	for i, a := range c.Command {
		if _, err := render(a, AgentVars{}); err != nil {
			return fmt.Errorf("command[%d]: %v", i, err)
		}
	}
	for _, k := range sortedKeys(c.Env) {
		if _, err := render(c.Env[k], AgentVars{}); err != nil {
			return fmt.Errorf("env.%s: %v", k, err)
		}
	}
	for _, k := range sortedKeys(c.Files) {
		if !path.IsAbs(k) || path.Clean(k) != k || !strings.HasPrefix(k, AgentHome+"/") && !strings.HasPrefix(k, "/tmp/") {
			return fmt.Errorf("files.%s: a configuration file is named by its clean absolute path under %s or /tmp (the rest of the container is read-only, and the workspace is the answer), e.g. %s/.config/agent.json", k, AgentHome, AgentHome)
		}
		if _, err := render(c.Files[k], AgentVars{}); err != nil {
			return fmt.Errorf("files.%s: %v", k, err)
		}
	}
	return nil
}

// Render fills the command's templates: the argument vector (with the
// prompt appended when it goes as an argument the command does not
// name), the environment (KEY=VALUE, sorted) and the files.
func (c *AgentCommand) Render(v AgentVars) (argv, env []string, files map[string]string, err error) {
	named := false
	for _, a := range c.Command {
		named = named || strings.Contains(a, ".Prompt}}") || strings.Contains(a, ".Prompt }}")
		s, err := render(a, v)
		if err != nil {
			return nil, nil, nil, err
		}
		argv = append(argv, s)
	}
	if c.Prompt == PromptArgument && !named {
		argv = append(argv, v.Prompt)
	}
	for _, k := range sortedKeys(c.Env) {
		s, err := render(c.Env[k], v)
		if err != nil {
			return nil, nil, nil, err
		}
		env = append(env, k+"="+s)
	}
	files = map[string]string{}
	for k, t := range c.Files {
		if files[k], err = render(t, v); err != nil {
			return nil, nil, nil, err
		}
	}
	return argv, env, files, nil
}

func render(text string, v AgentVars) (string, error) {
	t, err := template.New("").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("not a valid template: %v", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return "", fmt.Errorf("template: %v (known: .Prompt .PromptFile .Model .BaseURL .MaxTokens .GeneratedTokens .ToolCalls .WallSeconds)", err)
	}
	return b.String(), nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AgentRecord is what an attempt of an agent-command arm records of the
// agent itself, beside the server's figures.
type AgentRecord struct {
	// BinarySHA256 and Version identify the agent program (with the
	// arm's hash): a change between attempts of one arm stops the run.
	BinarySHA256 string `json:"binary_sha256"`
	Version      string `json:"version"`
	// ImageID is the ID of the image the agent container ran: the arm's
	// agent.image as resolved when the run (or its resumption) started,
	// or the sandbox image's. A tag moved to another build shows here.
	ImageID string `json:"image_id,omitempty"`
	// ConfigSHA256 is each declared configuration file's SHA-256 as
	// written before the start.
	ConfigSHA256 map[string]string `json:"config_sha256"`
	// ConfigUnchanged is whether every configuration file still had its
	// SHA-256 at the end; null when it could not be read.
	ConfigUnchanged *bool `json:"config_unchanged"`
	// Phases are the agent process's outcomes, one per phase run.
	Phases []AgentPhase `json:"phases"`
}

// AgentPhase is one run of the agent command.
type AgentPhase struct {
	Phase int `json:"phase"`
	// ExitCode is the agent's exit status; null when it was killed
	// (wall time) or never started.
	ExitCode *int `json:"exit_code"`
	TimedOut bool `json:"timed_out"`
	// ReportedPromptTokens and ReportedCompletionTokens are the agent's
	// own usage claims (its usage adapter); null when it reported none.
	// Only the server's figures are measurements.
	ReportedPromptTokens     *int64 `json:"reported_prompt_tokens"`
	ReportedCompletionTokens *int64 `json:"reported_completion_tokens"`
	// OutputTail is the end of the agent's output (stdout, then stderr),
	// for diagnosis.
	OutputTail string `json:"output_tail"`
}
