package report

import (
	"fmt"
	"strings"
)

// RunSchedule is what a run's runner sessions said of their scheduling in
// the schedule event each writes at its end (evalctl.Schedule): the time
// containers waited for sandbox places and the longest time without
// progress. A figure covers the whole run only when every session reported
// it: the waits are then summed over the sessions, the longest ones are the
// largest of theirs. Otherwise it is null, never 0, and Why says which
// session left it unknown: a session whose runner was killed (or still
// runs) wrote none, and one that ran on one engine counts no places.
type RunSchedule struct {
	// Sessions counts the run's runner sessions (registration, each
	// resume); Reported those that wrote a schedule event.
	Sessions int `json:"sessions"`
	Reported int `json:"sessions_reported"`
	// PlaceWaitSeconds is the total time waited for sandbox places over
	// PlaceGrants grants; LongestPlaceWaitSeconds the longest wait.
	PlaceWaitSeconds        *float64 `json:"place_wait_seconds"`
	PlaceGrants             *int     `json:"place_grants"`
	LongestPlaceWaitSeconds *float64 `json:"longest_place_wait_seconds"`
	// LongestWithoutProgressSeconds is the longest time any session went
	// without progress.
	LongestWithoutProgressSeconds *float64 `json:"longest_without_progress_seconds"`
	// Why says why a figure is null ("" when none is).
	Why string `json:"why,omitempty"`
}

// runSchedule sums and maxes the sessions' schedule events of tl; nil when
// tl carries none (no timeline, or one from before they were read).
func runSchedule(tl *Timeline) *RunSchedule {
	if tl == nil || len(tl.Schedules) == 0 {
		return nil
	}
	rs := &RunSchedule{Sessions: len(tl.Schedules)}
	var (
		wait, longestWait, still float64
		grants                   int
		missing, oneEngine       []string
	)
	for i, s := range tl.Schedules {
		name := fmt.Sprintf("%d", i+1)
		if s == nil {
			missing = append(missing, name)
			continue
		}
		rs.Reported++
		still = max(still, s.LongestWithoutProgressSeconds)
		if s.Places == nil {
			oneEngine = append(oneEngine, name)
			continue
		}
		wait += s.Places.TotalSeconds
		grants += s.Places.Grants
		longestWait = max(longestWait, s.Places.LongestSeconds)
	}
	var why []string
	if len(missing) > 0 {
		why = append(why, fmt.Sprintf("session(s) %s of %d wrote no schedule event (its runner was killed or still runs, or it predates the event)", strings.Join(missing, ", "), rs.Sessions))
	} else {
		rs.LongestWithoutProgressSeconds = &still
	}
	if len(oneEngine) > 0 {
		why = append(why, fmt.Sprintf("session(s) %s of %d ran on one engine, which counts no sandbox places", strings.Join(oneEngine, ", "), rs.Sessions))
	}
	if len(missing) == 0 && len(oneEngine) == 0 {
		rs.PlaceWaitSeconds, rs.PlaceGrants, rs.LongestPlaceWaitSeconds = &wait, &grants, &longestWait
	}
	rs.Why = strings.Join(why, "; ")
	return rs
}

// scheduleNotes say, per run, what its sessions waited for sandbox places
// and their longest time without progress, or why it is unknown.
func scheduleNotes(rep *Report) []string {
	var notes []string
	for _, r := range rep.Runs {
		s := r.Schedule
		if s == nil {
			continue
		}
		places := "time waiting for sandbox places unknown"
		if s.PlaceWaitSeconds != nil {
			places = fmt.Sprintf("waited for sandbox places %.1f s over %d grant(s), longest %.1f s", *s.PlaceWaitSeconds, *s.PlaceGrants, *s.LongestPlaceWaitSeconds)
		}
		still := "longest time without progress unknown"
		if s.LongestWithoutProgressSeconds != nil {
			still = fmt.Sprintf("longest time without progress %.1f s", *s.LongestWithoutProgressSeconds)
		}
		note := fmt.Sprintf("run %s: %s; %s (over %d of %d session(s))", r.ID, places, still, s.Reported, s.Sessions)
		if s.Why != "" {
			note += ": " + s.Why
		}
		notes = append(notes, note)
	}
	return notes
}
