package orchestrator

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// progress shows a run as it goes: on a terminal a live display (a line
// per arm, the attempts running now with their phase, the pooled line with
// elapsed time and ETA; finished attempts scroll above it), elsewhere one
// plain timestamped log line per event.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool
	total   int
	done    int
	began   time.Time
	current map[string]*evalctl.Attempt
	// phases says what each running attempt is doing (live display).
	phases map[string]string
	// arms holds per-arm counts in plan order (live display).
	arms []*armProgress
	// doneHere counts attempts ended by this runner: the ETA divides the
	// time spent here by them, not by what an earlier runner did.
	doneHere int
	// started counts the slots started in the whole run: those ended
	// before this runner, then each start here; every start line has its
	// own number.
	started int
	// record, when set, is told what the running attempts are doing (the
	// run directory's phases file, for readers of the run in progress).
	record    func(map[string]string)
	recordMu  sync.Mutex
	recordSeq uint64
	recorded  uint64
	now       func() time.Time
	screen    *liveScreen
	tokens    int64
	decodeSec float64
	// unmeasured counts completed attempts whose tokens or decode seconds
	// are unknown: left out of tokens and decode TPS, not added as 0.
	unmeasured int
	scored     int
	funcOK     int
	delivOK    int
}

func newProgress(w io.Writer, live bool, total int) *progress {
	return &progress{w: w, live: live, total: total, current: map[string]*evalctl.Attempt{},
		phases: map[string]string{}, now: time.Now}
}

// earlier is the outcome of a slot that ended before this runner started
// (a resume): its arm, its measurements and its outcome (nil: unscored or
// ungraded).
type earlier struct {
	arm          string
	measurements *evalctl.Measurements
	outcome      *evalctl.Outcome
}

// start begins the display; done slots ended before (a resume), and
// before holds those of them that completed, so that every count covers
// the whole run.
func (p *progress) start(done int, before []earlier) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.started, p.began = done, done, p.now()
	for _, e := range before {
		p.count(p.arm(e.arm), e.measurements, e.outcome)
	}
	if p.live {
		p.screen = newLiveScreen(p)
	}
}

// count adds a completed attempt's measurements and outcome to the pooled
// and the arm's counts; p.mu is held.
func (p *progress) count(arm *armProgress, m *evalctl.Measurements, o *evalctl.Outcome) {
	if m != nil {
		if m.NativeOutputTokens != nil && m.DecodeSeconds != nil {
			p.tokens += *m.NativeOutputTokens
			p.decodeSec += *m.DecodeSeconds
		} else {
			p.unmeasured++
		}
	}
	if o == nil {
		return
	}
	p.scored++
	if o.Functional {
		p.funcOK++
	}
	if o.Delivered {
		p.delivOK++
	}
	if arm != nil {
		arm.scored++
		if o.Functional {
			arm.funcOK++
		}
		if o.Delivered {
			arm.delivOK++
		}
	}
}

// save hands record the running attempts' phases; p.mu is not held. A
// write overtaken by a later one is skipped, so the file never goes back.
func (p *progress) save(phases map[string]string, seq uint64) {
	if p.record == nil {
		return
	}
	p.recordMu.Lock()
	defer p.recordMu.Unlock()
	if seq <= p.recorded {
		return
	}
	p.recorded = seq
	p.record(phases)
}

// snapshot copies the phases for save; p.mu is held.
func (p *progress) snapshot() (map[string]string, uint64) {
	m := make(map[string]string, len(p.phases))
	for k, v := range p.phases {
		m[k] = v
	}
	p.recordSeq++
	return m, p.recordSeq
}

// finish draws the live display a last time and leaves it on the screen.
func (p *progress) finish() {
	p.mu.Lock()
	s := p.screen
	p.screen = nil
	p.mu.Unlock()
	if s != nil {
		s.close()
	}
}

func (p *progress) begin(a *evalctl.Attempt) {
	p.mu.Lock()
	p.current[a.ID] = a
	p.phases[a.ID] = "starting"
	p.started++
	phases, seq := p.snapshot()
	if !p.live { // the live screen redraws by itself
		fmt.Fprintf(p.w, "%s start     [started %d of %d, %d ended] %s %s %s\n", p.now().Format("15:04:05"), p.started, p.total, p.done, a.Arm, a.Case, a.Repeat)
	}
	p.mu.Unlock()
	p.save(phases, seq)
	p.push()
}

// replaced takes back the end of attempt a, whose slot runs again in this
// session (runElsewhere): the slot is counted once, by its replacement.
func (p *progress) replaced(a *evalctl.Attempt) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done--
	p.doneHere--
	p.started--
	if arm := p.arm(a.Arm); arm != nil {
		arm.done--
	}
}

func (p *progress) end(a *evalctl.Attempt, o *evalctl.Outcome) {
	var scroll func()
	p.mu.Lock()
	delete(p.current, a.ID)
	delete(p.phases, a.ID)
	arm := p.arm(a.Arm)
	if a.State.Ended() {
		p.done++
		p.doneHere++
		if arm != nil {
			arm.done++
		}
	} else {
		p.started-- // interrupted: its slot starts again on resume
	}
	var m *evalctl.Measurements
	if a.State == evalctl.Completed {
		m = a.Measurements
	}
	p.count(arm, m, o)
	verdict := "unscored"
	if o != nil {
		verdict = fmt.Sprintf("functional=%v delivered=%v", o.Functional, o.Delivered)
	}
	line := fmt.Sprintf("%s %-9s [ended %d of %d, %d running] %s %s %s: %s%s\n", p.now().Format("15:04:05"), a.State, p.done, p.total, len(p.current), a.Arm, a.Case, a.Repeat, verdict, errSuffix(a.Error))
	if p.live {
		if sc := p.screen; sc != nil {
			scroll = func() { sc.scroll(line) } // above the live lines
		}
	} else {
		fmt.Fprint(p.w, line)
	}
	phases, seq := p.snapshot()
	p.mu.Unlock()
	p.save(phases, seq)
	if scroll != nil {
		scroll()
	}
	p.push()
}

// earlierOutcomes are the slots that ended before this runner started (a
// resume: every slot not in todo), completed ones scored under suiteID as
// the report scores them, so that the progress counts cover the whole run.
func earlierOutcomes(store *runstore.Store, suiteID string, todo []*evalctl.Attempt) []earlier {
	all, err := store.Attempts()
	if err != nil {
		return nil
	}
	again := map[int]bool{}
	for _, a := range todo {
		again[a.Slot] = true
	}
	var out []earlier
	for slot, a := range runstore.Current(all) {
		if again[slot] || a.State != evalctl.Completed {
			continue
		}
		e := earlier{arm: a.Arm, measurements: a.Measurements}
		if grades, err := store.Grades(a, suiteID); err == nil {
			e.outcome, _ = evalctl.ScoreGraded(a, grades)
		}
		out = append(out, e)
	}
	return out
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// summary is the pooled line of the live display; p.mu is held.
func (p *progress) summary() string { return p.frame().summary(p.now()) }

// push hands the live display the current frame; p.mu is not held (the
// display's goroutine may be waiting for nothing of ours, never for it).
func (p *progress) push() {
	p.mu.Lock()
	s := p.screen
	var f *frame
	if s != nil {
		f = p.frame()
	}
	p.mu.Unlock()
	if s != nil {
		s.show(f)
	}
}

func stamp() string { return time.Now().Format("15:04:05") }
