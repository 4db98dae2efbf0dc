package report

import (
	"fmt"
	"time"

	"github.com/evalctl/evalctl"
)

// Sources of a row's token count and decode seconds.
const (
	// TokensResponses: summed from the responses' own figures.
	TokensResponses = "responses"
	// TokensServerCounters: some response's count was unknown (failed,
	// cut by a budget or the size cap, implausible) and the attempt had
	// the server to itself, so the exact count is the server's /metrics
	// delta around the attempt.
	TokensServerCounters = "server_counters"
)

// Counter cross-check verdicts of a row.
const (
	CounterMatch    = "match"
	CounterMismatch = "mismatch"
	// CounterShared: another attempt on the same server overlapped the
	// window, so the delta is not this attempt's alone: not checked.
	CounterShared = "shared"
	// CounterPlausible: the server's counters were past their printed
	// precision (llama-server prints six significant digits), so the
	// delta is known only within a few tokens; the recorded sum lies
	// within that: a plausibility check, not an exact one.
	CounterPlausible = "plausible"
)

// window is when an attempt may have used its server.
type window struct {
	start, end time.Time
	endpoint   string // "" when unknown: could be any server
	ok         bool
}

func attemptWindow(a *evalctl.Attempt) window {
	if d := a.ServerCounters; d != nil {
		return window{start: d.WindowStart, end: d.WindowEnd, endpoint: d.Endpoint, ok: true}
	}
	w := window{}
	if a.Endpoint != nil {
		w.endpoint = a.Endpoint.BaseURL
	}
	if a.StartedAt == nil {
		return w // never started: used no server
	}
	w.start, w.ok = *a.StartedAt, true
	if a.FinishedAt != nil {
		w.end = *a.FinishedAt
	} else {
		w.end = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) // still running, or killed: open
	}
	return w
}

// exclusive says whether attempt i had its server to itself: no other
// attempt of the run that may have used the same server (same endpoint,
// or one not known) has a window overlapping its counter window. It is
// decided from what the runner recorded, not from how it scheduled.
func exclusive(i int, wins []window) bool {
	me := wins[i]
	for j, o := range wins {
		if j == i || !o.ok {
			continue
		}
		if o.endpoint != "" && o.endpoint != me.endpoint {
			continue
		}
		if o.start.Before(me.end) && me.start.Before(o.end) {
			return false
		}
	}
	return true
}

// applyCounters cross-checks each scored row of one run against the
// server's counter deltas (rows[i] is attempts[i]'s row): with the server
// to itself, a recorded token sum must equal the delta (a mismatch is
// shown, never hidden), and an unknown one takes the delta, marked as
// recovered. Shared windows are neither checked nor used.
func applyCounters(attempts []*evalctl.Attempt, rows []Row) {
	wins := make([]window, len(attempts))
	for i, a := range attempts {
		wins[i] = attemptWindow(a)
	}
	for i, a := range attempts {
		r := &rows[i]
		if r.Status == Unscored || a.Measurements == nil {
			continue
		}
		src := TokensResponses
		if r.NativeOutputTokens != nil {
			r.TokensSource = &src
		}
		d := a.ServerCounters
		if d == nil || d.GeneratedTokens == nil {
			continue
		}
		tok := *d.GeneratedTokens
		r.ServerGeneratedTokens = &tok
		if w := d.GeneratedTokensWithin; w > 0 {
			r.ServerGeneratedTokensWithin = &w
		}
		if !exclusive(i, wins) {
			v := CounterShared
			r.CounterCheck = &v
			continue
		}
		if r.NativeOutputTokens != nil {
			v := crossCheck(*r.NativeOutputTokens, tok, d.GeneratedTokensWithin)
			r.CounterCheck = &v
			continue
		}
		if d.GeneratedTokensWithin > 0 {
			// Past the counters' printed precision the delta is no exact
			// count: the row stays unknown.
			continue
		}
		// Recovered: the count is the server's, exact; decode seconds too
		// when the server exports them to the millisecond, else the row
		// stays unmeasured.
		rec := TokensServerCounters
		r.TokensSource = &rec
		r.NativeOutputTokens = &tok
		if d.GeneratedSeconds != nil && d.GeneratedSecondsWithin <= 0.001 {
			s := *d.GeneratedSeconds
			r.DecodeSeconds = &s
		}
	}
}

// crossCheck compares a recorded token sum with the server's delta, known
// within the given number of tokens (0: exact).
func crossCheck(recorded, delta, within int64) string {
	off := recorded - delta
	switch {
	case off == 0 && within == 0:
		return CounterMatch
	case off >= -within && off <= within:
		return CounterPlausible
	}
	return CounterMismatch
}

// counterNotes say what the cross-check found.
func counterNotes(in *Input) []string {
	var recovered, checked, plausible, imprecise int
	var mismatches []string
	for i := range in.Rows {
		r := &in.Rows[i]
		if r.TokensSource != nil && *r.TokensSource == TokensServerCounters {
			recovered++
		}
		if r.CounterCheck == nil {
			if r.NativeOutputTokens == nil && r.ServerGeneratedTokens != nil {
				imprecise++
			}
			continue
		}
		switch *r.CounterCheck {
		case CounterMatch:
			checked++
		case CounterPlausible:
			checked++
			plausible++
		case CounterMismatch:
			checked++
			mismatches = append(mismatches, fmt.Sprintf("%s (%s %s %s: recorded %d, server %d)", r.AttemptID, r.Arm, r.Case, r.Repeat, *r.NativeOutputTokens, *r.ServerGeneratedTokens))
		}
	}
	var out []string
	if checked > 0 {
		out = append(out, fmt.Sprintf("server counters: %d attempt(s) with the server to themselves checked against /metrics deltas, %d mismatch(es)", checked, len(mismatches)))
	}
	if plausible > 0 {
		out = append(out, fmt.Sprintf("server counters: %d of the checked attempt(s) only within the counters' printed precision (past it a delta is not exact; the responses' own figures are the record, the counters a plausibility check)", plausible))
	}
	if imprecise > 0 {
		out = append(out, fmt.Sprintf("%d attempt(s) with an unknown response count kept it unknown: the server's counters were past their printed precision", imprecise))
	}
	for _, m := range mismatches {
		out = append(out, "server counters MISMATCH: attempt "+m)
	}
	if recovered > 0 {
		out = append(out, fmt.Sprintf("%d attempt(s) with an unknown response count took their exact token count from the server's /metrics delta (token source server_counters)", recovered))
	}
	return out
}
