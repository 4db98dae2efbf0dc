package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
)

// TestWatchdogNamesWhatWaitsOnWhat: a cohort stuck on a sandbox place (a
// grade holds the only place, an attempt's agent waits for it) is stopped
// by the watchdog once no progress was made for its time; the stop wraps
// ErrStalled (resumable) and names the waiter and the holder. Progress
// keeps it quiet.
func TestWatchdogNamesWhatWaitsOnWhat(t *testing.T) {
	places := sandbox.NewPlaces([]sandbox.PlaceEngine{{Name: "e0", Capacity: 1, Lost: func() bool { return false }}})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	held, err := places.Acquire(ctx, sandbox.Spec{Role: sandbox.RoleGrader, Attempt: "a01"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Free()
	waiting := make(chan error, 1)
	go func() {
		_, err := places.Acquire(ctx, sandbox.Spec{Role: sandbox.RoleAgent, Attempt: "a02", Class: sandbox.ClassAttempt})
		waiting <- err
	}()
	w := newWatchdog(300*time.Millisecond, places.Describe, places.LastChange)
	// Progress for a while: no stop.
	quiet := time.Now().Add(900 * time.Millisecond)
	stopped := make(chan string, 1)
	go w.watch(ctx, func(why string) {
		stopped <- why
		cancel(fmt.Errorf("%w: %s", ErrStalled, why))
	})
	for time.Now().Before(quiet) {
		w.progress()
		select {
		case why := <-stopped:
			t.Fatalf("the watchdog stopped a run making progress: %s", why)
		case <-time.After(50 * time.Millisecond):
		}
	}
	var why string
	select {
	case why = <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the watchdog never stopped the stuck run")
	}
	for _, want := range []string{"agent container of attempt a02 (attempt) waits for a sandbox place", "grade of attempt a01 (grade) on e0", "1 of 1 places in use"} {
		if !strings.Contains(why, want) {
			t.Errorf("the watchdog's reason %q does not say %q", why, want)
		}
	}
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("the waiter ended with %v, want the run's cancellation", err)
	}
	if !Resumable(context.Cause(ctx)) {
		t.Errorf("the stop %v is not resumable", context.Cause(ctx))
	}
}
