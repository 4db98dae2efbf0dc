package power

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The simulated cohorts stand on figures of a real development cohort (a
// 24-attempt cohort per arm on one GPU): about 60 decode tokens per second,
// about 450 task seconds per attempt, tokens per attempt from 5K to 60K
// (mean about 26K), decode slowing as the context grows.
const (
	simBaseTPS      = 60.0
	simSlowdown     = 0.05 // decode 5% slower at 60K tokens than at 5K
	simCaseSpread   = 0.3  // log-sd of an arm's tokens around its case's
	simFullPairs    = 24
	simBaseTaskSecs = 10933.868 / 24
	simCandTaskSecs = 10793.86 / 24
)

// simNoise is the standard deviation of an attempt's log decode TPS about
// its arm's speed at its length: 2.5% in the benchmark; TestNoisierCohorts
// doubles it (about the spread of the report's synthetic dev24 cohort).
var simNoise = 0.025

// simAttempt draws one attempt's tokens and decode seconds for a case
// whose typical token count is caseTok, on an arm whose speed is ratio
// times the baseline's. The noise is Student's t with 5 degrees of freedom
// (heavier tails than normal), scaled to a standard deviation of simNoise.
func simAttempt(rng *rand.Rand, caseTok, ratio float64) (tokens, seconds float64) {
	tok := caseTok * math.Exp(simCaseSpread*rng.NormFloat64())
	tok = math.Min(math.Max(tok, 5000), 60000)
	frac := math.Log(tok/5000) / math.Log(12)
	t5 := rng.NormFloat64() / math.Sqrt(chi2(rng, 5)/5)
	noise := simNoise * t5 / math.Sqrt(5.0/3)
	tps := simBaseTPS * ratio * (1 - simSlowdown*frac) * math.Exp(noise)
	return tok, tok / tps
}

func chi2(rng *rand.Rand, k int) float64 {
	s := 0.0
	for range k {
		z := rng.NormFloat64()
		s += z * z
	}
	return s
}

// simPair is one complete pair's log ratio of decode TPS.
func simPair(rng *rand.Rand, ratio float64) float64 {
	caseTok := math.Exp(math.Log(5000) + rng.Float64()*math.Log(12))
	bt, bs := simAttempt(rng, caseTok, 1)
	ct, cs := simAttempt(rng, caseTok, ratio)
	return math.Log((ct / cs) / (bt / bs))
}

// rule is the stop rule the simulation applies: a target half-width on
// the ratio scale, a minimum of pairs, and whether an interval that
// excludes a ratio of 1 also settles the question.
type rule struct {
	halfWidth float64
	minPairs  int
	excludes  bool
	g         float64
}

// simOutcome is one cohort under the rule: pairs run, and whether the
// interval at the stop, and every interval looked at, held the truth.
type simOutcome struct {
	pairs           int
	coveredAtStop   bool
	coveredAlways   bool
	naiveAlways     bool // a fixed-sample t interval looked at every pair
	fixedCovered    bool // the fixed-sample t interval at 24 pairs
	decided, sepOne bool
}

func simCohort(rng *rand.Rand, ratio float64, r rule) simOutcome {
	truth := math.Log(ratio)
	out := simOutcome{coveredAlways: true, naiveAlways: true}
	var s Sequence
	for i := 0; i < simFullPairs; i++ {
		s.Add(simPair(rng, ratio))
		lo, hi, ok := s.Interval(r.g)
		if ok && (truth < lo || truth > hi) {
			out.coveredAlways = false
		}
		if s.N() >= 2 {
			nlo, nhi := tInterval(&s)
			in := truth >= nlo && truth <= nhi
			out.naiveAlways = out.naiveAlways && in
			if s.N() == simFullPairs {
				out.fixedCovered = in
			}
		}
		if out.decided {
			continue
		}
		if d, sep := settled(&s, r); d {
			out.decided, out.sepOne, out.pairs = true, sep, s.N()
			out.coveredAtStop = truth >= lo && truth <= hi
		}
	}
	if !out.decided {
		lo, hi, _ := s.Interval(r.g)
		out.pairs = simFullPairs
		out.coveredAtStop = truth >= lo && truth <= hi
	}
	return out
}

// settled applies the rule as the runner does (see Settled).
func settled(s *Sequence, r rule) (decided, excludesOne bool) {
	st := Settled(s, r.minPairs, r.halfWidth, r.excludes, r.g)
	return st.Met, st.ExcludesOne
}

func tInterval(s *Sequence) (lo, hi float64) {
	n := float64(s.N())
	t := tQuantile(s.N() - 1)
	w := t * s.SD() / math.Sqrt(n)
	return s.Mean() - w, s.Mean() + w
}

type simSummary struct {
	ratio, noise             float64
	cohorts                  int
	meanPairs                float64
	coverStop, coverAlways   float64
	naiveAlways, fixedCover  float64
	decidedByWidth, separate int
}

func simulate(seed uint64, ratio float64, cohorts int, r rule) simSummary {
	rng := rand.New(rand.NewPCG(seed, math.Float64bits(ratio)))
	sum := simSummary{ratio: ratio, noise: simNoise, cohorts: cohorts}
	var pairs, stop, always, naive, fixed int
	for range cohorts {
		o := simCohort(rng, ratio, r)
		pairs += o.pairs
		stop += b2i(o.coveredAtStop)
		always += b2i(o.coveredAlways)
		naive += b2i(o.naiveAlways)
		fixed += b2i(o.fixedCovered)
		if o.decided && o.sepOne {
			sum.separate++
		} else if o.decided {
			sum.decidedByWidth++
		}
	}
	c := float64(cohorts)
	sum.meanPairs = float64(pairs) / c
	sum.coverStop, sum.coverAlways = float64(stop)/c, float64(always)/c
	sum.naiveAlways, sum.fixedCover = float64(naive)/c, float64(fixed)/c
	return sum
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// simRule is the rule of the benchmark in docs/power.md.
var simRule = rule{halfWidth: 0.03, minPairs: 4, excludes: true, g: DefaultMixing}

// TestSimulatedCohorts draws seeded cohorts at true ratios 1.00, 1.03,
// 1.06 and 1.80 and checks that the confidence sequence covers the true
// ratio in at least 95% of them (allowing three standard errors of
// simulation), both at the stop and at every look, while a fixed-sample
// interval looked at after every pair does not. It prints the benchmark
// table of docs/power.md (go test -v -run TestSimulatedCohorts).
func TestSimulatedCohorts(t *testing.T) {
	cohorts := 4000
	if testing.Short() {
		cohorts = 1000
	}
	var rows []simSummary
	for _, ratio := range []float64{1.00, 1.03, 1.06, 1.80} {
		s := simulate(20261202, ratio, cohorts, simRule)
		rows = append(rows, s)
		slack := 3 * math.Sqrt(0.95*0.05/float64(cohorts))
		if s.coverAlways < 0.95-slack {
			t.Errorf("ratio %.2f: the sequence held the truth at every look in %.3f of %d cohorts, below 95%% beyond simulation error", ratio, s.coverAlways, cohorts)
		}
		if s.coverStop < s.coverAlways {
			t.Errorf("ratio %.2f: coverage at the stop %.3f below coverage at every look %.3f", ratio, s.coverStop, s.coverAlways)
		}
		if s.naiveAlways > 0.95-slack {
			t.Errorf("ratio %.2f: a fixed interval looked at every pair held the truth in %.3f; the simulation no longer shows why a sequence is needed", ratio, s.naiveAlways)
		}
	}
	for _, s := range rows {
		if s.ratio >= 1.06 && s.meanPairs > 0.6*simFullPairs {
			t.Errorf("ratio %.2f: %.1f pairs on average, not 40%% fewer than %d", s.ratio, s.meanPairs, simFullPairs)
		}
	}
	t.Log("\n" + simTable(rows))
}

func simTable(rows []simSummary) string {
	var b strings.Builder
	full := GPUHours(simFullPairs, simBaseTaskSecs, simCandTaskSecs)
	fmt.Fprintf(&b, "| true ratio | noise | cohorts | mean pairs to decision | GPU hours (fixed 24: %.2f) | attempts saved | decided by exclusion of 1 / by width / not (full plan) | coverage at stop | coverage at every look | fixed 24 coverage | fixed interval looked at every pair |\n", full)
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range rows {
		hours := s.meanPairs * (simBaseTaskSecs + simCandTaskSecs) / 3600
		none := s.cohorts - s.separate - s.decidedByWidth
		fmt.Fprintf(&b, "| %.2f | %.1f%% | %d | %.1f | %.2f | %.0f%% | %d / %d / %d | %.3f | %.3f | %.3f | %.3f |\n",
			s.ratio, 100*s.noise, s.cohorts, s.meanPairs, hours, 100*(1-s.meanPairs/simFullPairs),
			s.separate, s.decidedByWidth, none, s.coverStop, s.coverAlways, s.fixedCover, s.naiveAlways)
	}
	return b.String()
}

// TestNoisierCohorts repeats the simulation with twice the decode noise:
// the sequence must still cover; the savings are reported, not required.
func TestNoisierCohorts(t *testing.T) {
	defer func(n float64) { simNoise = n }(simNoise)
	simNoise = 0.05
	cohorts := 4000
	if testing.Short() {
		cohorts = 1000
	}
	var rows []simSummary
	for _, ratio := range []float64{1.00, 1.03, 1.06, 1.80} {
		s := simulate(20261203, ratio, cohorts, simRule)
		rows = append(rows, s)
		if slack := 3 * math.Sqrt(0.95*0.05/float64(cohorts)); s.coverAlways < 0.95-slack {
			t.Errorf("ratio %.2f: coverage at every look %.3f of %d cohorts", ratio, s.coverAlways, cohorts)
		}
	}
	t.Log("\n" + simTable(rows))
}
