package evalctl_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// TestDevSuiteEmbedsEveryFile: the embedded suite, written out, has the
// fingerprint of the cases/ directory it was built from (so no file was
// left out by embed's rules), is written once, and a copy edited by hand is
// replaced rather than trusted.
func TestDevSuiteEmbedsEveryFile(t *testing.T) {
	onDisk, err := tasks.LoadSuite("cases")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fs.Sub(evalctl.DevSuite, "cases")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	s, err := tasks.Materialize(sub, cache)
	if err != nil {
		t.Fatal(err)
	}
	if s.Fingerprint != onDisk.Fingerprint || s.ID() != onDisk.ID() || len(s.Cases) != len(onDisk.Cases) {
		t.Fatalf("embedded suite %s (%s, %d cases), cases/ is %s (%s, %d cases)", s.ID(), s.Fingerprint, len(s.Cases), onDisk.ID(), onDisk.Fingerprint, len(onDisk.Cases))
	}
	if filepath.Dir(s.Dir) != cache {
		t.Errorf("written to %s, want a directory in %s", s.Dir, cache)
	}
	// Again: the same directory, nothing new beside it.
	again, err := tasks.Materialize(sub, cache)
	if err != nil || again.Dir != s.Dir {
		t.Fatalf("second materialize: %v, dir %v (first %s)", err, again, s.Dir)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 1 {
		t.Errorf("cache holds %d entries, want 1", len(entries))
	}
	// A hand edit is not trusted.
	if err := os.WriteFile(filepath.Join(s.Dir, "suite.yaml"), []byte("name: dev\nversion: 9.9.9\ncases: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixed, err := tasks.Materialize(sub, cache)
	if err != nil || fixed.Fingerprint != onDisk.Fingerprint {
		t.Fatalf("after a hand edit: %v, %+v", err, fixed)
	}
}
