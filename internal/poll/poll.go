// Package poll is how tests wait: on a condition with a deadline, never
// for a fixed time. Deadlines stretch with the machine's load, so a test
// that passes on an idle machine does not fail on a busy one for want of
// time, and one that can never pass still fails.
package poll

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Interval is the pause between two looks at a condition.
const Interval = 20 * time.Millisecond

// maxStretch bounds how far load stretches a deadline.
const maxStretch = 8

// Until calls cond until it returns true, and fails t naming what if it
// has not within d (stretched by Scale).
func Until(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	if !For(d, cond) {
		t.Fatalf("gave up waiting for %s after %v", what, Scale(d))
	}
}

// For calls cond until it returns true (then For returns true) or d,
// stretched by Scale, has passed (false): for callers that must clean up
// before they fail.
func For(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(Scale(d)); !cond(); time.Sleep(Interval) {
		if time.Now().After(end) {
			return cond()
		}
	}
	return true
}

// Scale stretches d by the machine's load per core (read from
// /proc/loadavg), between 1x and 8x; where the load is unknown it is d.
func Scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * stretch(loadPerCore()))
}

func stretch(load float64) float64 {
	return min(max(load, 1), maxStretch)
}

func loadPerCore() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	l, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return l / float64(runtime.NumCPU())
}

// ForTest calls cond until it returns true (true) or the test's own
// deadline is 30 s away (false; without a deadline, after ten minutes):
// for waits on work whose length the test cannot bound better, such as
// a whole cohort, with time left to clean up and report.
func ForTest(t interface{ Deadline() (time.Time, bool) }, cond func() bool) bool {
	end := time.Now().Add(10 * time.Minute)
	if d, ok := t.Deadline(); ok {
		end = d.Add(-30 * time.Second)
	}
	for ; !cond(); time.Sleep(Interval) {
		if time.Now().After(end) {
			return cond()
		}
	}
	return true
}
