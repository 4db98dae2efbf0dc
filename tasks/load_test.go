package tasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, "../grader/testdata/suite", dir)
	return dir
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644)
}

func TestLoadSuite(t *testing.T) {
	s, err := LoadSuite(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "graderfixture@0.1.0" || len(s.Cases) != 2 || len(s.Fingerprint) != 64 {
		t.Fatalf("suite %s, %d cases, fingerprint %q", s.ID(), len(s.Cases), s.Fingerprint)
	}
	c := s.Case("adder")
	if c.Language != Python || len(c.Phases[0].Groups) != 4 || c.Controls[0].MustFail["acceptance"][0] != "test_negative" {
		t.Errorf("adder loaded wrong: %+v", c)
	}
	if g := c.Phases[0].Group("syntax"); g.Timeout != DefaultGroupTimeout || !g.Required {
		t.Errorf("defaults not applied: %+v", g)
	}
}

func TestLoadSuiteRejectsMalformedInput(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   []string
	}{
		{"unknown suite field", func(t *testing.T, d string) { edit(t, d+"/suite.yaml", "version:", "colour: red\nversion:") }, []string{"suite.yaml", "colour"}},
		{"unknown case field", func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "summary:", "sumary: x\nsummary:") }, []string{"adder/case.yaml", "sumary"}},
		{"unknown group field", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "runner: py-compile", "runner: py-compile, retries: 2")
		}, []string{"adder/case.yaml", "retries"}},
		{"missing case directory", func(t *testing.T, d string) { edit(t, d+"/suite.yaml", "[adder, tsadd]", "[adder, tsadd, nosuch]") }, []string{"nosuch", "case.yaml"}},
		{"duplicate case", func(t *testing.T, d string) { edit(t, d+"/suite.yaml", "[adder, tsadd]", "[adder, adder]") }, []string{"cases[1]", "duplicate case"}},
		{"name differs from directory", func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "name: adder", "name: adder2") }, []string{"adder/case.yaml", "case.yaml: name:", "adder2"}},
		{"bad language", func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "language: python", "language: rust") }, []string{"case.yaml:2: language:", "rust"}},
		{"missing prompt file", func(t *testing.T, d string) { os.Remove(d + "/adder/prompts/phase-1.md") }, []string{"phases[0].prompt", "phase-1.md"}},
		{"missing reference dir", func(t *testing.T, d string) { os.RemoveAll(d + "/adder/reference") }, []string{"phases[0].reference"}},
		{"glob matching nothing", func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "pytest.ini,", "pytest.ini, \"docs/**\",") }, []string{"protected[2]", "docs/**", "matches no file"}},
		{"missing required group", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "      - {name: syntax, runner: py-compile}\n", "")
		}, []string{"phases[0].groups", `"syntax"`}},
		{"duplicate group", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "{name: syntax, runner: py-compile}", "{name: public, runner: py-compile}")
		}, []string{"groups[3].name", "duplicate group"}},
		{"runner of the other language", func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "runner: py-compile", "runner: tsc") }, []string{"groups[3].runner", "not a python runner"}},
		{"test path missing", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "[/checks/regression]", "[/checks/regresion]")
		}, []string{"groups[1]", "/checks/regresion"}},
		{"bad timeout", func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "timeout: 60s,", "timeout: soon,") }, []string{"timeout", "soon"}},
		{"control with unknown group", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "acceptance: [test_negative]", "acceptanse: [test_negative]")
		}, []string{"controls[0].must_fail", "acceptanse"}},
		{"control without why", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "why: Clamps negative sums to zero.", "why: \"\"")
		}, []string{"controls[0].why"}},
		{"tsconfig missing", func(t *testing.T, d string) { os.Remove(d + "/tsadd/checks/tsconfig.consumer.json") }, []string{"tsadd/case.yaml", "tsconfig.consumer.json"}},
		{"test count on a runner without tests", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "runner: py-compile", "runner: py-compile, tests: 3")
		}, []string{"adder/case.yaml", "groups[3].tests", "runs no tests to count"}},
		{"test count not positive", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "tests: 3}", "tests: 0}")
		}, []string{"adder/case.yaml", ".tests", "0 is not a number of tests"}},
		{"compiled test path from nothing", func(t *testing.T, d string) {
			edit(t, d+"/tsadd/case.yaml", "paths: [workspace/test]", "paths: [workspace/tset]")
		}, []string{"tsadd/case.yaml", "paths[0]", "workspace/tset", "compiles from nothing"}},
		{"compiled test path outside checks and workspace", func(t *testing.T, d string) {
			edit(t, d+"/tsadd/case.yaml", "paths: [checks/regression]", "paths: [tmp/regression]")
		}, []string{"tsadd/case.yaml", "tmp/regression"}},
		{"duplicate control", func(t *testing.T, d string) {
			edit(t, d+"/adder/case.yaml", "controls:\n", "controls:\n  - {name: negative-zero, overlay: controls/negative-zero, must_fail: {acceptance: []}, why: again}\n")
		}, []string{"adder/case.yaml", "negative-zero"}},
		{"symlink in a case", func(t *testing.T, d string) { os.Symlink("/etc/passwd", d+"/adder/workspace/link") }, []string{"symbolic links"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixture(t)
			tt.mutate(t, dir)
			_, err := LoadSuite(dir)
			if err == nil {
				t.Fatal("loaded without error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestFingerprintCoversEveryFileAndIgnoresCaches(t *testing.T) {
	dir := fixture(t)
	base, err := Fingerprint(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir+"/adder/workspace/__pycache__", 0o755)
	os.WriteFile(dir+"/adder/workspace/__pycache__/adder.cpython-311.pyc", []byte("x"), 0o644)
	if fp, _ := Fingerprint(dir); fp != base {
		t.Error("a tool cache changed the fingerprint")
	}
	edit(t, dir+"/adder/checks/acceptance/test_acc.py", "== -3", "== -4")
	changed, _ := Fingerprint(dir)
	if changed == base {
		t.Error("editing a frozen test did not change the fingerprint")
	}
	edit(t, dir+"/adder/checks/acceptance/test_acc.py", "== -4", "== -3")
	os.Chmod(dir+"/adder/workspace/adder.py", 0o755)
	if fp, _ := Fingerprint(dir); fp == base {
		t.Error("making a file executable did not change the fingerprint")
	}
}

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"tests/**", "tests/test_a.py", true},
		{"tests/**", "tests/sub/x.py", true},
		{"tests/**", "src/tests/x.py", false},
		{"**/conftest.py", "conftest.py", true},
		{"**/conftest.py", "a/b/conftest.py", true},
		{"*.md", "CONTRACT.md", true},
		{"*.md", "docs/x.md", false},
		{"src/*.ts", "src/pool.ts", true},
	}
	for _, tt := range tests {
		if got := MatchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %v", tt.pattern, tt.name, got)
		}
	}
}

// TestDevelopmentSuite holds the shipped suite to what the project promises:
// eight cases in both languages, each with controls, two with a second phase.
func TestDevelopmentSuite(t *testing.T) {
	s, err := LoadSuite("../cases")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "dev@1.1.0" {
		t.Errorf("suite %s, want dev@1.1.0", s.ID())
	}
	want := []string{"cache", "wallet", "eventstream", "paths", "ledger", "buildplan", "async_pool", "pagination", "tariff"}
	multiPhase := 0
	for i, name := range want {
		if i >= len(s.Cases) || s.Cases[i].Name != name {
			t.Fatalf("case %d is not %s", i, name)
		}
		c := s.Cases[i]
		if len(c.Controls) < 2 {
			t.Errorf("%s has %d negative controls, want at least 2", name, len(c.Controls))
		}
		if len(c.Phases) > 1 {
			multiPhase++
		}
		// At least ten acceptance tests: count test definitions in the
		// frozen acceptance files.
		n := 0
		filepath.WalkDir(c.ChecksDir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(p, "acceptance") {
				return err
			}
			data, _ := os.ReadFile(p)
			n += strings.Count(string(data), "\ndef test_") + strings.Count(string(data), "\ntest(")
			return nil
		})
		if n < 10 {
			t.Errorf("%s has %d acceptance tests, want at least 10", name, n)
		}
	}
	if multiPhase < 2 {
		t.Errorf("%d cases have a second phase, want at least 2", multiPhase)
	}
}

// TestCaseYAMLErrors pins the whole message for each kind of mistake in a
// case or suite file: the file, the line, the field path in the file's own
// words (never a Go type), and a suggestion for a misspelt field.
func TestCaseYAMLErrors(t *testing.T) {
	tests := []struct {
		name   string
		file   string // relative to the suite
		mutate func(t *testing.T, dir string)
		want   string // after the suite directory
	}{
		{"unknown field with suggestion", "adder/case.yaml",
			func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "summary:", "sumary: x\nsummary:") },
			`adder/case.yaml:3: unknown field "sumary"; did you mean "summary"?`},
		{"nested unknown field", "adder/case.yaml",
			func(t *testing.T, d string) {
				edit(t, d+"/adder/case.yaml", "runner: py-compile}", "runner: py-compile, timout: 5s}")
			},
			`adder/case.yaml:12: phases[0].groups[3]: unknown field "timout"; did you mean "timeout"?`},
		{"wrong type", "adder/case.yaml",
			func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "tests: 3}", "tests: three}") },
			`adder/case.yaml:9: phases[0].groups[0].tests: expected a whole number, got the text "three"`},
		{"trailing document", "adder/case.yaml",
			func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "why: Clamps", "why: x\n---\nwhy: Clamps") },
			`adder/case.yaml: holds more than one YAML document (a line with ---); keep one`},
		{"bad value range", "adder/case.yaml",
			func(t *testing.T, d string) { edit(t, d+"/adder/case.yaml", "tests: 3}", "tests: 0}") },
			`adder/case.yaml:9: phases[0].groups[0].tests: 0 is not a number of tests (at least 1)`},
		{"suite trailing document", "suite.yaml",
			func(t *testing.T, d string) { edit(t, d+"/suite.yaml", "cases:", "cases: []\n---\ncases:") },
			`suite.yaml: holds more than one YAML document (a line with ---); keep one`},
		{"suite wrong type", "suite.yaml",
			func(t *testing.T, d string) { edit(t, d+"/suite.yaml", "[adder, tsadd]", "adder") },
			`suite.yaml:3: cases: expected a list (- item lines, or [a, b]), got the text "adder"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixture(t)
			tt.mutate(t, dir)
			_, err := LoadSuite(dir)
			if err == nil {
				t.Fatal("loaded without error")
			}
			got := err.Error()
			i := strings.Index(got, dir+"/")
			if i < 0 {
				t.Fatalf("error %q does not name the file under %s", got, dir)
			}
			if got = got[i+len(dir)+1:]; got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
