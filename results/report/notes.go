package report

import (
	"fmt"
	"strings"
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

// countNotes says, in words, what was left out of the counts.
func countNotes(in *Input) []string {
	var ungraded, unscored, replaced, unmeasured int
	suites := orderedSet{}
	for i := range in.Rows {
		r := &in.Rows[i]
		if !r.inPlan() {
			replaced++
			continue
		}
		switch r.Status {
		case Ungraded:
			ungraded++
			suites.add(r.Suite, r.RunID)
		case Unscored:
			unscored++
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
		out = append(out, fmt.Sprintf("%d completed attempt(s) have no grade under %s: shown as ungraded (-), not counted as failures", ungraded, strings.Join(suites.keys, ", ")))
	}
	if unscored > 0 {
		out = append(out, fmt.Sprintf("%d attempt(s) never completed (cancelled, interrupted, infrastructure failure or not run): null, not counted", unscored))
	}
	if replaced > 0 {
		out = append(out, fmt.Sprintf("%d infrastructure-failed attempt(s) were replaced by a rerun of the same slot", replaced))
	}
	return out
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
