package importer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/tasks/importer"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestJestMatchersByPosition: only the method called on expect(...) is a
// matcher; methods the test calls on the value under test are not.
func TestJestMatchersByPosition(t *testing.T) {
	tests := []struct {
		name, body string
		refused    string // "" if the exercise is taken
	}{
		{"a method of the value under test", "expect(new Binary('1').toDecimal()).toEqual(1);\nexpect(x.toString()).toBe('1');", ""},
		{"methods outside expect", "const a = list.toArray();\nexpect(zipper.toTree()).toEqual(a);\nexpect(f(\"a)\", ')')).toBe(1);", ""},
		{"a matcher after not and resolves", "expect(p).resolves.not.toHaveBeenCalled();", "hello.spec.js:3: uses the matcher toHaveBeenCalled"},
		{"a matcher on the next line", "expect(\n  hello(),\n)\n  .toMatchSnapshot();", "hello.spec.js:3: uses the matcher toMatchSnapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := "import { hello } from './hello';\ntest('x', () => {\n" + tt.body + "\n});\n"
			exs, err := importer.Exercism{}.Exercises(writeFiles(t, jsExercise("hello.spec.js", spec)))
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.refused == "" && len(exs) != 1:
				t.Fatalf("exercises %v", exs)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Fatalf("error %v, want %q", err, tt.refused)
			}
		})
	}
}

// TestHelpersTravelWithTheChecks: a helper module the tests import, in
// either track, is laid out beside them under checks/acceptance, its own
// import of the solution pointed at the workspace; an import of a file the
// exercise lacks refuses it.
func TestHelpersTravelWithTheChecks(t *testing.T) {
	py := map[string]string{
		"paasio/.meta/config.json":     `{"files": {"solution": ["paasio.py"], "test": ["paasio_test.py"], "example": [".meta/example.py"], "editor": ["test_utils.py"]}}`,
		"paasio/paasio.py":             "",
		"paasio/.meta/example.py":      "X = 1\n",
		"paasio/.docs/instructions.md": "Count.\n",
		"paasio/paasio_test.py":        "from paasio import X\nfrom test_utils import MockSock\n",
		"paasio/test_utils.py":         "import mock_base\nclass MockSock: pass\n",
		"paasio/mock_base.py":          "",
		"paasio/unused.py":             "",
	}
	exs, err := importer.Exercism{}.Exercises(writeFiles(t, py))
	if err != nil {
		t.Fatal(err)
	}
	acc := exs[0].Acceptance
	if len(acc) != 3 || acc["test_utils.py"] == nil || acc["mock_base.py"] == nil {
		t.Errorf("python acceptance %v: the test, test_utils.py and what it imports", keys(acc))
	}
	js := jsExercise("hello.spec.js", "import { hello } from './hello';\nimport { fake } from './lib/fake';\ntest('x', () => expect(fake(hello)).toBe(1));\n")
	js["hello/lib/fake.js"] = "import { hello } from '../hello';\nexport const fake = (f) => (f === hello ? 1 : 0);\n"
	exs, err = importer.Exercism{}.Exercises(writeFiles(t, js))
	if err != nil {
		t.Fatal(err)
	}
	fake := string(exs[0].Acceptance["lib/fake.js"])
	if !strings.Contains(fake, "from '../../../workspace/hello'") {
		t.Errorf("lib/fake.js beside the tests:\n%s\nwant its import of the solution pointed at the workspace", fake)
	}
	js["hello/hello.spec.js"] = "import { hello } from './hello';\nimport { gone } from './gone';\ntest('x', () => expect(1).toBe(1));\n"
	if _, err := (importer.Exercism{}).Exercises(writeFiles(t, js)); err == nil || !strings.Contains(err.Error(), `imports "./gone", which is neither the solution nor a file of the exercise`) {
		t.Errorf("import of a missing file: %v", err)
	}
}

// TestImportKeepsGoing: an exercise the adapter cannot take is left out
// with its reason; the others are imported, and the table says which.
func TestImportKeepsGoing(t *testing.T) {
	files := jsExercise("hello.spec.js", "import { hello } from './hello';\ntest('x', () => expect(hello()).toBe('Hello'));\n")
	bad := jsExercise("hello.spec.js", "import { hello } from './hello';\ntest('x', () => { jest.fn(); });\n")
	for k, v := range bad {
		files["mocky"+strings.TrimPrefix(k, "hello")] = v
	}
	out := filepath.Join(t.TempDir(), "s")
	im, err := importer.Prepare(importer.Request{Args: []string{"exercism", writeFiles(t, files)}, Out: out, Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Exercises) != 1 || len(im.Refused) != 1 || im.Refused[0].Name != "mocky" {
		t.Fatalf("took %d, refused %v", len(im.Exercises), im.Refused)
	}
	if err := im.Write(new(strings.Builder)); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	im.WriteTable(&table, map[string]int{"hello": 1})
	for _, want := range []string{"EXERCISE", "hello     imported", "javascript, 1 tests", "mocky     not imported", "jest.fn"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	// A reference that fails is dropped from the written suite.
	if err := im.Drop([]*importer.Refusal{{Name: "hello", Err: os.ErrInvalid}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "hello")); !os.IsNotExist(err) {
		t.Errorf("dropped case still there: %v", err)
	}
	suite, _ := os.ReadFile(filepath.Join(out, "suite.yaml"))
	if !strings.Contains(string(suite), "cases: []") {
		t.Errorf("suite.yaml %q", suite)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
