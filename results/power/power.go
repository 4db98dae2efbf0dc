// Package power answers two questions before and during a paired cohort of
// two arms: how many complete pairs it takes to settle the decode-TPS ratio
// to a given half-width, or a difference in functional rate of a given size
// with a given power; and, while the cohort runs, an interval for the speed
// ratio that stays valid however often it is looked at (Sequence). It is
// pure arithmetic: the figures come from the caller (a pilot run read by
// results/report, or numbers a person states).
package power

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Alpha is the error rate of every interval and test here: 95% intervals,
// two-sided tests at 5%.
const Alpha = 0.05

// MinPilotPairs is the fewest complete pairs a pilot needs before its
// spread of log ratios is taken as an estimate: with fewer, the standard
// deviation is too uncertain for a sample size to mean anything.
const MinPilotPairs = 4

// MinDiscordant is the fewest discordant pairs (one arm passes, the other
// fails) a pilot needs before its discordance is taken as an estimate.
const MinDiscordant = 2

// ErrPilotTooSmall is returned (wrapped) when a pilot has too few pairs or
// discordant pairs to estimate what a sample size needs.
var ErrPilotTooSmall = errors.New("pilot too small")

// Spread is the sample standard deviation of per-pair log ratios, with the
// mean and the number of pairs. ok is false with fewer than two values.
func Spread(logRatios []float64) (mean, sd float64, ok bool) {
	var s Sequence
	for _, x := range logRatios {
		s.Add(x)
	}
	if s.n < 2 {
		return 0, 0, false
	}
	return s.mean, s.SD(), true
}

// PilotSD checks that a pilot of logRatios can estimate the spread and
// returns it.
func PilotSD(logRatios []float64) (float64, error) {
	if len(logRatios) < MinPilotPairs {
		return 0, fmt.Errorf("%w: %d complete pairs with measured decode speed in both arms; at least %d are needed to estimate the spread of the speed ratio",
			ErrPilotTooSmall, len(logRatios), MinPilotPairs)
	}
	_, sd, _ := Spread(logRatios)
	return sd, nil
}

// logHalfWidth is the half-width on the log scale that makes the ratio's
// interval reach h above the estimate: exp(w) = 1 + h.
func logHalfWidth(h float64) float64 { return math.Log1p(h) }

// FixedPairs is the smallest number of complete pairs whose fixed-sample
// 95% t interval of the mean log ratio has half-width at most h on the
// ratio scale (the upper end at most 1+h times the estimate), when the
// per-pair log ratios have standard deviation sd. The interval is valid
// only if looked at once, at that number of pairs.
func FixedPairs(sd, h float64) (int, error) {
	if err := checkSpeed(sd, h); err != nil {
		return 0, err
	}
	w := logHalfWidth(h)
	return smallest(func(n int) bool {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - Alpha/2)
		return t*sd/math.Sqrt(float64(n)) <= w
	}), nil
}

// SequentialPairs is the number of complete pairs at which the confidence
// sequence (Sequence, mixing scale g) reaches half-width h if the sample
// standard deviation equals sd: what a stop rule with that target expects
// to take when the speed is settled by width alone.
func SequentialPairs(sd, h, g float64) (int, error) {
	if err := checkSpeed(sd, h); err != nil {
		return 0, err
	}
	w := logHalfWidth(h)
	return smallest(func(n int) bool {
		return SequenceT(n, g)*sd/math.Sqrt(float64(n)) <= w
	}), nil
}

func checkSpeed(sd, h float64) error {
	if !(h > 0) || math.IsInf(h, 0) {
		return fmt.Errorf("half-width %v: give a positive fraction, e.g. 0.02 for ±2%%", h)
	}
	if !(sd >= 0) || math.IsInf(sd, 0) {
		return fmt.Errorf("spread %v: the standard deviation of log ratios must be a finite number ≥ 0", sd)
	}
	return nil
}

// maxPairs bounds every search: a cohort beyond it is not a plan.
const maxPairs = 1 << 20

// smallest is the least n in [2, maxPairs] for which ok holds (ok is
// monotone in n), or maxPairs.
func smallest(ok func(n int) bool) int {
	lo, hi := 2, 2
	for !ok(hi) {
		if hi >= maxPairs {
			return maxPairs
		}
		lo, hi = hi+1, min(hi*2, maxPairs)
	}
	for lo < hi {
		m := (lo + hi) / 2
		if ok(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}
