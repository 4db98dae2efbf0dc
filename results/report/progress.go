package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/evalctl/evalctl"
)

// Run progress states (RunProgress.State).
const (
	// ProgressRunning: a runner is working on the run now.
	ProgressRunning = "running"
	// ProgressStopped: no runner is, and some slot has not ended: 'evalctl
	// run --resume' continues it.
	ProgressStopped = "stopped, resumable"
	// ProgressComplete: every slot ended for good.
	ProgressComplete = "complete"
)

// RunProgress is how far a run got when it was read, from its rows (one
// per slot, replaced attempts aside) and whether a runner was working on
// it. Attempts in flight or waiting are neither failures nor unscored:
// they have no outcome yet.
type RunProgress struct {
	State string `json:"state"`
	// Planned counts the run's slots; Ended those whose attempt ended for
	// good (completed, cancelled, an infrastructure failure); Running the
	// attempts started and not ended (in flight, or left running by a
	// runner that stopped); Waiting the slots still to run (planned, or
	// interrupted and run again on resume).
	Planned int `json:"planned"`
	Ended   int `json:"ended"`
	Running int `json:"running"`
	Waiting int `json:"waiting"`
	// InFlight says what each running attempt was doing, in slot order.
	InFlight []InFlight `json:"in_flight"`
	Words    string     `json:"words"`
}

// InFlight is one running attempt and what it was doing ("" when its
// runner recorded nothing).
type InFlight struct {
	AttemptID string `json:"attempt_id"`
	Arm       string `json:"arm"`
	Case      string `json:"case"`
	Repeat    string `json:"repeat"`
	Phase     string `json:"phase"`
}

// runProgress is run's progress from its rows.
func runProgress(run *RunInfo, rows []*Row) *RunProgress {
	p := &RunProgress{InFlight: []InFlight{}}
	var running []*Row
	for _, r := range rows {
		if !r.inPlan() {
			continue
		}
		p.Planned++
		switch st := evalctl.State(r.State); {
		case st.Ended():
			p.Ended++
		case st == evalctl.Running:
			p.Running++
			running = append(running, r)
		default:
			p.Waiting++
		}
	}
	sort.SliceStable(running, func(i, j int) bool { return running[i].Slot < running[j].Slot })
	for _, r := range running {
		f := InFlight{AttemptID: r.AttemptID, Arm: r.Arm, Case: r.Case, Repeat: r.Repeat}
		if r.Phase != nil {
			f.Phase = *r.Phase
		}
		p.InFlight = append(p.InFlight, f)
	}
	switch {
	case run.Runner == RunnerActive:
		p.State = ProgressRunning
	case p.Ended == p.Planned:
		p.State = ProgressComplete
	default:
		p.State = ProgressStopped
	}
	p.Words = progressWords(p)
	return p
}

// progressWords is "running, 7 of 18 attempts ended; 2 in flight: ...; 9
// waiting", "stopped, resumable: ..." or "complete, 18 of 18 ...".
func progressWords(p *RunProgress) string {
	sep := ", "
	if p.State == ProgressStopped {
		sep = ": "
	}
	out := fmt.Sprintf("%s%s%d of %d attempts ended", p.State, sep, p.Ended, p.Planned)
	if p.Running > 0 {
		var what []string
		for _, f := range p.InFlight {
			w := fmt.Sprintf("%s %s/%s/%s", f.AttemptID, f.Arm, f.Case, f.Repeat)
			if f.Phase != "" {
				w += " (" + f.Phase + ")"
			}
			what = append(what, w)
		}
		if p.State == ProgressRunning {
			out += fmt.Sprintf("; %d in flight: %s", p.Running, strings.Join(what, "; "))
		} else {
			out += fmt.Sprintf("; %d left running by a runner that stopped (a resume runs them again): %s", p.Running, strings.Join(what, "; "))
		}
	}
	if p.Waiting > 0 {
		out += fmt.Sprintf("; %d waiting to run", p.Waiting)
	}
	if p.State == ProgressStopped {
		out += "; 'evalctl run --resume' continues it"
	}
	return out
}

// progressNotes say, for each run that is not complete, how far it got.
func progressNotes(r *Report) []string {
	var out []string
	for _, ri := range r.Runs {
		if ri.Progress != nil && ri.Progress.State != ProgressComplete {
			out = append(out, fmt.Sprintf("run %s: %s", ri.ID, ri.Progress.Words))
		}
	}
	return out
}
