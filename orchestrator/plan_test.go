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
	if b == nil || *b.Budgets.WallSeconds != 60 || *b.Budgets.ToolCalls != 120 || *b.Sampling.TopK != 20 {
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
		{"unknown field", goodPlan + "colour: blue\n", armB, []string{"plan.yaml:13: ", `unknown field "colour"`}},
		{"unknown arm field", goodPlan, armB + "tempreature: 1\n", []string{"arm-b.yaml", "tempreature"}},
		{"missing case", strings.Replace(goodPlan, "[adder, tsadd]", "[adder, nosuch]", 1), armB, []string{"plan.yaml", "cases[1]", "nosuch"}},
		{"duplicate arm", goodPlan, strings.Replace(armB, "name: b", "name: a", 1), []string{"arm-b.yaml:1: name: ", `duplicate arm "a" (arms[1] of plan.yaml)`}},
		{"duplicate label", strings.Replace(goodPlan, "repeat-2, seed: 202", "repeat-1, seed: 202", 1), armB, []string{"repeats[1].label", "duplicate"}},
		{"two labels one seed", strings.Replace(goodPlan, "seed: 202", "seed: 101", 1), armB, []string{"repeats[1].seed", "share seed 101"}},
		{"missing arm file", strings.Replace(goodPlan, "arm-b.yaml", "arm-c.yaml", 1), armB, []string{"arms[1].file", "arm-c.yaml"}},
		{"no model", goodPlan, strings.Replace(armB, "model: noop", "model: \"\"", 1), []string{"arm-b.yaml:2: endpoint.model: is required (arms[1] of plan.yaml)"}},
		{"bad url", strings.Replace(goodPlan, "http://127.0.0.1:1", "127.0.0.1:1", 1), armB, []string{"arms[0].endpoint.base_url"}},
		{"missing suite", strings.Replace(goodPlan, "suite: SUITE", "suite: /nonexistent/suite", 1), armB, []string{"plan.yaml:2: suite: ", "/nonexistent/suite"}},
		{"fingerprint mismatch", goodPlan + "suite_fingerprint: abc\n", armB, []string{"suite_fingerprint", "the suite changed"}},
		{"bad order", strings.Replace(goodPlan, "policy: interleaved", "policy: random", 1), armB, []string{"order.policy"}},
		{"negative breaker", goodPlan + "guards: {max_consecutive_infra_failures: -1}\n", armB, []string{"guards.max_consecutive_infra_failures"}},
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

// TestFullExampleLoads: the annotated example of every plan field is a
// valid plan.
func TestFullExampleLoads(t *testing.T) {
	p, _, err := LoadPlan("../examples/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Arms) != 2 || p.Arms[1].ProfileSHA256 == "" || p.Arms[0].Extra == nil {
		t.Errorf("arms %+v", p.Arms)
	}
}

// TestDeviceLabels: a device label is read from an arm's endpoint, is not
// part of the arm's pooling identity (nor is the URL), while sampling is.
func TestDeviceLabels(t *testing.T) {
	withDev := strings.Replace(goodPlan, `model: reference}`, `model: reference, device: gpu1}`, 1)
	p, _, err := LoadPlan(writePlan(t, withDev, armB))
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Arm("a"); a.Endpoint.Device != "gpu1" || deviceKey(a) != "gpu1" || deviceKey(p.Arm("b")) != "" {
		t.Errorf("devices %q %q", deviceKey(p.Arm("a")), deviceKey(p.Arm("b")))
	}
	a := *p.Arm("a")
	moved := a
	moved.Endpoint.BaseURL, moved.Endpoint.Device = "http://10.0.0.2:9999", "gpu7"
	if ArmIdentityOf(&a, nil).SHA256 != ArmIdentityOf(&moved, nil).SHA256 {
		t.Error("moving an arm to another host, port or device changed its pooling identity")
	}
	hot := a
	t7 := 0.7
	hot.Sampling.Temperature = &t7
	if id := ArmIdentityOf(&hot, nil); id.SHA256 == ArmIdentityOf(&a, nil).SHA256 || id.Fields["sampling.temperature"] != "0.7" {
		t.Errorf("a temperature change is not in the identity: %v", id.Fields)
	}
}

func TestExamplePlansLoad(t *testing.T) {
	for _, f := range []string{"../examples/dev24.yaml", "../examples/scripted24.yaml", "../examples/two-devices.yaml"} {
		p, s, err := LoadPlan(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(p.Slots) != 48 || s.ID() != "dev@1.1.0" {
			t.Errorf("%s: %d slots under %s, want the 2 x 24 development cohort", f, len(p.Slots), s.ID())
		}
	}
}

// TestPlanErrorMessages: every plan mistake the issue lists gives the field
// path, the line where it is, what was expected, "did you mean" for a
// misspelt name and the range for a number out of it; none names a Go type.
func TestPlanErrorMessages(t *testing.T) {
	const arm = `  - name: a
    endpoint: {base_url: "http://127.0.0.1:1", model: reference}
`
	head := "name: t\nsuite: SUITE\ncases: [adder]\nrepeats: [{label: r1, seed: 1}]\narms:\n" + arm // arms[0] ends on line 7
	tests := []struct {
		name, plan, arm string
		want            string // the whole message after the file name
	}{
		{"misspelt arm field", head + "    max_token: 100\n", armB,
			`:8: arms[0]: unknown field "max_token"; did you mean "max_tokens"?`},
		{"misspelt field in an arm file", head + "  - file: arm-b.yaml\n", armB + "tempreature: 1\n",
			`arm-b.yaml:5: unknown field "tempreature"; did you mean sampling.temperature?`},
		{"misspelt nested field", head + "    sampling: {temprature: 0.6}\n", armB,
			`:8: arms[0].sampling: unknown field "temprature"; did you mean "temperature"?`},
		{"quoted number", head + "    sampling:\n      temperature: \"0.6\"\n", armB,
			`:9: arms[0].sampling.temperature: expected a number, got the text "0.6" (drop the quotes)`},
		{"text for a whole number", head + "    max_tokens: lots\n", armB,
			`:8: arms[0].max_tokens: expected a whole number, got the text "lots"`},
		{"temperature out of range", head + "    sampling: {temperature: 6}\n", armB,
			`:8: arms[0].sampling.temperature: 6 is out of range: from 0 to 2`},
		{"top_p out of range", head + "  - name: b\n    endpoint: {base_url: \"http://127.0.0.1:1\", model: noop}\n    sampling: {top_p: 1.5}\n", armB,
			`:10: arms[1].sampling.top_p: 1.5 is out of range: from 0 to 1`},
		{"budget out of range", head + "    budgets: {tool_calls: -1}\n", armB,
			`:8: arms[0].budgets.tool_calls: -1 is out of range: at least 0`},
		{"mis-indented arm", head + "  - name: b\n   endpoint: {base_url: \"http://127.0.0.1:1\", model: noop}\n", armB,
			`:9: this line is indented by 3 spaces, which matches no enclosing block (open blocks start at column(s) 0, 2 counting from 0); line it up with the field or list item it belongs to`},
		{"mis-indented field", head + "    sampling:\n      temperature: 0.6\n     top_p: 0.9\n", armB,
			`:10: this line is indented by 5 spaces, which matches no enclosing block (open blocks start at column(s) 0, 2, 4 counting from 0); line it up with the field or list item it belongs to`},
		{"a tab", head + "\tmax_tokens: 5\n", armB,
			`:8: a tab indents this line; YAML indents with spaces only`},
		{"a list where a mapping goes", head + "    sampling: [0.6]\n", armB,
			`:8: arms[0].sampling: expected a mapping (name: value lines, or {name: value, ...}), got a list`},
		{"given twice", head + "    max_tokens: 5\n    max_tokens: 6\n", armB,
			`:9: arms[0].max_tokens: given twice (first on line 8)`},
		{"trailing document", head + "---\nname: u\n", armB,
			`: holds more than one YAML document (a line with ---); keep one`},
		{"trailing document in an arm file", head + "  - file: arm-b.yaml\n", armB + "---\nname: c\n",
			`arm-b.yaml: holds more than one YAML document (a line with ---); keep one`},
		{"semantic error on its line", head + "  - name: a\n    endpoint: {base_url: \"http://127.0.0.1:1\", model: noop}\n", armB,
			`:8: arms[1].name: duplicate arm "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadPlan(writePlan(t, tt.plan, tt.arm))
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a PlanError", err)
			}
			if !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("error\n  %s\nwant it to end with\n  %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "orchestrator.") || strings.Contains(err.Error(), "!!") || strings.Contains(err.Error(), "float64") {
				t.Errorf("error names Go or YAML internals: %s", err)
			}
		})
	}
}

// TestBudgetZero: an explicit 0 budget means no limit, as the agent reads
// it, also over a plan default; unset budgets take the plan's defaults,
// then DefaultBudgets; a command timeout of 0 cannot mean no limit and is
// refused at its line.
func TestBudgetZero(t *testing.T) {
	withDefaults := goodPlan + "defaults: {budgets: {tool_calls: 7, wall_seconds: 90}}\n"
	zeroArm := strings.Replace(armB, "budgets: {wall_seconds: 60}", "budgets: {wall_seconds: 0, generated_tokens: 0, tool_calls: 0}", 1)
	p, _, err := LoadPlan(writePlan(t, withDefaults, zeroArm))
	if err != nil {
		t.Fatal(err)
	}
	b, a := p.Arm("b").Budgets, p.Arm("a").Budgets
	if *b.WallSeconds != 0 || *b.GeneratedTokens != 0 || *b.ToolCalls != 0 || *b.CommandTimeoutSeconds != 120 {
		t.Errorf("arm b budgets %v %v %v %v, want 0 0 0 (no limit) and the default 120 s", *b.WallSeconds, *b.GeneratedTokens, *b.ToolCalls, *b.CommandTimeoutSeconds)
	}
	if *a.WallSeconds != 90 || *a.ToolCalls != 7 || *a.GeneratedTokens != 65536 {
		t.Errorf("arm a budgets %v %v %v, want the plan's 90 and 7, then the default 65536", *a.WallSeconds, *a.ToolCalls, *a.GeneratedTokens)
	}
	for _, tt := range []struct{ arm, want string }{
		{armB + "budgets: {command_timeout_seconds: 0}\n", "arm-b.yaml"},
		{strings.Replace(armB, "wall_seconds: 60", "command_timeout_seconds: 0", 1), "command_timeout_seconds: 0: a command the agent runs always has a timeout"},
		{strings.Replace(armB, "wall_seconds: 60", "tool_calls: -1", 1), "tool_calls"},
	} {
		_, _, err := LoadPlan(writePlan(t, goodPlan, tt.arm))
		var pe *PlanError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want a plan error containing %q", err, tt.want)
		}
	}
	_, _, err = LoadPlan(writePlan(t, goodPlan+"defaults: {budgets: {command_timeout_seconds: 0}}\n", armB))
	if err == nil || !strings.Contains(err.Error(), "plan.yaml:") || !strings.Contains(err.Error(), "defaults.budgets.command_timeout_seconds: 0") {
		t.Errorf("a zero default command timeout: got %v, want a plan error at its line", err)
	}
}
