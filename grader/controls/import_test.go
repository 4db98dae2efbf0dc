package controls_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/tasks/importer"
)

// TestImportRefuses checks that every mistake in a 'cases import' request
// is a usage error naming what to fix, found before anything is written.
func TestImportRefuses(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "prompt.tmpl")
	os.WriteFile(tmpl, []byte("{{.Instruction}}"), 0o644)
	fixture, _ := filepath.Abs("../../tasks/importer/testdata/exercism")
	tests := []struct {
		name string
		r    controls.ImportRequest
		want string
	}{
		{"no arguments", controls.ImportRequest{Request: importer.Request{Out: "x"}, Max: 1, Concurrency: 1}, "takes FORMAT and SRC (formats: exercism)"},
		{"unknown format", controls.ImportRequest{Request: importer.Request{Args: []string{"polyglot", fixture}, Out: "x"}, Max: 1, Concurrency: 1}, `unknown format "polyglot"`},
		{"no out", controls.ImportRequest{Request: importer.Request{Args: []string{"exercism", fixture}}, Max: 1, Concurrency: 1}, "--out SUITE is required"},
		{"no concurrency", controls.ImportRequest{Request: importer.Request{Args: []string{"exercism", fixture}, Out: "x"}, Max: 1}, "--concurrency must be at least 1"},
		{"missing source", controls.ImportRequest{Request: importer.Request{Args: []string{"exercism", "/nonexistent"}, Out: "x"}, Max: 1, Concurrency: 1}, "SRC /nonexistent is not a directory"},
		{"bad template", controls.ImportRequest{Request: importer.Request{Args: []string{"exercism", fixture}, Out: "x", PromptFile: tmpl}, Max: 1, Concurrency: 1}, "--prompt-template"},
		{"no mutants", controls.ImportRequest{Request: importer.Request{Args: []string{"exercism", fixture}, Out: "x"}, Concurrency: 1}, "--max must be at least 1"},
		{"missing template", controls.ImportRequest{Request: importer.Request{Args: []string{"exercism", fixture}, Out: "x", PromptFile: "/nonexistent.tmpl"}, Max: 1, Concurrency: 1}, "--prompt-template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			var out, log strings.Builder
			err := controls.Import(context.Background(), tt.r, &out, &log)
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
