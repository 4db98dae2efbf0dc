package runstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
)

// RestEvent is the kind of the event a runner appends after each rest
// between attempts (the plan's rest_seconds); its detail is RestDetail's.
// Reports take rests out of the cohort's wall time.
const RestEvent = evalctl.EventRest

// RestDetail is the detail of a rest event: when the rest began and
// ended, in RFC 3339 with nanoseconds, separated by " to ".
func RestDetail(from, to time.Time) string {
	return from.UTC().Format(time.RFC3339Nano) + " to " + to.UTC().Format(time.RFC3339Nano)
}

// ParseRest reads a rest event's detail back.
func ParseRest(detail string) (from, to time.Time, err error) {
	a, b, ok := strings.Cut(detail, " to ")
	if !ok {
		return from, to, fmt.Errorf("rest event %q: want '<from> to <to>'", detail)
	}
	if from, err = time.Parse(time.RFC3339Nano, a); err != nil {
		return from, to, fmt.Errorf("rest event %q: %w", detail, err)
	}
	if to, err = time.Parse(time.RFC3339Nano, b); err != nil {
		return from, to, fmt.Errorf("rest event %q: %w", detail, err)
	}
	if to.Before(from) {
		return from, to, fmt.Errorf("rest event %q: ends before it begins", detail)
	}
	return from, to, nil
}
