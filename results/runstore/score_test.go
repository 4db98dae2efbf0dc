package runstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl"
)

func TestGradesAreAddedNeverReplaced(t *testing.T) {
	s, err := Create(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	s.WriteRun(&Run{ID: "r"})
	a := &evalctl.Attempt{ID: "a1", State: evalctl.Completed, Snapshots: []evalctl.Snapshot{{Phase: 1}}}
	if err := s.WriteAttempt(a); err != nil {
		t.Fatal(err)
	}
	g := &evalctl.Grade{Suite: "dev", SuiteVersion: "1.0.0", Phase: 1, Solved: true}
	if err := s.WriteGrade("a1", g); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteGrade("a1", &evalctl.Grade{Suite: "dev", SuiteVersion: "1.0.0", Phase: 1}); !errors.Is(err, os.ErrExist) {
		t.Errorf("second grade under the same version: %v, want ErrExist", err)
	}
	if err := s.WriteGrade("a1", &evalctl.Grade{Suite: "dev", SuiteVersion: "1.0.1", Phase: 1}); err != nil {
		t.Errorf("grade under a new version: %v", err)
	}
	got, _ := s.Grades(a, "dev@1.0.0")
	if len(got) != 1 || got[0] == nil || !got[0].Solved {
		t.Errorf("the first grade was changed: %+v", got)
	}
	ids, _ := s.SuiteIDs("a1")
	if len(ids) != 2 {
		t.Errorf("suite ids %v", ids)
	}
	// A second runner is kept off the run directory.
	s2, _ := Open(s.Dir)
	if err := s.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Lock(); !errors.Is(err, ErrLocked) {
		t.Errorf("second lock: %v, want ErrLocked", err)
	}
	s.Unlock()
}

func TestWriteFileAtomicLeavesNoTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	for i := 0; i < 3; i++ {
		if err := WriteJSON(p, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	var v map[string]int
	if err := ReadJSON(p, &v); err != nil || v["i"] != 2 {
		t.Errorf("read back %v %v", v, err)
	}
}
