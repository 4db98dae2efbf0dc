package screen

import (
	"strings"
	"testing"
	"time"
)

func timed(s *Sample, start, end int) *Sample {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	a, b := t0.Add(time.Duration(start)*time.Minute), t0.Add(time.Duration(end)*time.Minute)
	s.StartedAt, s.FinishedAt = &a, &b
	return s
}

// Drift is computed only from baselines measured in bracket order: a
// baseline_start sample re-measured (on resume) after the modes ran makes
// the drift null, with the reason.
func TestDriftNeedsBracketOrder(t *testing.T) {
	legs := []Leg{{0, BaselineStart, "a"}, {1, "b", "b"}, {2, BaselineEnd, "a"}}
	inOrder := []*Sample{
		timed(sample(BaselineStart, 8192, 1024, 20000, 28), 0, 1),
		timed(sample("b", 8192, 1024, 16000, 24), 2, 3),
		timed(sample(BaselineEnd, 8192, 1024, 19000, 28), 4, 5),
	}
	_, drift := Aggregates(legs, []int{8192}, 1, inOrder)
	if drift[0].DecodeDriftPercent == nil || drift[0].DriftNullReason != "" {
		t.Fatalf("in order: drift %v (%q)", drift[0].DecodeDriftPercent, drift[0].DriftNullReason)
	}
	late := []*Sample{
		timed(sample(BaselineStart, 8192, 1024, 20000, 28), 6, 7), // re-measured after the modes
		timed(sample("b", 8192, 1024, 16000, 24), 2, 3),
		timed(sample(BaselineEnd, 8192, 1024, 19000, 28), 4, 5),
	}
	_, drift = Aggregates(legs, []int{8192}, 1, late)
	if d := drift[0]; d.DecodeDriftPercent != nil || d.EndToEndDriftPercent != nil || !strings.Contains(d.DriftNullReason, "baseline_start") {
		t.Fatalf("out of order: drift %v (%q), want null with the reason", d.DecodeDriftPercent, d.DriftNullReason)
	}
}

// A mode adds request fields (logit_bias) to its samples; the fields that
// define a sample cannot be overridden.
func TestModeRequestFields(t *testing.T) {
	sc := &Screen{Spec: Spec{Modes: []ModeSpec{{Name: "m", Request: map[string]any{"logit_bias": 1}}}}}
	if sc.modeRequest("m")["logit_bias"] != 1 || sc.modeRequest("other") != nil {
		t.Fatalf("mode request lookup")
	}
}
