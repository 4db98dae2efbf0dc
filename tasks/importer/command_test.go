package importer_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

// TestPrepareAndWrite imports the fixture without grading: the suite is
// named after --out and loads with one case per exercise.
func TestPrepareAndWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mysuite")
	im, err := importer.Prepare(importer.Request{Args: []string{"exercism", "testdata/exercism"}, Out: out, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := im.Write(&log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "wrote ") || !strings.Contains(log.String(), out) {
		t.Fatalf("log %q", log.String())
	}
	s, err := tasks.LoadSuite(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "mysuite@1.2.3" || len(s.Cases) != len(im.Exercises) || len(s.Cases) == 0 {
		t.Fatalf("suite %s with %d cases, %d exercises", s.ID(), len(s.Cases), len(im.Exercises))
	}
}
