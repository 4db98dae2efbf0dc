package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
)

// fakeEngines is a boxStarter over sandbox.Places and fake engines: the
// real scheduler of places, containers that only hold one. Engines can be
// killed and container starts fail, on a seeded draw.
type fakeEngines struct {
	places *sandbox.Places
	lost   map[string]*atomic.Bool
	mu     sync.Mutex
	rng    *rand.Rand
	// startFail is the chance that a container start fails.
	startFail float64
	live      atomic.Int64 // containers not yet removed
	peak      atomic.Int64 // the most live at once
}

var _ boxStarter = (*fakeEngines)(nil)

func newFakeEngines(seed int64, caps []int, startFail float64) *fakeEngines {
	f := &fakeEngines{lost: map[string]*atomic.Bool{}, rng: rand.New(rand.NewSource(seed)), startFail: startFail}
	var engines []sandbox.PlaceEngine
	for i, c := range caps {
		name := fmt.Sprintf("e%d", i)
		l := &atomic.Bool{}
		f.lost[name] = l
		engines = append(engines, sandbox.PlaceEngine{Name: name, Machine: name, Capacity: c, Lost: l.Load})
	}
	f.places = sandbox.NewPlaces(engines)
	return f
}

func (f *fakeEngines) chance(p float64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < p
}

func (f *fakeEngines) kill(name string) {
	f.lost[name].Store(true)
	f.places.Wake()
}

// Start is like sandbox.Hosts.Start: a place, then the start (a drained
// engine's place is given back and another tried).
func (f *fakeEngines) Start(ctx context.Context, spec sandbox.Spec) (agentBox, error) {
	for {
		pl, err := f.places.Acquire(ctx, spec)
		if err != nil {
			return nil, err
		}
		c, retry, err := f.startOn(pl, spec)
		if !retry {
			return c, err
		}
	}
}

func (f *fakeEngines) startOn(pl *sandbox.Place, spec sandbox.Spec) (agentBox, bool, error) {
	if f.lost[pl.Engine()].Load() {
		pl.Free()
		return nil, true, nil
	}
	if f.chance(f.startFail) {
		pl.Free()
		return nil, false, errors.New("container start failed (fake)")
	}
	n := f.live.Add(1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	return &fakeBox{f: f, place: pl, image: spec.Image, yield: spec.Yield}, false, nil
}

func (f *fakeEngines) StartIfFree(ctx context.Context, spec sandbox.Spec) (agentBox, bool, error) {
	pl, ok := f.places.TryAcquire(spec)
	if !ok {
		return nil, false, nil
	}
	c, _, err := f.startOn(pl, spec)
	return c, err == nil && c != nil, err
}

func (f *fakeEngines) Waiting() bool { return f.places.Waiters() > 0 }

// Drain is a no-op: a killed fake engine is drained already (its places
// see it lost).
func (f *fakeEngines) Drain(ctx context.Context, c agentBox) {}

func (f *fakeEngines) EngineFor(near string) string {
	if l := f.lost[near]; l != nil && !l.Load() {
		return near
	}
	return ""
}

// fakeBox holds a place until removed.
type fakeBox struct {
	f     *fakeEngines
	place *sandbox.Place
	image string // the spec's
	// yield is the pool's way to ask for the place back (the spec's).
	yield func() bool
	once  sync.Once
}

var _ agentBox = (*fakeBox)(nil)

func (b *fakeBox) lost() error {
	if b.f.lost[b.place.Engine()].Load() {
		return fmt.Errorf("%w: engine %s", sandbox.ErrEngineLost, b.place.Engine())
	}
	return nil
}

func (b *fakeBox) Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error) {
	if err := b.lost(); err != nil {
		return nil, err
	}
	return &sandbox.ExecResult{}, nil
}

func (b *fakeBox) ProxySocket() string         { return "" }
func (b *fakeBox) KillAll(ctx context.Context) {}

func (b *fakeBox) CopyIn(ctx context.Context, dir string, entries []sandbox.Entry) error {
	return b.lost()
}

func (b *fakeBox) Snapshot(ctx context.Context, dir string, skip func(string) bool) (*sandbox.Snapshot, error) {
	if err := b.lost(); err != nil {
		return nil, err
	}
	return &sandbox.Snapshot{}, nil
}

func (b *fakeBox) Remove(ctx context.Context) error {
	b.once.Do(func() {
		b.f.live.Add(-1)
		b.place.Free()
	})
	return nil
}

func (b *fakeBox) EngineName() string                  { return b.place.Engine() }
func (b *fakeBox) EngineLost(ctx context.Context) bool { return b.lost() != nil }
func (b *fakeBox) Drained() bool                       { return b.lost() != nil }

// scenario is one random cohort through the scheduler.
type scenario struct {
	seed                     int64
	caps                     []int // places per engine
	conc, gradeConc, n       int   // attempts in flight, grades at once, attempts
	hold                     bool  // the device is held while grading
	killAt                   int   // the attempt at whose start engine e0 is killed (-1: none)
	startFail, gradeFail     float64
	completed, infra, intrpt atomic.Int64
}

func (s *scenario) String() string {
	return fmt.Sprintf("seed %d: capacities %v, %d in flight, %d grades at once, %d attempts, hold %v, kill e0 at %d, start fails %.2f, grade fails %.2f",
		s.seed, s.caps, s.conc, s.gradeConc, s.n, s.hold, s.killAt, s.startFail, s.gradeFail)
}

func randomScenario(seed int64) *scenario {
	r := rand.New(rand.NewSource(seed))
	s := &scenario{seed: seed, conc: 1 + r.Intn(4), gradeConc: 1 + r.Intn(3), n: 1 + r.Intn(16), hold: r.Intn(4) == 0, killAt: -1}
	for range 1 + r.Intn(3) {
		s.caps = append(s.caps, 1+r.Intn(4))
	}
	if r.Intn(3) == 0 {
		s.killAt = r.Intn(s.n)
	}
	if r.Intn(2) == 0 {
		s.startFail = r.Float64() * 0.3
	}
	if r.Intn(2) == 0 {
		s.gradeFail = r.Float64() * 0.3
	}
	return s
}

// drive runs the scenario's cohort the way runner.execute and
// runner.attempt take places: start work ahead (ClassAhead) before the
// device, the container claimed or started anew (ClassAttempt) once the
// device is held, the agent's commands, the container released (a spare
// started ahead), then the grade (ClassGrade) under the grade
// concurrency. It returns the watchdog's stop, if any.
func (s *scenario) drive(stallAfter time.Duration) error {
	f := newFakeEngines(s.seed, s.caps, s.startFail)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	b := newBoxes(ctx, f, sandbox.Spec{Role: sandbox.RoleAgent, Run: "prop"}, s.n)
	devs := newDevicePool(s.conc)
	wd := newWatchdog(stallAfter, f.places.Describe, f.places.LastChange)
	go wd.watch(ctx, func(why string) { cancel(fmt.Errorf("%w: %s", ErrStalled, why)) })
	grades := make(chan struct{}, s.gradeConc)
	reps := []Replica{{Device: "d"}}
	var wg sync.WaitGroup
	for i := range s.n {
		id := fmt.Sprintf("a%02d", i)
		type prepared struct {
			e   *boxEntry
			err error
		}
		prep := make(chan prepared, 1)
		needed := make(chan struct{})
		go func() {
			e, err := b.prepareBox(ctx, id, "", "", sandbox.ClassAhead, needed, nil)
			prep <- prepared{e, err}
		}()
		if devs.acquire(ctx, "arm", reps) < 0 {
			if p := <-prep; p.e != nil {
				b.release(p.e, "")
			}
			break
		}
		if i == s.killAt {
			f.kill("e0")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			free := func() { once.Do(func() { devs.release("d") }) }
			defer free()
			close(needed)
			p := <-prep
			s.attempt(ctx, f, b, id, p.e, p.err, free, grades)
			wd.progress()
		}()
	}
	wg.Wait()
	b.close()
	if n := f.live.Load(); n != 0 {
		return fmt.Errorf("%d container(s) left after the run", n)
	}
	if f.places.Waiters() != 0 {
		return fmt.Errorf("waiters left after the run: %s", f.places.Describe())
	}
	return context.Cause(ctx)
}

// attempt is one attempt on its device (see drive).
func (s *scenario) attempt(ctx context.Context, f *fakeEngines, b *boxes, id string, e *boxEntry, err error, free func(), grades chan struct{}) {
	if err == nil && !(b.near(e.c, "d") && b.claim(e)) {
		b.release(e, "")
		e, err = nil, errYielded
	}
	if errors.Is(err, errYielded) {
		e, err = b.prepareBox(ctx, id, "", "", sandbox.ClassAttempt, nil, nil)
		if err == nil && !b.claim(e) {
			b.release(e, "")
			err = sandbox.ErrEngineLost
		}
	}
	end := func(err error) {
		switch {
		case ctx.Err() != nil:
			s.intrpt.Add(1)
		case err != nil:
			s.infra.Add(1)
		default:
			s.completed.Add(1)
		}
	}
	if err != nil {
		end(err)
		return
	}
	for range 3 {
		if _, err = e.c.Exec(ctx, []string{"true"}, sandbox.ExecOptions{}); err != nil {
			break
		}
	}
	if err == nil {
		_, err = e.c.Snapshot(ctx, "/workspace", nil)
	}
	if !s.hold {
		free()
	}
	b.release(e, "")
	if err != nil {
		end(err)
		return
	}
	select {
	case grades <- struct{}{}:
	case <-ctx.Done():
		end(ctx.Err())
		return
	}
	defer func() { <-grades }()
	pl, err := f.places.Acquire(ctx, sandbox.Spec{Role: sandbox.RoleGrader, Attempt: id})
	if err == nil {
		if f.chance(s.gradeFail) {
			err = errors.New("grade failed (fake)")
		}
		pl.Free()
	}
	end(err)
}

// TestSchedulerNeverHangs drives random cohorts (1 to 3 engines of 1 to 4
// places, 1 to 4 attempts in flight, 1 to 3 grades at once, up to 16
// attempts, engines killed, container starts and grades failing) through
// the scheduler of sandbox places and the runner's container handling:
// every cohort ends (every attempt completed, an infrastructure failure,
// or the run stopped) well before its deadline, the watchdog never
// fires, no container is left and nobody waits. Seeded: a failure names
// its seed and scenario, and EVALCTL_SCHEDULE_SEED replays one.
func TestSchedulerNeverHangs(t *testing.T) {
	seeds := []int64{}
	n := int64(1000)
	if testing.Short() {
		n = 200
	}
	for seed := range n {
		seeds = append(seeds, seed)
	}
	if v := os.Getenv("EVALCTL_SCHEDULE_SEED"); v != "" {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("EVALCTL_SCHEDULE_SEED=%q: not a number", v)
		}
		seeds = []int64{seed}
	}
	for _, seed := range seeds {
		s := randomScenario(seed)
		done := make(chan error, 1)
		go func() { done <- s.drive(2 * time.Second) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no end in 30 s (the watchdog did not stop it either)", s)
		}
		if got := s.completed.Load() + s.infra.Load() + s.intrpt.Load(); got != int64(s.n) {
			t.Fatalf("%s: %d attempts ended (%d completed, %d infra, %d interrupted), want %d", s, got, s.completed.Load(), s.infra.Load(), s.intrpt.Load(), s.n)
		}
		if s.killAt < 0 && s.startFail == 0 && s.gradeFail == 0 && s.completed.Load() != int64(s.n) {
			t.Fatalf("%s: %d of %d attempts completed with no failure injected", s, s.completed.Load(), s.n)
		}
	}
}

// TestPreparedOnADrainedEngineIsDiscarded: a container prepared ahead on
// an engine drained before its attempt took the device is not used: the
// claim refuses it (it is removed) and the attempt's container starts on
// the engine left.
func TestPreparedOnADrainedEngineIsDiscarded(t *testing.T) {
	f := newFakeEngines(1, []int{1, 1}, 0)
	ctx := t.Context()
	b := newBoxes(ctx, f, sandbox.Spec{Role: sandbox.RoleAgent, Run: "drain"}, 1)
	e, err := b.prepareBox(ctx, "a1", "e0", "", sandbox.ClassAhead, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.c.EngineName() != "e0" {
		t.Fatalf("prepared on %s, want e0 (its device's machine)", e.c.EngineName())
	}
	f.kill("e0")
	if b.claim(e) {
		t.Fatal("a container on a drained engine was handed to its attempt")
	}
	again, err := b.prepareBox(ctx, "a1", "e0", "", sandbox.ClassAttempt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.c.EngineName() != "e1" || !b.claim(again) {
		t.Fatalf("the attempt's new container is on %s (claimed: %v), want e1", again.c.EngineName(), b.claim(again))
	}
	b.release(again, "")
	b.close()
	if n := f.live.Load(); n != 0 {
		t.Errorf("%d container(s) left", n)
	}
}

// TestHeldContainerKeepsItsPlace: a container taken by an attempt that
// holds its device keeps its place when the pool asks for it back, though
// the place was taken ahead of need (a spare, or start work begun before
// the device and promoted since): the attempt is not left without its
// container (which it would end as an infrastructure failure) for the
// sake of a lower class. A container whose attempt does not hold its
// device yet gives its place back.
func TestHeldContainerKeepsItsPlace(t *testing.T) {
	open, promoted := make(chan struct{}), make(chan struct{})
	close(promoted)
	for _, tc := range []struct {
		name      string
		spare     bool
		class     sandbox.Class
		promote   chan struct{}
		wantYield bool
	}{
		{"a spare taken by an attempt on its device", true, sandbox.ClassAttempt, nil, false},
		{"a spare taken ahead, the device since held", true, sandbox.ClassAhead, promoted, false},
		{"a new container ahead, the device since held", false, sandbox.ClassAhead, promoted, false},
		{"a spare taken ahead, the device not yet held", true, sandbox.ClassAhead, open, true},
		{"a new container ahead, the device not yet held", false, sandbox.ClassAhead, open, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEngines(1, []int{1}, 0)
			ctx := t.Context()
			b := newBoxes(ctx, f, sandbox.Spec{Role: sandbox.RoleAgent, Run: "held"}, 2)
			if tc.spare {
				b.mu.Lock()
				b.starting[""]++
				b.mu.Unlock()
				b.startSpare("", "")
				if len(b.spares) != 1 {
					t.Fatal("no spare was started into the free place")
				}
			}
			asked := false
			var gave bool
			e, err := b.prepareBox(ctx, "a1", "", "", tc.class, tc.promote, func(c agentBox) error {
				// The pool asks the place's holder back while it is filled.
				if y := c.(*fakeBox).yield; y != nil {
					asked, gave = true, y()
				}
				return nil
			})
			if !asked {
				t.Fatal("the container's place cannot be asked back: the case tests nothing")
			}
			if gave != tc.wantYield {
				t.Fatalf("asked for its place back, it agreed: %v, want %v", gave, tc.wantYield)
			}
			if tc.wantYield {
				if !errors.Is(err, errYielded) {
					t.Fatalf("prepared after giving its place back: %v", err)
				}
				b.close()
				if n := f.live.Load(); n != 0 {
					t.Errorf("%d container(s) left", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("the attempt on its device lost its container: %v", err)
			}
			if !b.claim(e) {
				t.Fatal("the attempt on its device could not claim its container")
			}
			b.release(e, "")
			b.close()
			if n := f.live.Load(); n != 0 {
				t.Errorf("%d container(s) left", n)
			}
		})
	}
}
