package importer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

// TestImportRefuses checks that every mistake in a 'cases import' request
// is a usage error naming what to fix, found before anything is written.
func TestImportRefuses(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "prompt.tmpl")
	os.WriteFile(tmpl, []byte("{{.Instruction}}"), 0o644)
	fixture, _ := filepath.Abs("testdata/exercism")
	tests := []struct {
		name string
		r    importer.Request
		want string
	}{
		{"no arguments", importer.Request{Max: 1, Out: "x", Concurrency: 1}, "takes FORMAT and SRC (formats: exercism)"},
		{"unknown format", importer.Request{Max: 1, Args: []string{"polyglot", fixture}, Out: "x", Concurrency: 1}, `unknown format "polyglot"`},
		{"no out", importer.Request{Max: 1, Args: []string{"exercism", fixture}, Concurrency: 1}, "--out SUITE is required"},
		{"no concurrency", importer.Request{Max: 1, Args: []string{"exercism", fixture}, Out: "x"}, "--concurrency must be at least 1"},
		{"missing source", importer.Request{Max: 1, Args: []string{"exercism", "/nonexistent"}, Out: "x", Concurrency: 1}, "SRC /nonexistent is not a directory"},
		{"bad template", importer.Request{Max: 1, Args: []string{"exercism", fixture}, Out: "x", Concurrency: 1, PromptFile: tmpl}, "--prompt-template"},
		{"no mutants", importer.Request{Args: []string{"exercism", fixture}, Out: "x", Concurrency: 1}, "--max must be at least 1"},
		{"missing template", importer.Request{Max: 1, Args: []string{"exercism", fixture}, Out: "x", Concurrency: 1, PromptFile: "/nonexistent.tmpl"}, "--prompt-template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			var out, log strings.Builder
			err := importer.Run(context.Background(), tt.r, &out, &log)
			var ue *evalctl.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a usage error containing %q", err, tt.want)
			}
			if _, err := os.Stat("x"); !errors.Is(err, os.ErrNotExist) || out.Len()+log.Len() > 0 {
				t.Fatalf("a refused import wrote something: %v %q %q", err, out.String(), log.String())
			}
		})
	}
}

// TestPrepareAndWrite imports the fixture without grading: the suite is
// named after --out and loads with one case per exercise.
func TestPrepareAndWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mysuite")
	im, err := importer.Prepare(importer.Request{Args: []string{"exercism", "testdata/exercism"}, Out: out, Version: "1.2.3", Concurrency: 1})
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
