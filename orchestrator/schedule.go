package orchestrator

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// ErrEndpointFailing is returned when the circuit breaker stopped the run:
// several attempts in a row on one endpoint were infrastructure failures.
// The run can be resumed with --replace-infra once the endpoint is back.
var ErrEndpointFailing = errors.New("endpoint failing")

// ErrIncomplete is returned when a run ended without scoring every planned
// attempt (some are infrastructure failures left for --replace-infra).
var ErrIncomplete = errors.New("run incomplete")

// Resumable reports whether err means the run stopped before its end and
// can be continued (guard, Ctrl-C, a failing endpoint, attempts left to
// replace, the watchdog): the command to continue is in the error's text.
func Resumable(err error) bool {
	return errors.Is(err, ErrGuard) || errors.Is(err, ErrInterrupted) || errors.Is(err, ErrEndpointFailing) || errors.Is(err, ErrIncomplete) || errors.Is(err, ErrStoppedByRule) || errors.Is(err, ErrStalled)
}

// deviceKey is the scheduling key of an arm without an endpoint pool: its
// device label (an attempt of a pool arm is keyed by its replica's). Arms
// that name none share the empty label, so concurrency then counts over
// the whole run, whatever the endpoints.
func deviceKey(arm *Arm) string { return arm.Replicas()[0].Device }

// endpointKey names the endpoint an attempt goes to, for the circuit
// breaker: its replica's base URL, or its server profile.
func endpointKey(arm *Arm, rep Replica) string {
	if arm.Profile != "" {
		return "profile " + arm.Profile
	}
	return rep.BaseURL
}

// overlaps records which attempts were in flight together on one device
// label. An attempt is in flight from before its start time is taken until
// after its endpoint release time is (grading comes after), so any two
// attempts whose recorded [started_at, endpoint_released_at] intervals
// intersect on one label name each other.
type overlaps struct {
	mu   sync.Mutex
	live map[string]map[string]map[string]bool // label -> in-flight id -> ids that overlapped it
}

func (o *overlaps) begin(label, id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.live == nil {
		o.live = map[string]map[string]map[string]bool{}
	}
	l := o.live[label]
	if l == nil {
		l = map[string]map[string]bool{}
		o.live[label] = l
	}
	mine := map[string]bool{}
	for other, theirs := range l {
		theirs[id] = true
		mine[other] = true
	}
	l[id] = mine
}

// end returns the attempts that overlapped id (sorted; empty, never nil,
// when none) and takes id out of flight.
func (o *overlaps) end(label, id string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := []string{}
	for other := range o.live[label][id] {
		out = append(out, other)
	}
	sort.Strings(out)
	delete(o.live[label], id)
	return out
}

// breaker counts consecutive infrastructure failures per endpoint: an
// attempt that failed counts when it ends, one whose model part ended well
// when it gives the endpoint back (its grade comes after).
type breaker struct {
	mu    sync.Mutex
	max   int
	count map[string]int
	last  map[string]string
}

func newBreaker(max int) *breaker {
	if max <= 0 {
		max = DefaultMaxConsecutiveInfraFailures
	}
	return &breaker{max: max, count: map[string]int{}, last: map[string]string{}}
}

// observe records an attempt's end on endpoint; it returns a non-empty
// cause when the endpoint has now failed max times in a row.
func (b *breaker) observe(endpoint string, infra bool, why string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !infra {
		b.count[endpoint] = 0
		return ""
	}
	b.count[endpoint]++
	b.last[endpoint] = why
	if b.count[endpoint] < b.max {
		return ""
	}
	return fmt.Sprintf("%d attempts in a row on %s were infrastructure failures; the last: %s", b.count[endpoint], endpoint, why)
}

// alone says no attempt but id is in flight on the label.
func (o *overlaps) alone(label, id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for other := range o.live[label] {
		if other != id {
			return false
		}
	}
	return true
}
