package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
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
// The JavaScript and TypeScript tracks (solution .js or .ts, tests
// <slug>.spec.js or <slug>.test.ts, reference .meta/proof.ci.js or
// .meta/exemplar.js through files.example or files.exemplar) test with
// Jest: their tests run on the image's Jest-compatible layer (see jest.go),
// compiled by the image's tsc; a test using what the layer lacks is refused
// with the exercise, file, line and feature.
type Exercism struct{}

// Name implements Adapter.
func (Exercism) Name() string { return "exercism" }

type exercismConfig struct {
	Blurb string `json:"blurb"`
	Files struct {
		Solution []string `json:"solution"`
		Test     []string `json:"test"`
		Example  []string `json:"example"`
		Exemplar []string `json:"exemplar"`
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
			errs = append(errs, &Refusal{Name: filepath.Base(d), Source: d, Err: err})
			continue
		}
		out = append(out, ex)
	}
	return out, errors.Join(errs...)
}

func (Exercism) exercise(dir string) (*Exercise, error) {
	cfg, fe, err := exercismConfigOf(dir)
	if err != nil {
		return nil, err
	}
	track, err := solutionTrack(cfg, fe)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(dir)
	ex := &Exercise{
		Name: name, Language: tasks.Python, Track: track, Source: dir, Solution: cfg.Files.Solution,
		Workspace: map[string][]byte{}, Acceptance: map[string][]byte{}, Reference: map[string][]byte{},
	}
	if track != "python" {
		// Both compile with the image's tsc and run under node's test
		// runner: the TypeScript toolchain.
		ex.Language = tasks.TypeScript
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
	others, err := otherFiles(dir, cfg)
	if err != nil {
		return nil, fmt.Errorf("exercism: %w", err)
	}
	if ex.Language == tasks.TypeScript {
		if err := ex.jest(others); err != nil {
			return nil, fmt.Errorf("exercism: %s: %w", dir, err)
		}
	} else {
		ex.pyHelpers(others)
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
	if ex.Instructions, err = instructions(dir, track); err != nil {
		return nil, err
	}
	ex.Summary = oneLine(cfg.Blurb)
	if ex.Summary == "" {
		ex.Summary = "Solve the Exercism exercise " + name + "."
	}
	return ex, nil
}

// exercismConfigOf reads an exercise's .meta/config.json and checks it
// names solution, test and example files; fe words an error about one of
// its fields.
func exercismConfigOf(dir string) (exercismConfig, func(field, msg string) error, error) {
	var cfg exercismConfig
	cfgFile := filepath.Join(dir, ".meta", "config.json")
	fe := func(field, msg string) error { return fmt.Errorf("exercism: %s: field %s: %s", cfgFile, field, msg) }
	data, err := os.ReadFile(cfgFile)
	if err != nil {
		return cfg, fe, fmt.Errorf("exercism: %w", err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, fe, fmt.Errorf("exercism: %s: %w", cfgFile, err)
	}
	if len(cfg.Files.Example) == 0 {
		cfg.Files.Example = cfg.Files.Exemplar // a concept exercise's reference
	}
	switch {
	case len(cfg.Files.Solution) == 0:
		return cfg, fe, fe("files.solution", "lists no file")
	case len(cfg.Files.Test) == 0:
		return cfg, fe, fe("files.test", "lists no file")
	case len(cfg.Files.Example) == 0:
		return cfg, fe, fe("files.example", "lists no file")
	}
	return cfg, fe, nil
}

// solutionTrack is the track of the solution's files, by extension: one
// of python, javascript, typescript, the same for every file.
func solutionTrack(cfg exercismConfig, fe func(field, msg string) error) (string, error) {
	track := ""
	for _, f := range cfg.Files.Solution {
		t, ok := map[string]string{".py": "python", ".js": "javascript", ".ts": "typescript"}[path.Ext(f)]
		if !ok {
			return "", fe("files.solution", fmt.Sprintf("%s: no track of extension %q is supported (Python .py, JavaScript .js, TypeScript .ts)", f, path.Ext(f)))
		}
		if track != "" && t != track {
			return "", fe("files.solution", fmt.Sprintf("mixes %s and %s files", track, t))
		}
		track = t
	}
	return track, nil
}

// instructions joins the exercise's .docs (introduction, instructions,
// their appendix); JavaScript and TypeScript ones also name the image's
// toolchain, since no npm package is available.
func instructions(dir, track string) (string, error) {
	var parts []string
	for _, doc := range []string{"introduction.md", "instructions.md", "instructions.append.md"} {
		b, err := os.ReadFile(filepath.Join(dir, ".docs", doc))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("exercism: %w", err)
		}
		parts = append(parts, strings.TrimSpace(string(b)))
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("exercism: %s: no .docs/instructions.md", dir)
	}
	if track != "python" {
		parts = append(parts, "(The tests run under Node "+nodeVersion+" with the TypeScript "+tscVersion+" compiler; no npm package is available.)")
	}
	return strings.Join(parts, "\n\n"), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// The image's toolchain, named in the instructions of JavaScript and
// TypeScript exercises.
const (
	nodeVersion = "18"
	tscVersion  = "4.8"
)

// jest makes the acceptance files of a JavaScript or TypeScript exercise
// run on the image's Jest layer and adds the tsconfig files that compile
// them (and, for TypeScript, type-check the solution with its tests).
func (ex *Exercise) jest(others map[string][]byte) error {
	ex.Checks = map[string][]byte{}
	var files, helpers []string
	for _, name := range sortedNames(ex.Acceptance) {
		out, hs, err := jestTest(ex.Acceptance[name], name, "checks/acceptance", ex.Workspace, others)
		if err != nil {
			return err
		}
		ex.Acceptance[name] = out
		helpers = append(helpers, hs...)
		files = append(files, "/checks/acceptance/"+name)
		ex.TestPaths = append(ex.TestPaths, "checks/acceptance/"+strings.TrimSuffix(name, path.Ext(name))+".js")
	}
	// The helpers the tests import travel with them (and the helpers
	// those import), their own imports of the solution pointed at the
	// workspace like the tests'.
	for len(helpers) > 0 {
		h := helpers[0]
		helpers = helpers[1:]
		if _, done := ex.Acceptance[h]; done {
			continue
		}
		out, hs, err := rewriteImports(string(others[h]), h, "checks/acceptance", ex.Workspace, others)
		if err != nil {
			return err
		}
		ex.Acceptance[h] = []byte(out)
		helpers = append(helpers, hs...)
	}
	// The two type-check groups every TypeScript phase has: the solution
	// alone, and the solution as the tests use it. JavaScript compiles
	// without type checking, so for it they catch syntax errors only.
	js := ex.Track == "javascript"
	var sol []string
	for _, f := range ex.Solution {
		sol = append(sol, "/workspace/"+f)
	}
	ex.Checks["tsconfig.acceptance.json"] = tsconfig(files, js)
	ex.Checks["tsconfig.typecheck.json"] = tsconfig(sol, js)
	ex.Checks["tsconfig.consumer.json"] = tsconfig(append(sol, files...), js)
	return nil
}

func sortedNames(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// otherFiles are the exercise's files that are neither its solution, its
// tests nor its reference, nor Exercism's own (.meta, .docs, the package
// manifests): candidates for a helper module the tests import.
func otherFiles(dir string, cfg exercismConfig) (map[string][]byte, error) {
	skip := map[string]bool{}
	for _, l := range [][]string{cfg.Files.Solution, cfg.Files.Test, cfg.Files.Example} {
		for _, f := range l {
			skip[f] = true
		}
	}
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		switch path.Ext(rel) {
		case ".py", ".js", ".ts", ".mjs", ".cjs":
		default:
			return nil
		}
		if skip[rel] || strings.HasSuffix(rel, ".config.js") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = b
		return nil
	})
	return out, err
}

// pyImport matches the top-level module a Python line imports.
var pyImport = regexp.MustCompile(`(?m)^\s*(?:from\s+([A-Za-z_]\w*)\s+import\b|import\s+([A-Za-z_]\w*))`)

// pyHelpers puts beside the tests the modules of the exercise they import
// that are not the solution (test_utils.py, say): the tests' own helpers
// travel with the checks.
func (ex *Exercise) pyHelpers(others map[string][]byte) {
	todo := sortedNames(ex.Acceptance)
	for len(todo) > 0 {
		src := ex.Acceptance[todo[0]]
		todo = todo[1:]
		for _, m := range pyImport.FindAllSubmatch(src, -1) {
			name := string(m[1]) + string(m[2]) + ".py"
			if b, ok := others[name]; ok && ex.Acceptance[name] == nil {
				ex.Acceptance[name] = b
				todo = append(todo, name)
			}
		}
	}
}
