package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Class is what a sandbox place is wanted for. A pool grants its free
// places in this order (then first come, first served), so the work that
// frees places is never stuck behind work that only takes them.
type Class int

const (
	// ClassAttempt is the agent container of an attempt that holds its
	// device (or takes it next): the endpoint waits on it.
	ClassAttempt Class = iota
	// ClassGrade is a grading container.
	ClassGrade
	// ClassAhead is work done ahead of need: a spare container, an
	// attempt's start work before its device is free. It is granted only a
	// place nobody waits for, and when someone of a higher class comes to
	// wait, its holder is asked to give the place back (Spec.Yield).
	ClassAhead
)

func (c Class) String() string {
	switch c {
	case ClassAttempt:
		return "attempt"
	case ClassGrade:
		return "grade"
	case ClassAhead:
		return "ahead"
	}
	return fmt.Sprintf("class %d", int(c))
}

// Places is the pool's one scheduler of sandbox places: it knows every
// waiter, grants places by class, and asks holders of places taken ahead
// of need to give them back when a higher class waits. Deadlock is ruled
// out by construction: a place is held either by work that ends without
// waiting for another place (an agent in use, a grade) or by work ahead of
// need, which yields it on demand.
type Places struct {
	mu    sync.Mutex
	slots []*placeSlot
	queue []*placeWaiter // sorted: class, then arrival
	seq   uint64
	held  map[*placeGrant]bool // every granted place
	last  time.Time            // the last grant or free
	// waited sums the time waiters spent before their grant, over waits
	// grants; longest is the longest one.
	waited, longest time.Duration
	waits           int
	// reclaiming says a goroutine is asking holders ahead of need for
	// their places (reclaim); there is at most one.
	reclaiming bool
}

// placeSlot is one engine's places.
type placeSlot struct {
	name, machine string
	capacity      int
	inUse         int
	lost          func() bool
	host          *hostSlot // the pool's engine (nil in tests)
}

// placeWant is what a waiter asks for.
type placeWant struct {
	class Class
	near  string // preferred machine
	what  string // who waits, in words (the watchdog names it)
	yield func() bool
	// promote, when closed, moves a waiter of ClassAhead to ClassAttempt.
	promote <-chan struct{}
}

type placeWaiter struct {
	placeWant
	seq   uint64
	since time.Time
	ready chan placeResult
}

type placeResult struct {
	g   *placeGrant
	err error
}

// placeGrant is a place held.
type placeGrant struct {
	p      *Places
	slot   *placeSlot
	want   placeWant
	since  time.Time
	asked  bool // asked to yield
	freed  bool
	refuse bool // said it cannot yield (in use now)
}

// PlaceEngine is one engine's places, for NewPlaces.
type PlaceEngine struct {
	Name, Machine string
	Capacity      int
	// Lost says whether the engine was drained (then Wake).
	Lost func() bool
}

// NewPlaces returns a scheduler of the engines' places (a Hosts makes its
// own; tests of its consumers use one over fake engines).
func NewPlaces(engines []PlaceEngine) *Places {
	var slots []*placeSlot
	for _, e := range engines {
		slots = append(slots, &placeSlot{name: e.Name, machine: e.Machine, capacity: e.Capacity, lost: e.Lost})
	}
	return newPlaces(slots)
}

func newPlaces(slots []*placeSlot) *Places {
	return &Places{slots: slots, held: map[*placeGrant]bool{}, last: time.Now()}
}

// Place is a sandbox place granted.
type Place struct{ g *placeGrant }

// Engine names the engine the place is on.
func (p *Place) Engine() string { return p.g.slot.name }

// Free gives the place back (once).
func (p *Place) Free() { p.g.free() }

// Acquire waits for a place for spec (its Class, Near, Attempt, Yield).
func (p *Places) Acquire(ctx context.Context, spec Spec) (*Place, error) {
	g, err := p.acquire(ctx, wantOf(spec))
	if err != nil {
		return nil, err
	}
	return &Place{g}, nil
}

// TryAcquire grants a place ahead of need only when one is free and
// nobody waits for one.
func (p *Places) TryAcquire(spec Spec) (*Place, bool) {
	spec.Class = ClassAhead
	g, ok := p.tryAcquire(wantOf(spec))
	if !ok {
		return nil, false
	}
	return &Place{g}, true
}

// Waiters counts who waits for a place now.
func (p *Places) Waiters() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Wake re-runs the grants after an engine was lost.
func (p *Places) Wake() { p.wake() }

// Describe says who waits for a place and who holds them.
func (p *Places) Describe() string { return p.describe(time.Now()) }

// LastChange is when a place was last granted or given back.
func (p *Places) LastChange() time.Time { return p.lastChange() }

// Waited is the time spent waiting for places: in total, over how many
// grants (a place granted at once counts, with no wait), and the longest.
func (p *Places) Waited() (total time.Duration, grants int, longest time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waited, p.waits, p.longest
}

// acquire waits for a place of class w.class; the error wraps
// ErrEngineLost when no engine with capacity is left.
func (p *Places) acquire(ctx context.Context, w placeWant) (*placeGrant, error) {
	p.mu.Lock()
	p.seq++
	wt := &placeWaiter{placeWant: w, seq: p.seq, since: time.Now(), ready: make(chan placeResult, 1)}
	p.insertLocked(wt)
	p.dispatchLocked()
	p.reclaimLocked()
	p.mu.Unlock()
	promote := w.promote
	for {
		select {
		case r := <-wt.ready:
			return r.g, r.err
		case <-promote:
			promote = nil
			p.promote(wt)
			continue
		case <-ctx.Done():
		}
		break
	}
	p.mu.Lock()
	for i, q := range p.queue {
		if q == wt {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			p.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	p.mu.Unlock()
	if r := <-wt.ready; r.g != nil {
		r.g.free()
	}
	return nil, ctx.Err()
}

// promote moves a waiter ahead of need up to ClassAttempt (its attempt
// now holds its device), asking for a place to be given back if needed.
func (p *Places) promote(wt *placeWaiter) {
	p.mu.Lock()
	for i, q := range p.queue {
		if q == wt {
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			wt.class, wt.yield = ClassAttempt, nil
			p.insertLocked(wt)
			break
		}
	}
	p.dispatchLocked()
	p.reclaimLocked()
	p.mu.Unlock()
}

func (p *Places) insertLocked(wt *placeWaiter) {
	i := sort.Search(len(p.queue), func(i int) bool {
		q := p.queue[i]
		return q.class > wt.class || (q.class == wt.class && q.seq > wt.seq)
	})
	p.queue = append(p.queue, nil)
	copy(p.queue[i+1:], p.queue[i:])
	p.queue[i] = wt
}

// tryAcquire grants a place of class ClassAhead only when one is free and
// nobody waits; false otherwise (it never waits).
func (p *Places) tryAcquire(w placeWant) (*placeGrant, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) > 0 {
		return nil, false
	}
	s := p.bestLocked(w.near)
	if s == nil {
		return nil, false
	}
	return p.grantLocked(s, w), true
}

// reclaimLocked makes sure places taken ahead of need are asked back
// while waiters of a higher class outnumber the places already promised
// to come back: it starts the one reclaim goroutine unless it runs. Every
// change that can leave such a waiter unserved calls it (a wait begins, a
// waiter is promoted, a place is given back, an engine is lost), so no
// waiter is left behind a holder nobody asked.
func (p *Places) reclaimLocked() {
	if p.reclaiming || p.nextYielderLocked() == nil {
		return
	}
	p.reclaiming = true
	go p.reclaim()
}

// reclaim asks holders, newest first and one at a time, to give their
// place back until no waiter of a higher class is left uncovered. The
// state is read afresh before each ask, so a place given back meanwhile
// or an engine lost meanwhile is counted.
func (p *Places) reclaim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		g := p.nextYielderLocked()
		if g == nil {
			p.reclaiming = false
			return
		}
		g.asked = true
		p.mu.Unlock()
		ok := g.want.yield() // never under p.mu: the holder may free at once
		p.mu.Lock()
		if !ok {
			g.refuse = true
		}
	}
}

// nextYielderLocked is the holder to ask next, or nil when none need be:
// the waiters of a higher class than ClassAhead, less the places holders
// agreed to give back and have not yet, are none, or nobody is left to
// ask. Only places on engines still live count or are asked: a place on
// a drained engine serves nobody.
func (p *Places) nextYielderLocked() *placeGrant {
	need := 0
	for _, w := range p.queue {
		if w.class < ClassAhead {
			need++
		}
	}
	if need == 0 {
		return nil
	}
	var next *placeGrant
	for g := range p.held {
		if g.want.class != ClassAhead || g.want.yield == nil || g.refuse || g.slot.lost() {
			continue
		}
		if g.asked {
			need-- // agreed, its place is on its way back
			continue
		}
		if next == nil || g.since.After(next.since) {
			next = g
		}
	}
	if need <= 0 {
		return nil
	}
	return next
}

// dispatchLocked grants free places to the waiters in order.
func (p *Places) dispatchLocked() {
	for len(p.queue) > 0 {
		w := p.queue[0]
		if p.liveLocked() == 0 {
			for _, w := range p.queue {
				w.ready <- placeResult{err: fmt.Errorf("%w: no sandbox engine is left (all %d drained)", ErrEngineLost, len(p.slots))}
			}
			p.queue = nil
			return
		}
		s := p.bestLocked(w.near)
		if s == nil {
			return
		}
		p.queue = p.queue[1:]
		g := p.grantLocked(s, w.placeWant)
		d := g.since.Sub(w.since)
		p.waited += d
		p.longest = max(p.longest, d)
		p.waits++
		w.ready <- placeResult{g: g}
	}
}

func (p *Places) grantLocked(s *placeSlot, w placeWant) *placeGrant {
	s.inUse++
	g := &placeGrant{p: p, slot: s, want: w, since: time.Now()}
	p.held[g] = true
	p.last = g.since
	return g
}

func (p *Places) liveLocked() int {
	n := 0
	for _, s := range p.slots {
		if s.capacity > 0 && !s.lost() {
			n++
		}
	}
	return n
}

// bestLocked is the live engine with a free place best for near: on that
// machine first, then the smaller share in use, then the pool's order.
func (p *Places) bestLocked(near string) *placeSlot {
	var best *placeSlot
	for _, s := range p.slots {
		if s.capacity == 0 || s.lost() || s.inUse >= s.capacity {
			continue
		}
		if best == nil || betterPlace(s, best, near) {
			best = s
		}
	}
	return best
}

func betterPlace(a, b *placeSlot, near string) bool {
	if near != "" && (a.machine == near) != (b.machine == near) {
		return a.machine == near
	}
	return a.inUse*b.capacity < b.inUse*a.capacity
}

// free gives the place back (once) and grants it to the next waiter.
func (g *placeGrant) free() {
	p := g.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if g.freed {
		return
	}
	g.freed = true
	g.slot.inUse--
	delete(p.held, g)
	p.last = time.Now()
	p.dispatchLocked()
	p.reclaimLocked()
}

// wake re-runs the grants after an engine was lost (its waiters go to
// the others, or fail when none is left).
func (p *Places) wake() {
	p.mu.Lock()
	p.dispatchLocked()
	// A drained engine's places are gone: the waiters may now need what
	// is held ahead of need elsewhere.
	p.reclaimLocked()
	p.mu.Unlock()
}

// lastChange is when a place was last granted or freed.
func (p *Places) lastChange() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// describe says who waits for a place and who holds them, for a watchdog.
func (p *Places) describe(now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	if len(p.queue) == 0 {
		b.WriteString("nobody waits for a sandbox place")
	}
	for i, w := range p.queue {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s) waits for a sandbox place since %s", w.what, w.class, now.Sub(w.since).Round(time.Second))
	}
	var held []string
	for g := range p.held {
		held = append(held, fmt.Sprintf("%s (%s) on %s", g.want.what, g.want.class, g.slot.name))
	}
	sort.Strings(held)
	for _, s := range p.slots {
		if s.capacity > 0 {
			state := ""
			if s.lost() {
				state = ", drained"
			}
			fmt.Fprintf(&b, "; engine %s: %d of %d places in use%s", s.name, s.inUse, s.capacity, state)
		}
	}
	if len(held) > 0 {
		b.WriteString("; held by: " + strings.Join(held, ", "))
	}
	return b.String()
}
