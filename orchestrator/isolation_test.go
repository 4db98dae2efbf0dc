package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// twoEndpointPlan writes a plan of two arms on two endpoints (the adder
// case x 2 repeats: 4 attempts) with the given device labels ("" for none)
// and extra top-level lines.
func twoEndpointPlan(t *testing.T, urlA, urlB, devA, devB, extra string) string {
	t.Helper()
	arm := func(name, url, dev string) string {
		d := ""
		if dev != "" {
			d = ", device: " + dev
		}
		return fmt.Sprintf(`{name: %s, endpoint: {base_url: "%s", model: reference%s}, max_tokens: 8192}`, name, url, d)
	}
	suite, _ := filepath.Abs(fixtureSuite)
	p := "suite: " + suite + "\ncases: [adder]\nrepeats: [{label: r1, seed: 1}, {label: r2, seed: 2}]\narms:\n  - " +
		arm("a", urlA, devA) + "\n  - " + arm("b", urlB, devB) + "\n" + extra
	f := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// intersect reports whether two attempts held their endpoints at one
// time: whether their recorded [started_at, endpoint_released_at]
// intervals meet (grading, after the release, needs no endpoint).
func intersect(a, b *evalctl.Attempt) bool {
	return a.StartedAt.Before(*held(b)) && b.StartedAt.Before(*held(a))
}

// held is when the attempt released its endpoint.
func held(a *evalctl.Attempt) *time.Time {
	if a.EndpointReleasedAt == nil {
		return a.FinishedAt
	}
	return a.EndpointReleasedAt
}

func named(a *evalctl.Attempt, id string) bool {
	if a.OverlappedAttempts == nil {
		return false
	}
	for _, x := range *a.OverlappedAttempts {
		if x == id {
			return true
		}
	}
	return false
}

// TestIsolationByDevice: without device labels two arms on two endpoints
// never have attempts in flight together (checked from the records'
// timestamps), and every attempt records an empty overlap list; with
// distinct labels and concurrency 1 they run side by side (and still record
// no overlap: they are on different devices); arms sharing a device with
// concurrency 2 overlap, each names the others, and the report warns next
// to the speed figures.
func TestIsolationByDevice(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	srvA, srvB := startServer(t), startServer(t)
	for _, tt := range []struct {
		name, devA, devB, extra string
		wantSideBySide          bool
		wantOverlapRecorded     bool
	}{
		{name: "no labels", wantSideBySide: false},
		{name: "distinct labels", devA: "gpu0", devB: "gpu1", wantSideBySide: true},
		{name: "one label, concurrency 2", devA: "gpu0", devB: "gpu0", extra: "concurrency: 2\n", wantSideBySide: true, wantOverlapRecorded: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := twoEndpointPlan(t, srvA.URL(), srvB.URL(), tt.devA, tt.devB, tt.extra)
			res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
			if err != nil {
				t.Fatal(err)
			}
			if n := countStates(res.Attempts); n[evalctl.Completed] != 4 {
				t.Fatalf("states %v, want 4 completed", n)
			}
			sideBySide := false
			for i, a := range res.Attempts {
				if a.OverlappedAttempts == nil {
					t.Errorf("attempt %s has no overlapped_attempts list", a.ID)
				}
				for _, b := range res.Attempts[i+1:] {
					if !intersect(a, b) {
						continue
					}
					if a.Arm != b.Arm {
						sideBySide = true
					}
					if a.Device == b.Device && (!named(a, b.ID) || !named(b, a.ID)) {
						t.Errorf("attempts %s and %s overlapped on device %q but do not name each other: %v, %v", a.ID, b.ID, a.Device, *a.OverlappedAttempts, *b.OverlappedAttempts)
					}
					if a.Device != b.Device && (named(a, b.ID) || named(b, a.ID)) {
						t.Errorf("attempts on different devices named as overlapping")
					}
				}
				if !tt.wantOverlapRecorded && a.OverlappedAttempts != nil && len(*a.OverlappedAttempts) != 0 {
					t.Errorf("attempt %s records overlaps %v", a.ID, *a.OverlappedAttempts)
				}
			}
			if sideBySide != tt.wantSideBySide {
				t.Errorf("arms ran side by side: %v, want %v", sideBySide, tt.wantSideBySide)
			}
			in, err := report.Load(context.Background(), []string{res.Dir}, "")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := report.Build(in, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			if err := report.Write(&text, rep, report.FormatTable); err != nil {
				t.Fatal(err)
			}
			warned := strings.Contains(text.String(), "OVERLAPPED")
			if warned != tt.wantOverlapRecorded {
				t.Errorf("report warns of overlap: %v, want %v:\n%s", warned, tt.wantOverlapRecorded, text.String())
			}
			for _, a := range rep.Arms {
				if a.Overlapped == nil || (*a.Overlapped > 0) != tt.wantOverlapRecorded {
					t.Errorf("arm %s: overlapped %v", a.Arm, a.Overlapped)
				}
			}
		})
	}
}

// TestPreflightFailuresRegisterNothing: a dead URL, a model name the
// endpoint does not serve (llama-server would answer it anyway) and an
// endpoint that rejects tools each stop the run before registration, with
// a message naming the arm, the URL and what failed; no run directory is
// left. --check (orchestrator.Check) fails the same way.
func TestPreflightFailuresRegisterNothing(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	good := startServer(t)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		t.Fatal(err)
	}
	noJinja, err := scripted.New(scripted.Config{Suite: s, NoJinja: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := noJinja.Start(); err != nil {
		t.Fatal(err)
	}
	defer noJinja.Close()
	dead := deadURL(t)
	for _, tt := range []struct {
		name, url, model string
		want             []string
	}{
		{"dead url", dead, "reference", []string{"arm x", dead, "unreachable"}},
		{"unknown model", good.URL(), "gpt-4o", []string{"arm x", good.URL(), `asks for model "gpt-4o"`, `"reference"`, "--alias"}},
		{"rejects tools", noJinja.URL(), "reference", []string{"arm x", noJinja.URL(), "one-token chat request", "tools param requires --jinja flag"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := adderPlan(t, "", []string{`{name: x, endpoint: {base_url: "` + tt.url + `", model: "` + tt.model + `"}}`}, "")
			out := t.TempDir()
			_, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: out, Engine: eng, Image: img})
			var pe *orchestrator.PreflightError
			if !errors.Is(err, orchestrator.ErrPreflight) || !errors.As(err, &pe) || pe.Arm != "x" {
				t.Fatalf("got %v, want a preflight failure of arm x", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("the failed preflight left %d entries in %s", len(entries), out)
			}
			var check strings.Builder
			p, s, err := orchestrator.LoadPlan(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := orchestrator.Check(context.Background(), p, s, &check); !errors.Is(err, orchestrator.ErrPreflight) {
				t.Errorf("check: got %v, want the same preflight failure", err)
			}
		})
	}
	// A good plan: --check prints the realised order and count and
	// registers nothing.
	var check strings.Builder
	p, s, err := orchestrator.LoadPlan(plan(t, good.URL(), ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := orchestrator.Check(context.Background(), p, s, &check); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"8 attempts = 2 arms x 2 cases x 2 repeats", "slot  arm", "preflight: arm good", "preflight: arm idle",
		"status: configuration_only: the plan, the suite and every endpoint checked; no inference ran, nothing was registered"} {
		if !strings.Contains(check.String(), w) {
			t.Errorf("check output lacks %q:\n%s", w, check.String())
		}
	}
	if n := strings.Count(check.String(), "repeat-"); n != 8 {
		t.Errorf("check lists %d slots, want 8:\n%s", n, check.String())
	}
}

// TestCircuitBreakerStopsAndResumeFinishes: an endpoint that dies mid-run
// makes three attempts in a row fail as infrastructure; the run stops
// there (the rest stay planned), says why and how to continue; once the
// endpoint is back, resume with --replace-infra finishes every slot.
func TestCircuitBreakerStopsAndResumeFinishes(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(deadURL(t), "http://")
	srv, err := scripted.New(scripted.Config{Suite: s, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	f := pyPlan(t, "http://"+addr, "")
	out := t.TempDir()
	// The endpoint goes away as soon as the first attempt has released it
	// (the second has started): attempts are graded off the endpoint's
	// critical path, so waiting for the first to complete could let every
	// attempt's model part end first.
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		waitUntil(t, "a second attempt to start", func() bool {
			m, _ := filepath.Glob(filepath.Join(out, "*", runstore.EventsFile))
			return len(m) == 1 && count(events(filepath.Dir(m[0])), "start") >= 2
		})
		srv.Close()
	}()
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: out, Engine: eng, Image: img})
	<-stop
	if !errors.Is(err, orchestrator.ErrEndpointFailing) || !orchestrator.Resumable(err) ||
		!strings.Contains(err.Error(), "3 attempts in a row") || !strings.Contains(err.Error(), "--resume "+res.Dir+" --replace-infra") {
		t.Fatalf("got %v, want the circuit breaker naming the command to continue", err)
	}
	n := countStates(res.Attempts)
	if n[evalctl.InfraFailed] != 3 || n[evalctl.Planned] == 0 || n[evalctl.Running] != 0 {
		t.Fatalf("states %v, want 3 infra_failed, the rest planned", n)
	}
	// Back on the same address.
	srv2, err := scripted.New(scripted.Config{Suite: s, Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv2.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	res, err = orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, ReplaceInfra: true, Engine: eng, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	latest := map[int]*evalctl.Attempt{}
	replaced := map[string]bool{}
	for _, a := range res.Attempts {
		if a.ReplacementOf != "" {
			replaced[a.ReplacementOf] = true
		}
	}
	for _, a := range res.Attempts {
		if !replaced[a.ID] {
			latest[a.Slot] = a
		}
	}
	for slot := 0; slot < 8; slot++ {
		if a := latest[slot]; a == nil || a.State != evalctl.Completed {
			t.Errorf("slot %d: %v, want completed", slot, a)
		}
	}
	// Nothing left: a plain resume says so and succeeds.
	var log syncBuffer
	if _, err := orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img, Progress: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "nothing left to do") {
		t.Errorf("a resume with nothing to do did not say so:\n%s", log.String())
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: res.RunID}); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}
}

// deadURL returns the URL of a local port nothing listens on (it was free
// a moment ago).
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// waitUntil polls cond until it holds or a deadline passes (then it
// reports what it waited for and returns false). Safe from any goroutine.
func waitUntil(t *testing.T, what string, cond func() bool) bool {
	if !poll.ForTest(t, cond) {
		t.Errorf("timed out waiting for %s", what)
		return false
	}
	return true
}
