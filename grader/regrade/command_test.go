package regrade_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader/regrade"
)

// TestCommandUsage checks that the mistakes of 'regrade' and 'controls'
// are usage errors, found before any grader is built.
func TestCommandUsage(t *testing.T) {
	noGrader := func(int) (regrade.Grader, func(), error) {
		t.Fatal("a grader was built for a usage error")
		return nil, nil, nil
	}
	ctx := context.Background()
	var out strings.Builder
	regr := func(dirs []string, r regrade.Request) func() error {
		return func() error { return regrade.Regrade(ctx, dirs, r, noGrader, &out, &out) }
	}
	diag := func(r regrade.DiagnoseRequest) func() error {
		return func() error { return regrade.DiagnoseCommand(ctx, r, noGrader, &out) }
	}
	suite := "testdata/suite-v1"
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"no runs", regr(nil, regrade.Request{Suite: suite, Concurrency: 1}), "regrade needs at least one run directory"},
		{"no suite", regr([]string{"r"}, regrade.Request{Concurrency: 1}), "--suite DIR is required"},
		{"no concurrency", regr([]string{"r"}, regrade.Request{Suite: suite}), "--concurrency must be at least 1"},
		{"no case", diag(regrade.DiagnoseRequest{Suites: []string{suite}, Concurrency: 1}), "--case NAME is required"},
		{"no suite to diagnose", diag(regrade.DiagnoseRequest{Case: "x", Concurrency: 1}), "give --suite once (original) or twice (original, then corrected); got 0"},
		{"three suites", diag(regrade.DiagnoseRequest{Case: "x", Suites: []string{suite, suite, suite}, Concurrency: 1}), "got 3"},
		{"diagnose concurrency", diag(regrade.DiagnoseRequest{Case: "x", Suites: []string{suite}}), "--concurrency must be at least 1"},
		{"no such case", diag(regrade.DiagnoseRequest{Case: "nosuchcase", Suites: []string{suite}, Concurrency: 1}), `has no case "nosuchcase"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			var ue *evalctl.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a usage error containing %q", err, tt.want)
			}
		})
	}
}
