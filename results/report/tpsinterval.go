package report

import (
	"math/rand/v2"
	"sort"
)

// Interval is a 95% bootstrap interval of a pooled speed: the cases of the
// arm are resampled with replacement (a case's repeats stay together) and
// the pooled figure, sum of tokens over sum of seconds, is taken on each
// resample. Null bounds: fewer than two measured cases.
type Interval struct {
	Low       *float64 `json:"low"`
	High      *float64 `json:"high"`
	Cases     int      `json:"cases"`
	Resamples int      `json:"resamples"`
	Seed      uint64   `json:"seed"`
}

// addSpeedIntervals gives each arm's decode and task-output TPS their
// bootstrap intervals, over the same resampling scheme as the ratio's.
func addSpeedIntervals(rep *Report, byArm map[string][]*Row, cases []string) {
	for i := range rep.Arms {
		a := &rep.Arms[i]
		rows := byArm[a.Arm]
		a.DecodeTPSInterval = speedInterval(rows, cases, func(r *Row) float64 { return *r.DecodeSeconds })
		a.TaskOutputTPSInterval = speedInterval(rows, cases, func(r *Row) float64 { return *r.TaskSeconds })
	}
}

func speedInterval(rows []*Row, cases []string, seconds func(*Row) float64) *Interval {
	iv := &Interval{Resamples: BootstrapResamples, Seed: BootstrapSeed}
	type sums struct{ tok, sec float64 }
	byCase := map[string]*sums{}
	for _, r := range rows {
		if !r.inPlan() || !r.measured() {
			continue
		}
		s := byCase[r.Case]
		if s == nil {
			s = &sums{}
			byCase[r.Case] = s
		}
		s.tok += float64(*r.NativeOutputTokens)
		s.sec += seconds(r)
	}
	var cs []sums
	for _, c := range cases {
		if s := byCase[c]; s != nil && s.sec > 0 {
			cs = append(cs, *s)
		}
	}
	iv.Cases = len(cs)
	n := len(cs)
	if n < 2 {
		return iv
	}
	rng := rand.NewPCG(BootstrapSeed, BootstrapSeed^0x9e3779b97f4a7c15)
	vals := make([]float64, 0, iv.Resamples)
	for b := 0; b < iv.Resamples; b++ {
		var tok, sec float64
		for j := 0; j < n; j++ {
			s := cs[boundedDraw(rng, uint64(n))]
			tok += s.tok
			sec += s.sec
		}
		if sec > 0 {
			vals = append(vals, tok/sec)
		}
	}
	if len(vals) == 0 {
		return iv
	}
	sort.Float64s(vals)
	lo, hi := quantile(vals, 0.025), quantile(vals, 0.975)
	iv.Low, iv.High = &lo, &hi
	return iv
}
