package report

import (
	"fmt"
	"sort"
)

// ReplicaSpeed is an arm's pooled decode speed on one replica of its
// endpoint pool: sum of tokens over sum of decode seconds of the measured
// attempts that ran there, with its 95% case bootstrap interval.
type ReplicaSpeed struct {
	Replica string `json:"replica"`
	// Attempts is the number of measured attempts pooled.
	Attempts          int       `json:"attempts"`
	DecodeTPS         *float64  `json:"decode_tps"`
	DecodeTPSInterval *Interval `json:"decode_tps_interval"`
}

// addReplicaSpeeds gives each arm that ran on an endpoint pool its decode
// speed per replica, and returns a warning for each pair of replicas whose
// speeds differ by more than the run's own noise: their bootstrap
// intervals do not overlap. A slower machine must not pass for a slower
// configuration. Pairs whose intervals are unknown (fewer than two
// measured cases) are said to be unjudged, not equal.
func addReplicaSpeeds(rep *Report, byArm map[string][]*Row, cases []string) []string {
	var notes []string
	for i := range rep.Arms {
		a := &rep.Arms[i]
		byRep := map[string][]*Row{}
		for _, r := range byArm[a.Arm] {
			if r.Replica != "" {
				byRep[r.Replica] = append(byRep[r.Replica], r)
			}
		}
		if len(byRep) == 0 {
			continue
		}
		names := make([]string, 0, len(byRep))
		for n := range byRep {
			names = append(names, n)
		}
		sort.Strings(names)
		a.Replicas = []ReplicaSpeed{}
		for _, n := range names {
			rows := byRep[n]
			rs := ReplicaSpeed{Replica: n}
			var tok, sec float64
			for _, r := range rows {
				if r.inPlan() && r.measured() {
					rs.Attempts++
					tok += float64(*r.NativeOutputTokens)
					sec += *r.DecodeSeconds
				}
			}
			if sec > 0 {
				v := tok / sec
				rs.DecodeTPS = &v
			}
			rs.DecodeTPSInterval = speedInterval(rows, cases, func(r *Row) float64 { return *r.DecodeSeconds })
			a.Replicas = append(a.Replicas, rs)
			if rs.DecodeTPS != nil {
				notes = append(notes, fmt.Sprintf("arm %s on replica %s: %.2f decode TPS over %d measured attempts", a.Arm, n, *rs.DecodeTPS, rs.Attempts))
			} else {
				notes = append(notes, fmt.Sprintf("arm %s on replica %s: decode TPS unknown (no measured attempt)", a.Arm, n))
			}
		}
		for x := 0; x < len(a.Replicas); x++ {
			for y := x + 1; y < len(a.Replicas); y++ {
				p, q := a.Replicas[x], a.Replicas[y]
				if p.DecodeTPS == nil || q.DecodeTPS == nil {
					continue
				}
				pi, qi := p.DecodeTPSInterval, q.DecodeTPSInterval
				if pi.Low == nil || qi.Low == nil {
					notes = append(notes, fmt.Sprintf("arm %s: replicas %s (%.2f decode TPS over %d attempts) and %s (%.2f over %d): too few measured cases to tell their speeds apart", a.Arm, p.Replica, *p.DecodeTPS, p.Attempts, q.Replica, *q.DecodeTPS, q.Attempts))
					continue
				}
				if *pi.High < *qi.Low || *qi.High < *pi.Low {
					notes = append(notes, fmt.Sprintf("WARNING arm %s: replicas differ in speed by more than the run's noise: %s %.2f decode TPS (95%% interval %.2f-%.2f, %d attempts) vs %s %.2f (%.2f-%.2f, %d attempts); the arm's speed mixes machines",
						a.Arm, p.Replica, *p.DecodeTPS, *pi.Low, *pi.High, p.Attempts, q.Replica, *q.DecodeTPS, *qi.Low, *qi.High, q.Attempts))
				}
			}
		}
	}
	return notes
}
