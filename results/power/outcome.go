package power

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Discordance is the pilot's estimate of how often the two arms disagree
// on a pair: discordant pairs over complete pairs. It checks that the pilot
// can estimate it.
func Discordance(discordant, pairs int) (float64, error) {
	if pairs < MinPilotPairs || discordant < MinDiscordant {
		return 0, fmt.Errorf("%w: %d discordant of %d complete pairs; at least %d discordant pairs (of at least %d) are needed to estimate how often the arms disagree",
			ErrPilotTooSmall, discordant, pairs, MinDiscordant, MinPilotPairs)
	}
	return float64(discordant) / float64(pairs), nil
}

// OutcomePairs is the number of complete pairs at which McNemar's test
// (two-sided, 5%) detects a difference diff in pass rate with probability
// pow, when a pair is discordant with probability disc (Connor's normal
// approximation, 1987: the rate difference is p10 - p01 and the
// discordance p10 + p01, so disc must be at least |diff|).
func OutcomePairs(disc, diff, pow float64) (int, error) {
	diff = math.Abs(diff)
	switch {
	case !(diff > 0 && diff < 1):
		return 0, fmt.Errorf("difference %v: give a rate difference between 0 and 1, e.g. 0.05 for 5 points", diff)
	case !(pow > 0 && pow < 1):
		return 0, fmt.Errorf("power %v: give a probability between 0 and 1, e.g. 0.8", pow)
	case !(disc > 0 && disc <= 1):
		return 0, fmt.Errorf("discordance %v: give a probability between 0 and 1", disc)
	}
	// A difference of diff needs at least diff discordance: the pilot's
	// disagreement may be lower than the change asked about.
	disc = math.Max(disc, diff)
	std := distuv.UnitNormal
	za, zb := std.Quantile(1-Alpha/2), std.Quantile(pow)
	root := za*math.Sqrt(disc) + zb*math.Sqrt(disc-diff*diff)
	n := math.Ceil(root * root / (diff * diff))
	if n > maxPairs {
		return maxPairs, nil
	}
	return max(int(n), 2), nil
}

// ExactPower is the probability that McNemar's exact test (two-sided, 5%,
// as the report computes it) rejects after n pairs when a pair favours the
// candidate with probability p10 and the baseline with probability p01:
// summed exactly over the number of discordant pairs and their split.
func ExactPower(n int, p10, p01 float64) float64 {
	disc := p10 + p01
	if n <= 0 || disc <= 0 {
		return 0
	}
	share := p10 / disc
	nd := distuv.Binomial{N: float64(n), P: math.Min(disc, 1)}
	total := 0.0
	for d := 1; d <= n; d++ {
		pd := nd.Prob(float64(d))
		if pd < 1e-15 {
			continue
		}
		k := criticalCount(d)
		if k < 0 {
			continue
		}
		split := distuv.Binomial{N: float64(d), P: share}
		// reject when the smaller count is at most k: b <= k or b >= d-k.
		rej := split.CDF(float64(k)) + 1 - split.CDF(float64(d-k-1))
		total += pd * math.Min(rej, 1)
	}
	return total
}

// criticalCount is the largest k with McNemar's exact p-value for (k, d-k)
// below Alpha, or -1 when d discordant pairs can never reject.
func criticalCount(d int) int {
	half := distuv.Binomial{N: float64(d), P: 0.5}
	k := -1
	for i := 0; 2*i < d; i++ {
		if 2*half.CDF(float64(i)) < Alpha {
			k = i
		} else {
			break
		}
	}
	return k
}

// GPUHours is the cost of pairs complete pairs at the given task seconds
// per attempt of each arm: both arms' attempts, in hours.
func GPUHours(pairs int, baseTaskSeconds, candTaskSeconds float64) float64 {
	return float64(pairs) * (baseTaskSeconds + candTaskSeconds) / 3600
}
