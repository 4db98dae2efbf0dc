package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

func copySuite(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func replaceIn(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q (%v)", file, old, err)
	}
	os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}

// TestCasesCheckReportsEveryBrokenCase: every case that does not load is
// reported with its file and field, not only the first.
func TestCasesCheckReportsEveryBrokenCase(t *testing.T) {
	dir := copySuite(t, "../../grader/testdata/suite")
	replaceIn(t, filepath.Join(dir, "adder", "case.yaml"), "summary:", "sumary: x\nsummary:")
	replaceIn(t, filepath.Join(dir, "tsadd", "case.yaml"), "language: typescript", "language: rust")
	code, out, errs := runCLI(t, "cases", "check", "--suite", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1; %s %s", code, out, errs)
	}
	for _, want := range []string{"BROKEN case adder", "adder/case.yaml", "sumary", "BROKEN case tsadd", "tsadd/case.yaml", "rust", "2 cases broken"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestCasesCheckOtherCaseOfABrokenSuite: with one case broken, the others
// are still checked, each row printed as it finishes, and naming a good
// case checks it alone and passes.
func TestCasesCheckOtherCaseOfABrokenSuite(t *testing.T) {
	sandboxtest.Engine(t) // the grader removes each container as its grade ends
	dir := copySuite(t, "../../grader/testdata/suite")
	replaceIn(t, filepath.Join(dir, "tsadd", "case.yaml"), "language: typescript", "language: rust")
	code, out, errs := runCLI(t, "cases", "check", "--suite", dir)
	if code != 1 || !strings.Contains(out, "BROKEN case tsadd") || !strings.Contains(out, "adder  1      reference") {
		t.Fatalf("whole suite: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "[1/3 ") || !strings.Contains(errs, "[3/3 ") || !strings.Contains(errs, "adder phase 1 reference: met") {
		t.Errorf("no progress line per variant on stderr:\n%s", errs)
	}
	// The fixture's adder has one control (the gate wants two): that is the
	// only unmet row, and nothing is broken.
	code, out, errs = runCLI(t, "cases", "check", "--suite", dir, "adder")
	if code != 1 || strings.Contains(out, "BROKEN") || !strings.Contains(out, "1 expectations unmet, 0 cases broken") {
		t.Errorf("cases check adder: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestCasesImportUsage(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "prompt.tmpl")
	os.WriteFile(tmpl, []byte("{{.Instruction}}"), 0o644)
	fixture := "../../tasks/importer/testdata/exercism"
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cases", "import"}, 2, "takes FORMAT and SRC (formats: exercism)"},
		{[]string{"cases", "import", "polyglot", fixture, "--out", t.TempDir()}, 2, `unknown format "polyglot"`},
		{[]string{"cases", "import", "exercism", fixture}, 2, "--out SUITE is required"},
		{[]string{"cases", "import", "exercism", "/nonexistent", "--out", t.TempDir()}, 2, "SRC /nonexistent is not a directory"},
		{[]string{"cases", "import", "exercism", fixture, "--out", t.TempDir(), "--prompt-template", tmpl}, 2, "Instruction"},
		{[]string{"cases", "controls"}, 2, "expected 'cases controls generate"},
		{[]string{"cases", "controls", "generate", "--max", "0"}, 2, "must be at least 1"},
		{[]string{"cases", "check", "--retries", "-1"}, 2, "--retries must be at least 0"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q (stdout %q); want %d, %q", tt.args, code, errs, out, tt.code, tt.want)
		}
	}
	// A non-empty --out is refused before anything is graded.
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "keep.txt"), []byte("x"), 0o644)
	if code, _, errs := runCLI(t, "cases", "import", "exercism", fixture, "--out", out); code != 1 || !strings.Contains(errs, "is not empty") {
		t.Errorf("non-empty --out: exit %d %q", code, errs)
	}
}
