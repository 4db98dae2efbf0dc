package report

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
)

// TestWriteRunEnd: a run's output ends with the pooled table and the
// commands that read it further; a stopped run is told how to resume.
func TestWriteRunEnd(t *testing.T) {
	dir := writeRun(t, &reporttest.RunSpec{ID: "r1", Attempts: []reporttest.AttemptSpec{
		{Arm: "a", Case: "c", Language: "python", Repeat: "r", Phases: 1, Solved: []bool{true}},
	}})
	for _, stopped := range []bool{false, true} {
		var b strings.Builder
		WriteRunEnd(context.Background(), &b, dir, stopped)
		out := b.String()
		for _, want := range []string{"run directory: " + dir, "Outcomes per arm", "\nnext:\n", "evalctl report " + dir + " --format html", "evalctl view " + filepath.Dir(dir), "evalctl show ATTEMPT-ID --run " + dir} {
			if !strings.Contains(out, want) {
				t.Errorf("stopped %v: output lacks %q:\n%s", stopped, want, out)
			}
		}
		if got := strings.Contains(out, "evalctl run --resume "+dir); got != stopped {
			t.Errorf("stopped %v: resume command shown %v:\n%s", stopped, got, out)
		}
	}
}

// TestWriteRunEndReplaceInfra: a run stopped with infrastructure failures
// left is told the command that re-runs them.
func TestWriteRunEndReplaceInfra(t *testing.T) {
	dir := writeRun(t, &reporttest.RunSpec{ID: "r1", Attempts: []reporttest.AttemptSpec{
		{Arm: "a", Case: "c", Language: "python", Repeat: "r", Phases: 1, Solved: []bool{true}},
		{Arm: "a", Case: "c", Language: "python", Repeat: "r2", Phases: 1, State: evalctl.InfraFailed},
	}})
	var b strings.Builder
	WriteRunEnd(context.Background(), &b, dir, true)
	if want := "evalctl run --resume " + dir + " --replace-infra"; !strings.Contains(b.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, b.String())
	}
}
