package controls_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
)

// TestCommandUsage checks that the mistakes of 'cases check' and 'cases
// controls generate' are usage errors, found before any grader is built.
func TestCommandUsage(t *testing.T) {
	noGrader := func(int) (*grader.Grader, func(), error) {
		t.Fatal("a grader was built for a usage error")
		return nil, nil, nil
	}
	check := func(o controls.CheckOptions) func() error {
		return func() error {
			return controls.Check(context.Background(), o, noGrader, new(strings.Builder), new(strings.Builder))
		}
	}
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"concurrency", check(controls.CheckOptions{Suite: "../testdata/suite", Retries: 1}), "--concurrency must be at least 1"},
		{"retries", check(controls.CheckOptions{Suite: "../testdata/suite", Concurrency: 1, Retries: -1}), "--retries must be at least 0"},
		{"no such case", check(controls.CheckOptions{Suite: "../testdata/suite", Concurrency: 1, Cases: []string{"nosuchcase"}}), `has no case "nosuchcase"`},
		{"limits", func() error { return controls.CheckLimits(1, controls.Options{Max: 0, Keep: 3}) }, "--max and --keep must be at least 1"},
		{"generate no such case", func() error {
			return (&controls.Generator{}).GenerateDir(context.Background(), "../testdata/suite", []string{"nosuchcase"}, controls.SuiteOptions{Out: new(strings.Builder)})
		}, `has no case "nosuchcase"`},
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
	if err := controls.CheckLimits(1, controls.Options{Max: 1, Keep: 1}); err != nil {
		t.Fatalf("limits of 1 refused: %v", err)
	}
}
