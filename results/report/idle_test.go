package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

func TestComputeEndpointIdle(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(s float64) *time.Time { v := t0.Add(time.Duration(s * float64(time.Second))); return &v }
	att := func(id, dev string, start, rel, fin float64, state evalctl.State) *evalctl.Attempt {
		a := &evalctl.Attempt{ID: id, Device: dev, State: state, StartedAt: at(start), FinishedAt: at(fin)}
		if rel >= 0 {
			a.EndpointReleasedAt = at(rel)
		}
		return a
	}
	// Session 1 from 0 (registered): on gpu0 A holds 10-20 (graded to 25),
	// B 20-30 (graded to 40), a rest 30-35, C 35-45 (graded to 50); on
	// gpu1 D holds 12-14. Session 2 from 1000 (resumed): E on gpu0 holds
	// 1010-1020, graded to 1030. The time between sessions is no wall time.
	attempts := []*evalctl.Attempt{
		att("A", "gpu0", 10, 20, 25, evalctl.Completed),
		att("B", "gpu0", 20, 30, 40, evalctl.Completed),
		att("C", "gpu0", 35, 45, 50, evalctl.InfraFailed),
		att("D", "gpu1", 12, 14, 16, evalctl.Completed),
		{ID: "P", Device: "gpu1", State: evalctl.Planned},
		att("E", "gpu0", 1010, 1020, 1030, evalctl.Completed),
	}
	events := []runstore.Event{
		{Time: t0, Kind: "registered"},
		{Time: *at(35), Kind: runstore.RestEvent, Detail: runstore.RestDetail(*at(30), *at(35))},
		{Time: *at(1000), Kind: "resumed"},
	}
	got := ComputeEndpointIdle(attempts, events)
	if got == nil || got.Method != IdleMethod || len(got.Devices) != 2 {
		t.Fatalf("got %+v", got)
	}
	for _, tt := range []struct {
		dev                  string
		n                    int
		busy, wall, rest, id float64
		span, spanID, tail   float64
	}{
		// gpu0's span: 10-45 less the rest 30-35, plus 1010-1020; its
		// tail: 45-50 and 1020-1030.
		{dev: "gpu0", n: 4, busy: 40, wall: 60 - 5, rest: 5, id: 1 - 40.0/55, span: 30 + 10, spanID: 0, tail: 5 + 10},
		// gpu1 was idle through the whole rest too; its tail, 14-50 less
		// the rest, is gpu0's time as well (session 2 has no gpu1 attempt).
		{dev: "gpu1", n: 1, busy: 2, wall: 60 - 5, rest: 5, id: 1 - 2.0/55, span: 2, spanID: 0, tail: 36 - 5},
	} {
		var d *DeviceIdle
		for i := range got.Devices {
			if got.Devices[i].Device == tt.dev {
				d = &got.Devices[i]
			}
		}
		if d == nil || d.IdleShare == nil || d.Attempts != tt.n || !near(*d.BusySeconds, tt.busy, 1e-9) || !near(*d.WallSeconds, tt.wall, 1e-9) || !near(*d.RestSeconds, tt.rest, 1e-9) || !near(*d.IdleShare, tt.id, 1e-12) {
			t.Errorf("%s: %+v, want %d attempts, busy %v, wall %v, rest %v, idle %v", tt.dev, d, tt.n, tt.busy, tt.wall, tt.rest, tt.id)
			continue
		}
		if d.SpanSeconds == nil || d.SpanIdleShare == nil || d.TailSeconds == nil || !near(*d.SpanSeconds, tt.span, 1e-9) || !near(*d.SpanIdleShare, tt.spanID, 1e-12) || !near(*d.TailSeconds, tt.tail, 1e-9) {
			t.Errorf("%s: span %v, span idle %v, tail %v; want %v, %v, %v", tt.dev, d.SpanSeconds, d.SpanIdleShare, d.TailSeconds, tt.span, tt.spanID, tt.tail)
		}
	}

	// A rest while the device was busy (the runner rests before it waits
	// for the slot) takes nothing out of that device's wall time: A and B
	// hold 20 s of the 30 s from 10 to B's grade at 40.
	busyRest := []runstore.Event{{Time: t0, Kind: "registered"}, {Kind: runstore.RestEvent, Detail: runstore.RestDetail(*at(21), *at(29))}}
	br := ComputeEndpointIdle(attempts[:2], busyRest)
	if *br.Devices[0].RestSeconds != 0 || !near(*br.Devices[0].IdleShare, 1-20.0/30, 1e-12) {
		t.Errorf("rest during a hold: %+v", br.Devices[0])
	}
	if d := br.Devices[0]; *d.SpanSeconds != 20 || *d.SpanIdleShare != 0 || *d.TailSeconds != 10 {
		t.Errorf("rest during a hold: span %v, span idle %v, tail %v; want 20 s, 0, 10 s", *d.SpanSeconds, *d.SpanIdleShare, *d.TailSeconds)
	}

	// An attempt the runner stopped during has no release: its device's
	// figures are unknown and say why, the other device's stand.
	killed := att("F", "gpu1", 46, -1, -1, evalctl.Interrupted)
	killed.FinishedAt = nil
	g := ComputeEndpointIdle(append(attempts[:4:4], killed), events)
	for _, d := range g.Devices {
		switch d.Device {
		case "gpu1":
			if d.IdleShare != nil || d.BusySeconds != nil || d.WallSeconds != nil || d.SpanIdleShare != nil || d.TailSeconds != nil || !strings.Contains(d.Why, "attempt F") {
				t.Errorf("gpu1 with a killed attempt: %+v", d)
			}
		case "gpu0":
			if d.IdleShare == nil {
				t.Errorf("gpu0: %+v", d)
			}
		}
	}

	// Runs from before releases were recorded get nothing.
	old := att("A", "gpu0", 10, -1, 25, evalctl.Completed)
	if g := ComputeEndpointIdle([]*evalctl.Attempt{old}, events); g != nil {
		t.Errorf("old run: %+v", g)
	}
	if _, _, err := runstore.ParseRest("yesterday"); err == nil {
		t.Error("a malformed rest detail parsed")
	}
}

// TestEndpointIdleSpanAndTail: the idle share over the cohort wall time, over
// the device's own span (first start to last endpoint release) and the tail
// after the last release, on hand-computed single-session cohorts of one
// device: idle wall time = span idle + tail.
func TestEndpointIdleSpanAndTail(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(s float64) *time.Time { v := t0.Add(time.Duration(s * float64(time.Second))); return &v }
	type hold struct{ start, rel, fin float64 }
	for _, tt := range []struct {
		name  string
		holds []hold
		rests [][2]float64
		// want, in seconds and shares
		busy, wall, span, tail float64
	}{
		{name: "back to back, graded after", holds: []hold{{0, 10, 14}, {10, 20, 24}, {20, 30, 36}},
			busy: 30, wall: 36, span: 30, tail: 6},
		{name: "gaps before each start", holds: []hold{{0, 10, 12}, {11, 21, 25}, {23, 33, 40}},
			busy: 30, wall: 40, span: 33, tail: 7},
		// The last attempt to release is not the last to finish: the
		// tail runs from the last release (30) to the last grade (45).
		{name: "an earlier grade ends last", holds: []hold{{0, 20, 45}, {20, 30, 33}},
			busy: 30, wall: 45, span: 30, tail: 15},
		// A rest between holds leaves the span; one in the tail leaves the
		// tail (a rest there is another device's; here it is made up).
		{name: "rests in the span and the tail", holds: []hold{{0, 10, 11}, {15, 25, 32}}, rests: [][2]float64{{10, 14}, {26, 28}},
			busy: 20, wall: 32 - 6, span: 25 - 4, tail: 7 - 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var as []*evalctl.Attempt
			for i, h := range tt.holds {
				as = append(as, &evalctl.Attempt{ID: fmt.Sprint(i), Device: "gpu0", State: evalctl.Completed, StartedAt: at(h.start), EndpointReleasedAt: at(h.rel), FinishedAt: at(h.fin)})
			}
			events := []runstore.Event{{Time: t0, Kind: "registered"}}
			for _, r := range tt.rests {
				events = append(events, runstore.Event{Time: *at(r[1]), Kind: runstore.RestEvent, Detail: runstore.RestDetail(*at(r[0]), *at(r[1]))})
			}
			g := ComputeEndpointIdle(as, events)
			if g == nil || len(g.Devices) != 1 {
				t.Fatalf("got %+v", g)
			}
			d := g.Devices[0]
			if d.IdleShare == nil || d.SpanIdleShare == nil || d.TailSeconds == nil {
				t.Fatalf("unknown figures: %+v", d)
			}
			if !near(*d.BusySeconds, tt.busy, 1e-9) || !near(*d.WallSeconds, tt.wall, 1e-9) || !near(*d.SpanSeconds, tt.span, 1e-9) || !near(*d.TailSeconds, tt.tail, 1e-9) {
				t.Errorf("busy %v, wall %v, span %v, tail %v; want %v, %v, %v, %v", *d.BusySeconds, *d.WallSeconds, *d.SpanSeconds, *d.TailSeconds, tt.busy, tt.wall, tt.span, tt.tail)
			}
			if want := 1 - tt.busy/tt.wall; !near(*d.IdleShare, want, 1e-12) {
				t.Errorf("idle share %v, want %v", *d.IdleShare, want)
			}
			if want := 1 - tt.busy/tt.span; !near(*d.SpanIdleShare, want, 1e-12) {
				t.Errorf("span idle share %v, want %v", *d.SpanIdleShare, want)
			}
			// Idle wall time is the span's idle time plus the tail.
			if idle, parts := *d.WallSeconds-*d.BusySeconds, (*d.SpanSeconds-*d.BusySeconds)+*d.TailSeconds; !near(idle, parts, 1e-9) {
				t.Errorf("idle %v s, span idle + tail %v s", idle, parts)
			}
		})
	}
}
