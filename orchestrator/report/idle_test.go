package report

import (
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/runstore"
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
	}{
		{dev: "gpu0", n: 4, busy: 40, wall: 60 - 5, rest: 5, id: 1 - 40.0/55},
		// gpu1 was idle through the whole rest too.
		{dev: "gpu1", n: 1, busy: 2, wall: 60 - 5, rest: 5, id: 1 - 2.0/55},
	} {
		var d *DeviceIdle
		for i := range got.Devices {
			if got.Devices[i].Device == tt.dev {
				d = &got.Devices[i]
			}
		}
		if d == nil || d.IdleShare == nil || d.Attempts != tt.n || !near(*d.BusySeconds, tt.busy, 1e-9) || !near(*d.WallSeconds, tt.wall, 1e-9) || !near(*d.RestSeconds, tt.rest, 1e-9) || !near(*d.IdleShare, tt.id, 1e-12) {
			t.Errorf("%s: %+v, want %d attempts, busy %v, wall %v, rest %v, idle %v", tt.dev, d, tt.n, tt.busy, tt.wall, tt.rest, tt.id)
		}
	}

	// A rest while the device was busy (the runner rests before it waits
	// for the slot) takes nothing out of that device's wall time: A and B
	// hold 20 s of the 30 s from 10 to B's grade at 40.
	busyRest := []runstore.Event{{Time: t0, Kind: "registered"}, {Kind: runstore.RestEvent, Detail: runstore.RestDetail(*at(21), *at(29))}}
	if g := ComputeEndpointIdle(attempts[:2], busyRest); *g.Devices[0].RestSeconds != 0 || !near(*g.Devices[0].IdleShare, 1-20.0/30, 1e-12) {
		t.Errorf("rest during a hold: %+v", g.Devices[0])
	}

	// An attempt the runner stopped during has no release: its device's
	// figures are unknown and say why, the other device's stand.
	killed := att("F", "gpu1", 46, -1, -1, evalctl.Interrupted)
	killed.FinishedAt = nil
	g := ComputeEndpointIdle(append(attempts[:4:4], killed), events)
	for _, d := range g.Devices {
		switch d.Device {
		case "gpu1":
			if d.IdleShare != nil || d.BusySeconds != nil || d.WallSeconds != nil || !strings.Contains(d.Why, "attempt F") {
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
