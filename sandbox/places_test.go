package sandbox

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
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
	for range 5000 {
		if cond() {
			return
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition not met")
}
