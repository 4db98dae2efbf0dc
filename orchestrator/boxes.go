package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// agentBox is what the runner calls on an attempt's agent container: the
// agent's commands, the starter copy, snapshots, removal and where it runs.
type agentBox interface {
	commandBox
	CopyIn(ctx context.Context, dir string, entries []sandbox.Entry) error
	Snapshot(ctx context.Context, dir string, skip func(name string) bool) (*sandbox.Snapshot, error)
	Remove(ctx context.Context) error
	EngineName() string
	// EngineLost asks the engine whether it still answers.
	EngineLost(ctx context.Context) bool
	// Drained says, without asking, whether the engine was drained.
	Drained() bool
}

var _ agentBox = (*sandbox.Container)(nil)

// The run's sandboxes are one engine or a pool of engines, for the runner
// and its grader alike.
var (
	_ Sandboxes     = (*sandbox.Engine)(nil)
	_ Sandboxes     = (*sandbox.Hosts)(nil)
	_ grader.Engine = (*sandbox.Engine)(nil)
	_ grader.Engine = (*sandbox.Hosts)(nil)
)

// grades is what the runner calls of its grader: an answer snapshot of a
// case's phase graded in a fresh container.
type grades interface {
	Grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels grader.Labels) (*evalctl.Grade, error)
}

var _ grades = (*grader.Grader)(nil)

// backends are what the runner reaches sandboxes through once a run is
// registered or resumed: its agent containers and its grades. Run builds
// both over Options.Engine (nil fields); the package's tests hand runWith
// fakes, so that the runner's state machine runs without Docker.
type backends struct {
	boxes  boxStarter
	grades grades
}

// boxStarter starts agent containers for the runner: one engine or a pool
// of engines (engineBoxes), or a fake in the package's tests.
type boxStarter interface {
	// Start waits for a place of spec.Class and starts a container there.
	Start(ctx context.Context, spec sandbox.Spec) (agentBox, error)
	// StartIfFree starts a container ahead of need only into a place that
	// is free and nobody waits for; ok is false when there is none.
	StartIfFree(ctx context.Context, spec sandbox.Spec) (c agentBox, ok bool, err error)
	// Waiting says whether anyone waits for a place now.
	Waiting() bool
	// EngineFor is the engine containers near a device go to ("": any).
	EngineFor(near string) string
	// Drain takes the engine of c, which stopped answering, out of a
	// pool: nothing more is placed there (no-op on one engine).
	Drain(ctx context.Context, c agentBox)
}

// engineBoxes is a boxStarter over the run's Sandboxes.
type engineBoxes struct{ s Sandboxes }

var _ boxStarter = engineBoxes{}

func (e engineBoxes) Start(ctx context.Context, spec sandbox.Spec) (agentBox, error) {
	c, err := e.s.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (e engineBoxes) StartIfFree(ctx context.Context, spec sandbox.Spec) (agentBox, bool, error) {
	if h, ok := e.s.(*sandbox.Hosts); ok {
		c, ok, err := h.StartIfFree(ctx, spec)
		if !ok {
			return nil, false, err
		}
		return c, true, nil
	}
	// One engine has no count of places: nobody waits for one.
	c, err := e.Start(ctx, spec)
	return c, err == nil, err
}

func (e engineBoxes) Waiting() bool {
	if h, ok := e.s.(*sandbox.Hosts); ok {
		return h.Waiters() > 0
	}
	return false
}

func (e engineBoxes) EngineFor(near string) string {
	if h, ok := e.s.(*sandbox.Hosts); ok {
		return h.EngineFor(near)
	}
	return ""
}

// Drain drains c's engine when the sandboxes are a pool and c one of its
// containers.
func (e engineBoxes) Drain(ctx context.Context, c agentBox) {
	if h, ok := e.s.(*sandbox.Hosts); ok {
		if c, ok := c.(*sandbox.Container); ok {
			h.Drain(ctx, c)
		}
	}
}

// errYielded means a container started ahead of need gave its place back
// to a higher class of waiter (see sandbox.ClassAhead): the attempt starts
// its agent container when it takes its device. Not a failure.
var errYielded = errors.New("the container started ahead gave its place back")

type boxState int

const (
	boxStarting boxState = iota // being started
	boxSpare                    // started ahead, nobody's yet
	boxTaken                    // an attempt's start work is filling it
	boxPrepared                 // filled, waiting for its attempt's device
	boxInUse                    // the attempt runs in it
	boxGone                     // removed (or being removed)
)

// boxEntry is one agent container and where it is in its life.
type boxEntry struct {
	c     agentBox
	image string // "": the spec's image (see boxes.images)
	state boxState
	yield bool // asked to give its place back while starting or being filled
	// held is closed (or never nil and closed at once) once the attempt
	// that took the container holds its device: from then on its place is
	// the device's and is not given back (nil: a spare nobody took).
	held <-chan struct{}
}

// closedChan is the held channel of a container taken by an attempt that
// already holds its device.
var closedChan = func() <-chan struct{} { c := make(chan struct{}); close(c); return c }()

// holdsDevice says whether e's attempt holds its device now.
func (e *boxEntry) holdsDevice() bool {
	if e.held == nil {
		return false
	}
	select {
	case <-e.held:
		return true
	default:
		return false
	}
}

// boxes hands attempts their agent containers. Starting one is most of a
// second of engine work and removing one a few hundred milliseconds; while
// attempts are still waiting, the next container is started as soon as an
// attempt's agent is done (while its answer is graded), and a used one is
// removed in the background, so neither adds to the cohort's wall time.
// A container started ahead is identical to one started on demand (same
// image, limits and run label) except that it carries no attempt label.
// An arm with its own agent image (agent.image) has its own spares: a
// container is only ever taken by an attempt of its image.
//
// Containers started ahead of need (spares, and an attempt's start work
// before its device is free) take places as sandbox.ClassAhead: only
// places nobody waits for, given back when asked (yield). A spare is
// taken by the next attempt that wants one or removed; it never holds a
// place someone waits for.
type boxes struct {
	ctx    context.Context
	engine boxStarter
	spec   sandbox.Spec

	mu sync.Mutex
	// waiting are the attempts that have not taken a container yet and
	// starting the spares being started, per image ("": the spec's).
	waiting  map[string]int
	starting map[string]int
	spares   []*boxEntry
	closed   bool
	// bgMu orders background work against close: once bgClosing is set,
	// work that would go to the background runs in its caller, so no
	// goroutine is added while close waits (bg's rule).
	bgMu      sync.Mutex
	bgClosing bool
	bg        sync.WaitGroup
}

func newBoxes(ctx context.Context, engine boxStarter, spec sandbox.Spec, waiting int) *boxes {
	return &boxes{ctx: ctx, engine: engine, spec: spec, waiting: map[string]int{"": waiting}, starting: map[string]int{}}
}

// expect moves n of the waiting attempts to image (an agent image's ID):
// they take containers of that image only.
func (b *boxes) expect(image string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting[""] -= n
	b.waiting[image] += n
}

// specFor is the spec of a container of image ("": the spec's own).
func (b *boxes) specFor(image string) sandbox.Spec {
	spec := b.spec
	if image != "" {
		spec.Image = image
	}
	return spec
}

// take returns a container for the attempt: a spare if there is one,
// otherwise a new one with a place of class (ClassAhead: start work ahead
// of the device, promote closed once the attempt holds it; ClassAttempt:
// the attempt holds its device). near is the
// attempt's device, which a pool of engines places the container near;
// image is the arm's agent image ("": the spec's).
func (b *boxes) take(ctx context.Context, attempt, near, image string, class sandbox.Class, promote <-chan struct{}) (*boxEntry, error) {
	// On a pool, a spare is taken only from the engine the attempt's
	// device prefers (when one does).
	want := b.engine.EngineFor(near)
	held := promote
	if class != sandbox.ClassAhead {
		held = closedChan
	}
	b.mu.Lock()
	b.waiting[image]--
	for i := len(b.spares) - 1; i >= 0; i-- {
		e := b.spares[i]
		if e.image != image || (want != "" && e.c.EngineName() != want) {
			continue
		}
		b.spares = append(b.spares[:i], b.spares[i+1:]...)
		e.state, e.held = boxTaken, held
		b.mu.Unlock()
		return e, nil
	}
	b.mu.Unlock()
	e := &boxEntry{state: boxStarting, image: image, held: held}
	spec := b.specFor(image)
	spec.Attempt, spec.Near, spec.Class = attempt, near, class
	if class == sandbox.ClassAhead {
		spec.Yield = func() bool { return b.yield(e) }
		spec.Promote = promote
	}
	c, err := b.engine.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	e.c = c
	if e.yield {
		e.state = boxGone
		b.mu.Unlock()
		b.remove(c)
		return nil, errYielded
	}
	e.state = boxTaken
	b.mu.Unlock()
	return e, nil
}

// prepareBox takes a container for the attempt and fills it (the starter
// workspace); errYielded when its place went to a higher class meanwhile.
// On any error no container is left held.
func (b *boxes) prepareBox(ctx context.Context, attempt, near, image string, class sandbox.Class, promote <-chan struct{}, fill func(agentBox) error) (*boxEntry, error) {
	e, err := b.take(ctx, attempt, near, image, class, promote)
	if errors.Is(err, errYielded) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("agent sandbox would not start: %w", err)
	}
	if fill != nil {
		if err := fill(e.c); err != nil {
			b.release(e, near)
			return nil, err
		}
	}
	if err := b.prepared(e); err != nil {
		return nil, err
	}
	return e, nil
}

// prepared marks a taken container filled; false when it was asked to
// give its place back meanwhile (it is removed, the error is errYielded).
func (b *boxes) prepared(e *boxEntry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.yield || e.state != boxTaken {
		b.goneLocked(e)
		return errYielded
	}
	e.state = boxPrepared
	return nil
}

// claim hands a prepared container to its attempt, which now holds its
// device; false when the container gave its place back, or its engine was
// drained (drain is a barrier: nothing more goes to that engine; the
// container is removed and the attempt starts another).
func (b *boxes) claim(e *boxEntry) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.state == boxPrepared && !e.c.Drained() {
		e.state = boxInUse
	}
	if e.state != boxInUse {
		b.goneLocked(e)
		return false
	}
	return true
}

// yield is a container's answer to a pool asking for its place back. A
// container whose attempt holds its device refuses, even when its place
// was taken ahead of need (a spare, start work begun before the device):
// the place is the device's now, of the highest class, and the attempt
// needs no other place to give it back.
func (b *boxes) yield(e *boxEntry) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.state != boxGone && e.holdsDevice() {
		return false
	}
	switch e.state {
	case boxStarting, boxTaken:
		e.yield = true // removed once started or filled
		return true
	case boxSpare:
		for i, s := range b.spares {
			if s == e {
				b.spares = append(b.spares[:i], b.spares[i+1:]...)
			}
		}
		b.goneLocked(e)
		return true
	case boxPrepared:
		b.goneLocked(e)
		return true
	case boxGone:
		return true // being removed: its place is on its way back
	}
	return false // in use: the attempt holds its device
}

// goneLocked removes e's container in the background (once).
func (b *boxes) goneLocked(e *boxEntry) {
	if e.state == boxGone {
		return
	}
	e.state = boxGone
	if e.c != nil {
		b.remove(e.c)
	}
}

func (b *boxes) remove(c agentBox) {
	b.background(func() { c.Remove(context.WithoutCancel(b.ctx)) })
}

// background runs f in a goroutine close waits for, or in the caller once
// close has begun.
func (b *boxes) background(f func()) {
	b.bgMu.Lock()
	if b.bgClosing {
		b.bgMu.Unlock()
		f()
		return
	}
	b.bg.Add(1)
	b.bgMu.Unlock()
	go func() {
		defer b.bg.Done()
		f()
	}()
}

// near says whether c is where a pool of engines would place a container
// for device (always, on one engine or when no engine is on its machine).
func (b *boxes) near(c agentBox, device string) bool {
	want := b.engine.EngineFor(device)
	return want == "" || c.EngineName() == want
}

// release removes a used (or unused) container in the background and
// starts a spare if an attempt is still waiting for one (near the device
// the last one ran on, likely the next attempt's), of the released one's
// image while attempts of it wait, else of an image attempts wait for.
func (b *boxes) release(e *boxEntry, near string) {
	b.mu.Lock()
	b.goneLocked(e)
	image, ok := b.spareNeededLocked(e.image)
	if b.closed || b.ctx.Err() != nil || !ok {
		b.mu.Unlock()
		return
	}
	b.starting[image]++
	b.mu.Unlock()
	b.background(func() { b.startSpare(near, image) })
}

// spareNeededLocked is the image a spare would be started for: prefer if
// more of its attempts wait than spares are kept or started for it, else
// the first such image in name order; ok is false when none is.
func (b *boxes) spareNeededLocked(prefer string) (string, bool) {
	needs := func(image string) bool {
		have := b.starting[image]
		for _, s := range b.spares {
			if s.image == image {
				have++
			}
		}
		return b.waiting[image] > have
	}
	if needs(prefer) {
		return prefer, true
	}
	images := make([]string, 0, len(b.waiting))
	for image := range b.waiting {
		images = append(images, image)
	}
	sort.Strings(images)
	for _, image := range images {
		if needs(image) {
			return image, true
		}
	}
	return "", false
}

// startSpare starts a container ahead of need, only into a free place
// nobody waits for; it is kept for the next attempt, or removed when the
// run ends, it was asked for its place, or someone waits for a place.
func (b *boxes) startSpare(near, image string) {
	s := &boxEntry{state: boxStarting, image: image}
	spec := b.specFor(image)
	spec.Near, spec.Class = near, sandbox.ClassAhead
	spec.Yield = func() bool { return b.yield(s) }
	c, ok, _ := b.engine.StartIfFree(b.ctx, spec)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.starting[image]--
	if !ok {
		return // the attempt that needs one starts it and reports an error
	}
	s.c = c
	if b.closed || s.yield || b.engine.Waiting() {
		b.goneLocked(s)
		return
	}
	s.state = boxSpare
	b.spares = append(b.spares, s)
}

// close waits for background starts and removals and removes the spares
// nobody took, so that a finished run leaves no container behind.
func (b *boxes) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.bgMu.Lock()
	b.bgClosing = true
	b.bgMu.Unlock()
	b.bg.Wait()
	b.mu.Lock()
	for _, s := range b.spares {
		b.goneLocked(s)
	}
	b.spares = nil
	b.mu.Unlock()
	b.bg.Wait()
}
