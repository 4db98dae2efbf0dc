package poll

import (
	"testing"
	"time"
)

func TestStretch(t *testing.T) {
	for _, tt := range []struct{ load, want float64 }{
		{0, 1}, {0.5, 1}, {1, 1}, {3, 3}, {40, maxStretch},
	} {
		if got := stretch(tt.load); got != tt.want {
			t.Errorf("stretch(%v) = %v, want %v", tt.load, got, tt.want)
		}
	}
	if got := Scale(time.Second); got < time.Second || got > maxStretch*time.Second {
		t.Errorf("Scale(1s) = %v, outside [1s, %ds]", got, maxStretch)
	}
}

func TestFor(t *testing.T) {
	n := 0
	if !For(time.Minute, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("For stopped after %d looks, want 3 and true", n)
	}
	start := time.Now()
	if For(time.Millisecond, func() bool { return false }) {
		t.Error("For reported a condition that never held")
	}
	if time.Since(start) > time.Minute {
		t.Error("For waited far past its deadline")
	}
	// A condition that turns true at the last look still counts.
	late := time.Now().Add(Scale(time.Millisecond))
	if !For(time.Millisecond, func() bool { return time.Now().After(late) }) {
		t.Error("a condition that held at the deadline was reported as never")
	}
}

type deadlineOf time.Time

func (d deadlineOf) Deadline() (time.Time, bool) { return time.Time(d), true }

func TestForTest(t *testing.T) {
	n := 0
	if !ForTest(t, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("ForTest stopped after %d looks, want 3 and true", n)
	}
	// A deadline 30 s away or nearer leaves no time to wait: one look.
	n = 0
	start := time.Now()
	if ForTest(deadlineOf(time.Now().Add(30*time.Second)), func() bool { n++; return false }) {
		t.Error("ForTest reported a condition that never held")
	}
	if n > 2 || time.Since(start) > 5*time.Second {
		t.Errorf("ForTest looked %d times over %v with no time left before the test's deadline", n, time.Since(start))
	}
}
