package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/runstore"
)

// TestDefaultBaselineIsStable: without --baseline the report compares with
// the first arm of the first run's plan, whatever order the attempt
// records come in, says so on the baseline line, and gives the same answer
// every time; a run that did not record its plan order falls back to the
// first record's arm and says that instead.
func TestDefaultBaselineIsStable(t *testing.T) {
	rows := func(arms ...string) []Row {
		var out []Row
		for i, a := range arms {
			out = append(out, Row{RunID: "r1", AttemptID: a + "-" + string(rune('0'+i)), Slot: i, Arm: a, Case: "c", Repeat: "repeat-1", State: "planned", Status: Unscored})
		}
		return out
	}
	for _, tt := range []struct {
		name      string
		order     []string
		rows      []string
		want, why string
	}{
		{"plan order wins over record order", []string{"reference", "flawed"}, []string{"flawed", "reference"}, "reference", "the first arm of run r1's plan"},
		{"first plan arm without attempts is skipped", []string{"gone", "reference", "flawed"}, []string{"flawed", "reference"}, "reference", "first arm of run r1's plan that has attempts here"},
		{"old run without plan order", nil, []string{"flawed", "reference"}, "flawed", "did not record its plan's arm order"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 3; i++ {
				in := &Input{Runs: []RunInfo{{ID: "r1", ArmOrder: tt.order}}, Rows: rows(tt.rows...)}
				rep, err := Build(in, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Baseline != tt.want || !strings.Contains(rep.BaselineWhy, tt.why) {
					t.Fatalf("baseline %q (%s), want %q (%s)", rep.Baseline, rep.BaselineWhy, tt.want, tt.why)
				}
				if text := render(t, rep, FormatTable); !strings.Contains(text, "baseline arm: "+tt.want+" ("+rep.BaselineWhy+")") {
					t.Errorf("the baseline line does not say why:\n%s", text)
				}
			}
		})
	}
}

// TestPoolingIdentityDiff: runs whose arm identities differ refuse to pool
// and the message names each differing field with both values; equal
// identities pool even when the arm hashes (which include the URL) differ.
func TestPoolingIdentityDiff(t *testing.T) {
	id := func(sum string, f map[string]string) map[string]*runstore.ArmIdentity {
		return map[string]*runstore.ArmIdentity{"a": {SHA256: sum, Fields: f}}
	}
	row := func(run, hash string) Row {
		return Row{RunID: run, AttemptID: run + "-1", Arm: "a", ArmHash: hash, Case: "c", Repeat: "repeat-1", State: "planned", Status: Unscored}
	}
	same := map[string]string{"model": `"m"`, "sampling.temperature": "0.6"}
	in := &Input{
		Runs: []RunInfo{{ID: "r1", ArmIdentities: id("s1", same)}, {ID: "r2", ArmIdentities: id("s1", same)}},
		Rows: []Row{row("r1", "h-port-8080"), row("r2", "h-port-8081")},
	}
	if _, err := Build(in, Options{}); err != nil {
		t.Fatalf("equal identities with different arm hashes: %v, want pooled", err)
	}
	in.Runs[1].ArmIdentities = id("s2", map[string]string{"model": `"m"`, "sampling.temperature": "0.7", "sampling.top_k": "20"})
	_, err := Build(in, Options{})
	var me *MixedError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a MixedError", err)
	}
	for _, w := range []string{"arm a differs between run r1 and run r2", "sampling.temperature 0.6 vs 0.7", "sampling.top_k unset vs 20"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "different hashes") {
		t.Errorf("runs with identities are still compared by arm hash: %v", err)
	}
}
