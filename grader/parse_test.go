package grader

import (
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

func TestParseTAPCountsLeafTests(t *testing.T) {
	tests := []struct {
		file          string
		total, passed int
		failed        []string
	}{
		// node 18's reporter: each file is a subtest holding its tests.
		{"testdata/tap/two_files.tap", 4, 2, []string{"rejects with the original error", "skipped one"}},
		// A file that fails to load is one failed test named after it.
		{"testdata/tap/load_error.tap", 1, 0, []string{"/tmp/b/checks/acceptance/sum.test.js"}},
		{"testdata/tap/empty.tap", 0, 0, nil},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		total, passed, failed := ParseTAP(data)
		if total != tt.total || passed != tt.passed || strings.Join(failed, "|") != strings.Join(tt.failed, "|") {
			t.Errorf("%s: %d/%d failed %q; want %d/%d %q", tt.file, passed, total, failed, tt.passed, tt.total, tt.failed)
		}
	}
}

func TestParseJUnit(t *testing.T) {
	data, err := os.ReadFile("testdata/junit/mixed.xml")
	if err != nil {
		t.Fatal(err)
	}
	total, passed, failed, err := ParseJUnit(data)
	if err != nil {
		t.Fatal(err)
	}
	// A skipped test does not pass; an error is a failure.
	if total != 5 || passed != 2 || strings.Join(failed, ",") != "test_fails,test_errors,test_skipped" {
		t.Errorf("got %d/%d %v", passed, total, failed)
	}
	if _, _, _, err := ParseJUnit([]byte("<testsuites><testsuite>")); err == nil {
		t.Error("truncated report parsed without error")
	}
}

func TestPrepareRestoresProtectedFiles(t *testing.T) {
	c := &tasks.Case{Name: "x", Protected: []string{"tests/**", "CONTRACT.md"}}
	pristine := []sandbox.Entry{
		{Name: "CONTRACT.md", Mode: 0o644, Data: []byte("contract")},
		{Name: "tests", Mode: fs.ModeDir | 0o755},
		{Name: "tests/test_a.py", Mode: 0o644, Data: []byte("a")},
		{Name: "main.py", Mode: 0o644, Data: []byte("main")},
		{Name: "util.py", Mode: 0o644, Data: []byte("util")},
	}
	answer := []sandbox.Entry{
		{Name: "CONTRACT.md", Mode: 0o644, Data: []byte("edited")},
		{Name: "tests", Mode: 0o644, Data: []byte("now a file")},
		{Name: "main.py", Mode: 0o644, Data: []byte("solved")},
		{Name: "__pycache__", Mode: fs.ModeDir | 0o755},
		{Name: "__pycache__/main.cpython-311.pyc", Mode: 0o644, Data: []byte("x")},
		{Name: "up", Mode: fs.ModeSymlink | 0o777, Linkname: "../../etc/passwd"},
		{Name: "inside", Mode: fs.ModeSymlink | 0o777, Linkname: "main.py"},
	}
	ws, audit := Prepare(c, pristine, answer)
	if got := strings.Join(audit.Protected, "|"); got != "deleted: tests/test_a.py|link out of the workspace: up -> ../../etc/passwd|modified: CONTRACT.md" {
		t.Errorf("protected audit %q", got)
	}
	if got := strings.Join(audit.Missing, "|"); got != "util.py" {
		t.Errorf("missing %q", got)
	}
	byName := map[string]sandbox.Entry{}
	for _, e := range ws {
		byName[e.Name] = e
	}
	if string(byName["CONTRACT.md"].Data) != "contract" || string(byName["main.py"].Data) != "solved" {
		t.Errorf("restored tree wrong: %+v", byName)
	}
	if _, ok := byName["__pycache__/main.cpython-311.pyc"]; ok {
		t.Error("tool cache kept")
	}
	if _, ok := byName["up"]; ok {
		t.Error("escaping link kept")
	}
	if _, ok := byName["inside"]; !ok {
		t.Error("link inside the workspace dropped")
	}
	if e, ok := byName["tests"]; ok && !e.Mode.IsDir() {
		t.Errorf("a file still stands where a restored protected directory must be: %+v", e)
	}
}
