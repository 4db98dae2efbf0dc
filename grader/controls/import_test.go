package controls_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
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

// gradeFunc is a controls.Grader answering every grade with f.
type gradeFunc func() *evalctl.Grade

func (f gradeFunc) Grade(context.Context, *tasks.Suite, *tasks.Case, int, *sandbox.Snapshot, grader.Labels) (*evalctl.Grade, error) {
	return f(), nil
}

// TestImportReportsUnrepresentable: an exercise whose reference fails
// only tests the boundary cannot represent is refused as ungraded, naming
// the tests and what could not cross (the table prints it); one that
// fails an ordinary test too is refused as not solved. A Python exercise
// (tests by qualified id) and a TypeScript one (the node boundary's marks,
// tests by title) alike.
func TestImportReportsUnrepresentable(t *testing.T) {
	for _, fx := range []struct {
		dir, failed string
		unrep       evalctl.UnrepresentableTest
	}{
		{"exercism-helpers", "test_counts_reads", evalctl.UnrepresentableTest{Test: "meter_test.MeterTest.test_counts_reads", Construct: "a value nested deeper than 200 levels"}},
		// The node boundary's: a test named by its title.
		{"exercism-ts", "mean of none", evalctl.UnrepresentableTest{Test: "mean of none", Construct: "a symbol (none)"}},
	} {
		exs, err := importer.Exercism{}.Exercises("../../tasks/importer/testdata/" + fx.dir)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "imported")
		if err := importer.Write(out, exs, importer.Options{Name: "imported", Version: "1.0.0"}); err != nil {
			t.Fatal(err)
		}
		unrep := []evalctl.UnrepresentableTest{fx.unrep}
		for _, tt := range []struct {
			failed int
			want   string
		}{
			{1, "the reference (the example) is ungraded: acceptance 2/3, failed [" + fx.failed + "], exit 1; 1 test(s) the boundary cannot represent: " + fx.unrep.Test + " (" + fx.unrep.Construct + ")"},
			{2, "the reference (the example) is not solved: acceptance 1/3"},
		} {
			g := gradeFunc(func() *evalctl.Grade {
				return &evalctl.Grade{Groups: []evalctl.GroupResult{{Name: "acceptance", Required: true, Total: 3, Passed: 3 - tt.failed, Failed: tt.failed,
					FailedTests: []string{fx.failed}, ExitCode: evalctl.ExitTestsFailed, Unrepresentable: unrep, UnrepresentableCount: 1}}}
			})
			_, refused, err := controls.FillCounts(context.Background(), g, out, exs, grader.Labels{})
			if err != nil || len(refused) != 1 || !strings.Contains(refused[0].Error(), tt.want) {
				t.Errorf("%s, failed %d: refused %v (%v), want %q", fx.dir, tt.failed, refused, err, tt.want)
			}
		}
	}
}
