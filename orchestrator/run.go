package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// ErrGuard is returned when a guard (temperature, stop file) stopped the
// run between attempts; the run can be resumed.
var ErrGuard = errors.New("guard tripped")

// ErrInterrupted is returned when the run was cancelled (Ctrl-C); the
// attempt in flight is recorded as interrupted and the run can be resumed.
var ErrInterrupted = errors.New("run interrupted")

// ErrChanged is returned by a resume when the plan or the suite changed
// since registration.
var ErrChanged = runstore.ErrChanged

// TemperatureSource reads the temperature the guard watches;
// *telemetry.Thermal satisfies it. A nil reading (with a reason) means
// unknown: the guard does not trip on what it cannot see.
type TemperatureSource interface {
	CPUTemperature(ctx context.Context) (*float64, string, error)
}

// Options configure Run.
type Options struct {
	// Plan registers a new run of this resolved plan (LoadPlan reads one
	// from a file, NewPlan resolves one built in Go), under OutDir.
	Plan   *Plan
	OutDir string
	// Suite is the suite Plan was resolved against; nil loads it from
	// Plan.SuiteDir and checks its fingerprint.
	Suite *tasks.Suite
	// ResumeDir resumes an existing run instead.
	ResumeDir string
	// ReplaceInfra re-runs infra-failed slots as registered replacements.
	ReplaceInfra bool
	// Engine and Image run the sandboxes; Image is built if empty. Engine
	// is one engine or a pool (the plan's sandbox_hosts, or SandboxHosts,
	// make a pool around the one engine given).
	Engine Sandboxes
	Image  *sandbox.BuiltImage
	// SandboxHosts, when set, are the engines that run sandboxes instead
	// of the plan's sandbox_hosts (evalctl run --sandbox-hosts).
	SandboxHosts []SandboxHost
	// GradeConcurrency bounds concurrent grades (default 1).
	GradeConcurrency int
	// Temperature feeds the temperature guard (nil: no guard reading).
	Temperature TemperatureSource
	// Progress receives progress output; Live redraws one status line (a
	// terminal) instead of printing log lines.
	Progress io.Writer
	Live     bool
	// Sandbox limits for the agent's container.
	Limits sandbox.Limits
	// Evalctl is the evalctl binary a server profile's {{evalctl}} names
	// (default: this executable).
	Evalctl string
	// StallAfter is how long the run may make no progress before the
	// watchdog stops it, resumably, naming what waited on what (default
	// DefaultStallAfter).
	StallAfter time.Duration
	// knobs are what only tests and benchmarks set (export_test.go).
	knobs testKnobs
	// ownPool is the pool of engines the run connected (closed at its end).
	ownPool *sandbox.Hosts
}

// testKnobs change the runner in ways only tests and benchmarks ask for;
// a user cannot reach them (they are set through export_test.go).
type testKnobs struct {
	// NoPreflight skips the endpoint checks before registration, to reach
	// failures the preflight would otherwise stop first.
	NoPreflight bool
	// HoldEndpointWhileGrading keeps an attempt's device slot until its
	// grading ends, as runners did before grading left the critical path:
	// the benchmark's baseline.
	HoldEndpointWhileGrading bool
	// StartOnSlot does an attempt's start work (agent container, starter
	// workspace, endpoint identity) after it takes its device slot, as
	// runners did before that work moved off the device's critical path:
	// the benchmark's baseline.
	StartOnSlot bool
}

// Sandboxes start containers, remove a run's leftovers, build the image
// and look up agent images (ImageID); *sandbox.Engine (one engine) and
// *sandbox.Hosts (a pool) satisfy it. The runner calls the containers
// they start only through agentBox (engineBoxes) and the grader's
// interface of its own.
type Sandboxes interface {
	Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error)
	Prune(ctx context.Context, labels map[string]string) ([]string, error)
	Build(ctx context.Context, r *sandbox.Recipe, opts sandbox.BuildOptions) (*sandbox.BuiltImage, error)
	imageLookup
}

// Result summarises a run.
type Result struct {
	Dir        string
	RunID      string
	PlanSHA256 string
	Attempts   []*evalctl.Attempt
}

// Run registers (or resumes) a run and executes its attempts.
func Run(ctx context.Context, opts Options) (*Result, error) {
	return runWith(ctx, opts, backends{})
}

// runWith is Run with the runner's agent containers and grades taken from
// b where it has them (the package's tests: fakes), else over opts.Engine.
func runWith(ctx context.Context, opts Options, b backends) (*Result, error) {
	if opts.Engine == nil {
		return nil, errors.New("run: no sandbox engine")
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	var (
		r   *runner
		err error
	)
	if opts.ResumeDir != "" {
		r, err = resume(ctx, opts)
	} else {
		r, err = register(ctx, opts)
	}
	if err != nil {
		return nil, err
	}
	defer r.store.Unlock()
	defer r.closeHosts()
	if b.grades != nil {
		r.grader = b.grades
	}
	r.starter = b.boxes
	if pool, ok := r.opts.Engine.(*sandbox.Hosts); ok {
		pool.OnDrain(func(engine string, cause error) {
			r.store.Log(runstore.Event{Kind: evalctl.EventEngineDrained, Detail: fmt.Sprintf("sandbox engine %s %s; the run continued on the others", engine, sandbox.DrainCause(cause))})
		})
	}
	err = r.execute(ctx)
	r.servers.stop(ctx)
	r.sweep(context.WithoutCancel(ctx))
	res := &Result{Dir: r.store.Dir, RunID: r.run.ID, PlanSHA256: r.run.PlanSHA256}
	res.Attempts, _ = r.store.Attempts()
	return res, err
}

type runner struct {
	opts    Options
	plan    *Plan
	suite   *tasks.Suite
	store   *runstore.Store
	run     *runstore.Run
	image   *sandbox.BuiltImage
	grader  grades
	prog    *progress
	servers *servers
	boxes   *boxes
	// starter starts the agent containers (nil: engineBoxes over
	// opts.Engine).
	starter boxStarter
	devs    *devicePool
	// watchdog stops the run when it makes no progress (watch).
	watchdog *watchdog
	// overlaps names the attempts in flight together on one device.
	overlaps overlaps
	// checked holds the profile-started servers that passed the preflight.
	checked map[string]string
	// agentIDs are the agent programs (SHA-256 and version) each
	// agent-command arm ran first; agentMu guards them.
	agentMu  sync.Mutex
	agentIDs map[string]string
	// agentImages are the image IDs of the arms' agent.image, by arm
	// name, resolved when this runner started (AgentImages).
	agentImages map[string]string
	// ruleOff is set when the stop rule stopped this run before: a resume
	// runs the rest of the plan.
	ruleOff bool
	// speeds are the measured attempts the stop rule reads (nil without
	// a rule).
	speeds *speedLog
}

// sweep removes whatever containers of this run still exist when the runner
// ends. Every attempt removes its own, but a runner killed while the engine
// was still creating a container (kill -9 between the request and the
// reply) leaves one that appears only after the next runner's start-up
// prune has looked; the run lock guarantees no other runner of this run is
// using them.
func (r *runner) sweep(ctx context.Context) {
	pruneRun(ctx, r.opts, r.run.ID, "left behind")
}

func (r *runner) execute(ctx context.Context) error {
	todo, done, err := r.pending()
	if err != nil {
		return err
	}
	if len(todo) == 0 {
		fmt.Fprintf(r.opts.Progress, "nothing left to do: every one of the %d planned attempts has ended%s\n", done, r.infraHint())
		return r.incomplete()
	}
	if err := r.readStopRule(); err != nil {
		return err
	}
	r.prog.setArms(r.plan, todo)
	r.prog.record = func(m map[string]string) { r.store.WritePhases(m) }
	r.prog.start(done, earlierOutcomes(r.store, tasks.Label(r.run.Suite.Name, r.run.Suite.Version), todo))
	defer r.prog.finish()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r.watch(ctx, stop)
	defer r.logSchedule()
	starter := r.starter
	if starter == nil {
		starter = engineBoxes{r.opts.Engine}
	}
	r.boxes = newBoxes(ctx, starter, agentSpec(r.plan, sandbox.Spec{Image: r.image.Ref, Role: sandbox.RoleAgent, Run: r.run.ID, Limits: r.opts.Limits}), len(todo))
	defer r.boxes.close()
	for _, a := range todo {
		if image := r.agentImageKey(r.plan.Arm(a.Arm)); image != "" {
			r.boxes.expect(image, 1)
		}
	}
	// Concurrency slots per device label: arms without a label share one,
	// so by default the whole run has at most Concurrency attempts in
	// flight; an arm on a pool takes a slot on any of its replicas' devices.
	devs := newDevicePool(r.plan.Concurrency)
	devs.rot = newRotation(devs.wake, r.logEvent)
	r.devs = devs
	ses := &session{devs: devs, brk: newBreaker(r.plan.Guards.MaxConsecutiveInfraFailures)}
	for i, a := range todo {
		if ctx.Err() != nil || ses.stopped() || !r.startNext(ctx, ses, i, a) {
			break
		}
	}
	ses.wg.Wait()
	return r.sessionEnd(ctx, ses.firstErr)
}

// session is one runner session's attempts in flight: the device slots,
// the breaker, and the first error that stops it.
type session struct {
	devs     *devicePool
	brk      *breaker
	wg       sync.WaitGroup
	mu       sync.Mutex
	firstErr error
	// rerun holds the slots re-run in this session after their replica
	// left the rotation (runElsewhere): once each.
	rerun map[int]bool
}

// record keeps the first error and stops handing out device slots.
func (s *session) record(err error) {
	s.mu.Lock()
	if s.firstErr == nil {
		s.firstErr = err
	}
	s.mu.Unlock()
	s.devs.stop()
}

func (s *session) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstErr != nil
}

// readStopRule reads what the stop rule needs: whether it stopped this
// run before (a resume then runs the rest of the plan), and the speeds
// measured so far.
func (r *runner) readStopRule() error {
	if events, err := r.store.Events(); err == nil {
		r.ruleOff = ruleStoppedBefore(events)
	}
	if r.plan.Stop == nil {
		return nil
	}
	all, err := r.store.Attempts()
	if err != nil {
		return err
	}
	r.speeds = newSpeedLog(all)
	return nil
}

// startNext rests, checks the guards, takes a device slot for attempt a
// (its i-th of the session) and starts it; false stops the session.
func (r *runner) startNext(ctx context.Context, ses *session, i int, a *evalctl.Attempt) bool {
	if i > 0 && r.plan.RestSeconds > 0 {
		from := time.Now().UTC()
		select {
		case <-time.After(seconds(r.plan.RestSeconds)):
		case <-ctx.Done():
		}
		r.store.Log(runstore.Event{Kind: evalctl.EventRest, Detail: runstore.RestDetail(from, time.Now().UTC())})
	}
	if err := r.mayStart(ctx); err != nil {
		ses.record(err)
		return false
	}
	if err := r.eventLogStop(); err != nil {
		ses.record(err)
		return false
	}
	arm := r.plan.Arm(a.Arm)
	// The start work that needs no slot begins now, while the attempts
	// before this one still generate: the slot is taken only when the
	// first request can follow.
	var prep *preparation
	if !r.opts.knobs.StartOnSlot {
		prep = r.prepare(ctx, a, arm)
	}
	// A free replica of the arm's pool (its one endpoint when it has
	// no pool): a slot on that replica's device.
	reps := arm.Replicas()
	k := ses.devs.acquire(ctx, arm.Name, reps)
	if k < 0 {
		prep.discard()
		return false
	}
	rep := reps[k]
	if ctx.Err() != nil || ses.stopped() {
		// Cancelled, or the breaker tripped, while this attempt waited
		// for its turn.
		ses.devs.release(rep.Device)
		prep.discard()
		return false
	}
	// Checked again when the attempt takes its device: a stop file or
	// heat that came while it waited for the attempt before stops it.
	// The stop rule reads the pairs measured so far, the attempt before
	// this one's included (its slot is free, so its model part ended).
	err := r.mayStart(ctx)
	if err == nil {
		err = r.stopByRule()
	}
	if err != nil {
		ses.devs.release(rep.Device)
		prep.discard()
		ses.record(err)
		return false
	}
	ses.wg.Add(1)
	go r.runOne(ctx, ses, a, arm, rep, reps, prep)
	return true
}

// mayStart is the guards' verdict: an error (ErrGuard, logged) stops the
// run resumably.
func (r *runner) mayStart(ctx context.Context) error {
	why := r.guard(ctx)
	if why == "" {
		return nil
	}
	r.store.Log(runstore.Event{Kind: evalctl.EventGuard, Detail: why})
	return fmt.Errorf("%w: %s; resume with '%s'", ErrGuard, why, r.resumeCommand())
}

// stopByRule is the stop rule's verdict: an error (ErrStoppedByRule,
// logged) stops the run, resumable to the full plan.
func (r *runner) stopByRule() error {
	why := r.stopRule()
	if why == "" {
		return nil
	}
	r.store.Log(runstore.Event{Kind: evalctl.EventStopRule, Detail: why})
	return fmt.Errorf("%w: %s; outcomes are not settled by this rule ('evalctl report %s' says what is); the rest of the plan runs with '%s'",
		ErrStoppedByRule, why, r.store.Dir, r.resumeCommand())
}

// runOne runs attempt a on replica rep, then feeds its outcome to the
// breaker and the pool's rotation.
func (r *runner) runOne(ctx context.Context, ses *session, a *evalctl.Attempt, arm *Arm, rep Replica, reps []Replica, prep *preparation) {
	defer ses.wg.Done()
	// The slot is freed when the attempt gives its endpoint back
	// (after its last model response), not when its grading ends.
	var once sync.Once
	free := func() { once.Do(func() { ses.devs.release(rep.Device) }) }
	defer free()
	defer prep.discard()
	// The breaker counts in the order the endpoint was used: an attempt
	// whose model part ended well counts when it gives the endpoint back,
	// not after its grade, so that a grade ending late never breaks a run
	// of failures of attempts that used the endpoint after it.
	key := endpointKey(arm, rep)
	served := func() { ses.brk.observe(key, false, "") }
	if err := r.attempt(ctx, a, rep, prep, served, free); err != nil {
		ses.record(err)
		return
	}
	if ctx.Err() != nil || a.State == evalctl.Interrupted {
		return
	}
	why := ""
	if a.State == evalctl.InfraFailed {
		why = ses.brk.observe(key, true, a.Error)
	}
	again := false
	if len(reps) > 1 && a.State == evalctl.InfraFailed {
		// A pool fails over: the replica leaves the rotation when
		// it is unhealthy (or the breaker tripped on it); the run
		// stops only when no replica of the arm is left.
		ses.devs.rot.failed(ctx, arm, rep, why, a.Error)
		if ses.devs.rot.allOut(reps) {
			why = fmt.Sprintf("no replica of arm %s is healthy (all %d out of rotation); the last failure: %s", arm.Name, len(reps), a.Error)
		} else {
			why = ""
			again = ses.failOver(ses.devs.rot.isOut(rep.BaseURL), a.Slot)
		}
	}
	if why != "" {
		r.store.Log(runstore.Event{Kind: evalctl.EventEndpointFailing, Attempt: a.ID, Detail: why})
		ses.record(fmt.Errorf("%w: %s; the run stopped (the attempts not yet run are still planned); once the endpoint answers again, resume with '%s'", ErrEndpointFailing, why, r.resumeCommand()))
		return
	}
	if again {
		free() // the out replica's slot: nobody else is handed it
		r.runElsewhere(ctx, ses, a, arm, reps)
	}
}

// failOver is the decision to re-run, in this session, a pool's slot whose
// attempt just ended as an infrastructure failure: only when its replica
// left the rotation for it (its health probe failed right after, or the
// breaker tripped on it: the endpoint vanished, not the model), and only
// the first time the slot fails so in this session, so that a slot never
// loops between replicas. The attempt's request may have been taken; it is
// still not the model's failure when the server that took it is gone
// (attempt.go, vanished), and the slot runs again as --replace-infra would,
// on a replica left in rotation.
func (s *session) failOver(replicaOut bool, slot int) bool {
	if !replicaOut {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rerun == nil {
		s.rerun = map[int]bool{}
	}
	if s.rerun[slot] {
		return false
	}
	s.rerun[slot] = true
	return true
}

// runElsewhere re-runs the slot of the infrastructure-failed attempt a,
// whose replica just left the rotation, as a replacement record (the
// failed one is kept, listed as replaced, as with --replace-infra) on a
// replica left in rotation. A replacement that cannot start (the run
// stops first) stays planned: a resume runs it.
func (r *runner) runElsewhere(ctx context.Context, ses *session, a *evalctl.Attempt, arm *Arm, reps []Replica) {
	slot := Slot{Index: a.Slot, Arm: a.Arm, Case: a.Case, Repeat: a.Repeat, Seed: a.Seed}
	na, err := newAttempt(r.store, r.run, r.plan, r.suite, slot, a.ID)
	if err != nil {
		ses.record(err)
		return
	}
	// The detail is exactly what a resume's replacement writes: readers of
	// the log (runstore's listing) take the replaced id from it.
	r.store.Log(runstore.Event{Kind: evalctl.EventReplaceInfra, Attempt: na.ID, Detail: "replaces " + a.ID})
	r.prog.replaced(a)
	var prep *preparation
	if !r.opts.knobs.StartOnSlot {
		prep = r.prepare(ctx, na, arm)
	}
	k := ses.devs.acquire(ctx, arm.Name, reps)
	if k < 0 {
		prep.discard()
		return
	}
	if ctx.Err() != nil || ses.stopped() {
		ses.devs.release(reps[k].Device)
		prep.discard()
		return
	}
	if err := r.mayStart(ctx); err != nil {
		ses.devs.release(reps[k].Device)
		prep.discard()
		ses.record(err)
		return
	}
	ses.wg.Add(1)
	r.runOne(ctx, ses, na, arm, reps[k], reps, prep)
}

// sessionEnd is the session's outcome once every attempt it started has
// ended: stalled, interrupted, stopped by an error, or incomplete.
func (r *runner) sessionEnd(ctx context.Context, firstErr error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) {
		return fmt.Errorf("%w; resume with '%s'", cause, r.resumeCommand())
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: resume with '%s'", ErrInterrupted, r.resumeCommand())
	}
	if firstErr != nil {
		return firstErr
	}
	if err := r.eventLogStop(); err != nil {
		return err
	}
	return r.incomplete()
}

// eventLogStop stops the run, resumably, once its event log lost an
// event (runstore.Store.Log); nil while it has lost none.
func (r *runner) eventLogStop() error {
	if err := r.store.EventLogErr(); err != nil {
		return fmt.Errorf("%w; every attempt record is written, but the run's event log is not: once the disk takes writes again, resume with '%s'", err, r.resumeCommand())
	}
	return nil
}

// incomplete is ErrIncomplete, with the command that re-runs them, when
// infrastructure failures are left unscored; nil otherwise.
func (r *runner) incomplete() error {
	if n := r.infraLeft(); n > 0 {
		return fmt.Errorf("%w: %d planned attempt(s) ended as infrastructure failures and are unscored; re-run them with '%s'", ErrIncomplete, n, r.resumeCommand())
	}
	return nil
}

// infraLeft counts the plan slots whose latest attempt is an
// infrastructure failure (unscored, replaceable with --replace-infra).
func (r *runner) infraLeft() int {
	all, err := r.store.Attempts()
	if err != nil {
		return 0
	}
	replaced := map[string]bool{}
	for _, a := range all {
		if a.ReplacementOf != "" {
			replaced[a.ReplacementOf] = true
		}
	}
	n := 0
	for _, a := range all {
		if a.State == evalctl.InfraFailed && !replaced[a.ID] {
			n++
		}
	}
	return n
}

// infraHint says, after a resume found nothing to run, how to re-run the
// infrastructure failures that are left (or nothing when there are none).
func (r *runner) infraHint() string {
	n := r.infraLeft()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of them ended as infrastructure failures (unscored): re-run them with 'evalctl run --resume %s --replace-infra'", n, r.store.Dir)
}

// resumeCommand is the command that continues this run: with
// --replace-infra when infrastructure failures are left to re-run.
func (r *runner) resumeCommand() string {
	cmd := "evalctl run --resume " + r.store.Dir
	if r.opts.ReplaceInfra || r.infraLeft() > 0 {
		cmd += " --replace-infra"
	}
	return cmd
}

// guard returns why the run must stop before the next attempt, or "".
func (r *runner) guard(ctx context.Context) string {
	if f := r.plan.Guards.StopFile; f != "" {
		if !filepath.IsAbs(f) {
			f = r.store.Path(f)
		}
		if _, err := os.Stat(f); err == nil {
			return "stop file " + f + " exists (remove it before resuming)"
		}
	}
	if max := r.plan.Guards.MaxTemperatureC; max > 0 && r.opts.Temperature != nil {
		t, _, err := r.opts.Temperature.CPUTemperature(ctx)
		if err == nil && t != nil && *t > max {
			return fmt.Sprintf("temperature %.1f °C is above the guard's %.1f °C", *t, max)
		}
	}
	return ""
}
