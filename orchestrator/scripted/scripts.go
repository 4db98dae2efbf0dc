package scripted

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/evalctl/evalctl/tasks"
)

// Tool names the scripts call: the agent loop's tools (orchestrator/agent).
const (
	toolBash      = "bash"
	toolReadFile  = "read_file"
	toolWriteFile = "write_file"
	toolListFiles = "list_files"
)

// convo is what a script reads from the conversation, as a real model would:
// nothing is remembered between requests.
type convo struct {
	req *chatRequest
	// phase counts user messages (phase 1 = the first request).
	phase int
	// step counts assistant messages since the last user message.
	step int
	// calls are the assistant's tool calls in order, with their results.
	calls []pastCall
	// thinking is false when the request turned reasoning off.
	thinking bool
	tools    map[string]bool
}

type pastCall struct {
	phase  int
	name   string
	args   string
	result string
}

func readConvo(req *chatRequest) *convo {
	c := &convo{req: req, thinking: true, tools: map[string]bool{}}
	if v, ok := req.ChatTemplateKwargs["enable_thinking"].(bool); ok && !v {
		c.thinking = false
	}
	if req.ReasoningEffort == "none" {
		c.thinking = false
	}
	for _, t := range req.Tools {
		c.tools[t.Function.Name] = true
	}
	byID := map[string]int{}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case "user":
			c.phase++
			c.step = 0
		case "assistant":
			c.step++
			for _, tc := range m.ToolCalls {
				byID[tc.ID] = len(c.calls)
				c.calls = append(c.calls, pastCall{phase: c.phase, name: tc.Function.Name, args: tc.Function.Arguments})
			}
		case "tool":
			if i, ok := byID[m.ToolCallID]; ok {
				c.calls[i].result = m.text()
			}
		}
	}
	return c
}

// lastResult is the result of the last call named name in this phase.
func (c *convo) lastResult(name string) (string, bool) {
	for i := len(c.calls) - 1; i >= 0 && c.calls[i].phase == c.phase; i-- {
		if c.calls[i].name == name {
			return c.calls[i].result, true
		}
	}
	return "", false
}

func badRequest(format string, a ...any) *scriptError {
	return &scriptError{status: 400, body: apiErrorBody{Code: 400, Type: "invalid_request_error", Message: fmt.Sprintf(format, a...)}}
}

// respond runs the script the request's model names.
func (s *Server) respond(req *chatRequest, promptTokens, limit int) (*output, *scriptError) {
	c := readConvo(req)
	think := func(o *output, text string) *output {
		if c.thinking {
			o.Reasoning = text
		}
		return o
	}
	name := req.Model
	switch {
	case name == "reference" || strings.HasPrefix(name, "control:"):
		return s.solve(c, strings.TrimPrefix(name, "control:"), name != "reference")
	case name == "flawed":
		// A plausible but flawed agent: on every other case of the suite it
		// writes that case's first negative control of the phase.
		return s.solve(c, "", true)
	case name == "noop":
		return think(&output{Content: "I read the request. I am handing over without changing anything."}, "Nothing to do here, I will hand over."), nil
	case name == "truncate":
		// Starts a tool call and never closes it: the output cap cuts it.
		return think(&output{Content: "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"notes.txt\", \"content\": \"" + filler(min(limit, 1<<20)+1)},
			"I will write everything down in one go."), nil
	case name == "malformed":
		switch c.step {
		case 0:
			return think(&output{Calls: []call{{Name: toolWriteFile, Args: `{"path": "notes.txt", "content": "unterminated`}}}, "Let me write a note."), nil
		case 1:
			return think(&output{Calls: []call{{Name: "run_tests", Args: `{}`}}}, "That failed; let me run the tests instead."), nil
		case 2:
			return think(&output{Calls: []call{{Name: toolListFiles, Args: `{"path": "."}`}}}, "No such tool. Let me look at the files."), nil
		}
		return think(&output{Content: "I recovered from two failed tool calls and looked at the workspace; handing over."}, "Done."), nil
	case name == "stall":
		return think(&output{Calls: []call{{Name: toolBash, Args: `{"command": "sleep 1; echo still working"}`}}, Delay: s.cfg.StallDelay},
			"I need to keep checking."), nil
	case name == "flaky":
		key := conversationKey(req)
		s.mu.Lock()
		s.flaky[key]++
		n := s.flaky[key]
		if n >= 3 {
			delete(s.flaky, key)
		}
		s.mu.Unlock()
		switch n {
		case 1:
			return nil, &scriptError{status: 503, body: apiErrorBody{Code: 503, Type: "unavailable_error", Message: "Loading model"}}
		case 2:
			return nil, &scriptError{status: 429, body: apiErrorBody{Code: 429, Type: "rate_limit_error", Message: "scripted: too many requests"}, retryAfter: "0"}
		}
		if c.step == 0 {
			return think(&output{Calls: []call{{Name: toolListFiles, Args: `{"path": "."}`}}}, "Let me look around."), nil
		}
		return think(&output{Content: "The server was flaky but I got through; handing over."}, "Done."), nil
	case name == "garble":
		// llama-server's 500 after generating (fault_500_*): the first
		// response is generated and then fails, every time (fixed seed).
		return think(&output{Content: "Let me start by looking at " + filler(48), Garble: true}, "I will look at the files."), nil
	case name == "cutcall":
		// A write_file call whose arguments the output cap cuts
		// (fault_toolcall_truncated): the call comes back with invalid
		// JSON arguments and finish_reason length.
		return think(&output{Calls: []call{{Name: toolWriteFile, Args: jsonArgs(map[string]any{"path": "notes.txt", "content": filler(min(limit, 1<<20) + 1)})}}},
			"I will write everything down in one go."), nil
	case name == "overflow":
		return nil, overflowError(promptTokens+s.cfg.CtxSize, s.cfg.CtxSize)
	case name == "busy":
		// A trivial tool call forever, at no extra delay: tool-call budgets
		// and the loop's own overhead are measured with it.
		return &output{Content: "Checking.", Calls: []call{{Name: toolBash, Args: `{"command": "true"}`}}}, nil
	case name == "runaway":
		return &output{Reasoning: "Let me think about this very carefully. " + filler(8192),
			Calls: []call{{Name: toolBash, Args: `{"command": "echo thinking"}`}}}, nil
	}
	return nil, &scriptError{status: 404, body: apiErrorBody{Code: 404, Type: "not_found_error",
		Message: fmt.Sprintf("model %q not found: the scripted server answers to %s and control:<name>", name, strings.Join(scriptNames, ", "))}}
}

// identify finds the case from the first list_files result of the
// conversation: the suite case whose starter files are all listed, with the
// fewest other files listed.
func (s *Server) identify(c *convo) (*tasks.Case, *scriptError) {
	listing := ""
	found := false
	for _, pc := range c.calls {
		if pc.name == toolListFiles && pc.result != "" {
			listing, found = pc.result, true
			break
		}
	}
	if !found {
		return nil, badRequest("scripted: no list_files result in the conversation to recognise the case by")
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(listing, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "./")
		if line != "" {
			listed[line] = true
		}
	}
	var best *tasks.Case
	bestExtra := 0
	for _, cs := range s.cfg.Suite.Cases {
		files := s.starter[cs.Name]
		all := true
		for f := range files {
			if !listed[f] {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		if extra := len(listed) - len(files); best == nil || extra < bestExtra {
			best, bestExtra = cs, extra
		}
	}
	if best == nil {
		return nil, badRequest("scripted: the listed files match no case of suite %s", s.cfg.Suite.ID())
	}
	return best, nil
}

var exitCodeRE = regexp.MustCompile(`exit code: (-?\d+)`)

// solve is the reference script (control=false) or control:<name>: list the
// files, read the contract, write the phase's solution through write_file,
// run the public tests, and hand over with a summary.
func (s *Server) solve(c *convo, controlName string, control bool) (*output, *scriptError) {
	if s.cfg.Suite == nil {
		return nil, badRequest("scripted: the %s script needs a suite (serve-model --suite DIR)", c.req.Model)
	}
	for _, t := range []string{toolListFiles, toolReadFile, toolWriteFile, toolBash} {
		if !c.tools[t] {
			return nil, badRequest("scripted: the %s script needs the %s tool", c.req.Model, t)
		}
	}
	if c.step == 0 {
		return c.think(&output{Calls: []call{{Name: toolListFiles, Args: `{"path": "."}`}}}, "Let me look at the files in the workspace first.")
	}
	cs, serr := s.identify(c)
	if serr != nil {
		return nil, serr
	}
	ph := cs.Phase(c.phase)
	if ph == nil {
		return c.think(&output{Content: fmt.Sprintf("Case %s has no phase %d; there is nothing more I can do.", cs.Name, c.phase)}, "This request is beyond the case.")
	}
	dir := ph.ReferenceDir
	if control {
		ctl, serr := s.control(c, cs, controlName)
		if serr != nil {
			return nil, serr
		}
		if ctl.Phase == c.phase {
			dir = ctl.OverlayDir
		}
	}
	files, err := tasks.ListFiles(dir)
	if err != nil {
		return nil, &scriptError{status: 500, body: apiErrorBody{Code: 500, Type: "server_error", Message: err.Error()}}
	}
	testCmd := testCommand(cs, ph)
	steps := solveSteps(c, cs, ph, dir, files, testCmd)
	if i := c.step - 1; i < len(steps) {
		return steps[i]()
	}
	return c.think(&output{Content: fmt.Sprintf("I changed %s for phase %d of the request. %s", strings.Join(files, ", "), c.phase, testVerdict(c, testCmd))},
		"The work is done; time to summarise.")
}

// think sets text as the output's reasoning when the request asks for
// thinking.
func (c *convo) think(o *output, text string) (*output, *scriptError) {
	if c.thinking {
		o.Reasoning = text
	}
	return o, nil
}

// control returns the control whose overlay a control script writes: the
// one named, or for the flawed script (no name) the first control of the
// phase in every second case of the suite, else none (Phase -1: this case
// gets the reference).
func (s *Server) control(c *convo, cs *tasks.Case, controlName string) (*tasks.Control, *scriptError) {
	var ctl *tasks.Control
	for _, x := range cs.Controls {
		if x.Name == controlName {
			ctl = x
		}
	}
	if controlName == "" { // the flawed script
		for i, x := range s.cfg.Suite.Cases {
			if x == cs && i%2 == 1 {
				for _, y := range cs.Controls {
					if y.Phase == c.phase && ctl == nil {
						ctl = y
					}
				}
			}
		}
		if ctl == nil {
			ctl = &tasks.Control{Phase: -1} // this case gets the reference
		}
	}
	if ctl == nil {
		return nil, badRequest("scripted: case %s has no control %q", cs.Name, controlName)
	}
	return ctl, nil
}

// solveSteps are the script's calls after listing the files, one per
// response: read the phase's contract (if any), write each file of dir,
// run the public tests.
func solveSteps(c *convo, cs *tasks.Case, ph *tasks.Phase, dir string, files []string, testCmd string) []func() (*output, *scriptError) {
	var steps []func() (*output, *scriptError)
	if contract := contractFile(cs, ph); contract != "" {
		steps = append(steps, func() (*output, *scriptError) {
			return c.think(&output{Calls: []call{{Name: toolReadFile, Args: jsonArgs(map[string]any{"path": contract})}}}, "I should read "+contract+" before changing anything.")
		})
	}
	for _, f := range files {
		steps = append(steps, func() (*output, *scriptError) {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
			if err != nil {
				return nil, &scriptError{status: 500, body: apiErrorBody{Code: 500, Type: "server_error", Message: err.Error()}}
			}
			return c.think(&output{Calls: []call{{Name: toolWriteFile, Args: jsonArgs(map[string]any{"path": f, "content": string(data)})}}},
				"I will write "+f+" so that it follows the contract.")
		})
	}
	steps = append(steps, func() (*output, *scriptError) {
		return c.think(&output{Calls: []call{{Name: toolBash, Args: jsonArgs(map[string]any{"command": testCmd})}}}, "Now I run the public tests.")
	})
	return steps
}

// testVerdict says how the last run of the public tests ended, from the
// exit code in its result.
func testVerdict(c *convo, testCmd string) string {
	verdict := "I could not run the public tests."
	if res, ok := c.lastResult(toolBash); ok {
		if m := exitCodeRE.FindStringSubmatch(res); m != nil {
			if m[1] == "0" {
				verdict = "The public tests pass (`" + testCmd + "`)."
			} else {
				verdict = "The public tests still fail (`" + testCmd + "` exited " + m[1] + ")."
			}
		}
	}
	return verdict
}

// contractFile is the contract the phase adds: CONTRACT.md of the starter
// for phase 1, the first Markdown file of the phase's overlay later.
func contractFile(cs *tasks.Case, ph *tasks.Phase) string {
	if ph.Number == 1 {
		if _, err := os.Stat(filepath.Join(cs.WorkspaceDir, "CONTRACT.md")); err == nil {
			return "CONTRACT.md"
		}
		return ""
	}
	if ph.OverlayDir == "" {
		return ""
	}
	files, _ := tasks.ListFiles(ph.OverlayDir)
	sort.Strings(files)
	for _, f := range files {
		if path.Ext(f) == ".md" {
			return f
		}
	}
	return ""
}

// testCommand is how a decent agent runs the phase's public tests: pytest
// over the public group's workspace paths; for TypeScript the workspace's
// npm test script, spelled out (it compiles with tsc, then node --test).
func testCommand(cs *tasks.Case, ph *tasks.Phase) string {
	if cs.Language == tasks.TypeScript {
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if data, err := os.ReadFile(filepath.Join(cs.WorkspaceDir, "package.json")); err == nil && json.Unmarshal(data, &pkg) == nil && pkg.Scripts["test"] != "" {
			return pkg.Scripts["test"]
		}
		return "tsc -p . && node --test build/"
	}
	cmd := "python3 -m pytest -q"
	if g := ph.Group("public"); g != nil {
		for _, p := range g.Paths {
			if !strings.HasPrefix(p, "/") {
				cmd += " " + p
			}
		}
	}
	return cmd
}

func jsonArgs(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
