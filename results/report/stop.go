package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/power"
	"github.com/evalctl/evalctl/results/runstore"
)

// StopReport is what a run with a stop rule settled: the rule as
// registered, whether it stopped the run, the speed ratio's anytime-valid
// interval over the pairs in the report, and the outcome comparison, which
// the rule never stops, with the pairs it would still need.
type StopReport struct {
	Rule evalctl.StopRule `json:"rule"`
	// StoppedByRule is true when the rule stopped a run of the report and
	// it was not resumed since.
	StoppedByRule bool        `json:"stopped_by_rule"`
	Speed         power.State `json:"speed"`
	SpeedWords    string      `json:"speed_words"`
	// Functional is the paired functional comparison; FunctionalSettled
	// says whether McNemar's exact test found a difference at 5%.
	FunctionalSettled bool `json:"functional_settled"`
	// FunctionalNeed is what detecting a five-point difference with 80%
	// power takes, from this run's discordance (unknown when it is too
	// small to say).
	FunctionalNeed  power.Need `json:"functional_need"`
	FunctionalWords string     `json:"functional_words"`
}

// addStopReport adds what a run's stop rule settled to the report the
// report command prints (exports leave it out: their checker recomputes
// every figure of aggregates.json, and the rule's reading is the report's
// words on them, not a figure of its own).
func addStopReport(rep *Report, in *Input) {
	if in.Stop == nil {
		return
	}
	g := groupRows(in.Rows)
	rep.Stop = stopReport(in.Stop, g.byArm)
	state := "the stop rule did not stop the run"
	if rep.Stop.StoppedByRule {
		state = "stopped by rule (resumable: 'evalctl run --resume' runs the rest of the plan)"
	}
	rep.Notes = append(rep.Notes, state, rep.Stop.SpeedWords, rep.Stop.FunctionalWords)
}

// StopInput is a run's stop rule as its plan registered it, and whether
// the rule stopped the run.
type StopInput struct {
	Rule          evalctl.StopRule `json:"rule"`
	StoppedByRule bool             `json:"stopped_by_rule"`
}

// planStop reads the stop rule a registered plan recorded (nil for none).
func planStop(data []byte) (*evalctl.StopRule, error) {
	var p evalctl.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return p.Stop, nil
}

// stoppedByRule reports whether the log's last session ended with the
// stop rule: a stop_rule event after the last registration or resume.
func stoppedByRule(events []runstore.Event) bool {
	stopped := false
	for _, e := range events {
		switch e.Kind {
		case evalctl.EventStopRule:
			stopped = true
		case evalctl.EventResumed:
			stopped = false
		}
	}
	return stopped
}

// outcomeDifference and outcomePower are what the report of a stopped run
// sizes the outcome question for.
const (
	outcomeDifference = 0.05
	outcomePower      = 0.8
)

// stopReport reads the rule over the report's rows.
func stopReport(si *StopInput, byArm map[string][]*Row) *StopReport {
	rule := si.Rule
	sr := &StopReport{Rule: rule, StoppedByRule: si.StoppedByRule}
	p := PilotOf(rule.Baseline, rule.Candidate, byArm[rule.Baseline], byArm[rule.Candidate])
	var seq power.Sequence
	for _, x := range p.LogRatios {
		seq.Add(x)
	}
	excl := rule.ExcludesOne == nil || *rule.ExcludesOne
	sr.Speed = power.Settled(&seq, rule.MinPairs, rule.HalfWidth, excl, rule.Mixing)
	sr.SpeedWords = speedWords(rule, sr.Speed)
	f := FiguresOf(p)
	sr.FunctionalNeed = power.Plan(f, power.Request{HalfWidth: rule.HalfWidth, Difference: outcomeDifference, Power: outcomePower, Mixing: rule.Mixing}).Outcome
	pv := McNemarExact(p.Improves, p.Regresses)
	sr.FunctionalSettled = p.OutcomePairs > 0 && pv < 0.05
	sr.FunctionalWords = functionalWords(p, pv, sr)
	return sr
}

func speedWords(rule evalctl.StopRule, st power.State) string {
	head := fmt.Sprintf("speed (stop rule: ±%.1f%% or excluding 1, at least %d pairs): %s vs %s", 100*rule.HalfWidth, rule.MinPairs, rule.Candidate, rule.Baseline)
	if st.Low == nil {
		return fmt.Sprintf("%s: %d complete pairs, the anytime-valid interval is not yet bounded; not settled", head, st.Pairs)
	}
	verdict := "not settled"
	switch {
	case st.Met && *st.HalfWidth <= rule.HalfWidth:
		verdict = "settled to the target half-width"
	case st.Met:
		verdict = "settled: the interval excludes 1 (its size not to the target)"
	}
	return fmt.Sprintf("%s: ratio %.3f, anytime-valid 95%% interval %.3f to %.3f (±%.1f%%) over %d complete pairs; %s",
		head, *st.Ratio, *st.Low, *st.High, 100**st.HalfWidth, st.Pairs, verdict)
}

func functionalWords(p Pilot, pv float64, sr *StopReport) string {
	cand, base := p.BothPass+p.Improves, p.BothPass+p.Regresses
	head := fmt.Sprintf("functional (never stopped by the speed rule): %s %d vs %s %d of %d pairs (McNemar exact p = %s)",
		p.Candidate, cand, p.Baseline, base, p.OutcomePairs, formatP(pv))
	if sr.FunctionalSettled {
		return head + "; the difference is unlikely to be noise"
	}
	n := sr.FunctionalNeed
	if n.Pairs == nil {
		return fmt.Sprintf("%s; no evidence either way; how many pairs a %d-point difference would need is unknown: %s", head, int(100*outcomeDifference), n.Unknown)
	}
	more := max(*n.Pairs-p.OutcomePairs, 0)
	hours := ""
	if n.GPUHours != nil {
		hours = fmt.Sprintf(" (%d in all, %.1f GPU hours)", *n.Pairs, *n.GPUHours)
	}
	return fmt.Sprintf("%s; no evidence either way; %d more pairs%s would be needed to detect a %d-point difference with %d%% power at this run's discordance",
		head, more, hours, int(100*outcomeDifference), int(100*outcomePower))
}

// readStop records the run's stop rule in in (the first run's only), and
// whether it stopped the run.
func readStop(in *Input, dir string, tl *Timeline) error {
	data, err := os.ReadFile(filepath.Join(dir, runstore.PlanFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read plan of %s: %w", dir, err)
	}
	if err := addStop(in, data, tl); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, runstore.PlanFile), err)
	}
	return nil
}

// addStop records the stop rule of a registered plan (its plan.json) in
// in, from the run directory or from an export alike.
func addStop(in *Input, plan []byte, tl *Timeline) error {
	rule, err := planStop(plan)
	if err != nil || rule == nil {
		return err
	}
	if in.Stop == nil {
		in.Stop = &StopInput{Rule: *rule}
	}
	in.Stop.StoppedByRule = in.Stop.StoppedByRule || (tl != nil && tl.StoppedByRule)
	return nil
}
