package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// IdleMethod says how EndpointIdle figures are computed; it is recorded
// with them.
const IdleMethod = "idle_share = 1 - busy / wall per device label. busy: the union of the [started_at, endpoint_released_at] intervals of the attempts on the device (an attempt holds its endpoint from its start, server start included, to its last model response; grading is not endpoint time). wall: per runner session (registration or resume), from the session's first attempt start to its last attempt end (grading included), summed over sessions; rests (the plan's rest_seconds, from the event log) are taken out where the device was not busy during them. span_idle_share = 1 - busy / span, span: per session, from the device's first attempt start to its last endpoint release, rests taken out likewise (the device's own working span: what the runner could have kept it busy for). tail_seconds: per session, the cohort wall time after the device's last endpoint release, summed (on one device: the last grades, with nothing left for the device to serve); idle_share counts it, span_idle_share does not."

// EndpointIdle is how much of a cohort's wall time each device's endpoint
// stood idle: the share of time the GPU waited on something else
// (grading, sandboxes, the runner).
type EndpointIdle struct {
	Method  string       `json:"method"`
	Devices []DeviceIdle `json:"devices"`
}

// DeviceIdle is the endpoint idle share of one device label ("" when the
// arms name none). Every figure is null, with Why, when an attempt's hold
// on the endpoint is unknown (a runner killed mid-attempt).
type DeviceIdle struct {
	Device string `json:"device"`
	// Attempts is the number of attempts whose holds make up BusySeconds.
	Attempts    int      `json:"attempts"`
	BusySeconds *float64 `json:"busy_seconds"`
	// WallSeconds is the cohort wall time with this device's rests taken
	// out; RestSeconds is what was taken out.
	WallSeconds *float64 `json:"wall_seconds"`
	RestSeconds *float64 `json:"rest_seconds"`
	IdleShare   *float64 `json:"idle_share"`
	// SpanSeconds is the device's own working span, first attempt start
	// to last endpoint release per session, rests taken out; SpanIdleShare
	// is the idle share over it. TailSeconds is the cohort wall time after
	// the device's last release (on one device: the last grades), which
	// IdleShare counts and SpanIdleShare does not.
	SpanSeconds   *float64 `json:"span_seconds"`
	SpanIdleShare *float64 `json:"span_idle_share"`
	TailSeconds   *float64 `json:"tail_seconds"`
	Why           string   `json:"why,omitempty"`
}

type span struct{ from, to time.Time }

// union merges overlapping spans, sorted by start.
func union(in []span) []span {
	s := append([]span(nil), in...)
	sort.Slice(s, func(i, j int) bool { return s[i].from.Before(s[j].from) })
	var out []span
	for _, x := range s {
		if n := len(out); n > 0 && !x.from.After(out[n-1].to) {
			if x.to.After(out[n-1].to) {
				out[n-1].to = x.to
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

func total(s []span) time.Duration {
	var d time.Duration
	for _, x := range s {
		d += x.to.Sub(x.from)
	}
	return d
}

// minus is the part of a (merged) not covered by b (merged).
func minus(a, b []span) []span {
	var out []span
	for _, x := range a {
		cur := []span{x}
		for _, y := range b {
			var next []span
			for _, c := range cur {
				if !y.from.Before(c.to) || !y.to.After(c.from) {
					next = append(next, c)
					continue
				}
				if y.from.After(c.from) {
					next = append(next, span{c.from, y.from})
				}
				if y.to.Before(c.to) {
					next = append(next, span{y.to, c.to})
				}
			}
			cur = next
		}
		out = append(out, cur...)
	}
	return out
}

// intersect is the part of a (merged) inside b (merged).
func intersect(a, b []span) []span { return minus(a, minus(a, b)) }

// Timeline is what a run's event log says that its endpoint idle share
// needs: when each runner session began (registration, each resume) and
// the rests between attempts. An export carries it in protocol.json, so
// that the share can be recomputed from the export alone.
type Timeline struct {
	Sessions []time.Time `json:"sessions"`
	Rests    []Rest      `json:"rests"`
	// StoppedByRule is true when the plan's stop rule ended the last
	// session (absent otherwise).
	StoppedByRule bool `json:"stopped_by_rule,omitempty"`
	// Schedules holds, per session (in the order of Sessions), the
	// schedule event it wrote at its end, null for a session that wrote
	// none (its runner was killed, or still runs). Absent in exports made
	// before it was recorded: the run then has no schedule figures.
	Schedules []*evalctl.Schedule `json:"schedules,omitempty"`
}

// Rest is one rest between attempts (the plan's rest_seconds).
type Rest struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// NewTimeline reads a run's sessions and rests from its event log.
func NewTimeline(events []runstore.Event) *Timeline {
	tl := &Timeline{Sessions: []time.Time{}, Rests: []Rest{}, StoppedByRule: stoppedByRule(events), Schedules: []*evalctl.Schedule{}}
	for _, e := range events {
		switch e.Kind {
		case evalctl.EventRegistered, evalctl.EventResumed:
			tl.Sessions = append(tl.Sessions, e.Time.UTC())
			tl.Schedules = append(tl.Schedules, nil)
		case evalctl.EventSchedule:
			// It closes the session it belongs to, the latest begun; one
			// that cannot be read counts as none written.
			if n := len(tl.Schedules); n > 0 && tl.Schedules[n-1] == nil {
				if s, err := evalctl.ParseSchedule(e.Detail); err == nil {
					tl.Schedules[n-1] = &s
				}
			}
		case runstore.RestEvent:
			if from, to, err := runstore.ParseRest(e.Detail); err == nil {
				tl.Rests = append(tl.Rests, Rest{from.UTC(), to.UTC()})
			}
		}
	}
	return tl
}

// ComputeEndpointIdle computes a run's endpoint idle share per device from
// its attempt records and event log (see endpointIdle), as for a run no
// runner is working on.
func ComputeEndpointIdle(attempts []*evalctl.Attempt, events []runstore.Event) *EndpointIdle {
	rows := make([]*Row, len(attempts))
	for i, a := range attempts {
		r := NewRow(a, "", nil)
		rows[i] = &r
	}
	return endpointIdle(rows, NewTimeline(events), false)
}

// endpointIdle computes a run's endpoint idle share per device from its
// rows' start, release and finish times and its timeline. It is nil when
// no attempt recorded when it released its endpoint (runs from before
// that was recorded). While a runner works on the run (running), a device
// with an attempt in flight has no share yet: its wall time is not over.
func endpointIdle(rows []*Row, tl *Timeline, running bool) *EndpointIdle {
	recorded := false
	for _, r := range rows {
		if r.EndpointReleasedAt != nil {
			recorded = true
		}
	}
	if !recorded || tl == nil {
		return nil
	}
	sessions := append([]time.Time(nil), tl.Sessions...)
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].Before(sessions[j]) })
	var rests []span
	for _, r := range tl.Rests {
		rests = append(rests, span{r.From, r.To})
	}
	h := collectHolds(rows, sessions, running)
	var wall []span
	for _, w := range h.walls {
		wall = append(wall, *w)
	}
	wall = union(wall)
	rests = intersect(union(rests), wall)
	sort.Strings(h.devices)
	out := &EndpointIdle{Method: IdleMethod, Devices: []DeviceIdle{}}
	for _, d := range h.devices {
		out.Devices = append(out.Devices, h.deviceIdle(d, wall, rests))
	}
	return out
}

// noRelease says why an attempt without an endpoint release leaves its
// device's idle share unknown: it is still running, or the runner stopped
// during it.
func noRelease(r *Row, running bool) string {
	if running && r.State == string(evalctl.Running) {
		return fmt.Sprintf("attempt %s is still running: the share is known once the device's attempts have ended", r.AttemptID)
	}
	return fmt.Sprintf("attempt %s (%s) has no recorded endpoint release: the runner stopped during it, so how long it held the endpoint is unknown", r.AttemptID, r.State)
}

// holds are the attempts' holds on their endpoints, per device label and
// runner session.
type holds struct {
	walls   map[int]*span            // session -> first attempt start to last attempt end
	spans   map[string]map[int]*span // device -> session -> first start to last release
	busy    map[string][]span
	count   map[string]int
	unknown map[string]string
	devices []string
}

// collectHolds gathers each started attempt's hold on its endpoint
// (sessions: the sorted session start times; running: a runner works on
// the run now).
func collectHolds(rows []*Row, sessions []time.Time, running bool) *holds {
	session := func(t time.Time) int { // index of the session t falls in
		return sort.Search(len(sessions), func(i int) bool { return sessions[i].After(t) }) - 1
	}
	h := &holds{walls: map[int]*span{}, spans: map[string]map[int]*span{}, busy: map[string][]span{},
		count: map[string]int{}, unknown: map[string]string{}}
	for _, a := range rows {
		if a.StartedAt == nil {
			continue
		}
		d := a.Device
		if _, ok := h.busy[d]; !ok {
			h.devices = append(h.devices, d)
			h.busy[d] = []span{}
		}
		end := a.FinishedAt
		if end == nil || (a.EndpointReleasedAt != nil && a.EndpointReleasedAt.After(*end)) {
			end = a.EndpointReleasedAt
		}
		if a.EndpointReleasedAt == nil || end == nil {
			if h.unknown[d] == "" {
				h.unknown[d] = noRelease(a, running)
			}
			continue
		}
		h.busy[d] = append(h.busy[d], span{*a.StartedAt, *a.EndpointReleasedAt})
		h.count[d]++
		k := session(*a.StartedAt)
		if h.spans[d] == nil {
			h.spans[d] = map[int]*span{}
		}
		widen(h.spans[d], k, *a.StartedAt, *a.EndpointReleasedAt)
		widen(h.walls, k, *a.StartedAt, *end)
	}
	return h
}

// widen makes m[k] cover [from, to].
func widen(m map[int]*span, k int, from, to time.Time) {
	sp := m[k]
	if sp == nil {
		m[k] = &span{from, to}
		return
	}
	if from.Before(sp.from) {
		sp.from = from
	}
	if to.After(sp.to) {
		sp.to = to
	}
}

// deviceIdle is device d's idle share over the cohort wall time wall,
// with rests (inside wall) taken out where d was not busy.
func (h *holds) deviceIdle(d string, wall, rests []span) DeviceIdle {
	di := DeviceIdle{Device: d, Attempts: h.count[d]}
	if why := h.unknown[d]; why != "" {
		di.Why = why
		return di
	}
	b := union(h.busy[d])
	rest := total(minus(rests, b))
	w := total(wall) - rest
	bs, ws, rs := total(b).Seconds(), w.Seconds(), rest.Seconds()
	di.BusySeconds, di.WallSeconds, di.RestSeconds = &bs, &ws, &rs
	if w > 0 {
		share := 1 - bs/ws
		di.IdleShare = &share
	} else {
		di.Why = "no wall time"
	}
	var own, tail []span
	for k, sp := range h.spans[d] {
		own = append(own, *sp)
		if w := h.walls[k]; w.to.After(sp.to) {
			tail = append(tail, span{sp.to, w.to})
		}
	}
	own = union(own)
	spanD := total(own) - total(minus(intersect(rests, own), b))
	ts := total(minus(union(tail), rests)).Seconds()
	ss := spanD.Seconds()
	di.SpanSeconds, di.TailSeconds = &ss, &ts
	if spanD > 0 {
		share := 1 - bs/ss
		di.SpanIdleShare = &share
	}
	return di
}

// idleNotes says each run's endpoint idle share per device.
func idleNotes(rep *Report) []string {
	var notes []string
	for _, r := range rep.Runs {
		if r.EndpointIdle == nil {
			continue
		}
		for _, d := range r.EndpointIdle.Devices {
			name := d.Device
			if name == "" {
				name = "(no label)"
			}
			if d.IdleShare == nil {
				notes = append(notes, fmt.Sprintf("run %s, device %s: endpoint idle share unknown: %s", r.ID, name, d.Why))
				continue
			}
			note := fmt.Sprintf("run %s, device %s: endpoint idle share %.2f%% (endpoint held %.1f s of %.1f s cohort wall time, %.1f s of rests excluded, over %d attempts)",
				r.ID, name, *d.IdleShare*100, *d.BusySeconds, *d.WallSeconds, *d.RestSeconds, d.Attempts)
			if d.SpanIdleShare != nil && d.TailSeconds != nil {
				note += fmt.Sprintf("; over the device's own span (first start to last endpoint release, %.1f s) %.2f%%; grading tail after the last release %.1f s", *d.SpanSeconds, *d.SpanIdleShare*100, *d.TailSeconds)
			}
			notes = append(notes, note)
		}
	}
	return notes
}
