package importer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

const fixture = "testdata/exercism"

func TestExercismReadsTheLayout(t *testing.T) {
	exs, err := importer.Exercism{}.Exercises(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 || exs[0].Name != "leap" || exs[1].Name != "raindrops" {
		t.Fatalf("exercises %v, want leap and raindrops in order", exs)
	}
	leap, rain := exs[0], exs[1]
	if leap.Summary != "Determine whether a given year is a leap year." {
		t.Errorf("summary %q: the blurb on one line", leap.Summary)
	}
	if string(leap.Workspace["leap.py"]) != "def leap_year(year):\n    pass\n" {
		t.Errorf("workspace %q: the stub", leap.Workspace)
	}
	if !strings.Contains(string(leap.Reference["leap.py"]), "year % 400 == 0") {
		t.Errorf("reference %q: .meta/example.py under the solution's name", leap.Reference)
	}
	if _, ok := leap.Acceptance["leap_test.py"]; !ok || len(leap.Acceptance) != 1 {
		t.Errorf("acceptance %v: the test file", leap.Acceptance)
	}
	if !strings.HasPrefix(rain.Instructions, "# Introduction") || !strings.Contains(rain.Instructions, "# Instructions") {
		t.Errorf("instructions %q: introduction, then instructions", rain.Instructions)
	}
}

func TestWriteMakesASuiteThatLoads(t *testing.T) {
	exs, err := importer.Exercism{}.Exercises(fixture)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "polyglot")
	tmpl, err := importer.ParsePrompt("custom", "Solve {{.Name}} in {{.Files}}.\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := importer.Write(out, exs, importer.Options{Name: "polyglot", Version: "0.1.0", Prompt: tmpl}); err != nil {
		t.Fatal(err)
	}
	s, err := tasks.LoadSuite(out)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Case("leap")
	if s.ID() != "polyglot@0.1.0" || c == nil || c.Phases[0].Prompt != "Solve leap in leap.py.\n" {
		t.Fatalf("suite %s, leap %+v", s.ID(), c)
	}
	p := c.Phases[0]
	if p.Group("public") != nil || p.Group("regression") != nil || p.Group("acceptance") == nil || p.Group("syntax") == nil {
		t.Errorf("groups %v: acceptance and syntax only (the model sees no test)", p.Groups)
	}
	if len(c.Protected) != 1 || c.Protected[0] != "CONTRACT.md" {
		t.Errorf("protected %v", c.Protected)
	}
	contract, _ := os.ReadFile(filepath.Join(c.WorkspaceDir, "CONTRACT.md"))
	if !strings.Contains(string(contract), "evenly divisible by 400") {
		t.Errorf("CONTRACT.md %q: the instructions", contract)
	}
	// An import never writes over a suite.
	if err := importer.Write(out, exs, importer.Options{Name: "polyglot", Version: "0.1.0"}); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("second write into %s: %v, want 'is not empty'", out, err)
	}
}

// jsExercise is a JavaScript exercise "hello" whose test file is spec.
func jsExercise(name, spec string) map[string]string {
	return map[string]string{
		"hello/.meta/config.json":     `{"files": {"solution": ["hello.js"], "test": ["` + name + `"], "example": [".meta/proof.ci.js"]}}`,
		"hello/hello.js":              "export const hello = () => {};\n",
		"hello/.meta/proof.ci.js":     "export const hello = () => 'Hello';\n",
		"hello/.docs/instructions.md": "Say hello.\n",
		"hello/" + name:               spec,
	}
}

func TestImportErrors(t *testing.T) {
	writeTree := func(t *testing.T, files map[string]string) string {
		t.Helper()
		dir := t.TempDir()
		for name, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"jest mocks", jsExercise("hello.spec.js", "import { hello } from './hello';\ntest('x', () => {\n  const f = jest.fn();\n});\n"),
			[]string{"hello", "hello.spec.js:3: uses jest.fn (Jest's mocks, spies and fake timers), which evalctl's Jest layer over node:test does not provide", "toBeCloseTo"}},
		{"snapshot matcher", jsExercise("hello.spec.js", "import { hello } from './hello';\ntest('x', () => {\n  expect(hello()).toMatchSnapshot();\n});\n"),
			[]string{"hello.spec.js:3: uses the matcher toMatchSnapshot"}},
		{"table tests", jsExercise("hello.spec.js", "test.each([[1]])('x %d', (n) => {\n  expect(n).toBe(1);\n});\n"),
			[]string{"hello.spec.js:1: uses test.each"}},
		{"npm package", jsExercise("hello.spec.js", "import _ from 'lodash';\ntest('x', () => expect(1).toBe(1));\n"),
			[]string{"hello.spec.js: imports the package \"lodash\", which the sandbox image lacks"}},
		{"other track", map[string]string{"hello/.meta/config.json": `{"files": {"solution": ["hello.rb"], "test": ["hello_test.rb"], "example": [".meta/example.rb"]}}`},
			[]string{"hello/.meta/config.json", "files.solution", `hello.rb: no track of extension ".rb" is supported`}},
		{"no example", map[string]string{"a/.meta/config.json": `{"files": {"solution": ["a.py"], "test": ["a_test.py"]}}`},
			[]string{"a/.meta/config.json", "files.example", "lists no file"}},
		{"missing test file", map[string]string{"a/.meta/config.json": `{"files": {"solution": ["a.py"], "test": ["a_test.py"], "example": [".meta/example.py"]}}`, "a/a.py": "", "a/.meta/example.py": "", "a/.docs/instructions.md": "x"},
			[]string{"a/.meta/config.json", "files.test", "a_test.py"}},
		{"path escaping the exercise", map[string]string{"a/.meta/config.json": `{"files": {"solution": ["../x.py"], "test": ["a_test.py"], "example": [".meta/example.py"]}}`},
			[]string{"files.solution", `"../x.py" is not a path inside the exercise`}},
		{"bad JSON", map[string]string{"a/.meta/config.json": `{"files": `}, []string{"a/.meta/config.json", "unexpected end"}},
		{"no exercise", map[string]string{"README.md": "x"}, []string{"no exercise under"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := importer.Exercism{}.Exercises(writeTree(t, tt.files))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// Every bad exercise is reported, not only the first.
	_, err := importer.Exercism{}.Exercises(writeTree(t, map[string]string{
		"a/.meta/config.json": `{}`, "b/.meta/config.json": `{}`,
	}))
	if err == nil || !strings.Contains(err.Error(), "a/.meta/config.json") || !strings.Contains(err.Error(), "b/.meta/config.json") {
		t.Errorf("two bad exercises: %v", err)
	}
	if _, err := importer.ParsePrompt("t", "{{.Nme}}"); err == nil || !strings.Contains(err.Error(), ".Instructions") {
		t.Errorf("template with an unknown field: %v, want the list of fields", err)
	}
}

// TestExercismJavaScriptAndTypeScript: the JavaScript and TypeScript tracks
// are imported for the image's toolchain: the tests load the Jest layer and
// import the solution from the workspace, tsc configurations are written,
// and the case runs node-test (and, for TypeScript, tsc) groups.
func TestExercismJavaScriptAndTypeScript(t *testing.T) {
	tests := []struct {
		fixture, name, test, solution, firstLine string
		groups                                   []string
	}{
		{"testdata/exercism-js", "digit-sum", "digit-sum.spec.js", "digit-sum.js",
			`import { describe, test, xtest, expect } from "/opt/evalctl/jest"; // evalctl: Jest-compatible layer over node:test`,
			[]string{"acceptance", "typecheck", "consumer_typecheck"}},
		{"testdata/exercism-ts", "number-stats", "number-stats.test.ts", "number-stats.ts",
			`import { describe, expect, it, xit } from '/opt/evalctl/jest'`,
			[]string{"acceptance", "typecheck", "consumer_typecheck"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exs, err := importer.Exercism{}.Exercises(tt.fixture)
			if err != nil {
				t.Fatal(err)
			}
			ex := exs[0]
			if len(exs) != 1 || ex.Name != tt.name || ex.Language != tasks.TypeScript {
				t.Fatalf("exercises %+v", exs)
			}
			src := string(ex.Acceptance[tt.test])
			if first, _, _ := strings.Cut(src, "\n"); first != tt.firstLine {
				t.Errorf("first line %q, want %q", first, tt.firstLine)
			}
			if want := "from '../../workspace/" + strings.TrimSuffix(tt.solution, filepath.Ext(tt.solution)) + "'"; !strings.Contains(src, want) {
				t.Errorf("test %q: the solution's import is not %s", src, want)
			}
			if _, ok := ex.Reference[tt.solution]; !ok {
				t.Errorf("reference %v: .meta/proof.ci under the solution's name", ex.Reference)
			}
			out := filepath.Join(t.TempDir(), "s")
			if err := importer.Write(out, exs, importer.Options{Name: "s", Version: "1.0.0"}); err != nil {
				t.Fatal(err)
			}
			s, err := tasks.LoadSuite(out)
			if err != nil {
				t.Fatal(err)
			}
			p := s.Case(tt.name).Phases[0]
			var got []string
			for _, g := range p.Groups {
				got = append(got, g.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.groups, ",") {
				t.Errorf("groups %v, want %v", got, tt.groups)
			}
			acc := p.Group("acceptance")
			if acc.Runner != tasks.RunnerNodeTest || acc.TSConfig != "/checks/tsconfig.acceptance.json" ||
				len(acc.Paths) != 1 || acc.Paths[0] != "checks/acceptance/"+strings.TrimSuffix(tt.test, filepath.Ext(tt.test))+".js" {
				t.Errorf("acceptance %+v", acc)
			}
		})
	}
}
