package evalctl

import (
	"fmt"
	"strings"
	"time"
)

// Event is one line of a run directory's append-only event log
// (events.jsonl): what happened when, to which attempt, in a few words.
// Readers count attempts and sessions from it without reading every
// attempt record.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    EventKind `json:"kind"`
	Attempt string    `json:"attempt,omitempty"`
	Detail  string    `json:"detail,omitempty"`
}

// EventKind says what an event records.
type EventKind string

// Events of a cohort run. An attempt's end is an event whose kind is the
// state it ended in (StateEvent): completed, infra_failed, interrupted,
// cancelled_before_start or cancelled_after_start.
const (
	// EventRegistered opens the log: detail "plan sha256 SUM, N attempts".
	EventRegistered EventKind = "registered"
	// EventResumed starts another runner session on the run.
	EventResumed EventKind = "resumed"
	// EventStart is an attempt taken up: detail "slot N ARM CASE REPEAT".
	EventStart EventKind = "start"
	// EventCompleted and the next four are an attempt's end (EventCancelled
	// in logs written before cancelled attempts were told apart).
	EventCompleted            = EventKind(Completed)
	EventInfraFailed          = EventKind(InfraFailed)
	EventInterrupted          = EventKind(Interrupted)
	EventCancelledBeforeStart = EventKind(CancelledBeforeStart)
	EventCancelledAfterStart  = EventKind(CancelledAfterStart)
	EventCancelled            = EventKind(Cancelled)
	// EventReplaceInfra is a new attempt for an infrastructure failure's
	// slot: detail "replaces ID".
	EventReplaceInfra EventKind = "replace_infra"
	// EventRest is a rest between attempts (the plan's rest_seconds):
	// detail "FROM to TO", RFC 3339 with nanoseconds.
	EventRest EventKind = "rest"
	// EventGuard is a guard that stopped the run: detail says which.
	EventGuard EventKind = "guard"
	// EventStopRule is the plan's stop rule stopping the run (the speed
	// ratio settled): detail says what the interval read. A resume runs
	// the rest of the plan.
	EventStopRule EventKind = "stop_rule"
	// EventEndpointFailing is the circuit breaker stopping the run after
	// consecutive infrastructure failures on one endpoint.
	EventEndpointFailing EventKind = "endpoint_failing"
	// EventEngineDrained is a sandbox engine that stopped answering; the
	// run went on with the others.
	EventEngineDrained EventKind = "engine_drained"
	// EventReplicaOut is a replica of an endpoint pool taken out of
	// rotation (its health probe failed, or the breaker tripped on it);
	// EventReplicaBack is its return once a probe passed.
	EventReplicaOut  EventKind = "replica_out"
	EventReplicaBack EventKind = "replica_back"
	// EventSchedule closes a runner session: detail says how long its
	// containers waited for sandbox places (total over how many, longest)
	// and its longest time without progress.
	EventSchedule EventKind = "schedule"
	// EventStalled is the watchdog stopping a run that made no progress
	// for its configured time: detail names what waited on what.
	EventStalled EventKind = "stalled"
	// EventIdentityFailed is a started model server that would not say
	// who it is; the work went on without its identity.
	EventIdentityFailed EventKind = "identity_failed"
)

// Events of screens and capacity probes.
const (
	// EventScreenStart opens a screen session: detail "N of M finished".
	EventScreenStart EventKind = "screen_start"
	// EventScreenEnd closes it: detail "N failed".
	EventScreenEnd EventKind = "screen_end"
	// EventLegStart, EventLegFailed and EventLegEnd bracket one leg (a
	// mode and its server).
	EventLegStart  EventKind = "leg_start"
	EventLegFailed EventKind = "leg_failed"
	EventLegEnd    EventKind = "leg_end"
	// EventSample is one sample taken: Attempt is its key, detail its
	// state.
	EventSample EventKind = "sample"
	// EventCapacityStart and EventCapacity are a capacity probe trying a
	// size and its result: detail "SIZE: STATE".
	EventCapacityStart EventKind = "capacity_start"
	EventCapacity      EventKind = "capacity"
)

// StateEvent is the kind of the event that records an attempt ending in
// state s.
func StateEvent(s State) EventKind { return EventKind(s) }

// Schedule is what an EventSchedule records of one runner session, in its
// detail: "waited for sandbox places T s over N grant(s), longest L s;
// longest without progress P s" (the first part only on a pool of engines:
// one engine counts no places). Seconds are written to 0.1 s.
type Schedule struct {
	// Places is the time the session's containers waited for sandbox
	// places; nil when the session ran on one engine.
	Places *PlaceWait `json:"places"`
	// LongestWithoutProgressSeconds is the session's longest time without
	// progress, as the watchdog counts progress.
	LongestWithoutProgressSeconds float64 `json:"longest_without_progress_seconds"`
}

// PlaceWait is the time containers waited for sandbox places: in total
// over Grants grants (a place granted at once counts, with no wait) and the
// longest single wait.
type PlaceWait struct {
	TotalSeconds   float64 `json:"total_seconds"`
	Grants         int     `json:"grants"`
	LongestSeconds float64 `json:"longest_seconds"`
}

// Detail is s as an EventSchedule's detail.
func (s Schedule) Detail() string {
	d := fmt.Sprintf("longest without progress %.1f s", s.LongestWithoutProgressSeconds)
	if p := s.Places; p != nil {
		d = fmt.Sprintf("waited for sandbox places %.1f s over %d grant(s), longest %.1f s; %s", p.TotalSeconds, p.Grants, p.LongestSeconds, d)
	}
	return d
}

// ParseSchedule reads an EventSchedule's detail (Schedule.Detail).
func ParseSchedule(detail string) (Schedule, error) {
	var s Schedule
	rest := detail
	if strings.HasPrefix(detail, "waited for sandbox places ") {
		head, tail, ok := strings.Cut(detail, "; ")
		if !ok {
			return Schedule{}, fmt.Errorf("schedule event %q: want \"...; longest without progress P s\"", detail)
		}
		var p PlaceWait
		if _, err := fmt.Sscanf(head, "waited for sandbox places %g s over %d grant(s), longest %g s", &p.TotalSeconds, &p.Grants, &p.LongestSeconds); err != nil {
			return Schedule{}, fmt.Errorf("schedule event %q: the places part: %w", detail, err)
		}
		s.Places, rest = &p, tail
	}
	var tail string
	if n, _ := fmt.Sscanf(rest, "longest without progress %g s%s", &s.LongestWithoutProgressSeconds, &tail); n != 1 {
		return Schedule{}, fmt.Errorf("schedule event %q: want \"longest without progress P s\"", detail)
	}
	return s, nil
}
