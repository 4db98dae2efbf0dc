package report

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// z975 is the standard normal 0.975 quantile: a two-sided 95% interval.
var z975 = math.Sqrt2 * math.Erfinv(0.95)

// Wilson returns the Wilson score 95% interval of k successes in n trials.
// It behaves at 0/n and n/n, where the textbook normal interval collapses to
// a point. ok is false when n is 0: no denominator, no interval.
func Wilson(k, n int) (low, high float64, ok bool) {
	if n <= 0 || k < 0 || k > n {
		return 0, 0, false
	}
	z := z975
	nf := float64(n)
	p := float64(k) / nf
	den := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	low, high = center-half, center+half
	if k == 0 || low < 0 {
		low = 0
	}
	if k == n || high > 1 {
		high = 1
	}
	return low, high, true
}

// McNemarExact returns the exact two-sided McNemar p-value for b and c
// discordant pairs: the binomial sign test of min(b,c) in b+c trials at
// 1/2, doubled and capped at 1. It is computed in exact rational arithmetic
// and rounded once. With no discordant pairs it is 1: nothing contradicts
// "no difference".
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// sum_{i<=k} C(n,i), built term by term: C(n,i+1) = C(n,i)(n-i)/(i+1).
	term := big.NewInt(1)
	sum := big.NewInt(1)
	for i := 0; i < k; i++ {
		term.Mul(term, big.NewInt(int64(n-i)))
		term.Quo(term, big.NewInt(int64(i+1)))
		sum.Add(sum, term)
	}
	// p = 2*sum / 2^n = sum / 2^(n-1)
	den := new(big.Int).Lsh(big.NewInt(1), uint(n-1))
	p, _ := new(big.Rat).SetFrac(sum, den).Float64()
	return math.Min(1, p)
}

// median of xs (sorted in place); with an even count, the mean of the two
// middle values. ok is false for no values.
func median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	sort.Float64s(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m], true
	}
	return (xs[m-1] + xs[m]) / 2, true
}

// quantile of sorted xs with linear interpolation between order statistics
// (Hyndman & Fan type 7, the default of R and NumPy).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// Bootstrap settings. Fixed so that a report is reproducible to the digit.
const (
	// BootstrapResamples is how many case resamples the TPS ratio interval
	// draws.
	BootstrapResamples = 10000
	// BootstrapSeed seeds the resampling (PCG, whose stream is specified).
	BootstrapSeed uint64 = 20261010
)

// caseSums are one case's pooled sums in two arms: tokens and decode seconds
// over its scored, measured attempts (all repeats together).
type caseSums struct {
	baseTok, baseSec float64
	candTok, candSec float64
}

// ratioOf is candidate decode TPS over baseline decode TPS pooled over cs
// (each case weighted by its multiplicity in w; nil w means once each).
func ratioOf(cs []caseSums, w []int) (float64, bool) {
	var bt, bs, ct, csec float64
	for i, c := range cs {
		m := 1.0
		if w != nil {
			if w[i] == 0 {
				continue
			}
			m = float64(w[i])
		}
		bt += m * c.baseTok
		bs += m * c.baseSec
		ct += m * c.candTok
		csec += m * c.candSec
	}
	if bs <= 0 || csec <= 0 || bt <= 0 {
		return 0, false
	}
	return (ct / csec) / (bt / bs), true
}

// bootstrapRatio draws resamples of the cases with replacement (the same
// draw for both arms: paired) and returns the 2.5% and 97.5% quantiles of
// the pooled decode-TPS ratio. Repeats of a case stay together because a
// case's attempts were summed before resampling.
func bootstrapRatio(cs []caseSums, resamples int, seed uint64) (low, high float64, ok bool) {
	n := len(cs)
	if n < 2 || resamples < 1 {
		return 0, 0, false
	}
	rng := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	w := make([]int, n)
	ratios := make([]float64, 0, resamples)
	for b := 0; b < resamples; b++ {
		clear(w)
		for j := 0; j < n; j++ {
			w[boundedDraw(rng, uint64(n))]++
		}
		if r, ok := ratioOf(cs, w); ok {
			ratios = append(ratios, r)
		}
	}
	if len(ratios) == 0 {
		return 0, 0, false
	}
	sort.Float64s(ratios)
	return quantile(ratios, 0.025), quantile(ratios, 0.975), true
}

// boundedDraw returns a uniform integer in [0, n) from src with Lemire's
// multiply-and-reject method. Hand-written rather than rand.IntN so the
// draws (and the report) depend only on the PCG stream, which is specified.
func boundedDraw(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}
