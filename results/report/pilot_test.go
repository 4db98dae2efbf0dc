package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/power"
)

func pilotRow(arm, c string, functional bool, tok int64, sec float64) *Row {
	task := sec + 10
	return &Row{Arm: arm, Case: c, Repeat: "repeat-1", Status: Scored, Functional: &functional, Delivered: &functional,
		NativeOutputTokens: &tok, DecodeSeconds: &sec, TaskSeconds: &task}
}

// A pilot of three pairs cannot estimate the speed spread, and one
// discordant pair cannot estimate the discordance: both needs are unknown
// with the reason, never a number.
func TestPilotTooSmall(t *testing.T) {
	base := []*Row{pilotRow("a", "x", true, 1000, 10), pilotRow("a", "y", true, 1000, 10), pilotRow("a", "z", false, 1000, 10)}
	cand := []*Row{pilotRow("b", "x", true, 1100, 10), pilotRow("b", "y", true, 1200, 10), pilotRow("b", "z", false, 1050, 10)}
	cand[2].Status = Unscored // an attempt without an outcome is no pair
	p := PilotOf("a", "b", base, cand)
	if p.SpeedPairs != 2 || p.OutcomePairs != 2 || p.LogRatioSD == nil {
		t.Fatalf("pilot %+v", p)
	}
	ans := power.Plan(FiguresOf(p), power.Request{HalfWidth: 0.02, Difference: 0.05, Power: 0.8, Mixing: power.DefaultMixing})
	if ans.Speed.Pairs != nil || !strings.Contains(ans.Speed.Unknown, power.ErrPilotTooSmall.Error()) {
		t.Errorf("speed %+v", ans.Speed)
	}
	if ans.Outcome.Pairs != nil || !strings.Contains(ans.Outcome.Unknown, "0 discordant of 2") {
		t.Errorf("outcome %+v", ans.Outcome)
	}
	if _, err := power.PilotSD(p.LogRatios); !errors.Is(err, power.ErrPilotTooSmall) {
		t.Error(err)
	}
	if *p.CandidateTaskSeconds != 20 {
		t.Errorf("task seconds %v", *p.CandidateTaskSeconds)
	}
}
