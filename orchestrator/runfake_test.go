package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// The runner's state machine on fakes: no Docker, so these run under
// -short. Agent containers come from memBoxes, grades from fakeGrades, and
// Options.Engine is fakeSandboxes (registration's prune; nothing else of
// it is reached). The model is the scripted server's noop script, which
// hands over at once: the attempts' outcomes are the fakes' doing.

// fakeSandboxes stands in for Options.Engine: the runner reaches it only
// to prune a run's containers (the image is given, no arm has an agent
// image).
type fakeSandboxes struct{ prunes atomic.Int32 }

var _ Sandboxes = (*fakeSandboxes)(nil)

func (f *fakeSandboxes) Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error) {
	return nil, errors.New("fake sandboxes: containers come from the fake box starter")
}

func (f *fakeSandboxes) Prune(ctx context.Context, labels map[string]string) ([]string, error) {
	f.prunes.Add(1)
	return nil, nil
}

func (f *fakeSandboxes) Build(ctx context.Context, r *sandbox.Recipe, opts sandbox.BuildOptions) (*sandbox.BuiltImage, error) {
	return nil, errors.New("fake sandboxes: no image build")
}

func (f *fakeSandboxes) ImageID(ctx context.Context, ref string) (string, error) {
	return "", errors.New("fake sandboxes: no images")
}

// memBoxes is a boxStarter of in-memory agent containers. Its hooks see
// the n-th call (1-based, over the run) of the starter copy and of
// snapshots; an error they return is that call's.
type memBoxes struct {
	mu                        sync.Mutex
	started, removed, drained int
	copies, snapshots         int
	copyIn                    func(n int) error
	snapshot                  func(n int, b *memBox) error
}

var _ boxStarter = (*memBoxes)(nil)

func (m *memBoxes) Start(ctx context.Context, spec sandbox.Spec) (agentBox, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started++
	return &memBox{m: m, name: fmt.Sprintf("box-%d", m.started)}, nil
}

func (m *memBoxes) StartIfFree(ctx context.Context, spec sandbox.Spec) (agentBox, bool, error) {
	c, err := m.Start(ctx, spec)
	return c, err == nil, err
}

func (m *memBoxes) Waiting() bool                         { return false }
func (m *memBoxes) EngineFor(near string) string          { return "" }
func (m *memBoxes) Drain(ctx context.Context, c agentBox) { m.mu.Lock(); m.drained++; m.mu.Unlock() }

// counts are the starter's counters, read together.
func (m *memBoxes) counts() (started, removed, drained int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.started, m.removed, m.drained
}

// memBox is one in-memory agent container.
type memBox struct {
	m       *memBoxes
	name    string
	lost    atomic.Bool
	removed sync.Once
}

var _ agentBox = (*memBox)(nil)

func (b *memBox) Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error) {
	return &sandbox.ExecResult{}, nil
}

func (b *memBox) ProxySocket() string         { return "" }
func (b *memBox) KillAll(ctx context.Context) {}

func (b *memBox) CopyIn(ctx context.Context, dir string, entries []sandbox.Entry) error {
	b.m.mu.Lock()
	b.m.copies++
	n, hook := b.m.copies, b.m.copyIn
	b.m.mu.Unlock()
	if hook != nil {
		return hook(n)
	}
	return nil
}

func (b *memBox) Snapshot(ctx context.Context, dir string, skip func(string) bool) (*sandbox.Snapshot, error) {
	b.m.mu.Lock()
	b.m.snapshots++
	n, hook := b.m.snapshots, b.m.snapshot
	b.m.mu.Unlock()
	if hook != nil {
		if err := hook(n, b); err != nil {
			return nil, err
		}
	}
	return sandbox.NewSnapshot([]sandbox.Entry{{Name: "answer.txt", Mode: 0o644, Data: []byte(b.name)}})
}

func (b *memBox) Remove(ctx context.Context) error {
	b.removed.Do(func() { b.m.mu.Lock(); b.m.removed++; b.m.mu.Unlock() })
	return nil
}

func (b *memBox) EngineName() string                  { return "fake" }
func (b *memBox) EngineLost(ctx context.Context) bool { return b.lost.Load() }
func (b *memBox) Drained() bool                       { return false }

// fakeGrades grades every answer solved and counts the grades asked per
// attempt; grade sees the n-th call (1-based) and may fail it.
type fakeGrades struct {
	mu    sync.Mutex
	calls map[string]int
	n     int
	grade func(ctx context.Context, n int) error
}

var _ grades = (*fakeGrades)(nil)

func (g *fakeGrades) Grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels grader.Labels) (*evalctl.Grade, error) {
	g.mu.Lock()
	g.calls[labels.Attempt]++
	g.n++
	n, hook := g.n, g.grade
	g.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, n); err != nil {
			return nil, err
		}
	}
	return &evalctl.Grade{
		Suite: s.Name, SuiteVersion: s.Version, SuiteFingerprint: s.Fingerprint, Case: c.Name, Phase: phase,
		SnapshotSHA256: answer.SHA256, ImageID: fakeImage.ID, Solved: true, Groups: []evalctl.GroupResult{}, GradedAt: time.Now().UTC(),
	}, nil
}

// graded is how many grades were asked for attempt id.
func (g *fakeGrades) graded(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[id]
}

var fakeImage = &sandbox.BuiltImage{Ref: "evalctl-fake", ID: "sha256:fake"}

// hotFrom reads cool for its first n calls, hot after (n 0: always cool).
type hotFrom struct {
	n     int32
	calls atomic.Int32
}

func (h *hotFrom) CPUTemperature(ctx context.Context) (*float64, string, error) {
	v := 50.0
	if h.n > 0 && h.calls.Add(1) > h.n {
		v = 99
	}
	return &v, "", nil
}

// fakeRun is one run directory driven through the runner on fakes.
type fakeRun struct {
	eng    *fakeSandboxes
	boxes  *memBoxes
	grades *fakeGrades
	// places, when set, start the agent containers instead of boxes.
	places *fakeEngines
}

func newFakeRun() *fakeRun {
	return &fakeRun{eng: &fakeSandboxes{}, boxes: &memBoxes{}, grades: &fakeGrades{calls: map[string]int{}}}
}

func (f *fakeRun) run(ctx context.Context, opts Options) (*Result, error) {
	opts.Engine, opts.Image, opts.Progress = f.eng, fakeImage, io.Discard
	var b boxStarter = f.boxes
	if f.places != nil {
		b = f.places
	}
	return runWith(ctx, opts, backends{boxes: b, grades: f.grades})
}

// fakePlan is a plan of 4 slots (2 cases x 2 repeats, one arm on the
// scripted noop model) plus extra top-level lines.
func fakePlan(t *testing.T, url, extra string) *Plan {
	t.Helper()
	suite, err := filepath.Abs("../grader/testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	text := "name: fake\nsuite: " + suite + "\ncases: [adder, tsadd]\n" +
		"repeats: [{label: r1, seed: 1}, {label: r2, seed: 2}]\n" +
		"arms:\n  - {name: idle, endpoint: {base_url: \"" + url + "\", model: noop}, max_tokens: 256}\n" + extra
	file := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _, err := LoadPlan(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fakeServer(t *testing.T) *scripted.Server {
	t.Helper()
	srv, err := scripted.New(scripted.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// runState is what a run directory holds after a session.
type runState struct {
	all    []*evalctl.Attempt
	states map[evalctl.State]int
	// current is each slot's latest attempt; replaced maps an attempt to
	// the one that replaces it.
	current  map[int]*evalctl.Attempt
	replaced map[string]string
	// gradeFiles counts the grade records on disk, per attempt.
	gradeFiles map[string]int
	events     []runstore.Event
}

func readRunState(t *testing.T, dir string) runState {
	t.Helper()
	store, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := store.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	s := runState{all: all, states: map[evalctl.State]int{}, current: runstore.Current(all), replaced: map[string]string{}, gradeFiles: map[string]int{}}
	for _, a := range all {
		s.states[a.State]++
		if a.ReplacementOf != "" {
			s.replaced[a.ReplacementOf] = a.ID
		}
		gs, err := store.Grades(a, "graderfixture@0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			if g != nil {
				s.gradeFiles[a.ID]++
			}
		}
	}
	if s.events, err = store.Events(); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s runState) count(kind evalctl.EventKind) int {
	n := 0
	for _, e := range s.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// checkSession holds what every session of a run on fakes keeps: no
// attempt left running, every container started removed, a grade on disk
// exactly for each completed attempt, and no attempt graded twice.
func checkSession(t *testing.T, f *fakeRun, s runState) {
	t.Helper()
	if n := s.states[evalctl.Running]; n != 0 {
		t.Errorf("%d attempts left running", n)
	}
	if started, removed, _ := f.boxes.counts(); started != removed {
		t.Errorf("%d agent containers started, %d removed", started, removed)
	}
	for _, a := range s.all {
		want := 0
		if a.State == evalctl.Completed {
			want = a.ExpectedTurns
		}
		if s.gradeFiles[a.ID] != want {
			t.Errorf("attempt %s (%s): %d grade records, want %d", a.ID, a.State, s.gradeFiles[a.ID], want)
		}
		if n := f.grades.graded(a.ID); n > a.ExpectedTurns {
			t.Errorf("attempt %s graded %d times, it has %d phases", a.ID, n, a.ExpectedTurns)
		}
	}
}

// checkFinished holds what a finished run keeps: every slot's latest
// attempt completed, and every other record replaced by exactly one.
func checkFinished(t *testing.T, s runState, slots int) {
	t.Helper()
	if len(s.current) != slots {
		t.Fatalf("%d slots with attempts, want %d", len(s.current), slots)
	}
	for slot, a := range s.current {
		if a.State != evalctl.Completed {
			t.Errorf("slot %d ends %s (%s), want completed", slot, a.State, a.Error)
		}
	}
	for _, a := range s.all {
		if a.State != evalctl.Completed && s.replaced[a.ID] == "" {
			t.Errorf("attempt %s (%s) is neither completed nor replaced", a.ID, a.State)
		}
	}
	if len(s.all) != slots+len(s.replaced) {
		t.Errorf("%d records for %d slots and %d replacements", len(s.all), slots, len(s.replaced))
	}
}

// TestRunnerOnFakes drives the runner's state machine (registration,
// scheduling, guards, cancel, infrastructure failures, resume) against fake
// sandboxes and grades: a first session, then a resume that must finish the
// run without losing or repeating an attempt.
func TestRunnerOnFakes(t *testing.T) {
	const slots = 4
	for _, tc := range []struct {
		name  string
		extra string // plan lines
		// setup arms the fakes; cancel ends the first session.
		setup   func(f *fakeRun, cancel context.CancelFunc)
		temp    TemperatureSource
		wantErr error // of the first session (nil: it finishes)
		// first checks the first session's records.
		first func(t *testing.T, f *fakeRun, s runState)
		// replace resumes with --replace-infra.
		replace bool
	}{
		{
			name: "completes",
			first: func(t *testing.T, f *fakeRun, s runState) {
				if s.states[evalctl.Completed] != slots || len(s.all) != slots {
					t.Errorf("states %v in %d records, want %d completed", s.states, len(s.all), slots)
				}
				if f.eng.prunes.Load() == 0 {
					t.Error("the run's containers were never pruned at its end")
				}
			},
		},
		{
			name: "cancel mid-cohort",
			setup: func(f *fakeRun, cancel context.CancelFunc) {
				// The second grade is where Ctrl-C comes.
				f.grades.grade = func(ctx context.Context, n int) error {
					if n < 2 {
						return nil
					}
					cancel()
					return ctx.Err()
				}
			},
			wantErr: ErrInterrupted,
			first: func(t *testing.T, f *fakeRun, s runState) {
				if s.states[evalctl.Completed] != 1 || s.states[evalctl.Interrupted] < 1 || len(s.all) != slots {
					t.Errorf("states %v in %d records, want 1 completed, at least 1 interrupted, the rest planned", s.states, len(s.all))
				}
				if s.states[evalctl.Completed]+s.states[evalctl.Interrupted]+s.states[evalctl.Planned] != slots {
					t.Errorf("states %v: only completed, interrupted and planned expected", s.states)
				}
				for _, a := range s.all {
					if a.State == evalctl.Interrupted && !strings.Contains(a.Error, "cancelled") {
						t.Errorf("interrupted attempt %s says %q", a.ID, a.Error)
					}
				}
			},
		},
		{
			name:  "temperature guard between attempts",
			extra: "guards: {max_temperature_c: 90}\n",
			// Read before an attempt waits for its device and when it
			// takes it: the second attempt's second reading is hot.
			temp:    &hotFrom{n: 3},
			wantErr: ErrGuard,
			first: func(t *testing.T, f *fakeRun, s runState) {
				if s.states[evalctl.Completed] != 1 || s.states[evalctl.Planned] != slots-1 {
					t.Errorf("states %v, want 1 completed and %d planned", s.states, slots-1)
				}
				if s.count(evalctl.EventGuard) != 1 {
					t.Errorf("%d guard events, want 1", s.count(evalctl.EventGuard))
				}
			},
		},
		{
			name: "snapshot fails: infrastructure, replaced",
			setup: func(f *fakeRun, cancel context.CancelFunc) {
				f.boxes.snapshot = func(n int, b *memBox) error {
					if n == 1 {
						return errors.New("exec snapshot: container runtime error (fake)")
					}
					return nil
				}
			},
			wantErr: ErrIncomplete,
			first: func(t *testing.T, f *fakeRun, s runState) {
				checkInfra(t, f, s, "snapshot phase 1: exec snapshot", 0)
			},
			replace: true,
		},
		{
			name: "agent engine lost: infrastructure, drained, replaced",
			setup: func(f *fakeRun, cancel context.CancelFunc) {
				f.boxes.snapshot = func(n int, b *memBox) error {
					if n == 1 {
						b.lost.Store(true)
						return errors.New("exec snapshot: connection refused (fake)")
					}
					return nil
				}
			},
			wantErr: ErrIncomplete,
			first: func(t *testing.T, f *fakeRun, s runState) {
				checkInfra(t, f, s, sandbox.ErrEngineLost.Error()+": engine fake (the attempt's agent sandbox)", 1)
			},
			replace: true,
		},
		{
			name: "starter copy fails: infrastructure, replaced",
			setup: func(f *fakeRun, cancel context.CancelFunc) {
				f.boxes.copyIn = func(n int) error {
					if n == 1 {
						return errors.New("copy: no space left on device (fake)")
					}
					return nil
				}
			},
			wantErr: ErrIncomplete,
			first: func(t *testing.T, f *fakeRun, s runState) {
				checkInfra(t, f, s, "copy the starter workspace in: copy: no space left", 0)
			},
			replace: true,
		},
		{
			name:  "breaker stops the run on consecutive infrastructure failures",
			extra: "guards: {max_consecutive_infra_failures: 2}\n",
			setup: func(f *fakeRun, cancel context.CancelFunc) {
				// The starter copy fails before the endpoint is released:
				// the breaker sees each failure before the next attempt
				// takes the device.
				f.boxes.copyIn = func(n int) error { return errors.New("copy: engine gone (fake)") }
			},
			wantErr: ErrEndpointFailing,
			first: func(t *testing.T, f *fakeRun, s runState) {
				if s.states[evalctl.InfraFailed] != 2 || s.states[evalctl.Planned] != slots-2 {
					t.Errorf("states %v, want 2 infrastructure failures and %d planned", s.states, slots-2)
				}
				if s.count(evalctl.EventEndpointFailing) != 1 {
					t.Errorf("%d endpoint-failing events, want 1", s.count(evalctl.EventEndpointFailing))
				}
				f.boxes.mu.Lock()
				f.boxes.copyIn = nil // the engine is back for the resume
				f.boxes.mu.Unlock()
			},
			replace: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeServer(t)
			f := newFakeRun()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.setup != nil {
				tc.setup(f, cancel)
			}
			res, err := f.run(ctx, Options{Plan: fakePlan(t, srv.URL(), tc.extra), OutDir: t.TempDir(), Temperature: tc.temp})
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("first session: %v, want %v", err, tc.wantErr)
			}
			if res == nil {
				t.Fatal("no result")
			}
			first := readRunState(t, res.Dir)
			checkSession(t, f, first)
			if tc.first != nil {
				tc.first(t, f, first)
			}
			if tc.wantErr == nil {
				checkFinished(t, first, slots)
				return
			}
			// The resume: the fakes work now.
			f.grades.mu.Lock()
			f.grades.grade = nil
			f.grades.mu.Unlock()
			f.boxes.mu.Lock()
			f.boxes.snapshot, f.boxes.copyIn = nil, nil
			f.boxes.mu.Unlock()
			if _, err := f.run(context.Background(), Options{ResumeDir: res.Dir, ReplaceInfra: tc.replace}); err != nil {
				t.Fatalf("resume: %v", err)
			}
			second := readRunState(t, res.Dir)
			checkSession(t, f, second)
			checkFinished(t, second, slots)
			// Nothing lost, nothing repeated: what ended in the first
			// session is kept as it was; only what did not complete ran
			// again, each once.
			was := map[string]*evalctl.Attempt{}
			for _, a := range first.all {
				was[a.ID] = a
			}
			for _, a := range second.all {
				b, ok := was[a.ID]
				switch {
				case ok && b.State == evalctl.Completed && (a.State != evalctl.Completed || *a.FinishedAt != *b.FinishedAt):
					t.Errorf("attempt %s completed in the first session, now %s finished %v", a.ID, a.State, a.FinishedAt)
				case ok && b.State == evalctl.Completed && f.grades.graded(a.ID) != a.ExpectedTurns:
					t.Errorf("attempt %s graded %d times over both sessions", a.ID, f.grades.graded(a.ID))
				case ok && b.State != evalctl.Completed && b.State != evalctl.Planned && second.replaced[a.ID] == "":
					t.Errorf("attempt %s (%s in the first session) was not replaced", a.ID, b.State)
				case ok && b.State == evalctl.Planned && a.State != evalctl.Completed:
					t.Errorf("planned attempt %s ends %s, want run as it is", a.ID, a.State)
				case !ok && (a.ReplacementOf == "" || was[a.ReplacementOf] == nil || was[a.ReplacementOf].State == evalctl.Completed):
					t.Errorf("new attempt %s replaces %q, want an attempt that did not complete", a.ID, a.ReplacementOf)
				}
			}
			if n := second.count(evalctl.EventResumed); n != 1 {
				t.Errorf("%d resumed events, want 1", n)
			}
		})
	}
}

// checkInfra holds a first session in which exactly one attempt failed as
// infrastructure with an error containing why, the others completed, and
// the agent's engine was drained drained times.
func checkInfra(t *testing.T, f *fakeRun, s runState, why string, drained int) {
	t.Helper()
	if s.states[evalctl.InfraFailed] != 1 || s.states[evalctl.Completed] != 3 {
		t.Errorf("states %v, want 1 infrastructure failure and 3 completed", s.states)
	}
	for _, a := range s.all {
		if a.State == evalctl.InfraFailed && !strings.Contains(a.Error, why) {
			t.Errorf("infrastructure failure %s says %q, want %q", a.ID, a.Error, why)
		}
	}
	if _, _, d := f.boxes.counts(); d != drained {
		t.Errorf("engine drained %d times, want %d", d, drained)
	}
}

// TestRunnerSchedulesPlacesOnFakes: the runner's agent containers take
// sandbox places (the real scheduler, sandbox.Places, over fake engines):
// with more attempts in flight than places, no more containers exist at
// once than there are places, and the cohort completes; an engine lost
// mid-run loses no attempt (its failures are the engine's, replaced on
// resume).
func TestRunnerSchedulesPlacesOnFakes(t *testing.T) {
	const slots = 4
	for _, tc := range []struct {
		name string
		caps []int
		// kill, when set, kills engine e0 at the first grade.
		kill bool
	}{
		{name: "two in flight, one place", caps: []int{1}},
		{name: "three in flight, two engines of one place", caps: []int{1, 1}},
		{name: "an engine killed mid-run", caps: []int{1, 1}, kill: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeServer(t)
			f := newFakeRun()
			f.places = newFakeEngines(1, tc.caps, 0)
			if tc.kill {
				var once sync.Once
				f.grades.grade = func(ctx context.Context, n int) error {
					once.Do(func() { f.places.kill("e0") })
					return nil
				}
			}
			conc := len(tc.caps) + 1
			res, err := f.run(context.Background(), Options{Plan: fakePlan(t, srv.URL(), fmt.Sprintf("concurrency: %d\n", conc)), OutDir: t.TempDir()})
			if err != nil && !(tc.kill && errors.Is(err, ErrIncomplete)) {
				t.Fatalf("run: %v", err)
			}
			places := 0
			for _, c := range tc.caps {
				places += c
			}
			if p := f.places.peak.Load(); p > int64(places) || p == 0 {
				t.Errorf("%d containers at once on %d places", p, places)
			}
			if n := f.places.live.Load(); n != 0 {
				t.Errorf("%d containers left after the run", n)
			}
			s := readRunState(t, res.Dir)
			t.Logf("first session: %v, peak %d containers", s.states, f.places.peak.Load())
			for _, a := range s.all {
				if a.State == evalctl.InfraFailed && !strings.Contains(a.Error, sandbox.ErrEngineLost.Error()) {
					t.Errorf("attempt %s failed as infrastructure, not its engine's: %s", a.ID, a.Error)
				}
			}
			if err != nil {
				if _, err := f.run(context.Background(), Options{ResumeDir: res.Dir, ReplaceInfra: true}); err != nil {
					t.Fatalf("resume: %v", err)
				}
				s = readRunState(t, res.Dir)
			}
			checkFinished(t, s, slots)
			if !tc.kill && len(s.all) != slots {
				t.Errorf("%d records for %d slots", len(s.all), slots)
			}
		})
	}
}

// TestBreakerCountsInEndpointOrder: the circuit breaker counts attempts in
// the order they used the endpoint. The endpoint goes away as the first
// attempt's grade begins (its model part ended well); that grade ends once
// the next attempt has failed. Two failures in a row after it stop the run
// with the fourth slot still planned; counted in the order attempts
// finish, the late grade would break the run of failures and one more
// attempt would be lost to the dead endpoint.
func TestBreakerCountsInEndpointOrder(t *testing.T) {
	srv := fakeServer(t)
	f := newFakeRun()
	out := t.TempDir()
	failed := func() bool {
		files, _ := filepath.Glob(filepath.Join(out, "*", runstore.AttemptsDir, "*", runstore.AttemptFile))
		for _, file := range files {
			var a evalctl.Attempt
			if runstore.ReadJSON(file, &a) == nil && a.State == evalctl.InfraFailed {
				return true
			}
		}
		return false
	}
	f.grades.grade = func(ctx context.Context, n int) error {
		if n == 1 {
			srv.Close()
			if !poll.For(time.Minute, failed) {
				return errors.New("no attempt failed on the closed endpoint (fake)")
			}
		}
		return nil
	}
	res, err := f.run(context.Background(), Options{Plan: fakePlan(t, srv.URL(), "guards: {max_consecutive_infra_failures: 2}\n"), OutDir: out})
	if !errors.Is(err, ErrEndpointFailing) {
		t.Fatalf("got %v, want the breaker's stop", err)
	}
	s := readRunState(t, res.Dir)
	if s.states[evalctl.Completed] != 1 || s.states[evalctl.InfraFailed] != 2 || s.states[evalctl.Planned] != 1 {
		t.Errorf("states %v, want 1 completed, 2 infrastructure failures and 1 planned", s.states)
	}
}
