package tasks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl/tasks"
)

// TestLoadDefault: without a directory, ./cases when it holds a suite,
// else the built-in suite (written under the cache directory); a named
// directory is loaded as it is.
func TestLoadDefault(t *testing.T) {
	repoCases, err := filepath.Abs("../cases")
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := tasks.LoadSuite(repoCases)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	t.Chdir(t.TempDir())
	s, err := tasks.LoadDefault("")
	if err != nil {
		t.Fatal(err)
	}
	if s.Fingerprint != onDisk.Fingerprint || filepath.Dir(s.Dir) == repoCases {
		t.Errorf("no ./cases: got %s from %s, want the built-in %s under the cache", s.Fingerprint, s.Dir, onDisk.Fingerprint)
	}
	if err := os.CopyFS("cases", os.DirFS(filepath.Join(filepath.Dir(repoCases), "grader", "testdata", "suite"))); err != nil {
		t.Fatal(err)
	}
	s, broken, err := tasks.LoadDefaultPartial("")
	if err != nil || s.Name != "graderfixture" || len(broken) != 0 {
		t.Errorf("./cases: got %v %v %v, want the fixture suite in ./cases", s, broken, err)
	}
	if s, err := tasks.LoadDefault(filepath.Join(filepath.Dir(repoCases), "grader", "testdata", "suite")); err != nil || s.Name != "graderfixture" {
		t.Errorf("named: %v %v", s, err)
	}
}
