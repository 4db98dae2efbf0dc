package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
)

// ErrStalled is returned when the watchdog stopped a run that made no
// progress for its configured time (Options.StallAfter); the error's text
// names what waited on what and the command that continues the run.
var ErrStalled = errors.New("run stalled")

// DefaultStallAfter is how long a run may go without progress before the
// watchdog stops it. Progress is any model response or command of an
// attempt, an attempt starting or ending, or a sandbox place granted or
// given back, so only a run that is stuck goes this long without one.
const DefaultStallAfter = 15 * time.Minute

// watchdog stops a run that makes no progress for after: it calls stop
// with a description of what waits on what, once.
type watchdog struct {
	after time.Duration
	// clocks are other sources of progress (a pool's last place change).
	clocks []func() time.Time
	// describe names what waits on what.
	describe func() string

	mu   sync.Mutex
	last time.Time
	// longest is the longest time between two progress marks so far.
	longest time.Duration
}

func newWatchdog(after time.Duration, describe func() string, clocks ...func() time.Time) *watchdog {
	if after <= 0 {
		after = DefaultStallAfter
	}
	return &watchdog{after: after, clocks: clocks, describe: describe, last: time.Now()}
}

// progress records that the run moved.
func (w *watchdog) progress() {
	now := time.Now()
	gap := now.Sub(w.latest())
	w.mu.Lock()
	w.last = now
	w.longest = max(w.longest, gap)
	w.mu.Unlock()
}

// stillest is the longest time without progress so far, up to now.
func (w *watchdog) stillest() time.Duration {
	gap := time.Since(w.latest())
	w.mu.Lock()
	defer w.mu.Unlock()
	return max(w.longest, gap)
}

// latest is the last progress from any source.
func (w *watchdog) latest() time.Time {
	w.mu.Lock()
	t := w.last
	w.mu.Unlock()
	for _, c := range w.clocks {
		if ct := c(); ct.After(t) {
			t = ct
		}
	}
	return t
}

// watch checks for progress until ctx ends; when there was none for
// w.after it calls stop with why and returns.
func (w *watchdog) watch(ctx context.Context, stop func(why string)) {
	tick := time.NewTicker(w.after / 8)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if idle := now.Sub(w.latest()); idle >= w.after {
				stop(fmt.Sprintf("no progress for %s: %s", idle.Round(time.Millisecond), w.describe()))
				return
			}
		}
	}
}

// watch starts the run's watchdog: with no progress for StallAfter, the
// run's event log says what waited on what and the run stops (stop's
// cause wraps ErrStalled); attempts in flight end interrupted, to be run
// again on resume.
func (r *runner) watch(ctx context.Context, stop context.CancelCauseFunc) {
	var clocks []func() time.Time
	pool, _ := r.opts.Engine.(*sandbox.Hosts)
	if pool != nil {
		clocks = append(clocks, pool.LastChange)
	}
	r.watchdog = newWatchdog(r.opts.StallAfter, func() string {
		why := r.devs.describe()
		if pool != nil {
			why += "; " + pool.Waiting()
		}
		return why
	}, clocks...)
	go r.watchdog.watch(ctx, func(why string) {
		r.store.Log(runstore.Event{Kind: evalctl.EventStalled, Detail: why})
		stop(fmt.Errorf("%w: %s", ErrStalled, why))
	})
}

// logSchedule writes the session's scheduling figures to the event log:
// time waiting for sandbox places (a pool of engines only; one engine has
// no count of places) and the longest time without progress.
func (r *runner) logSchedule() {
	if r.watchdog == nil {
		return
	}
	s := evalctl.Schedule{LongestWithoutProgressSeconds: r.watchdog.stillest().Seconds()}
	if pool, ok := r.opts.Engine.(*sandbox.Hosts); ok {
		total, n, longest := pool.Waited()
		s.Places = &evalctl.PlaceWait{TotalSeconds: total.Seconds(), Grants: n, LongestSeconds: longest.Seconds()}
	}
	r.store.Log(runstore.Event{Kind: evalctl.EventSchedule, Detail: s.Detail()})
}

// progress tells the run's watchdog the run moved (no-op before the run
// executes).
func (r *runner) progress() {
	if r.watchdog != nil {
		r.watchdog.progress()
	}
}

// progressWriter tells the watchdog of every transcript write.
type progressWriter struct{ r *runner }

func (w progressWriter) Write(p []byte) (int, error) {
	w.r.progress()
	return len(p), nil
}

// interruption says why an attempt in flight was cut short.
func interruption(ctx context.Context) string {
	if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) {
		return "stopped by the watchdog (" + cause.Error() + "); run again on resume"
	}
	return "cancelled by the user (Ctrl-C); run again on resume"
}
