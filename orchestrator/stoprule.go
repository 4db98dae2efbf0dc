package orchestrator

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/results/power"
	"github.com/evalctl/evalctl/results/runstore"
)

// ErrStoppedByRule is returned when the plan's stop rule settled the speed
// ratio and the run stopped; resuming it runs the rest of the plan.
var ErrStoppedByRule = errors.New("stopped by rule")

// checkStop fills the stop rule's defaults and checks it against the
// plan's arms.
func checkStop(p *Plan, c *planCheck) {
	s := p.Stop
	if s == nil {
		return
	}
	if err := yamlcheck.FillDefaults(s); err != nil {
		panic(err) // a tag that is no value of its field; TestPlanDefaults loads them all
	}
	s.Method = evalctl.StopMethod
	if len(p.Arms) == 2 && s.Baseline == "" && s.Candidate == "" {
		s.Baseline, s.Candidate = p.Arms[0].Name, p.Arms[1].Name
	}
	for _, f := range []struct{ field, arm string }{{"baseline", s.Baseline}, {"candidate", s.Candidate}} {
		switch {
		case f.arm == "":
			c.bad("stop."+f.field, "is required when the plan has %d arms: name the arm (the rule compares two)", len(p.Arms))
		case p.Arm(f.arm) == nil:
			c.bad("stop."+f.field, "%q is no arm of the plan", f.arm)
		}
	}
	if s.Baseline != "" && s.Baseline == s.Candidate {
		c.bad("stop.candidate", "is the baseline (%q): the rule compares two different arms", s.Baseline)
	}
	if !(s.HalfWidth > 0 && s.HalfWidth < 1) {
		c.bad("stop.half_width", "is required: the target half-width of the speed ratio's interval, a fraction above 0 and below 1 (0.03 for ±3%%)")
	}
	if s.MinPairs < 2 {
		c.bad("stop.min_pairs", "must be at least 2 (an interval needs two pairs)")
	}
	if !(s.Mixing >= 0.01 && s.Mixing <= 100) {
		c.bad("stop.mixing", "must be between 0.01 and 100")
	}
}

// stopState reads the stop rule from the attempts recorded so far: the
// complete pairs of its two arms (same case and repeat label, both
// completed with tokens and decode time) in the order they completed.
func stopState(rule *StopRule, attempts []*evalctl.Attempt) power.State {
	type key struct{ c, r string }
	base, cand := map[key]float64{}, map[key]float64{}
	var order []key
	for _, a := range attempts {
		tps, ok := attemptTPS(a)
		if !ok {
			continue
		}
		k := key{a.Case, a.Repeat}
		switch a.Arm {
		case rule.Baseline:
			base[k] = tps
		case rule.Candidate:
			cand[k] = tps
		default:
			continue
		}
		order = append(order, k)
	}
	var seq power.Sequence
	seen := map[key]bool{}
	for _, k := range order {
		b, okb := base[k]
		c, okc := cand[k]
		if okb && okc && !seen[k] {
			seen[k] = true
			seq.Add(math.Log(c / b))
		}
	}
	return power.Settled(&seq, rule.MinPairs, rule.HalfWidth, rule.ExcludesOne == nil || *rule.ExcludesOne, rule.Mixing)
}

// attemptTPS is a completed attempt's decode TPS, when measured.
func attemptTPS(a *evalctl.Attempt) (float64, bool) {
	if a.State != evalctl.Completed {
		return 0, false
	}
	m := a.Measurements
	if m == nil || m.NativeOutputTokens == nil || m.DecodeSeconds == nil || *m.NativeOutputTokens <= 0 || *m.DecodeSeconds <= 0 {
		return 0, false
	}
	return float64(*m.NativeOutputTokens) / *m.DecodeSeconds, true
}

// StopWords says what the rule read: the interval and why it is settled.
func StopWords(rule *StopRule, st power.State) string {
	if st.Low == nil {
		return fmt.Sprintf("%s vs %s: %d complete pairs, the interval is not yet bounded", rule.Candidate, rule.Baseline, st.Pairs)
	}
	why := fmt.Sprintf("its half-width %.1f%% is within the target %.1f%%", 100**st.HalfWidth, 100*rule.HalfWidth)
	if *st.HalfWidth > rule.HalfWidth {
		why = "it excludes 1"
	}
	return fmt.Sprintf("%s vs %s: decode TPS ratio %.3f, anytime-valid 95%% interval %.3f to %.3f over %d complete pairs: %s",
		rule.Candidate, rule.Baseline, *st.Ratio, *st.Low, *st.High, st.Pairs, why)
}

// speedLog holds the measured attempts the stop rule reads: those of
// earlier sessions that completed, and this session's from the moment
// their model part ended (their grading, which the rule does not need,
// may still run); an attempt that then ends otherwise than completed is
// dropped.
type speedLog struct {
	mu    sync.Mutex
	order []string
	byID  map[string]*evalctl.Attempt
}

func newSpeedLog(attempts []*evalctl.Attempt) *speedLog {
	l := &speedLog{byID: map[string]*evalctl.Attempt{}}
	for _, a := range attempts {
		if a.State == evalctl.Completed {
			l.add(a)
		}
	}
	return l
}

// add records the attempt's measured speed (a copy: the attempt goes on).
func (l *speedLog) add(a *evalctl.Attempt) {
	if l == nil || a.Measurements == nil {
		return
	}
	m := *a.Measurements
	c := &evalctl.Attempt{ID: a.ID, Arm: a.Arm, Case: a.Case, Repeat: a.Repeat, State: evalctl.Completed, Measurements: &m}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID[a.ID] == nil {
		l.order = append(l.order, a.ID)
	}
	l.byID[a.ID] = c
}

// drop forgets an attempt that did not complete.
func (l *speedLog) drop(id string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.byID, id)
}

func (l *speedLog) attempts() []*evalctl.Attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*evalctl.Attempt
	for _, id := range l.order {
		if a := l.byID[id]; a != nil {
			out = append(out, a)
		}
	}
	return out
}

// stopRule returns why the plan's stop rule stops the run before the next
// attempt, or "". The rule is off in a run it stopped once: resuming that
// run runs the rest of the plan.
func (r *runner) stopRule() string {
	rule := r.plan.Stop
	if rule == nil || r.ruleOff || r.speeds == nil {
		return ""
	}
	st := stopState(rule, r.speeds.attempts())
	if !st.Met {
		return ""
	}
	return StopWords(rule, st)
}

// ruleStoppedBefore reports whether the stop rule stopped this run in an
// earlier session (its event is in the log).
func ruleStoppedBefore(events []runstore.Event) bool {
	for _, e := range events {
		if e.Kind == evalctl.EventStopRule {
			return true
		}
	}
	return false
}
