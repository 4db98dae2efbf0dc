package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/evalctl/evalctl"
)

// overlapNotes warns, per arm, of measured attempts that had another in
// flight on the same device: their speed figures are not clean.
func overlapNotes(r *Report) []string {
	var out []string
	for _, a := range r.Arms {
		if a.Overlapped != nil && *a.Overlapped > 0 {
			out = append(out, fmt.Sprintf("WARNING: arm %s: %d of %d measured attempts overlapped another attempt on the same device; their decode and task seconds may be contaminated, and so are the arm's speed figures", a.Arm, *a.Overlapped, a.Measured))
		}
	}
	return out
}

// stateWords name attempt states in the report's notes.
var stateWords = []struct{ state, words string }{
	{string(evalctl.CancelledBeforeStart), "cancelled before start"},
	{string(evalctl.CancelledAfterStart), "cancelled after start"},
	{string(evalctl.Interrupted), "interrupted"},
	{string(evalctl.InfraFailed), "infrastructure failure(s)"},
	{string(evalctl.Completed), "completed"},
	{string(evalctl.Running), "running"},
	{string(evalctl.Planned), "planned"},
}

// byState is "2 infrastructure failure(s), 6 interrupted": counts in the
// order of stateWords, then any other state by name.
func byState(counts map[string]int) string {
	var parts []string
	known := map[string]bool{}
	for _, sw := range stateWords {
		known[sw.state] = true
		if n := counts[sw.state]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, sw.words))
		}
	}
	var other []string
	for k := range counts {
		if !known[k] && counts[k] > 0 {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	for _, k := range other {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(parts, ", ")
}

// countNotes says, in words, what was left out of the counts.
func countNotes(in *Input) []string {
	var ungraded, unmeasured int
	unscored, replaced := map[string]int{}, map[string]int{}
	suites := orderedSet{}
	for i := range in.Rows {
		r := &in.Rows[i]
		if !r.inPlan() {
			replaced[r.State]++
			continue
		}
		switch r.Status {
		case Ungraded:
			ungraded++
			suites.add(r.Suite, r.RunID)
		case Unscored:
			unscored[r.State]++
		case Scored:
			if !r.measured() {
				unmeasured++
			}
		}
	}
	var out []string
	if unmeasured > 0 {
		out = append(out, fmt.Sprintf("%d scored attempt(s) have no native output token count or no decode seconds (some response reported none): null, left out of decode TPS and task TPS, not counted as 0", unmeasured))
	}
	if ungraded > 0 {
		out = append(out, fmt.Sprintf("%d completed attempt(s) have no grade that can be computed under %s (an answer not graded there, or records that do not match up): shown as ungraded (-), not counted as failures", ungraded, strings.Join(suites.keys, ", ")))
	}
	if n := sum(unscored); n > 0 {
		out = append(out, fmt.Sprintf("%d attempt(s) ended without an outcome (%s): null, not counted", n, byState(unscored)))
	}
	if n := sum(replaced); n > 0 {
		out = append(out, fmt.Sprintf("%d attempt(s) were replaced by a rerun of the same slot (%s): listed apart, not counted in the cohort", n, byState(replaced)))
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// timingMark is what the text formats append to a decode TPS that is not
// purely server-timed; "" for server timings or no figure.
func timingMark(src *string) string {
	if src == nil {
		return ""
	}
	switch *src {
	case TimingsServer:
		return ""
	case TimingsClient:
		return "client-measured"
	case TimingsMixed:
		return "mixed timing sources"
	default:
		return "timing source unknown"
	}
}

// timingNotes say, in words, which arms' decode TPS is not purely
// server-timed (client-measured figures are marked).
func timingNotes(r *Report) []string {
	var out []string
	for _, a := range r.Arms {
		if a.DecodeTPS == nil || a.TimingsSource == nil || *a.TimingsSource == TimingsServer {
			continue
		}
		var what string
		switch *a.TimingsSource {
		case TimingsClient:
			what = "is client-measured (first to last streamed token, or the wall time of a response), not server timings"
		case TimingsMixed:
			what = "pools server timings with client-measured decode time (mixed timing sources)"
		default:
			what = "rests on attempts whose timing source is unknown"
		}
		out = append(out, fmt.Sprintf("%s: decode TPS %s %s: not comparable with server-timed figures, and the decode gains, tokens/week and decode TPS ratios computed from it inherit that",
			a.Arm, fmtF(a.DecodeTPS, 2), what))
	}
	return out
}
