package power

import "math"

// DefaultMixing is the mixing scale g of the confidence sequence when a
// plan names none: the prior variance of the standardised effect (the
// shift of the mean log ratio in units of its standard deviation) that
// the mixture averages over. Larger values narrow the sequence early and
// widen it late; 2 keeps it finite from 4 pairs on.
const DefaultMixing = 2.0

// Sequence is an anytime-valid 95% confidence sequence for the mean of
// per-pair log ratios (log of candidate over baseline decode TPS), built
// by adding one complete pair at a time.
//
// It inverts the scale-invariant mixture test of a normal mean with
// unknown variance: for each candidate mean mu, the Bayes factor of the
// t statistic against mu with a normal(0, g) prior on the standardised
// effect is the likelihood ratio of the maximal invariant under scaling,
// a nonnegative martingale when mu is the true mean; by Ville's inequality
// the chance that it ever exceeds 1/Alpha is at most Alpha. The interval
// at n pairs is every mu whose Bayes factor is still below 1/Alpha, so
// the true mean is inside every interval of the sequence at once, with
// probability at least 95%: it can be checked after every pair and a run
// stopped on it. It assumes per-pair log ratios independent and normal
// with one mean and one spread; the simulation in this package's tests
// checks coverage on realistic, non-normal attempts.
type Sequence struct {
	n        int
	mean, m2 float64
}

// Add takes one complete pair's log ratio (Welford's update).
func (s *Sequence) Add(x float64) {
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
}

// N is the number of pairs added.
func (s *Sequence) N() int { return s.n }

// Mean is the mean log ratio so far.
func (s *Sequence) Mean() float64 { return s.mean }

// SD is the sample standard deviation of the log ratios (0 with fewer
// than two).
func (s *Sequence) SD() float64 {
	if s.n < 2 {
		return 0
	}
	return math.Sqrt(s.m2 / float64(s.n-1))
}

// Interval is the confidence sequence's interval for the mean log ratio
// after the pairs added so far, with mixing scale g; ok is false while it
// is unbounded (too few pairs for this g).
func (s *Sequence) Interval(g float64) (low, high float64, ok bool) {
	t := SequenceT(s.n, g)
	if math.IsInf(t, 1) {
		return math.Inf(-1), math.Inf(1), false
	}
	w := t * s.SD() / math.Sqrt(float64(s.n))
	return s.mean - w, s.mean + w, true
}

// SequenceT is the critical |t| of the confidence sequence at n pairs:
// the t statistic at which the mixture's Bayes factor reaches 1/Alpha.
// With nu = n-1 and G = 1+n*g, the Bayes factor is
// G^(-1/2) * ((1+t²/nu) / (1+t²/(G*nu)))^((nu+1)/2); solving for t gives
// t² = nu*(A-1)/(1-A/G) with A = (sqrt(G)/Alpha)^(2/(nu+1)). It is +Inf
// while the Bayes factor cannot reach 1/Alpha at any t (A >= G).
func SequenceT(n int, g float64) float64 {
	if n < 2 || !(g > 0) {
		return math.Inf(1)
	}
	nu := float64(n - 1)
	G := 1 + float64(n)*g
	A := math.Pow(math.Sqrt(G)/Alpha, 2/(nu+1))
	if A >= G {
		return math.Inf(1)
	}
	return math.Sqrt(nu * (A - 1) / (1 - A/G))
}

// State is what a stop rule reads from a sequence: the interval on the
// ratio scale (null while unbounded), its relative half-width, and whether
// the rule is met.
type State struct {
	Pairs int      `json:"pairs"`
	Ratio *float64 `json:"ratio"`
	Low   *float64 `json:"low"`
	High  *float64 `json:"high"`
	// HalfWidth is the interval's reach above the estimate as a fraction
	// of it (high/ratio - 1; the reach below, 1 - low/ratio, is smaller,
	// the interval being symmetric on the log scale); null while
	// unbounded.
	HalfWidth *float64 `json:"half_width"`
	// ExcludesOne is true when the interval lies wholly above or below 1.
	ExcludesOne bool `json:"excludes_one"`
	// Met says the rule's condition holds: at least minPairs pairs and
	// the half-width at most the target, or (when the rule allows it) the
	// interval excluding 1.
	Met bool `json:"met"`
}

// Settled reads the sequence under a stop rule.
func Settled(s *Sequence, minPairs int, halfWidth float64, excludes bool, g float64) State {
	st := State{Pairs: s.N()}
	if s.N() == 0 {
		return st
	}
	r := math.Exp(s.Mean())
	st.Ratio = &r
	lo, hi, ok := s.Interval(g)
	if !ok {
		return st
	}
	l, h := math.Exp(lo), math.Exp(hi)
	w := h/r - 1
	st.Low, st.High, st.HalfWidth = &l, &h, &w
	st.ExcludesOne = l > 1 || h < 1
	st.Met = s.N() >= minPairs && (w <= halfWidth || (excludes && st.ExcludesOne))
	return st
}
