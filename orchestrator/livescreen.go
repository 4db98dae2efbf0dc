package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/transcript"
)

// armProgress counts one arm's attempts for the live display.
type armProgress struct {
	name                    string
	planned, done           int
	scored, funcOK, delivOK int
}

// Write prints lines (a model server starting, a warning) on the progress
// output: above the live display while it runs, so they do not tear it.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	s := p.screen
	p.mu.Unlock()
	if s != nil {
		s.scroll(string(b))
		return len(b), nil
	}
	return p.w.Write(b)
}

// setArms gives the display each arm's planned attempts (plan order) and
// how many are left to run (todo), so that each arm gets its own line.
func (p *progress) setArms(plan *Plan, todo []*evalctl.Attempt) {
	left := map[string]int{}
	for _, a := range todo {
		left[a.Arm]++
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.arms = nil
	for _, a := range plan.Arms {
		n := 0
		for _, s := range plan.Slots {
			if s.Arm == a.Name {
				n++
			}
		}
		p.arms = append(p.arms, &armProgress{name: a.Name, planned: n, done: max(0, n-left[a.Name])})
	}
}

// arm returns the counts of the named arm, or nil; p.mu is held.
func (p *progress) arm(name string) *armProgress {
	for _, a := range p.arms {
		if a.name == name {
			return a
		}
	}
	return nil
}

// phase says what a running attempt does now ("starting the model server",
// "grading phase 1"); the live display shows it.
func (p *progress) phase(a *evalctl.Attempt, what string) {
	p.mu.Lock()
	var phases map[string]string
	var seq uint64
	if _, ok := p.current[a.ID]; ok && p.phases[a.ID] != what {
		p.phases[a.ID] = what
		phases, seq = p.snapshot()
	}
	p.mu.Unlock()
	if phases != nil {
		p.save(phases, seq)
	}
	p.push()
}

// transcriptTap returns a writer that reads the attempt's transcript as the
// agent writes it (one JSON event a line) and keeps the attempt's phase:
// the agent step and the tokens generated so far.
func (p *progress) transcriptTap(a *evalctl.Attempt) *tap {
	return &tap{p: p, a: a}
}

type tap struct {
	p      *progress
	a      *evalctl.Attempt
	buf    []byte
	step   int
	tokens int64
	turn   int
}

// Write never fails: the display must not cost the transcript a byte.
func (t *tap) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		var e transcript.Event
		if json.Unmarshal(t.buf[:i], &e) == nil {
			switch e.Kind {
			case transcript.EventRequest:
				t.step, t.turn = e.Seq, e.Phase
			case transcript.EventResponse:
				if e.Response != nil {
					if n, ok := e.Response.OutputTokens(); ok {
						t.tokens += n
					}
				}
			case transcript.EventTool:
				if e.Tool != nil {
					t.p.phase(t.a, fmt.Sprintf("turn %d, agent step %d, %d tokens, ran %s", t.turn, t.step, t.tokens, e.Tool.Name))
				}
				t.buf = t.buf[i+1:]
				continue
			}
			t.p.phase(t.a, fmt.Sprintf("turn %d, agent step %d, %d tokens", t.turn, t.step, t.tokens))
		}
		t.buf = t.buf[i+1:]
	}
	return len(b), nil
}

// frame is what the live display shows, copied out of progress under its
// lock: the display's goroutine formats it without taking the lock.
type frame struct {
	done, total, doneHere      int
	began                      time.Time
	tokens                     int64
	decodeSec                  float64
	unmeasured, scored, funcOK int
	delivOK                    int
	arms                       []armProgress
	running                    []string
}

// frame copies the display's state; p.mu is held.
func (p *progress) frame() *frame {
	f := &frame{done: p.done, total: p.total, doneHere: p.doneHere, began: p.began, tokens: p.tokens,
		decodeSec: p.decodeSec, unmeasured: p.unmeasured, scored: p.scored, funcOK: p.funcOK, delivOK: p.delivOK}
	for _, a := range p.arms {
		f.arms = append(f.arms, *a)
	}
	for id, a := range p.current {
		f.running = append(f.running, fmt.Sprintf("%s/%s/%s: %s", a.Arm, a.Case, a.Repeat, p.phases[id]))
	}
	sort.Strings(f.running) // a steady order from one redraw to the next
	return f
}

// summary is the pooled line at time now.
func (f *frame) summary(now time.Time) string {
	tps := "-"
	if f.decodeSec > 0 {
		tps = fmt.Sprintf("%.1f", float64(f.tokens)/f.decodeSec)
	}
	tokens := strconv.FormatInt(f.tokens, 10)
	if f.unmeasured > 0 {
		tokens += fmt.Sprintf(" (+%d attempt(s) unknown, not counted)", f.unmeasured)
	}
	return fmt.Sprintf("[ended %d of %d, %d running]  elapsed %s  ETA %s  tokens %s  decode TPS %s  functional %d/%d  delivered %d/%d",
		f.done, f.total, len(f.running), now.Sub(f.began).Round(time.Second), f.eta(now), tokens, tps, f.funcOK, f.scored, f.delivOK, f.scored)
}

// eta is the time left at the pace of the attempts this runner finished:
// unknown ("-") until one has.
func (f *frame) eta(now time.Time) string {
	left := f.total - f.done
	if left <= 0 {
		return "0s"
	}
	if f.doneHere == 0 {
		return "-"
	}
	per := now.Sub(f.began) / time.Duration(f.doneHere)
	return (per * time.Duration(left)).Round(time.Second).String()
}

// liveScreen draws the frame with mpb: a bar per arm, the running
// attempts, the pooled line; lines written through scroll appear above.
type liveScreen struct {
	mp     *mpb.Progress
	bars   []*mpb.Bar
	others []*mpb.Bar
	cur    atomic.Pointer[frame]
	now    func() time.Time
	mu     sync.Mutex // orders bar updates
}

// liveOptions lets tests drive the display's refresh by hand.
var liveOptions []mpb.ContainerOption

func newLiveScreen(p *progress) *liveScreen {
	s := &liveScreen{now: p.now}
	s.cur.Store(p.frame())
	opts := append([]mpb.ContainerOption{mpb.WithOutput(p.w), mpb.WithWidth(24), mpb.WithRefreshRate(200 * time.Millisecond), mpb.WithAutoRefresh()}, liveOptions...)
	s.mp = mpb.New(opts...)
	width := 4
	for _, a := range p.arms {
		width = max(width, len(a.name))
	}
	for i, a := range p.arms {
		i := i
		bar := s.mp.New(int64(max(a.planned, 1)), mpb.BarStyle().Lbound("[").Rbound("]"),
			mpb.PrependDecorators(decor.Name(a.name, decor.WC{W: width + 1, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
				f := s.cur.Load()
				if i >= len(f.arms) {
					return ""
				}
				x := f.arms[i]
				return fmt.Sprintf(" %d/%d done  functional %d/%d  delivered %d/%d", x.done, x.planned, x.funcOK, x.scored, x.delivOK, x.scored)
			})))
		bar.SetCurrent(int64(a.done))
		s.bars = append(s.bars, bar)
	}
	line := func(fn func(*frame) string) *mpb.Bar {
		return s.mp.New(1, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return fn(s.cur.Load()) })))
	}
	s.others = append(s.others,
		line(func(f *frame) string {
			if len(f.running) == 0 {
				return "now: -"
			}
			return "now: " + strings.Join(f.running, "; ")
		}),
		line(func(f *frame) string { return f.summary(s.now()) }))
	return s
}

// show makes f the displayed frame and moves the arm bars.
func (s *liveScreen) show(f *frame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.Store(f)
	for i, b := range s.bars {
		if i < len(f.arms) {
			b.SetCurrent(int64(min(f.arms[i].done, max(f.arms[i].planned, 1))))
		}
	}
}

// scroll prints a finished attempt's line above the live lines.
func (s *liveScreen) scroll(line string) { s.mp.Write([]byte(line)) }

// close draws the last frame and leaves it on the screen.
func (s *liveScreen) close() {
	s.mu.Lock()
	for _, b := range append(s.bars, s.others...) {
		if !b.Completed() {
			b.Abort(false)
		}
	}
	s.mu.Unlock()
	s.mp.Wait()
}
