package main

import (
	"os"
	"strings"
	"testing"
)

// readmeCommand is one command line of a shell code block of README.md.
type readmeCommand struct {
	line         int
	text         string
	illustrative bool
}

// readmeCommands reads the command lines of README.md's shell code
// blocks: blocks fenced ```sh (or bash, console, shell, or no language).
// A block fenced ```sh illustrative holds commands no test runs (a
// llama-server on a GPU); every other command line must be a journey
// step. Comments (from " #") and blank lines are not commands; a line
// ending in a backslash goes on on the next.
func readmeCommands(text string) []readmeCommand {
	var cmds []readmeCommand
	inShell, illustrative, open := false, false, false
	var pending *readmeCommand
	for i, raw := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(raw)
		if strings.HasPrefix(trimmed, "```") {
			if open {
				open, inShell = false, false
				continue
			}
			open = true
			info := strings.Fields(strings.TrimPrefix(trimmed, "```"))
			lang := ""
			if len(info) > 0 {
				lang = info[0]
			}
			inShell = lang == "" || lang == "sh" || lang == "bash" || lang == "console" || lang == "shell"
			illustrative = len(info) > 1 && info[1] == "illustrative"
			continue
		}
		if !open || !inShell {
			continue
		}
		if c, _, ok := strings.Cut(trimmed, " #"); ok || strings.HasPrefix(trimmed, "#") {
			if strings.HasPrefix(trimmed, "#") {
				c = ""
			}
			trimmed = strings.TrimSpace(c)
		}
		trimmed = strings.TrimSpace(strings.TrimPrefix(trimmed, "$ "))
		if pending != nil {
			pending.text += " " + strings.TrimSuffix(trimmed, "\\")
			if !strings.HasSuffix(trimmed, "\\") {
				cmds = append(cmds, *pending)
				pending = nil
			}
			continue
		}
		if trimmed == "" {
			continue
		}
		c := readmeCommand{line: i + 1, text: strings.TrimSpace(strings.TrimSuffix(trimmed, "\\")), illustrative: illustrative}
		if strings.HasSuffix(trimmed, "\\") {
			pending = &c
			continue
		}
		cmds = append(cmds, c)
	}
	for i := range cmds {
		cmds[i].text = strings.Join(strings.Fields(cmds[i].text), " ")
	}
	return cmds
}

// TestREADMECommands: every command line of the README's shell blocks is
// run by the journey (TestJourney) or by CI, or stands in a block marked
// illustrative; and every journey step is a command the README shows.
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	run := map[string]bool{}
	for _, s := range journeySteps {
		run[strings.Join(strings.Fields(s.line), " ")] = true
	}
	shown := map[string]bool{}
	for _, c := range readmeCommands(string(data)) {
		shown[c.text] = true
		if c.illustrative || run[c.text] || ciCommands[c.text] != "" {
			continue
		}
		t.Errorf("README.md:%d: %q is run by no test: add it to journeySteps (cmd/evalctl/journey_test.go), "+
			"or put it in a block fenced ```sh illustrative", c.line, c.text)
	}
	for line := range run {
		if !shown[line] {
			t.Errorf("journey step %q is not a command line of README.md", line)
		}
	}
}

func TestReadmeCommandsParse(t *testing.T) {
	text := "x\n```sh\nevalctl a   # comment\n# only a comment\n\nevalctl b \\\n  --c d\n```\n" +
		"```yaml\nname: x\n```\n```sh illustrative\nllama-server -m m\n```\n```\nmake test\n```\n"
	got := readmeCommands(text)
	want := []readmeCommand{{3, "evalctl a", false}, {6, "evalctl b --c d", false}, {13, "llama-server -m m", true}, {16, "make test", false}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("command %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
