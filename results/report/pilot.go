package report

import (
	"math"
	"sort"

	"github.com/evalctl/evalctl/results/power"
)

// Pilot is what a finished (or partly finished) paired cohort says about
// the spread a sample size needs: per complete pair, the log of the
// candidate's decode TPS over the baseline's, and per paired scored
// attempt, whether the arms agree on functional; and the task seconds per
// attempt of each arm. Null means the pilot cannot say.
type Pilot struct {
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	// SpeedPairs counts the pairs (same case, same repeat) measured in
	// both arms; LogRatios are their log decode-TPS ratios, in slot
	// order of the candidate's attempt.
	SpeedPairs   int       `json:"speed_pairs"`
	LogRatios    []float64 `json:"log_ratios"`
	LogRatioMean *float64  `json:"log_ratio_mean"`
	LogRatioSD   *float64  `json:"log_ratio_sd"`
	// OutcomePairs counts the pairs scored in both arms; Improves and
	// Regresses the candidate's functional wins and losses among them.
	OutcomePairs int `json:"outcome_pairs"`
	Improves     int `json:"improves"`
	Regresses    int `json:"regresses"`
	BothPass     int `json:"both_pass"`
	// BaselineTaskSeconds and CandidateTaskSeconds are each arm's task
	// seconds per measured attempt (null without one).
	BaselineTaskSeconds  *float64 `json:"baseline_task_seconds_per_attempt"`
	CandidateTaskSeconds *float64 `json:"candidate_task_seconds_per_attempt"`
}

// PilotOf reads the pilot figures of the candidate against the baseline
// from their rows (attempts out of the plan, replaced ones, are left out).
func PilotOf(baseName, candName string, baseRows, candRows []*Row) Pilot {
	p := Pilot{Baseline: baseName, Candidate: candName, LogRatios: []float64{}}
	bi, ci := pairIndex(baseRows), pairIndex(candRows)
	keys := make([]pairKey, 0, len(ci))
	for k := range ci {
		if bi[k] != nil {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return ci[keys[i]].Slot < ci[keys[j]].Slot })
	for _, k := range keys {
		b, c := bi[k], ci[k]
		if b.Status != Scored || c.Status != Scored {
			continue
		}
		p.addOutcome(*b.Functional, *c.Functional)
		if lr, ok := pairLogRatio(b, c); ok {
			p.LogRatios = append(p.LogRatios, lr)
		}
	}
	p.SpeedPairs = len(p.LogRatios)
	if m, sd, ok := power.Spread(p.LogRatios); ok {
		p.LogRatioMean, p.LogRatioSD = &m, &sd
	}
	p.BaselineTaskSeconds = taskSecondsPerAttempt(baseRows)
	p.CandidateTaskSeconds = taskSecondsPerAttempt(candRows)
	return p
}

func (p *Pilot) addOutcome(base, cand bool) {
	p.OutcomePairs++
	switch {
	case base && cand:
		p.BothPass++
	case cand:
		p.Improves++
	case base:
		p.Regresses++
	}
}

// pairLogRatio is log(candidate decode TPS / baseline decode TPS) of one
// pair, when both attempts are measured with tokens and decode time.
func pairLogRatio(b, c *Row) (float64, bool) {
	if !b.measured() || !c.measured() || *b.DecodeSeconds <= 0 || *c.DecodeSeconds <= 0 ||
		*b.NativeOutputTokens <= 0 || *c.NativeOutputTokens <= 0 {
		return 0, false
	}
	bt := float64(*b.NativeOutputTokens) / *b.DecodeSeconds
	ct := float64(*c.NativeOutputTokens) / *c.DecodeSeconds
	return math.Log(ct / bt), true
}

func taskSecondsPerAttempt(rows []*Row) *float64 {
	var sum float64
	n := 0
	for _, r := range rows {
		if r.inPlan() && r.measured() {
			sum += *r.TaskSeconds
			n++
		}
	}
	if n == 0 {
		return nil
	}
	v := sum / float64(n)
	return &v
}
