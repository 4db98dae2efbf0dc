// Package importer brings outside suites into evalctl: an Adapter reads one
// source layout (Exercism's, say) and turns each exercise into an Exercise,
// and Write lays the exercises out as an evalctl suite (case.yaml,
// workspace, frozen checks, reference, prompt). Test counts are not guessed:
// FillCounts grades each reference in the sandbox image and writes the
// number of tests it ran into case.yaml, so the grader's defence against a
// test process ended early has a real count to compare with.
//
// Adding a source format means writing one Adapter and registering it in
// Adapters; nothing else changes.
package importer

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/evalctl/evalctl/tasks"
)

// Adapter converts one source layout into exercises.
type Adapter interface {
	// Name is the FORMAT argument of 'evalctl cases import'.
	Name() string
	// Exercises finds the exercises under src, in a stable order. An
	// exercise the adapter cannot convert is an error naming its file.
	Exercises(src string) ([]*Exercise, error)
}

// Adapters are the formats 'cases import' knows, by name.
var Adapters = map[string]Adapter{
	"exercism": Exercism{},
}

// Exercise is one case-to-be, in the adapter-neutral form Write lays out.
// File maps hold slash-separated relative paths and contents.
type Exercise struct {
	// Name becomes the case name and directory (a slug such as "two-fer").
	Name     string
	Language tasks.Language
	// Track is the source's language ("python", "javascript",
	// "typescript"); JavaScript cases use the TypeScript toolchain.
	Track string
	// Summary is one line saying what the agent must do.
	Summary string
	// Instructions is the task statement, written to CONTRACT.md in the
	// workspace and offered to the prompt template.
	Instructions string
	// Workspace is the starter the agent sees (the stub), CONTRACT.md aside.
	Workspace map[string][]byte
	// Solution names the workspace files the agent is expected to change.
	Solution []string
	// Protected lists workspace files (besides CONTRACT.md) the agent must
	// leave alone: helpers the tests import, say.
	Protected []string
	// Acceptance holds the frozen test files, laid out under
	// checks/acceptance.
	Acceptance map[string][]byte
	// Reference is the reference solution, an overlay on the workspace.
	Reference map[string][]byte
	// Checks holds further files under checks/ (tsconfig files).
	Checks map[string][]byte
	// TestPaths are the node-test paths of the acceptance group (the
	// compiled test files); empty for pytest.
	TestPaths []string
	// Source is where the exercise came from, for messages.
	Source string
}

// PromptData is what a prompt template sees.
type PromptData struct {
	Name         string
	Language     string
	Instructions string
	// Solution lists the files to change; Files joins them with ", ".
	Solution []string
	Files    string
}

// DefaultPrompt is the prompt template used unless the user gives one
// (text/template over PromptData). Like the Exercism polyglot benchmark's
// first try, it shows the instructions and names the files, not the tests.
const DefaultPrompt = `{{.Instructions}}

Use the above instructions to modify the supplied files: {{.Files}}.
Don't change the names of existing functions or classes, as they may be
referenced from other code like unit tests. Only use standard libraries,
don't suggest installing any packages. The instructions are also in
CONTRACT.md.
`

// ParsePrompt parses a prompt template and tries it on a sample exercise,
// so that a template naming an unknown field fails before anything is
// written.
func ParsePrompt(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("prompt template %s: %w", name, err)
	}
	if err := t.Execute(new(bytes.Buffer), PromptData{Name: "x", Solution: []string{"x.py"}, Files: "x.py"}); err != nil {
		return nil, fmt.Errorf("prompt template %s: %w (fields: .Name .Language .Instructions .Solution .Files)", name, err)
	}
	return t, nil
}

// Options of Write.
type Options struct {
	// Suite name and version written to suite.yaml.
	Name, Version string
	// Prompt renders each case's phase-1 prompt (DefaultPrompt when nil).
	Prompt *template.Template
}

// Write lays the exercises out as a new suite in out, which must not exist
// or be empty: an import never overwrites a suite (versions are immutable).
// Case files are written without test counts; FillCounts adds them.
func Write(out string, exs []*Exercise, opt Options) error {
	if len(exs) == 0 {
		return fmt.Errorf("import: no exercise to write")
	}
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		return fmt.Errorf("import: %s is not empty; an import writes a new suite, it never changes one", out)
	}
	if opt.Prompt == nil {
		opt.Prompt = template.Must(ParsePrompt("default", DefaultPrompt))
	}
	seen := map[string]string{}
	var names []string
	for _, ex := range exs {
		if prev, dup := seen[ex.Name]; dup {
			return fmt.Errorf("import: %s and %s both make case %q", prev, ex.Source, ex.Name)
		}
		seen[ex.Name] = ex.Source
		names = append(names, ex.Name)
		if err := writeCase(filepath.Join(out, ex.Name), ex, opt.Prompt); err != nil {
			return err
		}
	}
	suite := fmt.Sprintf("name: %s\nversion: %s\ncases: [%s]\n", opt.Name, opt.Version, strings.Join(names, ", "))
	return os.WriteFile(filepath.Join(out, tasks.SuiteFile), []byte(suite), 0o644)
}

func writeCase(dir string, ex *Exercise, prompt *template.Template) error {
	var buf bytes.Buffer
	files := strings.Join(ex.Solution, ", ")
	if err := prompt.Execute(&buf, PromptData{Name: ex.Name, Language: string(ex.Language), Instructions: strings.TrimSpace(ex.Instructions), Solution: ex.Solution, Files: files}); err != nil {
		return fmt.Errorf("import %s: prompt: %w", ex.Source, err)
	}
	ws := map[string][]byte{"CONTRACT.md": []byte(strings.TrimSpace(ex.Instructions) + "\n")}
	for k, v := range ex.Workspace {
		ws[k] = v
	}
	trees := []struct {
		sub   string
		files map[string][]byte
	}{
		{"workspace", ws},
		{"checks/acceptance", ex.Acceptance},
		{"checks", ex.Checks},
		{"reference/phase-1", ex.Reference},
		{"prompts", map[string][]byte{"phase-1.md": buf.Bytes()}},
	}
	for _, t := range trees {
		for name, data := range t.files {
			if !validRel(name) {
				return fmt.Errorf("import %s: %q is not a relative path inside the exercise", ex.Source, name)
			}
			p := filepath.Join(dir, filepath.FromSlash(t.sub), filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return fmt.Errorf("import %s: %w", ex.Source, err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return fmt.Errorf("import %s: %w", ex.Source, err)
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, tasks.CaseFile), CaseYAML(ex, nil), 0o644)
}

func validRel(name string) bool {
	return name != "" && !strings.HasPrefix(name, "/") && path.Clean(name) == name && name != ".." && !strings.HasPrefix(name, "../")
}

// CaseYAML renders the case.yaml of an imported exercise. counts gives the
// number of tests of each group ("acceptance"), left out when unknown.
func CaseYAML(ex *Exercise, counts map[string]int) []byte {
	protected := append([]string{"CONTRACT.md"}, ex.Protected...)
	sort.Strings(protected[1:])
	tests := ""
	if n, ok := counts["acceptance"]; ok {
		tests = fmt.Sprintf(", tests: %d", n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Imported from %s by 'evalctl cases import'.\n", ex.Source)
	fmt.Fprintf(&b, "name: %s\nlanguage: %s\nsummary: %s\n", ex.Name, ex.Language, yamlString(ex.Summary))
	fmt.Fprintf(&b, "protected: [%s]\n", strings.Join(quoteAll(protected), ", "))
	b.WriteString("phases:\n  - prompt: prompts/phase-1.md\n    reference: reference/phase-1\n    groups:\n")
	if ex.Language == tasks.Python {
		fmt.Fprintf(&b, "      - {name: acceptance, runner: pytest, paths: [/checks/acceptance], timeout: 120s%s}\n", tests)
		b.WriteString("      - {name: syntax, runner: py-compile}\n")
		return []byte(b.String())
	}
	fmt.Fprintf(&b, "      - {name: acceptance, runner: node-test, tsconfig: /checks/tsconfig.acceptance.json, paths: [%s], timeout: 120s%s}\n",
		strings.Join(quoteAll(ex.TestPaths), ", "), tests)
	b.WriteString("      - {name: typecheck, runner: tsc, tsconfig: /checks/tsconfig.typecheck.json}\n")
	b.WriteString("      - {name: consumer_typecheck, runner: tsc, tsconfig: /checks/tsconfig.consumer.json}\n")
	return []byte(b.String())
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = yamlString(s)
	}
	return out
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escaping is a
// subset of YAML's).
func yamlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
