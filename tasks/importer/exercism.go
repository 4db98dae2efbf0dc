package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evalctl/evalctl/tasks"
)

// Exercism reads Exercism's track layout (also the layout of Aider's
// polyglot benchmark): every directory under SRC holding .meta/config.json
// is an exercise, with
//
//	.docs/introduction.md, .docs/instructions.md, .docs/instructions.append.md
//	                       the task statement (-> CONTRACT.md and the prompt)
//	.meta/config.json      files.solution (the stub -> workspace),
//	                       files.test (-> checks/acceptance),
//	                       files.example (-> reference, renamed to the
//	                       solution file), files.editor (-> workspace,
//	                       protected), blurb (-> summary)
//
// Only the Python track fits the sandbox image: the JavaScript and
// TypeScript tracks test with Jest (and Babel), which the image lacks, and
// are refused with that reason rather than imported half-working.
type Exercism struct{}

// Name implements Adapter.
func (Exercism) Name() string { return "exercism" }

type exercismConfig struct {
	Blurb string `json:"blurb"`
	Files struct {
		Solution []string `json:"solution"`
		Test     []string `json:"test"`
		Example  []string `json:"example"`
		Editor   []string `json:"editor"`
	} `json:"files"`
}

// Exercises implements Adapter.
func (a Exercism) Exercises(src string) ([]*Exercise, error) {
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "__pycache__") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "config.json" && filepath.Base(filepath.Dir(p)) == ".meta" {
			dirs = append(dirs, filepath.Dir(filepath.Dir(p)))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("exercism: %w", err)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("exercism: no exercise under %s (an exercise is a directory with .meta/config.json)", src)
	}
	sort.Strings(dirs)
	var out []*Exercise
	var errs []error
	for _, d := range dirs {
		ex, err := a.exercise(d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, ex)
	}
	return out, errors.Join(errs...)
}

func (Exercism) exercise(dir string) (*Exercise, error) {
	cfgFile := filepath.Join(dir, ".meta", "config.json")
	data, err := os.ReadFile(cfgFile)
	if err != nil {
		return nil, fmt.Errorf("exercism: %w", err)
	}
	var cfg exercismConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("exercism: %s: %w", cfgFile, err)
	}
	fe := func(field, msg string) error { return fmt.Errorf("exercism: %s: field %s: %s", cfgFile, field, msg) }
	switch {
	case len(cfg.Files.Solution) == 0:
		return nil, fe("files.solution", "lists no file")
	case len(cfg.Files.Test) == 0:
		return nil, fe("files.test", "lists no file")
	case len(cfg.Files.Example) == 0:
		return nil, fe("files.example", "lists no file")
	}
	for _, f := range cfg.Files.Solution {
		switch ext := path.Ext(f); ext {
		case ".py":
		case ".js", ".ts", ".mjs":
			return nil, fe("files.solution", fmt.Sprintf("%s: the JavaScript and TypeScript tracks test with Jest, which the sandbox image lacks (Node's own test runner only); only the Python track is imported", f))
		default:
			return nil, fe("files.solution", fmt.Sprintf("%s: no track of extension %q is supported (Python only)", f, ext))
		}
	}
	name := filepath.Base(dir)
	ex := &Exercise{
		Name: name, Language: tasks.Python, Source: dir, Solution: cfg.Files.Solution,
		Workspace: map[string][]byte{}, Acceptance: map[string][]byte{}, Reference: map[string][]byte{},
	}
	read := func(field, rel string) ([]byte, error) {
		if !validRel(rel) {
			return nil, fe(field, fmt.Sprintf("%q is not a path inside the exercise", rel))
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fe(field, err.Error())
		}
		return b, nil
	}
	for _, f := range cfg.Files.Solution {
		if ex.Workspace[f], err = read("files.solution", f); err != nil {
			return nil, err
		}
	}
	for _, f := range cfg.Files.Editor {
		if ex.Workspace[f], err = read("files.editor", f); err != nil {
			return nil, err
		}
		ex.Protected = append(ex.Protected, f)
	}
	for _, f := range cfg.Files.Test {
		if ex.Acceptance[path.Base(f)], err = read("files.test", f); err != nil {
			return nil, err
		}
	}
	// The example is the solution's content: .meta/example.py becomes the
	// solution file (two_fer.py). With several files, they pair in order.
	if len(cfg.Files.Example) != len(cfg.Files.Solution) {
		return nil, fe("files.example", fmt.Sprintf("lists %d files for %d solution files", len(cfg.Files.Example), len(cfg.Files.Solution)))
	}
	for i, f := range cfg.Files.Example {
		if ex.Reference[cfg.Files.Solution[i]], err = read("files.example", f); err != nil {
			return nil, err
		}
	}
	var parts []string
	for _, doc := range []string{"introduction.md", "instructions.md", "instructions.append.md"} {
		b, err := os.ReadFile(filepath.Join(dir, ".docs", doc))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("exercism: %w", err)
		}
		parts = append(parts, strings.TrimSpace(string(b)))
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("exercism: %s: no .docs/instructions.md", dir)
	}
	ex.Instructions = strings.Join(parts, "\n\n")
	ex.Summary = oneLine(cfg.Blurb)
	if ex.Summary == "" {
		ex.Summary = "Solve the Exercism exercise " + name + "."
	}
	return ex, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
