package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Host is one engine of a pool and how many containers it may run at once.
type Host struct {
	Engine *Engine
	// Capacity is the number of concurrent containers; 0 makes the engine
	// the image's source only (allowed for the first).
	Capacity int
	// Machine names the machine the engine runs on; agent containers whose
	// Spec.Near names it go there first (the endpoint's machine).
	Machine string
}

// Hosts places containers on several engines: each container goes to a
// live engine with free capacity (one on the spec's Near machine first,
// else the least loaded), and waits while all are full. It starts
// containers like one Engine does, so the grader, the runner, regrade and
// cases check take either.
//
// The sandbox image is built (or reused) on the first engine, the source;
// it reaches every other engine by content: saved from the source and
// loaded there only when the engine lacks the image ID, once per engine
// even under concurrent demand, and verified after (the loaded image's ID
// must equal the source's). Containers on every engine are started from
// the image ID, never a tag a remote could move.
//
// An engine that stops answering is drained: it is never chosen again and
// a log line says so; the run goes on with the others.
type Hosts struct {
	hosts  []*hostSlot
	places *Places
	log    io.Writer

	mu    sync.Mutex
	image *BuiltImage
	loads map[*Engine]*imageLoad
	sent  int
	// live maps the pool's containers (by ID) to their releases, so that
	// a prune frees the places of what it removed.
	live map[string]func()
	// onDrain, when set, hears of each drained engine (once).
	onDrain func(engine string, cause error)
	// announced holds the engines whose draining was logged.
	announced map[*Engine]bool
}

type hostSlot struct {
	Host
}

type imageLoad struct {
	done chan struct{}
	err  error
}

// NewHosts returns a pool of the given engines; log receives a line for
// each image transfer and each drained engine (nil discards them).
func NewHosts(hosts []Host, log io.Writer) (*Hosts, error) {
	if len(hosts) == 0 {
		return nil, errors.New("sandbox hosts: none given")
	}
	if log == nil {
		log = io.Discard
	}
	h := &Hosts{log: log, loads: map[*Engine]*imageLoad{}, announced: map[*Engine]bool{}, live: map[string]func(){}}
	seen := map[string]bool{}
	for _, host := range hosts {
		if host.Engine == nil {
			return nil, errors.New("sandbox hosts: a host without an engine")
		}
		if seen[host.Engine.name] {
			return nil, fmt.Errorf("sandbox hosts: engine %q named twice", host.Engine.name)
		}
		seen[host.Engine.name] = true
		if host.Capacity < 0 || (host.Capacity == 0 && len(h.hosts) > 0) {
			return nil, fmt.Errorf("sandbox hosts: engine %q has capacity %d: give it at least 1", host.Engine.name, host.Capacity)
		}
		h.hosts = append(h.hosts, &hostSlot{Host: host})
	}
	var slots []*placeSlot
	for _, s := range h.hosts {
		slots = append(slots, &placeSlot{name: s.Engine.name, machine: s.Machine, capacity: s.Capacity, lost: s.Engine.Lost, host: s})
	}
	h.places = newPlaces(slots)
	return h, nil
}

// Engines returns the pool's engines, the source first.
func (h *Hosts) Engines() []*Engine {
	out := make([]*Engine, len(h.hosts))
	for i, s := range h.hosts {
		out[i] = s.Engine
	}
	return out
}

// Capacity is the pool's total concurrent containers over live engines.
func (h *Hosts) Capacity() int {
	n := 0
	for _, s := range h.hosts {
		if !s.Engine.Lost() {
			n += s.Capacity // the source's 0 adds nothing
		}
	}
	return n
}

// Build builds (or reuses) the sandbox image on the source engine and
// makes it the image the pool distributes.
func (h *Hosts) Build(ctx context.Context, r *Recipe, opts BuildOptions) (*BuiltImage, error) {
	img, err := h.hosts[0].Engine.Build(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	h.UseImage(img)
	return img, nil
}

// UseImage makes img (present on the source engine) the image the pool
// distributes: a Spec naming its Ref or ID runs it by ID on any engine.
func (h *Hosts) UseImage(img *BuiltImage) {
	h.mu.Lock()
	h.image = img
	h.mu.Unlock()
}

// Transfers counts the image transfers the pool made.
func (h *Hosts) Transfers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent
}

// Start starts a container on an engine with free capacity, waiting for
// a place while all are full; places go to waiters by spec.Class (a
// grading container's is ClassGrade), see places. A failure that the
// engine's silence explains drains that engine and tries another; with no
// live engine left, the error wraps ErrEngineLost.
func (h *Hosts) Start(ctx context.Context, spec Spec) (*Container, error) {
	for {
		g, err := h.places.acquire(ctx, wantOf(spec))
		if err != nil {
			return nil, err
		}
		c, retry, err := h.startGranted(ctx, g, spec)
		if !retry {
			return c, err
		}
	}
}

// StartIfFree starts a container ahead of need (ClassAhead) only when a
// place is free and nobody waits for one; ok is false when none is (no
// container, no error).
func (h *Hosts) StartIfFree(ctx context.Context, spec Spec) (c *Container, ok bool, err error) {
	spec.Class = ClassAhead
	g, ok := h.places.tryAcquire(wantOf(spec))
	if !ok {
		return nil, false, nil
	}
	c, _, err = h.startGranted(ctx, g, spec)
	return c, err == nil, err
}

// wantOf is the place request of spec.
func wantOf(spec Spec) placeWant {
	w := placeWant{class: spec.Class, near: spec.Near, yield: spec.Yield, promote: spec.Promote}
	if spec.Role == RoleGrader && w.class == ClassAttempt {
		w.class = ClassGrade
	}
	switch {
	case w.class == ClassGrade:
		w.what = "grade of attempt " + spec.Attempt
	case spec.Attempt == "":
		w.what = "a spare agent container"
	default:
		w.what = "agent container of attempt " + spec.Attempt
	}
	if w.class != ClassAhead {
		w.yield, w.promote = nil, nil
	}
	return w
}

// startGranted starts the container on the place granted; retry says the
// engine was drained and another place should be tried.
func (h *Hosts) startGranted(ctx context.Context, g *placeGrant, spec Spec) (*Container, bool, error) {
	slot := g.slot.host
	c, err := h.startOn(ctx, slot, g, spec)
	if err == nil {
		return c, false, nil
	}
	g.free()
	if errors.Is(err, ErrImageMismatch) {
		// An engine that cannot hold our image runs nothing of ours.
		slot.Engine.MarkLost()
		h.drained(slot, err)
		return nil, true, nil
	}
	if ctx.Err() != nil || slot.Engine.Alive(ctx) {
		return nil, false, err
	}
	h.drained(slot, err)
	return nil, true, nil
}

func (h *Hosts) startOn(ctx context.Context, slot *hostSlot, g *placeGrant, spec Spec) (*Container, error) {
	h.mu.Lock()
	img := h.image
	h.mu.Unlock()
	if img != nil && (spec.Image == img.Ref || spec.Image == img.ID) {
		if slot != h.hosts[0] {
			if err := h.ensureImage(ctx, slot.Engine, img); err != nil {
				return nil, err
			}
		}
		spec.Image = img.ID
	}
	c, err := slot.Engine.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.live, c.ID)
			h.mu.Unlock()
			g.free()
		})
	}
	h.mu.Lock()
	h.live[c.ID] = release
	h.mu.Unlock()
	c.mu.Lock()
	removing := c.removed != nil // removed already (ctx ended): its Remove saw no release
	c.release = release
	c.mu.Unlock()
	if removing {
		release()
	}
	return c, nil
}

// Waiting describes who waits for a sandbox place and who holds them.
func (h *Hosts) Waiting() string { return h.places.describe(time.Now()) }

// Waited is the time the pool's containers waited for a place (see
// Places.Waited).
func (h *Hosts) Waited() (time.Duration, int, time.Duration) { return h.places.Waited() }

// Waiters counts who waits for a sandbox place now.
func (h *Hosts) Waiters() int {
	return h.places.Waiters()
}

// LastChange is when a sandbox place was last granted or given back.
func (h *Hosts) LastChange() time.Time { return h.places.lastChange() }

// drained logs that an engine stopped answering and wakes the waiters so
// they choose among the rest.
func (h *Hosts) drained(slot *hostSlot, cause error) {
	h.mu.Lock()
	if h.announced[slot.Engine] {
		h.mu.Unlock()
		return
	}
	h.announced[slot.Engine] = true
	left := 0
	for _, s := range h.hosts {
		if !s.Engine.Lost() && s.Capacity > 0 {
			left++
		}
	}
	onDrain := h.onDrain
	h.mu.Unlock()
	h.places.wake()
	fmt.Fprintf(h.log, "sandbox engine %s %s: drained; continuing on %d engine(s)\n", slot.Engine.name, DrainCause(cause), left)
	if onDrain != nil {
		onDrain(slot.Engine.name, cause)
	}
}

// DrainCause says in words why an engine was drained: it refused the
// run's image (and answers), or it stopped answering.
func DrainCause(cause error) string {
	if errors.Is(cause, ErrImageMismatch) {
		return fmt.Sprintf("was refused (%v)", cause)
	}
	return fmt.Sprintf("stopped answering (%v)", cause)
}

// OnDrain sets a function told of each engine drained (a run records it).
func (h *Hosts) OnDrain(f func(engine string, cause error)) {
	h.mu.Lock()
	h.onDrain = f
	h.mu.Unlock()
}

// Drain checks the engine of a container whose work failed; if it stopped
// answering, it is drained (logged once) and Drain reports true.
func (h *Hosts) Drain(ctx context.Context, c *Container) bool {
	if c.engine.Alive(ctx) {
		return false
	}
	for _, s := range h.hosts {
		if s.Engine == c.engine {
			h.drained(s, ErrEngineLost)
		}
	}
	return true
}

// ensureImage makes img present on dst, once per engine.
func (h *Hosts) ensureImage(ctx context.Context, dst *Engine, img *BuiltImage) error {
	h.mu.Lock()
	l := h.loads[dst]
	if l != nil {
		h.mu.Unlock()
		select {
		case <-l.done:
			return l.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l = &imageLoad{done: make(chan struct{})}
	h.loads[dst] = l
	h.mu.Unlock()
	sent, err := Transfer(context.WithoutCancel(ctx), h.hosts[0].Engine, dst, img)
	if err != nil {
		l.err = err
	}
	h.mu.Lock()
	if sent {
		h.sent++
	}
	h.mu.Unlock()
	close(l.done)
	if err == nil && sent {
		fmt.Fprintf(h.log, "sandbox image %s sent to engine %s and verified\n", shortID(img.ID), dst.name)
	}
	return err
}

// ErrImageMismatch means the image an engine holds after a transfer is not
// the one sent.
var ErrImageMismatch = errors.New("sandbox image differs from the source's")

// Transfer makes img (present on src) present on dst by content: when dst
// already holds img.ID nothing moves (sent is false); otherwise the image
// the run registered is saved from src by its ID (never its tag, which
// another build may have moved), loaded into dst and verified: dst must
// then hold img.ID, or the error wraps ErrImageMismatch and says what was
// found and what was expected.
func Transfer(ctx context.Context, src, dst *Engine, img *BuiltImage) (sent bool, err error) {
	if id, err := dst.ImageID(ctx, img.ID); err != nil {
		return false, fmt.Errorf("engine %s: %w", dst.name, err)
	} else if id == img.ID {
		return false, nil
	}
	if id, err := src.ImageID(ctx, img.ID); err != nil {
		return false, fmt.Errorf("engine %s: %w", src.name, err)
	} else if id != img.ID {
		return false, fmt.Errorf("save image %s from engine %s: the image the run registered is no longer there (removed since?): rebuild it with 'evalctl image build' and resume", shortID(img.ID), src.name)
	}
	tctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	rc, err := src.cli.ImageSave(tctx, []string{img.ID})
	if err != nil {
		return false, fmt.Errorf("save image %s from engine %s: %w", shortID(img.ID), src.name, err)
	}
	defer rc.Close()
	resp, err := dst.cli.ImageLoad(tctx, rc)
	if err != nil {
		return true, fmt.Errorf("load image %s into engine %s: %w", shortID(img.ID), dst.name, err)
	}
	defer resp.Body.Close()
	loaded, err := loadResult(resp.Body)
	if err != nil {
		return true, fmt.Errorf("load image %s into engine %s: %w", shortID(img.ID), dst.name, err)
	}
	got, err := dst.ImageID(ctx, img.ID)
	if err != nil {
		return true, fmt.Errorf("engine %s: %w", dst.name, err)
	}
	if got != img.ID {
		return true, mismatch(dst.name, loaded, img.ID)
	}
	return true, nil
}

// mismatch is the error of a load that did not leave the expected image.
func mismatch(engine string, loaded []string, expected string) error {
	found := "nothing"
	if len(loaded) > 0 {
		found = strings.Join(loaded, ", ")
	}
	return fmt.Errorf("engine %s: %w: found %s after the load, expected image %s; the engine is refused (it answers, but cannot hold the run's image)", engine, ErrImageMismatch, found, shortID(expected))
}

// loadResult reads a load's JSON message stream: what it says it loaded,
// or its error.
func loadResult(r io.Reader) ([]string, error) {
	dec := json.NewDecoder(r)
	var loaded []string
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			return loaded, nil
		} else if err != nil {
			return loaded, err
		}
		if msg.Error != "" {
			return loaded, errors.New(msg.Error)
		}
		for _, p := range []string{"Loaded image ID: ", "Loaded image: "} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(msg.Stream), p); ok {
				loaded = append(loaded, rest)
			}
		}
	}
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

// Prune removes evalctl containers matching labels on every live engine;
// the places of the pool's own containers among them are freed.
func (h *Hosts) Prune(ctx context.Context, labels map[string]string) ([]string, error) {
	var all []string
	var errs []error
	for _, s := range h.hosts {
		if s.Engine.Lost() {
			continue
		}
		removed, ids, err := s.Engine.prune(ctx, labels)
		all = append(all, removed...)
		for _, id := range ids {
			h.mu.Lock()
			release := h.live[id]
			h.mu.Unlock()
			if release != nil {
				release() // a container of ours pruned: its place is free
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("engine %s: %w", s.Engine.name, err))
		}
	}
	return all, errors.Join(errs...)
}

// Close closes every engine's connection.
func (h *Hosts) Close() error {
	var errs []error
	for _, s := range h.hosts {
		errs = append(errs, s.Engine.Close())
	}
	return errors.Join(errs...)
}

// EngineFor names the live engine a container near the given machine goes
// to first ("" when no engine is on that machine).
func (h *Hosts) EngineFor(near string) string {
	if near == "" {
		return ""
	}
	for _, s := range h.hosts {
		if s.Machine == near && s.Capacity > 0 && !s.Engine.Lost() {
			return s.Engine.name
		}
	}
	return ""
}
