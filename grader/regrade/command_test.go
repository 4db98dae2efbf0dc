package regrade_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/results/summary"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
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

// fixedGrader passes every answer but the starter: a fake grader is
// enough to show where the diagnosis goes.
type fixedGrader struct{}

func (fixedGrader) Grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels grader.Labels) (*evalctl.Grade, error) {
	return &evalctl.Grade{Suite: s.Name, SuiteVersion: s.Version, Phase: phase, Solved: true}, nil
}

// TestDiagnoseOut: 'controls --out FILE' writes the diagnosis as JSON to
// FILE, the fixture diagnosis file 'summarize' reads, and still prints it.
func TestDiagnoseOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "diagnosis.json")
	var stdout, log strings.Builder
	r := regrade.DiagnoseRequest{Case: "wordcount", Suites: []string{"testdata/suite-v1", "testdata/suite-v2"}, Concurrency: 1, Out: out, Log: &log}
	g := func(int) (regrade.Grader, func(), error) { return fixedGrader{}, func() {}, nil }
	if err := regrade.DiagnoseCommand(context.Background(), r, g, &stdout); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() == 0 || log.String() != "wrote "+out+"\n" {
		t.Errorf("stdout %q, log %q", stdout.String(), log.String())
	}
	doc, err := summary.Summarize(context.Background(), []string{out})
	if err != nil || len(doc.Diagnoses) != 1 || doc.Diagnoses[0].Case != "wordcount" {
		t.Fatalf("summarize of the written file: %v %+v", err, doc)
	}
}
