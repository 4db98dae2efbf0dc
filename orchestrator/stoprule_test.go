package orchestrator

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

func TestStopRuleInPlan(t *testing.T) {
	p, _, err := LoadPlan(writePlan(t, goodPlan+"stop: {half_width: 0.03}\n", armB))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Stop
	if s == nil || s.Baseline != "a" || s.Candidate != "b" || s.MinPairs != 4 || s.Mixing != 2 ||
		s.ExcludesOne == nil || !*s.ExcludesOne || s.Method != evalctl.StopMethod {
		t.Fatalf("stop rule %+v", s)
	}
	plain, _, err := LoadPlan(writePlan(t, goodPlan, armB))
	if err != nil {
		t.Fatal(err)
	}
	with, _ := p.Encode()
	without, _ := plain.Encode()
	if !strings.Contains(string(with), `"half_width": 0.03`) || !strings.Contains(string(with), `"method": "`+evalctl.StopMethod) ||
		strings.Contains(string(without), `"stop"`) {
		t.Errorf("plan.json with the rule:\n%s", with)
	}
}

func TestStopRuleMistakes(t *testing.T) {
	third := "  - {name: c, endpoint: {base_url: \"http://127.0.0.1:1\", model: m}}\n"
	for _, tc := range []struct{ extra, want string }{
		{"stop: {min_pairs: 3}\n", "stop.half_width: is required"},
		{"stop: {half_width: 0.03, candidate: z, baseline: a}\n", `stop.candidate: "z" is no arm of the plan`},
		{"stop: {half_width: 0.03, candidate: a, baseline: a}\n", `stop.candidate: is the baseline ("a")`},
		{"stop: {half_width: 0.03, min_pairs: 1}\n", "stop.min_pairs: 1 is out of range"},
		{"stop: {half_width: 0.03, mixng: 1}\n", `did you mean "mixing"?`},
	} {
		_, _, err := LoadPlan(writePlan(t, goodPlan+tc.extra, armB))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.extra, err, tc.want)
		}
	}
	plan := strings.Replace(goodPlan, "  - file: arm-b.yaml\n", "  - file: arm-b.yaml\n"+third, 1)
	_, _, err := LoadPlan(writePlan(t, plan+"stop: {half_width: 0.03}\n", armB))
	if err == nil || !strings.Contains(err.Error(), "stop.baseline: is required when the plan has 3 arms") {
		t.Errorf("three arms: %v", err)
	}
}

func measuredAttempt(arm, c, rep string, tps float64) *evalctl.Attempt {
	tok := int64(20000)
	sec := float64(tok) / tps
	return &evalctl.Attempt{Arm: arm, Case: c, Repeat: rep, State: evalctl.Completed,
		Measurements: &evalctl.Measurements{NativeOutputTokens: &tok, DecodeSeconds: &sec}}
}

// The rule counts only pairs complete in both arms, never before its
// minimum, and stops on a ratio that excludes 1.
func TestStopState(t *testing.T) {
	yes := true
	rule := &StopRule{Baseline: "a", Candidate: "b", HalfWidth: 0.01, MinPairs: 4, ExcludesOne: &yes, Mixing: 2}
	var atts []*evalctl.Attempt
	noise := []float64{0.01, -0.02, 0.015, -0.005, 0.02, 0, -0.01, 0.005}
	for i, n := range noise {
		c := string(rune('p' + i))
		atts = append(atts, measuredAttempt("a", c, "r1", 60), measuredAttempt("b", c, "r1", 60*1.8*math.Exp(n)))
	}
	// An attempt of the candidate without its pair, and one not measured.
	atts = append(atts, measuredAttempt("b", "lonely", "r1", 200), &evalctl.Attempt{Arm: "a", Case: "lonely", Repeat: "r1", State: evalctl.InfraFailed})
	for n := 1; n <= len(noise); n++ {
		st := stopState(rule, atts[:2*n])
		if st.Pairs != n {
			t.Fatalf("%d pairs read as %d", n, st.Pairs)
		}
		if st.Met != (n >= 4) {
			t.Errorf("%d pairs: met %v (interval %v..%v)", n, st.Met, st.Low, st.High)
		}
	}
	st := stopState(rule, atts)
	if st.Pairs != len(noise) || !st.ExcludesOne || *st.HalfWidth <= rule.HalfWidth {
		t.Errorf("all: %+v", st)
	}
	if w := StopWords(rule, st); !strings.Contains(w, "it excludes 1") || !strings.Contains(w, "over 8 complete pairs") {
		t.Errorf("words %q", w)
	}
	if !Resumable(ErrStoppedByRule) || !errors.Is(ErrStoppedByRule, ErrStoppedByRule) {
		t.Error("a run stopped by rule is not resumable")
	}
}
