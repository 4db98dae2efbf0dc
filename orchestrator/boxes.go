package orchestrator

import (
	"context"
	"sync"

	"github.com/evalctl/evalctl/sandbox"
)

// boxes hands attempts their agent containers. Starting one is most of a
// second of engine work and removing one a few hundred milliseconds; while
// attempts are still waiting, the next container is started as soon as an
// attempt's agent is done (while its answer is graded), and a used one is
// removed in the background, so neither adds to the cohort's wall time.
// A container started ahead is identical to one started on demand (same
// image, limits and run label) except that it carries no attempt label.
type boxes struct {
	ctx    context.Context
	engine starter
	spec   sandbox.Spec

	mu       sync.Mutex
	waiting  int // attempts that have not taken a container yet
	starting int // containers being started ahead
	spares   []*sandbox.Container
	closed   bool
	bg       sync.WaitGroup
}

// starter starts containers: one engine or a pool.
type starter interface {
	Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error)
}

func newBoxes(ctx context.Context, engine starter, spec sandbox.Spec, waiting int) *boxes {
	return &boxes{ctx: ctx, engine: engine, spec: spec, waiting: waiting}
}

// take returns a container for the attempt: one started ahead if there is
// one, otherwise a new one.
// near is the attempt's device, which a pool of engines places the
// container near.
func (b *boxes) take(ctx context.Context, attempt, near string) (*sandbox.Container, error) {
	// On a pool, a spare is taken only from the engine the attempt's
	// device prefers (when one does).
	want := b.engineFor(near)
	b.mu.Lock()
	b.waiting--
	for i := len(b.spares) - 1; i >= 0; i-- {
		c := b.spares[i]
		if want != "" && c.EngineName() != want {
			continue
		}
		b.spares = append(b.spares[:i], b.spares[i+1:]...)
		b.mu.Unlock()
		return c, nil
	}
	b.mu.Unlock()
	spec := b.spec
	spec.Attempt, spec.Near = attempt, near
	return b.engine.Start(ctx, spec)
}

// near says whether c is where a pool of engines would place a container
// for device (always, on one engine or when no engine is on its machine).
func (b *boxes) near(c *sandbox.Container, device string) bool {
	want := b.engineFor(device)
	return want == "" || c.EngineName() == want
}

// engineFor is the engine a pool places containers of device on ("": any,
// and always on one engine).
func (b *boxes) engineFor(device string) string {
	if p, ok := b.engine.(interface{ EngineFor(near string) string }); ok {
		return p.EngineFor(device)
	}
	return ""
}

// release removes a used container in the background and starts the next
// one if an attempt is still waiting for it (near the device the last one
// ran on, likely the next attempt's).
func (b *boxes) release(c *sandbox.Container, near string) {
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		c.Remove(context.WithoutCancel(b.ctx))
	}()
	b.mu.Lock()
	if b.closed || b.ctx.Err() != nil || b.waiting <= len(b.spares)+b.starting {
		b.mu.Unlock()
		return
	}
	b.starting++
	b.mu.Unlock()
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		spec := b.spec
		spec.Near = near
		c, err := b.engine.Start(b.ctx, spec)
		b.mu.Lock()
		defer b.mu.Unlock()
		b.starting--
		if err != nil {
			return // the attempt that needs one starts it and reports the error
		}
		if b.closed {
			c.Remove(context.WithoutCancel(b.ctx))
			return
		}
		b.spares = append(b.spares, c)
	}()
}

// close waits for background starts and removals and removes the spares
// nobody took, so that a finished run leaves no container behind.
func (b *boxes) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.bg.Wait()
	b.mu.Lock()
	spares := b.spares
	b.spares = nil
	b.mu.Unlock()
	for _, c := range spares {
		c.Remove(context.WithoutCancel(b.ctx))
	}
}
