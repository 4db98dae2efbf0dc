package sandbox

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"
)

// TestMismatchSaysFoundAndExpected: a load that left another image names
// what it found and the ID expected, and wraps ErrImageMismatch; the drain
// line for it says the engine was refused, not that it stopped answering.
func TestMismatchSaysFoundAndExpected(t *testing.T) {
	err := mismatch("there", []string{"sha256:" + strings.Repeat("b", 64)}, "sha256:"+strings.Repeat("a", 64))
	if !errors.Is(err, ErrImageMismatch) {
		t.Fatalf("%v does not wrap ErrImageMismatch", err)
	}
	for _, want := range []string{"found sha256:bbbb", "expected image aaaaaaaaaaaa", "engine there"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if c := DrainCause(err); !strings.HasPrefix(c, "was refused") || strings.Contains(c, "stopped answering") {
		t.Errorf("drain cause %q", c)
	}
	if c := DrainCause(ErrEngineLost); !strings.HasPrefix(c, "stopped answering") {
		t.Errorf("drain cause of a lost engine %q", c)
	}
}

// TestLoadResultNamesWhatLoaded reads what a load reports.
func TestLoadResultNamesWhatLoaded(t *testing.T) {
	got, err := loadResult(strings.NewReader(`{"stream":"Loaded image ID: sha256:abc\n"}` + "\n" + `{"stream":"Loaded image: x:y\n"}`))
	if err != nil || len(got) != 2 || got[0] != "sha256:abc" || got[1] != "x:y" {
		t.Fatalf("loaded %v, %v", got, err)
	}
	if _, err := loadResult(strings.NewReader(`{"error":"no space left"}`)); err == nil || err.Error() != "no space left" {
		t.Fatalf("load error %v", err)
	}
}

// TestPlacesGrantByClass: with the only place held, waiters are served
// attempt first, then grade, then work ahead of need; work ahead is never
// granted a place while someone waits, and its holder is asked to give
// the place back when an attempt comes to wait; a waiter ahead that is
// promoted is served as an attempt.
func TestPlacesGrantByClass(t *testing.T) {
	p := NewPlaces([]PlaceEngine{{Name: "e0", Capacity: 1, Lost: func() bool { return false }}})
	ctx := t.Context()
	yielded := make(chan struct{})
	var ahead *Place
	ahead, ok := p.TryAcquire(Spec{Attempt: "a0"})
	if !ok {
		t.Fatal("a free place nobody waits for was refused to work ahead")
	}
	ahead.g.want.yield = func() bool { close(yielded); return true }
	order := make(chan string, 3)
	wait := func(spec Spec, name string) {
		go func() {
			pl, err := p.Acquire(ctx, spec)
			if err != nil {
				order <- "error " + err.Error()
				return
			}
			order <- name
			pl.Free()
		}()
	}
	promote := make(chan struct{})
	wait(Spec{Class: ClassAhead, Attempt: "a3", Yield: func() bool { return false }, Promote: promote}, "promoted")
	waitFor(t, func() bool { return p.Waiters() == 1 })
	wait(Spec{Role: RoleGrader, Attempt: "a1"}, "grade")
	waitFor(t, func() bool { return p.Waiters() == 2 })
	wait(Spec{Class: ClassAttempt, Attempt: "a2"}, "attempt")
	waitFor(t, func() bool { return p.Waiters() == 3 })
	close(promote)
	<-yielded
	waitFor(t, func() bool { return strings.Contains(p.Describe(), "attempt a3 (attempt) waits") })
	if _, ok := p.TryAcquire(Spec{Attempt: "x"}); ok {
		t.Fatal("work ahead was granted a place while others wait")
	}
	ahead.Free()
	var got []string
	for range 3 {
		got = append(got, <-order)
	}
	// The promoted waiter came first of the two attempts' class.
	if strings.Join(got, " ") != "promoted attempt grade" {
		t.Fatalf("served in the order %v, want promoted attempt grade", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	poll.Until(t, "the waiters", 5*time.Second, cond)
}

// TestPlacesReclaimAfterDrain: when an engine is drained, the places held
// ahead of need on it serve nobody, so the waiter's claim goes to the
// holders on the engines left: a holder on the drained engine that agrees
// to give its place back (at once or later) does not stand in for one
// that can serve the waiter.
func TestPlacesReclaimAfterDrain(t *testing.T) {
	for _, tc := range []struct {
		name string
		// drainFirst drains e0 before the attempt waits; otherwise the
		// attempt waits first, e0's holder agrees (but is slow to give
		// the place back) and then e0 is drained.
		drainFirst bool
	}{
		{"drained before the wait", true},
		{"drained while its holder gives the place back", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lost atomic.Bool
			p := NewPlaces([]PlaceEngine{
				{Name: "e0", Machine: "m0", Capacity: 1, Lost: lost.Load},
				{Name: "e1", Machine: "m1", Capacity: 1, Lost: func() bool { return false }},
			})
			asked := make(chan string, 4)
			hold := func(near, who string, freeAtOnce bool) *Place {
				pl, ok := p.TryAcquire(Spec{Near: near, Attempt: who})
				if !ok {
					t.Fatalf("no place ahead for %s", who)
				}
				pl.g.want.yield = func() bool {
					asked <- who
					if freeAtOnce {
						pl.Free()
					}
					return true
				}
				return pl
			}
			older := hold("m1", "b", true)
			newer := hold("m0", "c", tc.drainFirst)
			if older.Engine() != "e1" || newer.Engine() != "e0" {
				t.Fatalf("held on %s and %s, want e1 and e0", older.Engine(), newer.Engine())
			}
			newer.g.since = older.g.since.Add(time.Second) // asked first when both may be
			if tc.drainFirst {
				lost.Store(true)
				p.Wake()
			}
			got := make(chan placeResult, 1)
			go func() {
				pl, err := p.Acquire(t.Context(), Spec{Class: ClassAttempt, Attempt: "a"})
				if err != nil {
					got <- placeResult{err: err}
					return
				}
				got <- placeResult{g: pl.g}
			}()
			if !tc.drainFirst {
				if who := <-asked; who != "c" {
					t.Fatalf("%s asked first, want c (the newest)", who)
				}
				lost.Store(true)
				p.Wake()
			}
			select {
			case r := <-got:
				if r.err != nil {
					t.Fatal(r.err)
				}
				if r.g.slot.name != "e1" {
					t.Fatalf("granted on %s, want e1", r.g.slot.name)
				}
				r.g.free()
			case <-time.After(10 * time.Second):
				t.Fatalf("the attempt still waits: %s", p.Describe())
			}
			newer.Free()
		})
	}
}
