package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/power"
	"github.com/evalctl/evalctl/results/runstore"
)

func TestStoppedByRule(t *testing.T) {
	ev := func(k evalctl.EventKind) runstore.Event { return runstore.Event{Kind: k} }
	for _, tc := range []struct {
		events []runstore.Event
		want   bool
	}{
		{[]runstore.Event{ev(evalctl.EventRegistered), ev(evalctl.EventStopRule)}, true},
		{[]runstore.Event{ev(evalctl.EventRegistered), ev(evalctl.EventStopRule), ev(evalctl.EventResumed)}, false},
		{[]runstore.Event{ev(evalctl.EventRegistered), ev(evalctl.EventGuard)}, false},
	} {
		if got := NewTimeline(tc.events).StoppedByRule; got != tc.want {
			t.Errorf("%v: %v", tc.events, got)
		}
	}
}

// A run stopped by the speed rule after 6 pairs at a ratio of 1.8: the
// speed is settled, functional (5 vs 4 of 6) is not, and the report says
// how many more pairs a five-point difference needs, as power computes.
func TestStopReportSaysWhatIsSettled(t *testing.T) {
	in := &Input{}
	plan := []byte(`{"stop": {"baseline": "a", "candidate": "b", "half_width": 0.03, "min_pairs": 4, "excludes_one": true, "mixing": 2, "method": "m"}}`)
	if err := addStop(in, plan, &Timeline{StoppedByRule: true}); err != nil || in.Stop == nil || !in.Stop.StoppedByRule {
		t.Fatalf("stop input %+v, %v", in.Stop, err)
	}
	byArm := map[string][]*Row{}
	for i := 0; i < 6; i++ {
		c := fmt.Sprintf("case-%d", i)
		b := pilotRow("a", c, i != 0 && i != 1, 20000, 20000/60.0)
		k := pilotRow("b", c, i != 2, 20000, 20000/(60*1.8*math.Exp(0.05*float64(i%3-1))))
		b.Slot, k.Slot = 2*i, 2*i+1
		byArm["a"] = append(byArm["a"], b)
		byArm["b"] = append(byArm["b"], k)
	}
	sr := stopReport(in.Stop, byArm)
	if !sr.Speed.Met || !sr.Speed.ExcludesOne || sr.Speed.Pairs != 6 || !strings.Contains(sr.SpeedWords, "settled: the interval excludes 1") {
		t.Errorf("speed %+v: %s", sr.Speed, sr.SpeedWords)
	}
	if sr.FunctionalSettled || !strings.Contains(sr.FunctionalWords, "b 5 vs a 4 of 6 pairs") || !strings.Contains(sr.FunctionalWords, "no evidence either way") {
		t.Errorf("functional: %s", sr.FunctionalWords)
	}
	want, _ := power.OutcomePairs(3.0/6, 0.05, 0.8)
	if sr.FunctionalNeed.Pairs == nil || *sr.FunctionalNeed.Pairs != want ||
		!strings.Contains(sr.FunctionalWords, fmt.Sprintf("%d more pairs (%d in all", want-6, want)) {
		t.Errorf("need %+v: %s", sr.FunctionalNeed, sr.FunctionalWords)
	}
}

func TestAddStopReportNotes(t *testing.T) {
	in := &Input{Stop: &StopInput{Rule: evalctl.StopRule{Baseline: "a", Candidate: "b", HalfWidth: 0.03, MinPairs: 4, Mixing: 2}, StoppedByRule: true}}
	for i := 0; i < 3; i++ {
		c := fmt.Sprintf("c%d", i)
		in.Rows = append(in.Rows, *pilotRow("a", c, true, 1000, 10), *pilotRow("b", c, true, 1000, 9))
	}
	rep := &Report{}
	addStopReport(rep, in)
	words := strings.Join(rep.Notes, "\n")
	if rep.Stop == nil || !strings.Contains(words, "stopped by rule (resumable") || !strings.Contains(words, "not yet bounded; not settled") ||
		!strings.Contains(words, "how many pairs a 5-point difference would need is unknown: pilot too small") {
		t.Errorf("notes:\n%s", words)
	}
	addStopReport(&Report{}, &Input{}) // no rule: nothing to add, no panic
}
