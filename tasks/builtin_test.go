package tasks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

func TestWriteListAndFingerprint(t *testing.T) {
	s, err := tasks.LoadSuite("../grader/testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	var table, js, fp strings.Builder
	if err := s.WriteList(&table, false); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteList(&js, true); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFingerprint(&fp, false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(table.String(), "CASE  ") || !strings.Contains(table.String(), "\nadder ") || strings.Count(table.String(), "\n") != len(s.Cases)+1 {
		t.Errorf("table:\n%s", table.String())
	}
	var doc struct {
		Suite, Fingerprint string
		Cases              []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil || doc.Suite != s.ID() || doc.Fingerprint != s.Fingerprint || len(doc.Cases) != len(s.Cases) {
		t.Errorf("json %v: %s", err, js.String())
	}
	if fp.String() != s.Name+" "+s.Version+" "+s.Fingerprint+"\n" {
		t.Errorf("fingerprint line %q", fp.String())
	}
}
