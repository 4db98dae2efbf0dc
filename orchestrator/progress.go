package orchestrator

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evalctl/evalctl/orchestrator/runstore"
)

// progress shows a run as it goes: on a terminal one live status line
// redrawn in place, elsewhere one plain log line per event.
type progress struct {
	mu        sync.Mutex
	w         io.Writer
	live      bool
	total     int
	done      int
	began     time.Time
	current   map[string]*runstore.Attempt
	tokens    int64
	decodeSec float64
	// unmeasured counts completed attempts whose tokens or decode seconds
	// are unknown: left out of tokens and decode TPS, not added as 0.
	unmeasured int
	scored     int
	funcOK     int
	delivOK    int
	stop       chan struct{}
}

func newProgress(w io.Writer, live bool, total int) *progress {
	return &progress{w: w, live: live, total: total, current: map[string]*runstore.Attempt{}}
}

func (p *progress) start(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.began = done, time.Now()
	if p.live {
		p.stop = make(chan struct{})
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					p.mu.Lock()
					select {
					case <-p.stop:
						// finish ran while this tick waited for the lock:
						// the line is final.
					default:
						p.draw()
					}
					p.mu.Unlock()
				case <-p.stop:
					return
				}
			}
		}()
	}
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		close(p.stop)
		p.draw()
		fmt.Fprintln(p.w)
	}
}

func (p *progress) begin(a *runstore.Attempt) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current[a.ID] = a
	if p.live {
		p.draw()
		return
	}
	fmt.Fprintf(p.w, "%s start  [%d/%d] %s %s %s\n", stamp(), p.done+1, p.total, a.Arm, a.Case, a.Repeat)
}

func (p *progress) end(a *runstore.Attempt, o *runstore.Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.current, a.ID)
	if a.State == runstore.Completed || a.State == runstore.InfraFailed {
		p.done++
	}
	if m := a.Measurements; m != nil && a.State == runstore.Completed {
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
		verdict = fmt.Sprintf("functional=%v delivered=%v", o.Functional, o.Delivered)
	}
	if p.live {
		p.draw()
		return
	}
	fmt.Fprintf(p.w, "%s %-9s [%d/%d] %s %s %s: %s%s\n", stamp(), a.State, p.done, p.total, a.Arm, a.Case, a.Repeat, verdict, errSuffix(a.Error))
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// draw redraws the status line; p.mu is held.
func (p *progress) draw() {
	var cur []string
	for _, a := range p.current {
		cur = append(cur, a.Arm+"/"+a.Case+"/"+a.Repeat)
	}
	sort.Strings(cur) // a steady order from one redraw to the next
	tps := "-"
	if p.decodeSec > 0 {
		tps = fmt.Sprintf("%.1f", float64(p.tokens)/p.decodeSec)
	}
	tokens := strconv.FormatInt(p.tokens, 10)
	if p.unmeasured > 0 {
		tokens += fmt.Sprintf(" (+%d attempt(s) unknown, not counted)", p.unmeasured)
	}
	line := fmt.Sprintf("[%d/%d] %s  elapsed %s  tokens %s  decode TPS %s  functional %d/%d  delivered %d/%d",
		p.done, p.total, strings.Join(cur, ","), time.Since(p.began).Round(time.Second), tokens, tps, p.funcOK, p.scored, p.delivOK, p.scored)
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

func stamp() string { return time.Now().Format("15:04:05") }
