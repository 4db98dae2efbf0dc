package grader_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestImportErrorIsACollectionError: an answer lacking the name the tests
// import fails acceptance as a collection error (its own field, message and
// exit status 6), not as a session cut short (exit 3, tampering), and the
// grade names the module and the import error.
func TestImportErrorIsACollectionError(t *testing.T) {
	s, g := setup(t)
	c := s.Case("adder")
	gr, err := g.Grade(context.Background(), s, c, 1, answer(t, c, false, file("adder.py", "def plus(a, b):\n    return a + b\n")), grader.Labels{Run: sandboxtest.RunLabel(t)})
	if err != nil {
		t.Fatal(err)
	}
	acc := gr.Group("acceptance")
	// The import runs across the boundary, whose error names the module
	// path ("No module named 'adder.add'; 'adder' is not a package").
	const msg = "the tests could not be collected: test_acc: ModuleNotFoundError: No module named 'adder.add'"
	if acc.Success || len(acc.CollectionErrors) != 1 || acc.ExitCode != 6 || !strings.HasPrefix(acc.CollectionError, msg) ||
		!strings.HasPrefix(acc.Output, msg) || strings.Contains(acc.Output, "cut short") || strings.Contains(acc.Output, "ended early") {
		t.Errorf("acceptance: success %v, exit %d, collection errors %q, collection error %q, output %q", acc.Success, acc.ExitCode, acc.CollectionErrors, acc.CollectionError, acc.Output)
	}
}

// TestMisspeltMustFailIsUnmet: a must_fail id naming no test the reference
// runs is an unmet expectation that says so, not "passes test X".
func TestMisspeltMustFailIsUnmet(t *testing.T) {
	sandboxtest.Engine(t)
	_, g := setup(t)
	dir := t.TempDir()
	copyDir(t, "testdata/suite", dir)
	caseFile := filepath.Join(dir, "adder", "case.yaml")
	data, _ := os.ReadFile(caseFile)
	os.WriteFile(caseFile, []byte(strings.Replace(string(data), "acceptance: [test_negative]", "acceptance: [test_negativ]", 1)), 0o644)
	s, err := tasks.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	results, err := g.CheckCases(context.Background(), s, []*tasks.Case{s.Case("adder")})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Kind != grader.KindControl {
			continue
		}
		if got := strings.Join(r.Problems, "; "); r.Met || !strings.Contains(got, `must_fail acceptance id "test_negativ" names no test the reference runs (did you mean "test_negative"?)`) {
			t.Errorf("control %s: met %v, problems %q", r.Variant, r.Met, got)
		}
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
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
}

// TestSelectionInsideAFile: a group may run part of a test file, by node
// id or by keyword, without a copy of it; the grade counts only those.
func TestSelectionInsideAFile(t *testing.T) {
	_, g := setup(t)
	dir := t.TempDir()
	copyDir(t, "testdata/suite", dir)
	caseFile := filepath.Join(dir, "adder", "case.yaml")
	data, _ := os.ReadFile(caseFile)
	text := strings.Replace(string(data), "{name: public, runner: pytest, paths: [tests], timeout: 60s, tests: 1}",
		`{name: public, runner: pytest, paths: ["/checks/acceptance/test_acc.py::test_zero"], tests: 1}`, 1)
	text = strings.Replace(text, "{name: regression, runner: pytest, paths: [/checks/regression], timeout: 60s, tests: 1}",
		`{name: regression, runner: pytest, paths: [/checks/acceptance], keyword: "negative and not both", tests: 1}`, 1)
	os.WriteFile(caseFile, []byte(text), 0o644)
	s, err := tasks.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Case("adder")
	gr, err := g.Grade(context.Background(), s, c, 1, answer(t, c, false), grader.Labels{Run: sandboxtest.RunLabel(t)})
	if err != nil {
		t.Fatal(err)
	}
	// The starter clamps negatives: test_zero passes, test_negative fails.
	if pub := gr.Group("public"); !pub.Success || pub.Total != 1 || !strings.HasSuffix(pub.TestIDs[0], "test_zero") {
		t.Errorf("public by node id: %+v", pub)
	}
	if reg := gr.Group("regression"); reg.Success || reg.Total != 1 || reg.FailedTests[0] != "test_negative" {
		t.Errorf("regression by keyword: %+v", reg)
	}
}

// TestShadowedAnswerModule: an answer file named like a standard-library
// module is flagged in the grade; the module lists match the image.
func TestShadowedAnswerModule(t *testing.T) {
	s, g := setup(t)
	c := s.Case("adder")
	gr, err := g.Grade(context.Background(), s, c, 1, answer(t, c, true, file("random.py", "x = 1\n")), grader.Labels{Run: sandboxtest.RunLabel(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(gr.Shadowed) != 1 || !strings.HasPrefix(gr.Shadowed[0], "random.py (shadowed by the standard library's module random)") {
		t.Errorf("shadowed %q", gr.Shadowed)
	}
	box := sandboxtest.Start(t, sandbox.Spec{})
	res, err := box.Exec(context.Background(), []string{"python3", "-I", "-c", "import sys; print(' '.join(sorted(sys.stdlib_module_names)))"}, sandbox.ExecOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	names := strings.Fields(string(res.Stdout))
	if len(names) != len(tasks.StdlibModules) {
		t.Errorf("image has %d standard-library modules, tasks.StdlibModules %d", len(names), len(tasks.StdlibModules))
	}
	for _, n := range names {
		if !tasks.StdlibModules[n] {
			t.Errorf("tasks.StdlibModules lacks %s", n)
		}
	}
	for m := range tasks.ImageModules {
		res, err := box.Exec(context.Background(), []string{"python3", "-I", "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)", m}, sandbox.ExecOptions{})
		if err != nil || res.ExitCode != 0 {
			t.Errorf("image module %s not found in the image: %v %s", m, err, res.Stderr)
		}
	}
}
