package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
)

// variedExport exports, pooled with --allow-mixed, two synthetic runs that
// between them reach what the committed corpus does not: endpoint-pool
// replicas (one pair of replicas told apart, one not), long-context input,
// speculative drafts, client-measured and unknown timing sources,
// overlapped attempts, server counters that match, mismatch, are shared and
// recover an unknown count, unmeasured attempts, an image that differs
// between the runs and an arm whose hash differs.
func variedExport(t *testing.T) string {
	t.Helper()
	var dirs []string
	for r, id := range []string{"varied-a", "varied-b"} {
		spec := &reporttest.RunSpec{ID: id, Name: "varied", Suite: evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: "fp"},
			ImageID: fmt.Sprintf("sha256:image-%d", r)}
		slot := 0
		for _, arm := range []string{"base", "cand"} {
			for c := 0; c < 4; c++ {
				for rep := 1; rep <= 2; rep++ {
					as := reporttest.AttemptSpec{Arm: arm, Case: fmt.Sprintf("c%d", c), Language: []string{"python", "typescript"}[c%2],
						Repeat: fmt.Sprintf("repeat-%d", rep), Slot: slot, Phases: 1, Terminations: []evalctl.Termination{evalctl.TermCompleted},
						Solved: []bool{(slot+c)%3 != 0}, Tokens: int64(1000 + 37*slot), Decode: 10 + float64(slot)/8, Task: 15 + float64(slot)/4}
					if arm == "cand" {
						as.Tokens *= 2
						d, a := int64(400+slot), int64(300+slot)
						as.DraftTokens, as.DraftAccepted = &d, &a
						if r == 1 {
							as.ArmHash = "another-hash"
						}
					}
					if slot == 5 {
						as.TimingsSource = "client"
					}
					if slot == 4 && r == 1 {
						as.TokensUnknown = true
					}
					spec.Attempts = append(spec.Attempts, as)
					slot++
				}
			}
		}
		dir := filepath.Join(t.TempDir(), id)
		if err := reporttest.Write(dir, spec); err != nil {
			t.Fatal(err)
		}
		st, err := runstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		all, _ := st.Attempts()
		for i, a := range all {
			vary(a, i, r)
			if err := st.WriteAttempt(a); err != nil {
				t.Fatal(err)
			}
		}
		st.AppendEvent(runstore.Event{Time: time.Date(2026, 10, 10, 11, 0, 0, 0, time.UTC), Kind: "registered"})
		dirs = append(dirs, dir)
	}
	out := filepath.Join(t.TempDir(), "export")
	if _, err := Export(context.Background(), dirs, out, Options{Baseline: "base", AllowMixed: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

// vary gives attempt i of run r the figures variedExport promises.
func vary(a *evalctl.Attempt, i, r int) {
	if a.StartedAt == nil {
		return
	}
	// One minute apart, each held for 40 s: no two windows overlap.
	start := time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	rel, fin := start.Add(40*time.Second), start.Add(50*time.Second)
	a.StartedAt, a.EndpointReleasedAt, a.FinishedAt = &start, &rel, &fin
	a.Device = "gpu0"
	none := []string{}
	a.OverlappedAttempts = &none
	if i == 3 {
		a.OverlappedAttempts = &[]string{"someone-else"}
	}
	if a.Arm == "cand" {
		a.Replica = []string{"http://r1:8080", "http://r2:8080"}[i%2]
		if r == 1 {
			a.Replica = []string{"http://r3:8080", "http://r4:8080"}[i%2]
		}
	}
	if a.Case == "c0" {
		a.Input = &evalctl.InputRecord{Strategy: []string{"full", "retrieved"}[i%2], InputTokens: 20000 + i, CorpusTokens: 19000}
	}
	if a.Measurements == nil {
		return
	}
	if i == 1 && r == 0 {
		m := *a.Measurements
		m.TimingsSource = "mystery"
		a.Measurements = &m
	}
	tok := int64(0)
	if a.Measurements.NativeOutputTokens != nil {
		tok = *a.Measurements.NativeOutputTokens
	}
	switch i % 4 {
	case 0: // matches
	case 1:
		tok++ // mismatch
	case 2: // shared: another attempt's window covers it
		a.FinishedAt = &[]time.Time{start.Add(90 * time.Second)}[0]
	default:
		return
	}
	if a.Measurements.NativeOutputTokens == nil {
		tok = 4242 // recovered from the counters
	}
	secs := 3.5
	a.ServerCounters = &evalctl.CounterDelta{Endpoint: "http://server", WindowStart: start, WindowEnd: rel, GeneratedTokens: &tok, GeneratedSeconds: &secs}
	if i%4 == 2 {
		a.ServerCounters.WindowEnd = start.Add(90 * time.Second)
	}
}

// TestVariedExportChecks: both checkers accept the varied export, and it
// reaches what it is for.
func TestVariedExportChecks(t *testing.T) {
	dir := variedExport(t)
	if err := Verify(dir); err != nil {
		t.Fatalf("evalctl verify: %v", err)
	}
	if err := runChecker(t, dir); err != nil {
		t.Fatalf("check.py: %v", err)
	}
	var rows []Row
	data, _ := os.ReadFile(filepath.Join(dir, AttemptsJSON))
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	var sources, checks = map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		if r.TimingsSource != nil {
			sources[*r.TimingsSource] = true
		}
		if r.CounterCheck != nil {
			checks[*r.CounterCheck] = true
		}
		if r.TokensSource != nil && *r.TokensSource == TokensServerCounters {
			checks["recovered"] = true
		}
	}
	for _, want := range []string{"client", "mystery"} {
		if !sources[want] {
			t.Errorf("no attempt timed %s", want)
		}
	}
	for _, want := range []string{CounterMatch, CounterMismatch, CounterShared, "recovered"} {
		if !checks[want] {
			t.Errorf("no counter check %s", want)
		}
	}
}
