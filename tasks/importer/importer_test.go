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
		{"javascript track", map[string]string{"hello/.meta/config.json": `{"files": {"solution": ["hello.js"], "test": ["hello.spec.js"], "example": [".meta/proof.ci.js"]}}`},
			[]string{"hello/.meta/config.json", "files.solution", "Jest"}},
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
