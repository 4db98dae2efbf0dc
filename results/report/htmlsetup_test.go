package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// settingsOfJSON is how the report flattened an arm when it read plan.json
// as untyped JSON: the reference the typed settings must match line for
// line.
func settingsOfJSON(a map[string]any) []string {
	var out []string
	add := func(k string, v any) {
		switch x := v.(type) {
		case nil:
		case map[string]any:
			keys := make([]string, 0, len(x))
			for kk := range x {
				keys = append(keys, kk)
			}
			sort.Strings(keys)
			var parts []string
			for _, kk := range keys {
				if kk == "api_key_env" {
					continue
				}
				b, _ := json.Marshal(x[kk])
				parts = append(parts, kk+" "+string(b))
			}
			if len(parts) > 0 {
				out = append(out, k+": "+strings.Join(parts, ", "))
			}
		default:
			b, _ := json.Marshal(x)
			out = append(out, k+": "+string(b))
		}
	}
	if ep, ok := a["endpoint"].(map[string]any); ok {
		add("model", ep["model"])
	}
	for _, k := range []string{"max_tokens", "sampling", "reasoning", "budgets", "stream", "profile", "extra"} {
		add(k, a[k])
	}
	return out
}

// TestSettingsAsPlanJSONSays: the HTML report's settings lines of an arm,
// read through the typed plan, are those the untyped reading of the same
// plan.json gave: every field set (the stored record), none set, and the
// cases in between (a null extra, a hidden api_key_env, null budgets).
func TestSettingsAsPlanJSONSays(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("..", "..", "testdata", "records", "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plan evalctl.Plan
	if err := json.Unmarshal(full, &plan); err != nil {
		t.Fatal(err)
	}
	temp, topK, think, wall := 0.6, 40, false, 1800.0
	arms := append(plan.Arms,
		evalctl.Arm{Name: "bare", Endpoint: evalctl.Endpoint{Model: "m"}},
		evalctl.Arm{Name: "some", Endpoint: evalctl.Endpoint{Model: "q4", APIKeyEnv: "KEY"}, MaxTokens: 32768,
			Sampling:  evalctl.Sampling{Temperature: &temp, TopK: &topK},
			Reasoning: evalctl.Reasoning{Thinking: &think}, Budgets: evalctl.Budgets{WallSeconds: &wall},
			Extra: map[string]any{"api_key_env": "x", "n_probs": nil, "chat_template_kwargs": map[string]any{"a": 1.0}}},
		evalctl.Arm{Name: "hidden", Extra: map[string]any{"api_key_env": "x"}, Profile: "p.yaml"},
	)
	for _, a := range arms {
		data, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var untyped map[string]any
		if err := json.Unmarshal(data, &untyped); err != nil {
			t.Fatal(err)
		}
		want := settingsOfJSON(untyped)
		if got := settings(&a); !slices.Equal(got, want) {
			t.Errorf("arm %s: settings\n%q\nwant\n%q", a.Name, got, want)
		}
	}
}
