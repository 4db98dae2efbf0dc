package orchestrator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/orchestrator/transcript"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestStartWorkOffDeviceGaps: on one device (concurrency 1) with a paced
// endpoint, the next attempt's start work (endpoint identity, agent
// container, starter workspace) is done while the attempt before still
// generates, so the device's gap between one attempt's endpoint release and
// the next attempt's first request holds none of it. The bound is that
// start work's own duration, measured here on the same endpoint and engine
// (the identity requests, a container started and the starter copied in):
// the gap must be shorter than the quickest sample of it. Each attempt's
// /metrics bracket still holds exactly its own requests.
func TestStartWorkOffDeviceGaps(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		t.Fatal(err)
	}
	// 800 tokens at 100 tokens/s: 8 s of decode per attempt, time enough
	// to prepare the next one under load.
	const tokens, tps = 800, 100
	srv, err := scripted.New(scripted.Config{Suite: s, DecodeTPS: tps, PromptTPS: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	// The start work, measured: the quickest of three samples.
	run := fmt.Sprintf("startwork-%d", time.Now().UnixNano())
	ctx := context.Background()
	c := s.Case("adder")
	starter, err := sandbox.DirEntries(c.WorkspaceDir, tasks.Ignored)
	if err != nil {
		t.Fatal(err)
	}
	client := model.New(model.Config{BaseURL: srv.URL()})
	var startWork time.Duration
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		if _, err := client.Endpoint(ctx, "runaway"); err != nil {
			t.Fatal(err)
		}
		box, err := eng.Start(ctx, sandbox.Spec{Image: img.Ref, Role: sandbox.RoleAgent, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { box.Remove(context.Background()) })
		if err := box.CopyIn(ctx, "/workspace", starter); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); i == 0 || d < startWork {
			startWork = d
		}
		box.Remove(ctx)
	}

	suite, _ := filepath.Abs(fixtureSuite)
	f := filepath.Join(t.TempDir(), "plan.yaml")
	p := fmt.Sprintf("suite: %s\ncases: [adder]\nrepeats: [{label: r1, seed: 1}, {label: r2, seed: 2}, {label: r3, seed: 3}]\narms:\n  - {name: a, endpoint: {base_url: %q, model: runaway, device: gpu0}, max_tokens: %d, budgets: {generated_tokens: %d}}\n", suite, srv.URL(), tokens, tokens)
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := orchestrator.Run(ctx, orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	as := res.Attempts
	if n := countStates(as); n[evalctl.Completed] != 3 {
		t.Fatalf("states %v, want 3 completed", n)
	}
	sort.Slice(as, func(i, j int) bool { return as[i].StartedAt.Before(*as[j].StartedAt) })
	for i, a := range as {
		first, n := requests(t, filepath.Join(res.Dir, runstore.AttemptsDir, a.ID, runstore.TranscriptFile))
		if n == 0 || first.Before(*a.StartedAt) || a.EndpointReleasedAt == nil || a.EndpointReleasedAt.Before(first) {
			t.Fatalf("attempt %s: started %v, first of %d requests %v, released %v", a.ID, a.StartedAt, n, first, a.EndpointReleasedAt)
		}
		// The bracket holds this attempt's tokens and no other's.
		sc, m := a.ServerCounters, a.Measurements
		if sc == nil || sc.GeneratedTokens == nil || m == nil || m.NativeOutputTokens == nil || *sc.GeneratedTokens != *m.NativeOutputTokens || *m.NativeOutputTokens != tokens {
			t.Errorf("attempt %s: server counters %+v, measured %+v: want %d generated tokens in both", a.ID, sc, m, tokens)
		}
		if i == 0 {
			continue
		}
		prev := as[i-1]
		gap := first.Sub(*prev.EndpointReleasedAt)
		t.Logf("attempt %d: %v from %s's endpoint release to its first request (start work takes %v)", i, gap, prev.ID, startWork)
		if gap < 0 {
			t.Errorf("attempt %s sent its first request at %v, before %s released the endpoint at %v", a.ID, first, prev.ID, prev.EndpointReleasedAt)
		}
		if gap >= startWork {
			t.Errorf("attempt %s: %v between %s's endpoint release and its first request, not below the start work's %v: the start work sits in the device's gap", a.ID, gap, prev.ID, startWork)
		}
	}
}

// requests returns the time of a transcript's first model request and how
// many it has.
func requests(t testing.TB, path string) (time.Time, int) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var first time.Time
	n := 0
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e transcript.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if e.Kind == transcript.EventRequest {
			if n == 0 {
				first = e.Time
			}
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return first, n
}

// deviceWaits is what a one-device run's records and transcripts say the
// device waited on: the longest and the mean gap between an attempt's
// endpoint release and the next attempt's first request, and the seconds
// from each attempt's first request to its release, summed (the time the
// device had the attempt's requests to serve, tool calls between them
// included).
func deviceWaits(t testing.TB, dir string, as []*evalctl.Attempt) (maxGap, meanGap time.Duration, serving float64) {
	t.Helper()
	as = append([]*evalctl.Attempt(nil), as...)
	sort.Slice(as, func(i, j int) bool { return as[i].StartedAt.Before(*as[j].StartedAt) })
	var sum time.Duration
	for i, a := range as {
		first, n := requests(t, filepath.Join(dir, runstore.AttemptsDir, a.ID, runstore.TranscriptFile))
		if n == 0 || a.EndpointReleasedAt == nil {
			t.Fatalf("attempt %s: %d requests, released %v", a.ID, n, a.EndpointReleasedAt)
		}
		serving += a.EndpointReleasedAt.Sub(first).Seconds()
		if i == 0 {
			continue
		}
		gap := first.Sub(*as[i-1].EndpointReleasedAt)
		sum += gap
		maxGap = max(maxGap, gap)
	}
	if len(as) > 1 {
		meanGap = sum / time.Duration(len(as)-1)
	}
	return maxGap, meanGap, serving
}
