package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestReplicaSpeeds: an arm that ran on an endpoint pool gets its decode
// TPS per replica, each over its own attempts; replicas whose speeds differ
// by more than their bootstrap intervals allow are warned about, replicas
// that run alike are not, and arms without a pool get no replica figures.
func TestReplicaSpeeds(t *testing.T) {
	yes := true
	row := func(arm, replica, c string, tokens int64, secs float64) Row {
		task := secs * 1.1
		return Row{RunID: "r", AttemptID: fmt.Sprintf("%s-%s-%s", arm, replica, c), Arm: arm, Case: c, Repeat: "r1", Status: Scored,
			Functional: &yes, Delivered: &yes, Replica: replica, NativeOutputTokens: &tokens, DecodeSeconds: &secs, TaskSeconds: &task}
	}
	var rows []Row
	for i := 0; i < 6; i++ {
		c := fmt.Sprintf("c%d", i)
		jitter := float64(i%3) * 0.5
		rows = append(rows,
			row("slowbox", "http://a", c, 1000, 20+jitter), // ~50 TPS
			row("slowbox", "http://b", c, 1000, 40+jitter), // ~25 TPS
			row("alike", "http://a", c, 1000, 20+jitter),
			row("alike", "http://b", c, 1000, 20+float64((i+1)%3)*0.5),
			row("single", "", c, 1000, 20))
	}
	rep, err := Build(&Input{Runs: []RunInfo{{ID: "r"}}, Rows: rows}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	slow := rep.Arm("slowbox")
	if len(slow.Replicas) != 2 || slow.Replicas[0].Replica != "http://a" || slow.Replicas[0].Attempts != 6 || slow.Replicas[1].Attempts != 6 {
		t.Fatalf("slowbox replicas %+v", slow.Replicas)
	}
	if want := 6000.0 / (6*20 + 3); !near(*slow.Replicas[0].DecodeTPS, want, 1e-9) {
		t.Errorf("replica a decode TPS %v, want %v", *slow.Replicas[0].DecodeTPS, want)
	}
	if len(rep.Arm("single").Replicas) != 0 {
		t.Errorf("arm without a pool has replicas %+v", rep.Arm("single").Replicas)
	}
	warned := map[string]bool{}
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "WARNING arm ") && strings.Contains(n, "replicas differ in speed") {
			warned[strings.Fields(n)[2]] = true
		}
	}
	if !warned["slowbox:"] || warned["alike:"] {
		t.Errorf("warnings for %v; want slowbox only: %q", warned, rep.Notes)
	}
}
