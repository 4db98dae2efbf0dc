package orchestrator

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodPlan = `name: t
suite: SUITE
cases: [adder, tsadd]
repeats:
  - {label: repeat-1, seed: 101}
  - {label: repeat-2, seed: 202}
arms:
  - name: a
    endpoint: {base_url: "http://127.0.0.1:1", model: reference}
    max_tokens: 1024
  - file: arm-b.yaml
order: {policy: interleaved, seed: 3}
`

const armB = `name: b
endpoint: {base_url: "http://127.0.0.1:1", model: noop}
sampling: {temperature: 0.6, top_k: 20}
budgets: {wall_seconds: 60}
`

func writePlan(t *testing.T, plan, arm string) string {
	t.Helper()
	dir := t.TempDir()
	suite, _ := filepath.Abs("../grader/testdata/suite")
	plan = strings.ReplaceAll(plan, "SUITE", suite)
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "arm-b.yaml"), []byte(arm), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "plan.yaml")
}

func TestLoadPlanResolvesAndOrders(t *testing.T) {
	p, s, err := LoadPlan(writePlan(t, goodPlan, armB))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "graderfixture" || len(p.Slots) != 2*2*2 {
		t.Fatalf("suite %s, %d slots", s.Name, len(p.Slots))
	}
	b := p.Arm("b")
	if b == nil || b.Budgets.WallSeconds != 60 || b.Budgets.ToolCalls != 120 || *b.Sampling.TopK != 20 {
		t.Errorf("arm b from file not resolved with defaults: %+v", b)
	}
	// Interleaved: every (case, repeat) block holds both arms back to back.
	seen := map[string]int{}
	for i := 0; i < len(p.Slots); i += 2 {
		x, y := p.Slots[i], p.Slots[i+1]
		if x.Case != y.Case || x.Repeat != y.Repeat || x.Arm == y.Arm || x.Seed != y.Seed {
			t.Errorf("slots %d,%d not one paired block: %+v %+v", i, i+1, x, y)
		}
		seen[x.Case+x.Repeat]++
	}
	if len(seen) != 4 {
		t.Errorf("blocks %v", seen)
	}
	// The same seed gives the same order; the hash covers the arm.
	p2, _, _ := LoadPlan(writePlan(t, goodPlan, armB))
	for i := range p.Slots {
		if p.Slots[i] != p2.Slots[i] {
			t.Fatalf("order not reproducible at %d", i)
		}
	}
	if p.Arm("a").Hash() == p.Arm("b").Hash() || p.Arm("a").Hash() != p2.Arm("a").Hash() {
		t.Error("arm hashes do not identify arms")
	}
}

func TestLoadPlanRejectsBadInput(t *testing.T) {
	tests := []struct {
		name, plan, arm string
		want            []string // substrings of the error
	}{
		{"unknown field", goodPlan + "colour: blue\n", armB, []string{"plan.yaml", "colour", "not found"}},
		{"unknown arm field", goodPlan, armB + "tempreature: 1\n", []string{"arm-b.yaml", "tempreature"}},
		{"missing case", strings.Replace(goodPlan, "[adder, tsadd]", "[adder, nosuch]", 1), armB, []string{"plan.yaml", "cases[1]", "nosuch"}},
		{"duplicate arm", goodPlan, strings.Replace(armB, "name: b", "name: a", 1), []string{"arms[1].name", `duplicate arm "a"`}},
		{"duplicate label", strings.Replace(goodPlan, "repeat-2, seed: 202", "repeat-1, seed: 202", 1), armB, []string{"repeats[1].label", "duplicate"}},
		{"two labels one seed", strings.Replace(goodPlan, "seed: 202", "seed: 101", 1), armB, []string{"repeats[1].seed", "share seed 101"}},
		{"missing arm file", strings.Replace(goodPlan, "arm-b.yaml", "arm-c.yaml", 1), armB, []string{"arms[1].file", "arm-c.yaml"}},
		{"no model", goodPlan, strings.Replace(armB, "model: noop", "model: \"\"", 1), []string{"arms[1].endpoint.model", "required"}},
		{"bad url", strings.Replace(goodPlan, "http://127.0.0.1:1", "127.0.0.1:1", 1), armB, []string{"arms[0].endpoint.base_url"}},
		{"missing suite", strings.Replace(goodPlan, "suite: SUITE", "suite: /nonexistent/suite", 1), armB, []string{"field suite", "/nonexistent/suite"}},
		{"fingerprint mismatch", goodPlan + "suite_fingerprint: abc\n", armB, []string{"suite_fingerprint", "the suite changed"}},
		{"bad order", strings.Replace(goodPlan, "policy: interleaved", "policy: random", 1), armB, []string{"order.policy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadPlan(writePlan(t, tt.plan, tt.arm))
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a PlanError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestExamplePlansLoad(t *testing.T) {
	for _, f := range []string{"../examples/dev24.yaml", "../examples/scripted24.yaml"} {
		p, s, err := LoadPlan(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(p.Slots) != 48 || s.ID() != "dev@1.1.0" {
			t.Errorf("%s: %d slots under %s, want the 2 x 24 development cohort", f, len(p.Slots), s.ID())
		}
	}
}
