package orchestrator_test

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestGradingOffCriticalPath: on one device (concurrency 1) an attempt
// gives its endpoint back at its last model response, so the next attempt
// starts while the previous one is still being graded; endpoint holds
// never overlap and no attempt records an overlap. With the old behaviour
// (the slot held until grading ends, kept as the benchmark's baseline)
// the next attempt waits for the grade. The run's endpoint idle share is
// what the records give (busy = the sum of holds, wall = first start to
// last end) and is lower with grading off the critical path.
func TestGradingOffCriticalPath(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srvA, srvB := startServer(t), startServer(t)
	share := map[bool]float64{}
	for _, hold := range []bool{false, true} {
		name := map[bool]string{false: "released before grading", true: "held while grading"}[hold]
		t.Run(name, func(t *testing.T) {
			f := twoEndpointPlan(t, srvA.URL(), srvB.URL(), "", "", "")
			res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2}, orchestrator.TestKnobs{HoldEndpointWhileGrading: hold}))
			if err != nil {
				t.Fatal(err)
			}
			as := res.Attempts
			if n := countStates(as); n[evalctl.Completed] != 4 {
				t.Fatalf("states %v, want 4 completed", n)
			}
			sort.Slice(as, func(i, j int) bool { return as[i].StartedAt.Before(*as[j].StartedAt) })
			busy := 0.0
			for i, a := range as {
				if a.EndpointReleasedAt == nil || a.EndpointReleasedAt.Before(*a.StartedAt) || a.FinishedAt.Before(*a.EndpointReleasedAt) {
					t.Fatalf("attempt %s: started %v, endpoint released %v, finished %v", a.ID, a.StartedAt, a.EndpointReleasedAt, a.FinishedAt)
				}
				if a.OverlappedAttempts == nil || len(*a.OverlappedAttempts) != 0 {
					t.Errorf("attempt %s records overlaps %v", a.ID, a.OverlappedAttempts)
				}
				busy += a.EndpointReleasedAt.Sub(*a.StartedAt).Seconds()
				if i == 0 {
					continue
				}
				prev := as[i-1]
				if a.StartedAt.Before(*prev.EndpointReleasedAt) {
					t.Errorf("attempt %s started at %v, before %s released the endpoint at %v", a.ID, a.StartedAt, prev.ID, prev.EndpointReleasedAt)
				}
				gradedMeanwhile := a.StartedAt.Before(*prev.FinishedAt)
				if gradedMeanwhile == hold {
					t.Errorf("attempt %s started at %v, %s's grading ended at %v: started during it %v, want %v", a.ID, a.StartedAt, prev.ID, prev.FinishedAt, gradedMeanwhile, !hold)
				}
			}
			last := as[0].FinishedAt
			for _, a := range as {
				if a.FinishedAt.After(*last) {
					last = a.FinishedAt
				}
			}
			wall := last.Sub(*as[0].StartedAt).Seconds()
			in, err := report.Load(context.Background(), []string{res.Dir}, "")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := report.Build(in, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			idle := rep.Runs[0].EndpointIdle
			if idle == nil || len(idle.Devices) != 1 || idle.Method == "" {
				t.Fatalf("endpoint idle %+v, want one device and the method", idle)
			}
			d := idle.Devices[0]
			if d.IdleShare == nil || d.Attempts != 4 || math.Abs(*d.BusySeconds-busy) > 1e-6 || math.Abs(*d.WallSeconds-wall) > 1e-6 || *d.RestSeconds != 0 {
				t.Fatalf("device %+v, want 4 attempts, busy %v s, wall %v s, no rest", d, busy, wall)
			}
			if want := 1 - busy/wall; math.Abs(*d.IdleShare-want) > 1e-9 {
				t.Errorf("idle share %v, want %v", *d.IdleShare, want)
			}
			share[hold] = *d.IdleShare
			found := false
			for _, n := range rep.Notes {
				if strings.Contains(n, "endpoint idle share") && strings.Contains(n, "over 4 attempts") {
					found = true
				}
			}
			if !found {
				t.Errorf("no endpoint idle note in %q", rep.Notes)
			}
		})
	}
	if len(share) == 2 && share[false] >= share[true] {
		t.Errorf("endpoint idle share %v with grading off the critical path, %v with the endpoint held while grading: want lower", share[false], share[true])
	}
}
