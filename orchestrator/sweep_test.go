package orchestrator

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const sweepPlan = `name: s
suite: SUITE
cases: [adder]
repeats: [{label: repeat-1, seed: 101}]
arms:
  - name: base
    endpoint: {base_url: "http://127.0.0.1:1", model: reference}
  - name: "cap{value}"
    endpoint: {base_url: "http://127.0.0.1:1", model: reference}
    max_tokens: 1024
    sweep: {field: max_tokens, values: [32768, 16384, 65536]}
  - name: grid
    endpoint: {base_url: "http://127.0.0.1:1", model: reference}
    sweep:
      - {field: sampling.temperature, values: [0.2, 0.6]}
      - {field: extra.n_probs, values: [0, 4]}
order: {policy: interleaved, seed: 3}
`

// TestSweepExpands: one declared arm becomes one named arm per value (per
// combination for a grid), each with exactly its setting changed and its
// own hash, recorded in the registered plan.
func TestSweepExpands(t *testing.T) {
	p, _, err := LoadPlan(writePlan(t, sweepPlan, armB))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range p.Arms {
		names = append(names, a.Name)
	}
	want := "base cap32768 cap16384 cap65536 grid-0.2-0 grid-0.2-4 grid-0.6-0 grid-0.6-4"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("arms %q, want %q", got, want)
	}
	for name, tokens := range map[string]int{"cap32768": 32768, "cap16384": 16384, "cap65536": 65536} {
		a := p.Arm(name)
		if a.MaxTokens != tokens {
			t.Errorf("%s max_tokens %d", name, a.MaxTokens)
		}
		// Exactly the swept setting differs from the declared arm.
		b := *a
		b.MaxTokens, b.Name = 1024, "cap{value}"
		decl := Arm{Name: "cap{value}", Endpoint: Endpoint{BaseURL: "http://127.0.0.1:1", Model: "reference"}, MaxTokens: 1024, Budgets: DefaultBudgets()}
		if b.Hash() != decl.Hash() {
			t.Errorf("%s differs from its declaration in more than max_tokens: %+v", name, b)
		}
	}
	g := p.Arm("grid-0.6-4")
	if g.Sampling.Temperature == nil || *g.Sampling.Temperature != 0.6 || g.Extra["n_probs"] != float64(4) {
		t.Errorf("grid arm %+v", g)
	}
	hashes := map[string]bool{}
	for _, a := range p.Arms {
		hashes[a.Hash()] = true
	}
	if len(hashes) != len(p.Arms) {
		t.Errorf("%d distinct hashes for %d arms", len(hashes), len(p.Arms))
	}
	if len(p.Slots) != len(p.Arms) {
		t.Errorf("%d slots", len(p.Slots))
	}
	data, _ := p.Encode()
	var back struct {
		Sweeps []SweepRecord `json:"sweeps"`
	}
	json.Unmarshal(data, &back)
	if len(back.Sweeps) != 2 || back.Sweeps[0].Name != "cap" || back.Sweeps[0].Fields[0] != "max_tokens" ||
		len(back.Sweeps[0].Arms) != 3 || string(back.Sweeps[0].Arms[1].Values[0]) != "16384" ||
		back.Sweeps[1].Name != "grid" || len(back.Sweeps[1].Fields) != 2 || len(back.Sweeps[1].Arms) != 4 {
		t.Errorf("registered sweeps %s", data)
	}
}

func TestSweepRejects(t *testing.T) {
	tests := []struct{ name, old, new, want string }{
		{"unknown setting", "field: max_tokens", "field: max_token", `arms[1].sweep[0].field: "max_token" is not an arm setting`},
		{"typo in a nested setting", "field: sampling.temperature", "field: sampling.temprature", `arms[2].sweep[0].field`},
		{"wrong type", "values: [32768, 16384, 65536]", "values: [32768, lots]", `"max_tokens" = "lots"`},
		{"the name", "field: max_tokens", "field: name", "not a setting that can be changed"},
		{"no values", "values: [32768, 16384, 65536]", "values: []", "arms[1].sweep[0].values: lists no value"},
		{"names collide", "values: [32768, 16384, 65536]", "values: [32768, 32768]", `duplicate arm "cap32768"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := strings.Replace(sweepPlan, tt.old, tt.new, 1)
			if plan == sweepPlan {
				t.Fatalf("plan lacks %q", tt.old)
			}
			_, _, err := LoadPlan(writePlan(t, plan, armB))
			var pe *PlanError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "plan.yaml") {
				t.Fatalf("err %v, want a PlanError naming plan.yaml and %q", err, tt.want)
			}
		})
	}
}
