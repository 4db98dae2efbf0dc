package orchestrator

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
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
	doneHere  int
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

// start begins the display; done attempts were finished before (a resume).
func (p *progress) start(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.began = done, p.now()
	if p.live {
		p.screen = newLiveScreen(p)
	}
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
	defer p.push()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current[a.ID] = a
	p.phases[a.ID] = "starting"
	if p.live {
		return // the screen redraws by itself
	}
	fmt.Fprintf(p.w, "%s start  [%d/%d] %s %s %s\n", p.now().Format("15:04:05"), p.done+1, p.total, a.Arm, a.Case, a.Repeat)
}

func (p *progress) end(a *evalctl.Attempt, o *evalctl.Outcome) {
	var scroll func()
	defer func() {
		if scroll != nil {
			scroll()
		}
		p.push()
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.current, a.ID)
	delete(p.phases, a.ID)
	arm := p.arm(a.Arm)
	if a.State == evalctl.Completed || a.State == evalctl.InfraFailed {
		p.done++
		p.doneHere++
		if arm != nil {
			arm.done++
		}
	}
	if m := a.Measurements; m != nil && a.State == evalctl.Completed {
		if m.NativeOutputTokens != nil && m.DecodeSeconds != nil {
			p.tokens += *m.NativeOutputTokens
			p.decodeSec += *m.DecodeSeconds
		} else {
			p.unmeasured++
		}
	}
	verdict := "unscored"
	if o != nil {
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
		verdict = fmt.Sprintf("functional=%v delivered=%v", o.Functional, o.Delivered)
	}
	line := fmt.Sprintf("%s %-9s [%d/%d] %s %s %s: %s%s\n", p.now().Format("15:04:05"), a.State, p.done, p.total, a.Arm, a.Case, a.Repeat, verdict, errSuffix(a.Error))
	if p.live {
		if sc := p.screen; sc != nil {
			scroll = func() { sc.scroll(line) } // above the live lines
		}
		return
	}
	fmt.Fprint(p.w, line)
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
