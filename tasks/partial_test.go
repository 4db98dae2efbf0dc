package tasks

import (
	"os"
	"strings"
	"testing"
)

// TestHiddenOnlyPhase: a Python phase may declare no public and no
// regression group (the model sees no test); acceptance and syntax stay
// required.
func TestHiddenOnlyPhase(t *testing.T) {
	dir := fixture(t)
	edit(t, dir+"/adder/case.yaml", "      - {name: regression, runner: pytest, paths: [/checks/regression], timeout: 60s, tests: 1}\n", "")
	edit(t, dir+"/adder/case.yaml", "      - {name: public, runner: pytest, paths: [tests], timeout: 60s, tests: 1}\n", "")
	s, err := LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Case("adder").Phases[0]; p.Group("public") != nil || p.Group("regression") != nil || len(p.Groups) != 2 {
		t.Errorf("groups %v", p.Groups)
	}
	edit(t, dir+"/adder/case.yaml", "      - {name: acceptance, runner: pytest, paths: [/checks/acceptance], timeout: 60s, tests: 3}\n", "")
	if _, err := LoadSuite(dir); err == nil || !strings.Contains(err.Error(), `missing the "acceptance" group`) {
		t.Errorf("no acceptance: %v", err)
	}
}

// TestLoadSuitePartial: every broken case comes back with its error; the
// others load.
func TestLoadSuitePartial(t *testing.T) {
	dir := fixture(t)
	edit(t, dir+"/adder/case.yaml", "summary:", "sumary: x\nsummary:")
	s, bad, err := LoadSuitePartial(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cases) != 1 || s.Cases[0].Name != "tsadd" || len(bad) != 1 || bad[0].Case != "adder" || !strings.Contains(bad[0].Error(), "sumary") || len(s.Fingerprint) != 64 {
		t.Fatalf("cases %v, broken %v", s.Cases, bad)
	}
	edit(t, dir+"/tsadd/case.yaml", "language: typescript", "language: rust")
	if _, bad, err = LoadSuitePartial(dir); err != nil || len(bad) != 2 {
		t.Errorf("two broken: %v %v", bad, err)
	}
	os.WriteFile(dir+"/suite.yaml", []byte("name: x\n"), 0o644)
	if _, _, err := LoadSuitePartial(dir); err == nil || !strings.Contains(err.Error(), "suite.yaml") {
		t.Errorf("a broken suite.yaml is an error: %v", err)
	}
}

func TestSelectionFields(t *testing.T) {
	dir := fixture(t)
	edit(t, dir+"/adder/case.yaml", "paths: [/checks/acceptance]", `paths: ["/checks/acceptance/test_acc.py::test_zero"], keyword: "zero or negative"`)
	s, err := LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Case("adder").Phases[0].Group("acceptance"); g.Keyword != "zero or negative" || g.Paths[0] != "/checks/acceptance/test_acc.py::test_zero" {
		t.Errorf("acceptance %+v", g)
	}
	for _, tt := range []struct{ old, new, want string }{
		{"paths: [/checks/acceptance]", `paths: ["/checks/acceptance/nosuch.py::test_zero"]`, "nosuch.py"},
		{"{name: syntax, runner: py-compile}", `{name: syntax, runner: py-compile, keyword: x}`, "groups[3].keyword"},
		{"paths: [/checks/acceptance]", `paths: [/checks/acceptance], keyword: "--co"`, "not a pytest -k expression"},
	} {
		dir := fixture(t)
		edit(t, dir+"/adder/case.yaml", tt.old, tt.new)
		if _, err := LoadSuite(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.new, err, tt.want)
		}
	}
}

func TestShadowed(t *testing.T) {
	got := Shadowed([]string{"queue.py", "wallet.py", "pytest/__init__.py", "pytest/x.py", "tests/test_a.py", "sub/random.py", "json.txt", "CONTRACT.md"})
	want := []string{"pytest/ (shadowed by the sandbox image's module pytest)", "queue.py (shadowed by the standard library's module queue)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Shadowed = %q, want %q", got, want)
	}
	dir := fixture(t)
	os.WriteFile(dir+"/adder/workspace/queue.py", []byte("x = 1\n"), 0o644)
	if _, err := LoadSuite(dir); err == nil || !strings.Contains(err.Error(), "adder/case.yaml:1: workspace: queue.py (shadowed by the standard library's module queue)") {
		t.Errorf("workspace module named like the standard library: %v", err)
	}
	dir = fixture(t)
	os.WriteFile(dir+"/adder/reference/phase-1/pytest.py", []byte("x = 1\n"), 0o644)
	if _, err := LoadSuite(dir); err == nil || !strings.Contains(err.Error(), "pytest.py (shadowed by the sandbox image's module pytest)") {
		t.Errorf("reference module named like pytest: %v", err)
	}
}
