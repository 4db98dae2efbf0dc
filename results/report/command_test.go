package report

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
)

// TestCommandWork checks the work behind 'evalctl report', 'export' and
// 'rerun show': what they write, and that the user's mistakes are usage
// errors (exit 2) while a broken run is not.
func TestCommandWork(t *testing.T) {
	dir := writeRun(t, &reporttest.RunSpec{ID: "r1", Attempts: []reporttest.AttemptSpec{
		{Arm: "a", Case: "c", Repeat: "r", Phases: 1, Solved: []bool{true}},
		{Arm: "b", Case: "c", Repeat: "r", Phases: 1, Solved: []bool{false}},
	}})
	ctx := context.Background()
	tests := []struct {
		name  string
		err   func() (string, error)
		usage bool
		want  string
	}{
		{"table", func() (string, error) { return made(Make(ctx, []string{dir}, Options{}, FormatTable)) }, false, "a"},
		{"csv", func() (string, error) { return made(Make(ctx, []string{dir}, Options{Baseline: "b"}, FormatCSV)) }, false, "b"},
		{"html", func() (string, error) { return made(Make(ctx, []string{dir}, Options{}, FormatHTML)) }, false, "<html"},
		{"bad format", func() (string, error) { return made(Make(ctx, []string{dir}, Options{}, "pdf")) }, true, `unknown --format "pdf"`},
		{"unknown baseline", func() (string, error) { return made(Make(ctx, []string{dir}, Options{Baseline: "z"}, FormatTable)) }, true, `baseline "z"`},
		{"not graded", func() (string, error) { return made(Make(ctx, []string{dir}, Options{Suite: "9.9.9"}, FormatTable)) }, true, "never graded under"},
		{"not a run", func() (string, error) { return made(Make(ctx, []string{t.TempDir()}, Options{}, FormatTable)) }, false, ""},
		{"export baseline", func() (string, error) {
			var b strings.Builder
			err := ExportTo(ctx, []string{dir}, filepath.Join(t.TempDir(), "x"), Options{Baseline: "z"}, &b)
			return b.String(), err
		}, true, `baseline "z"`},
		{"export, verified", func() (string, error) {
			var b strings.Builder
			out := filepath.Join(t.TempDir(), "x")
			if err := ExportTo(ctx, []string{dir}, out, Options{}, &b); err != nil {
				return "", err
			}
			err := VerifyTo(ctx, out, &b)
			return b.String(), err
		}, false, "x: checksums match, every outcome recomputes"},
		{"verify no export", func() (string, error) {
			var b strings.Builder
			return b.String(), VerifyTo(ctx, t.TempDir(), &b)
		}, false, ""},
		{"rerun show of a cohort", func() (string, error) { return made(ShowRerun(dir, "table")) }, true, "not a diagnostic rerun"},
		{"rerun show format", func() (string, error) { return made(ShowRerun(dir, "csv")) }, true, `unknown --format "csv" (want table or json)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.err()
			var ue *evalctl.UsageError
			switch {
			case tt.usage && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want a usage error containing %q", err, tt.want)
			case !tt.usage && tt.want == "" && (err == nil || errors.As(err, &ue)):
				t.Fatalf("error %v, want a failure that is no usage error", err)
			case !tt.usage && tt.want != "" && (err != nil || !strings.Contains(out, tt.want)):
				t.Fatalf("error %v, output lacks %q:\n%s", err, tt.want, out)
			}
		})
	}
}

// made runs what Make or ShowRerun returned.
func made(fill func(w io.Writer) error, err error) (string, error) {
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = fill(&b)
	return b.String(), err
}
