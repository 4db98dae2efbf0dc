package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/serving"
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
	// NoPreflight skips the endpoint checks before registration. Only tests
	// use it, to reach failures the preflight would otherwise stop first.
	NoPreflight bool
	// HoldEndpointWhileGrading keeps an attempt's device slot until its
	// grading ends, as runners did before grading left the critical path.
	// Only the benchmark uses it, as the baseline it is compared with.
	HoldEndpointWhileGrading bool
	// StartOnSlot does an attempt's start work (agent container, starter
	// workspace, endpoint identity) after it takes its device slot, as
	// runners did before that work moved off the device's critical path.
	// Only the benchmark uses it, as the baseline it is compared with.
	StartOnSlot bool
	// ownPool is the pool of engines the run connected (closed at its end).
	ownPool *sandbox.Hosts
}

// Sandboxes start containers, remove a run's leftovers and build the
// image; *sandbox.Engine (one engine) and *sandbox.Hosts (a pool) satisfy
// it.
type Sandboxes interface {
	Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error)
	Prune(ctx context.Context, labels map[string]string) ([]string, error)
	Build(ctx context.Context, r *sandbox.Recipe, opts sandbox.BuildOptions) (*sandbox.BuiltImage, error)
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
	if pool, ok := r.opts.Engine.(*sandbox.Hosts); ok {
		pool.OnDrain(func(engine string, cause error) {
			r.store.AppendEvent(runstore.Event{Kind: "engine_drained", Detail: fmt.Sprintf("sandbox engine %s stopped answering (%v); the run continued on the others", engine, cause)})
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
	grader  *grader.Grader
	prog    *progress
	servers *servers
	boxes   *boxes
	// overlaps names the attempts in flight together on one device.
	overlaps overlaps
	// checked holds the profile-started servers that passed the preflight.
	checked map[string]string
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

// pruneRun removes the containers labelled with the run and says so (what
// says whose they were); a failure is a warning, never the run's error.
func pruneRun(ctx context.Context, opts Options, runID, what string) {
	removed, err := opts.Engine.Prune(ctx, map[string]string{sandbox.LabelRun: runID})
	if err != nil {
		fmt.Fprintf(opts.Progress, "warning: remove containers %s: %v\n", what, err)
	} else if len(removed) > 0 {
		fmt.Fprintf(opts.Progress, "removed %d container(s) %s: %s\n", len(removed), what, strings.Join(removed, ", "))
	}
}

func ensureImage(ctx context.Context, opts Options) (*sandbox.BuiltImage, error) {
	if opts.Image != nil {
		if pool, ok := opts.Engine.(*sandbox.Hosts); ok {
			pool.UseImage(opts.Image)
		}
		return opts.Image, nil
	}
	recipe, err := sandbox.DefaultRecipe()
	if err != nil {
		return nil, err
	}
	return opts.Engine.Build(ctx, recipe, sandbox.BuildOptions{Log: opts.Progress})
}

func register(ctx context.Context, opts Options) (*runner, error) {
	plan, suite := opts.Plan, opts.Suite
	if plan == nil {
		return nil, errors.New("run: no plan")
	}
	var err error
	if suite == nil {
		if suite, err = tasks.LoadSuite(plan.SuiteDir); err != nil {
			return nil, err
		}
		if suite.Fingerprint != plan.SuiteFingerprint {
			return nil, fmt.Errorf("run %s: %w: suite %s now has fingerprint %s, the plan was resolved against %s", plan.Name, ErrChanged, suite.Dir, suite.Fingerprint, plan.SuiteFingerprint)
		}
	}
	// Every endpoint is checked before anything is written: a failure
	// leaves no run directory behind.
	var checks []runstore.EndpointCheck
	if !opts.NoPreflight {
		if checks, err = Preflight(ctx, plan, opts.Progress); err != nil {
			return nil, err
		}
	}
	if opts, err = withSandboxHosts(ctx, opts, plan.SandboxHosts); err != nil {
		return nil, err
	}
	img, err := ensureImage(ctx, opts)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	out := opts.OutDir
	if out == "" {
		out = "runs"
	}
	data, err := plan.Encode()
	if err != nil {
		return nil, err
	}
	run := &runstore.Run{
		ID: id.String(), Name: plan.Name, CreatedAt: time.Now().UTC(), Kind: runstore.KindCohort,
		Suite:   evalctl.SuiteRef{Name: suite.Name, Version: suite.Version, Fingerprint: suite.Fingerprint},
		ImageID: img.ID, EvalctlVersion: runstore.Version(), ArmHashes: map[string]string{},
		ArmIdentities: map[string]*runstore.ArmIdentity{}, Preflight: checks,
	}
	for i := range plan.Arms {
		arm := &plan.Arms[i]
		run.ArmHashes[arm.Name] = arm.Hash()
		run.ArmOrder = append(run.ArmOrder, arm.Name)
		run.ArmIdentities[arm.Name] = withWeights(ctx, ArmIdentityOf(arm, checkOf(checks, arm.Name)), arm, serving.DefaultHashCache())
	}
	// Every slot gets its planned record before the first attempt runs, so
	// that what was planned is on disk whatever happens next.
	store, err := runstore.Register(filepath.Join(out, runstore.DirName(plan.Name, id.String())), runstore.PlanFile, data, run, func(st *runstore.Store) error {
		for _, s := range plan.Slots {
			if _, err := newAttempt(st, run, plan, suite, s, ""); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sum := run.PlanSHA256
	store.AppendEvent(runstore.Event{Kind: "registered", Detail: fmt.Sprintf("plan sha256 %s, %d attempts", sum, len(plan.Slots))})
	fmt.Fprintf(opts.Progress, "registered run %s\n  plan sha256 %s\n  suite %s (%s)\n  image %s\n  %d attempts: %d arms x %d cases x %d repeats\n  directory %s\n",
		run.ID, sum, suite.ID(), suite.Fingerprint, img.ID, len(plan.Slots), len(plan.Arms), len(plan.Cases), len(plan.Repeats), store.Dir)
	return newRunner(opts, plan, suite, store, run, img), nil
}

func newRunner(opts Options, plan *Plan, suite *tasks.Suite, store *runstore.Store, run *runstore.Run, img *sandbox.BuiltImage) *runner {
	gc := opts.GradeConcurrency
	if gc < 1 {
		gc = 1
	}
	prog := newProgress(opts.Progress, opts.Live, len(plan.Slots))
	return &runner{
		opts: opts, plan: plan, suite: suite, store: store, run: run, image: img, checked: map[string]string{},
		grader: grader.New(opts.Engine, img.Ref, img.ID, grader.Options{Concurrency: gc}),
		prog:   prog,
		servers: &servers{dir: store.Path("servers"), evalctl: opts.Evalctl, progress: prog,
			hashes: serving.DefaultHashCache(), events: store.AppendEvent},
	}
}

func newAttempt(store *runstore.Store, run *runstore.Run, plan *Plan, suite *tasks.Suite, s Slot, replaces string) (*evalctl.Attempt, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	arm := plan.Arm(s.Arm)
	c := suite.Case(s.Case)
	a := &evalctl.Attempt{
		ID: id.String(), RunID: run.ID, Slot: s.Index, Arm: s.Arm, ArmHash: arm.Hash(),
		Case: s.Case, Language: string(c.Language), Repeat: s.Repeat, Seed: s.Seed, State: evalctl.Planned,
		ReplacementOf: replaces, Suite: run.Suite, ImageID: run.ImageID, EvalctlVersion: run.EvalctlVersion,
		ExpectedTurns: len(c.Phases),
	}
	return a, store.WriteAttempt(a)
}

func resume(ctx context.Context, opts Options) (*runner, error) {
	store, err := runstore.Open(opts.ResumeDir)
	if err != nil {
		return nil, err
	}
	if err := store.Lock(); err != nil {
		return nil, err
	}
	fail := func(err error) (*runner, error) {
		store.Unlock()
		return nil, err
	}
	run, data, err := store.Registered(runstore.KindCohort, runstore.PlanFile)
	if err != nil {
		return fail(fmt.Errorf("resume: %w", err))
	}
	var plan Plan
	if err := json.Unmarshal(data, &plan); err != nil {
		return fail(fmt.Errorf("resume %s: read %s: %w", store.Dir, runstore.PlanFile, err))
	}
	suite, err := tasks.LoadSuite(plan.SuiteDir)
	if err != nil {
		return fail(fmt.Errorf("resume %s: %w", store.Dir, err))
	}
	if suite.Fingerprint != run.Suite.Fingerprint {
		return fail(fmt.Errorf("resume %s: %w: suite %s now has fingerprint %s, registered %s; grade old answers with 'evalctl regrade' and start a new run", store.Dir, ErrChanged, suite.Dir, suite.Fingerprint, run.Suite.Fingerprint))
	}
	if opts, err = withSandboxHosts(ctx, opts, plan.SandboxHosts); err != nil {
		return fail(err)
	}
	img, err := ensureImage(ctx, opts)
	if err != nil {
		return fail(err)
	}
	if img.ID != run.ImageID {
		fmt.Fprintf(opts.Progress, "warning: the sandbox image is now %s, the run registered %s; attempts record the image they ran in\n", img.ID, run.ImageID)
	}
	// Containers a killed runner left behind are of no use now.
	pruneRun(ctx, opts, run.ID, "left by the previous runner")
	store.AppendEvent(runstore.Event{Kind: "resumed"})
	fmt.Fprintf(opts.Progress, "resuming run %s (plan sha256 %s)\n", run.ID, run.PlanSHA256)
	return newRunner(opts, &plan, suite, store, run, img), nil
}

// pending works out, per slot, the attempt to run now: a planned record is
// run as it is; a record left running by a killed process is marked
// interrupted and replaced; infra failures are replaced on request.
func (r *runner) pending() ([]*evalctl.Attempt, int, error) {
	all, err := r.store.Attempts()
	if err != nil {
		return nil, 0, err
	}
	latest := runstore.Current(all)
	var todo []*evalctl.Attempt
	done := 0
	for _, s := range r.plan.Slots {
		a, ok := latest[s.Index]
		switch {
		case !ok:
			na, err := newAttempt(r.store, r.run, r.plan, r.suite, s, "")
			if err != nil {
				return nil, 0, err
			}
			todo = append(todo, na)
		case a.State == evalctl.Planned:
			todo = append(todo, a)
		case a.State == evalctl.Running || a.State == evalctl.Interrupted:
			if a.State == evalctl.Running {
				a.State = evalctl.Interrupted
				a.Error = "the runner stopped while this attempt ran (killed or crashed); it is run again as a replacement"
				a.Measurements = nil
				if err := r.store.WriteAttempt(a); err != nil {
					return nil, 0, err
				}
				r.store.AppendEvent(runstore.Event{Kind: "interrupted", Attempt: a.ID, Detail: "found running at resume"})
			}
			na, err := newAttempt(r.store, r.run, r.plan, r.suite, s, a.ID)
			if err != nil {
				return nil, 0, err
			}
			todo = append(todo, na)
		case a.State == evalctl.InfraFailed && r.opts.ReplaceInfra:
			na, err := newAttempt(r.store, r.run, r.plan, r.suite, s, a.ID)
			if err != nil {
				return nil, 0, err
			}
			r.store.AppendEvent(runstore.Event{Kind: "replace_infra", Attempt: na.ID, Detail: "replaces " + a.ID})
			todo = append(todo, na)
		default:
			done++
		}
	}
	return todo, done, nil
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
	r.prog.setArms(r.plan, todo)
	r.prog.start(done)
	defer r.prog.finish()
	r.boxes = newBoxes(ctx, r.opts.Engine, sandbox.Spec{Image: r.image.Ref, Role: sandbox.RoleAgent, Run: r.run.ID, Limits: r.opts.Limits}, len(todo))
	defer r.boxes.close()
	// Concurrency slots per device label: arms without a label share one,
	// so by default the whole run has at most Concurrency attempts in
	// flight; an arm on a pool takes a slot on any of its replicas' devices.
	devs := newDevicePool(r.plan.Concurrency)
	brk := newBreaker(r.plan.Guards.MaxConsecutiveInfraFailures)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	record := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	stopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	for i, a := range todo {
		if ctx.Err() != nil || stopped() {
			break
		}
		if i > 0 && r.plan.RestSeconds > 0 {
			from := time.Now().UTC()
			select {
			case <-time.After(seconds(r.plan.RestSeconds)):
			case <-ctx.Done():
			}
			r.store.AppendEvent(runstore.Event{Kind: runstore.RestEvent, Detail: runstore.RestDetail(from, time.Now().UTC())})
		}
		if why := r.guard(ctx); why != "" {
			r.store.AppendEvent(runstore.Event{Kind: "guard", Detail: why})
			record(fmt.Errorf("%w: %s; resume with '%s'", ErrGuard, why, r.resumeCommand()))
			break
		}
		arm := r.plan.Arm(a.Arm)
		// The start work that needs no slot begins now, while the attempts
		// before this one still generate: the slot is taken only when the
		// first request can follow.
		var prep *preparation
		if !r.opts.StartOnSlot {
			prep = r.prepare(ctx, a, arm)
		}
		// A free replica of the arm's pool (its one endpoint when it has
		// no pool): a slot on that replica's device.
		reps := arm.Replicas()
		k := devs.acquire(ctx, arm.Name, reps)
		if k < 0 {
			prep.discard()
			break
		}
		rep := reps[k]
		key := rep.Device
		if ctx.Err() != nil || stopped() {
			// Cancelled, or the breaker tripped, while this attempt waited
			// for its turn.
			devs.release(key)
			prep.discard()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The slot is freed when the attempt gives its endpoint back
			// (after its last model response), not when its grading ends.
			var once sync.Once
			free := func() { once.Do(func() { devs.release(key) }) }
			defer free()
			defer prep.discard()
			if err := r.attempt(ctx, a, rep, prep, free); err != nil {
				record(err)
				return
			}
			if ctx.Err() != nil || a.State == evalctl.Interrupted {
				return
			}
			if why := brk.observe(endpointKey(arm, rep), a.State == evalctl.InfraFailed, a.Error); why != "" {
				r.store.AppendEvent(runstore.Event{Kind: "endpoint_failing", Attempt: a.ID, Detail: why})
				record(fmt.Errorf("%w: %s; the run stopped (the attempts not yet run are still planned); once the endpoint answers again, resume with '%s'", ErrEndpointFailing, why, r.resumeCommand()))
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("%w: resume with '%s'", ErrInterrupted, r.resumeCommand())
	}
	if firstErr != nil {
		return firstErr
	}
	return r.incomplete()
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

// attempt runs one attempt end to end and records it. It returns an error
// only for failures of the run itself (a record that cannot be written);
// everything else is recorded in the attempt. free gives the device slot
// back to the scheduler; it is called once the endpoint is released after a
// model part that ended well (the caller frees it in every other case).
// prep is the start work done before the slot was taken (nil: none).
func (r *runner) attempt(ctx context.Context, a *evalctl.Attempt, rep Replica, prep *preparation, free func()) error {
	arm := r.plan.Arm(a.Arm)
	device := rep.Device
	if len(arm.Endpoint.Replicas) > 0 {
		a.Replica = rep.BaseURL
	}
	c := r.suite.Case(a.Case)
	// The attempt starts once its start work is done: until then its
	// device has no request of it to serve.
	prep.wait()
	// In flight from before its start time until after its endpoint
	// release: every attempt whose recorded [started_at,
	// endpoint_released_at] meets this one's on the same device is named
	// in its overlapped_attempts.
	r.overlaps.begin(device, a.ID)
	now := time.Now().UTC()
	a.State, a.StartedAt, a.Device = evalctl.Running, &now, device
	if err := r.store.WriteAttempt(a); err != nil {
		return err
	}
	r.store.AppendEvent(runstore.Event{Kind: "start", Attempt: a.ID, Detail: fmt.Sprintf("slot %d %s %s %s", a.Slot, a.Arm, a.Case, a.Repeat)})
	r.prog.begin(a)
	var out attemptOutcome
	// release ends the attempt's hold on its endpoint and device: from
	// here on only grading is left, which needs neither. The slot is
	// freed here only when the model part ended well (runAttempt); an
	// attempt that failed before has nothing to grade, and its slot is
	// freed once the circuit breaker has seen it, so that no attempt starts
	// on an endpoint the breaker is about to stop.
	var releaseOnce sync.Once
	releaseAt := func(freeSlot bool) {
		releaseOnce.Do(func() {
			at := time.Now().UTC()
			a.EndpointReleasedAt = &at
			ov := r.overlaps.end(device, a.ID)
			a.OverlappedAttempts = &ov
			if freeSlot && !r.opts.HoldEndpointWhileGrading {
				free()
			}
		})
	}
	release := func() { releaseAt(true) }
	baseURL := rep.BaseURL
	if arm.Profile != "" {
		r.prog.phase(a, "starting the model server")
		url, identity, err := r.servers.ensure(ctx, arm)
		if err != nil {
			out.infra = fmt.Errorf("model server for arm %s: %w", arm.Name, err)
		} else if key := arm.Name + " " + identity + " " + fmt.Sprint(r.servers.starts); r.checked[key] == "" {
			// A server a profile started gets the preflight once healthy.
			if _, err := CheckEndpoint(ctx, arm, url); err != nil {
				out.infra = err
			} else {
				r.checked[key] = url
			}
		}
		baseURL, a.Server = url, identity
	}
	if out.infra == nil {
		out = r.runAttempt(ctx, a, arm, baseURL, c, prep, release)
	}
	releaseAt(false)
	end := time.Now().UTC()
	a.FinishedAt = &end
	switch {
	case ctx.Err() != nil:
		a.State = evalctl.Interrupted
		a.Error = "cancelled by the user (Ctrl-C); run again on resume"
		a.Measurements = nil
	case out.infra != nil:
		a.State = evalctl.InfraFailed
		a.Error = out.infra.Error()
		a.Measurements = nil
	default:
		a.State = evalctl.Completed
	}
	if err := r.store.WriteAttempt(a); err != nil {
		return err
	}
	r.store.AppendEvent(runstore.Event{Kind: string(a.State), Attempt: a.ID, Detail: a.Error})
	var grades []*evalctl.Grade
	if a.State == evalctl.Completed {
		grades = out.grades
	}
	r.prog.end(a, evalctl.Score(a, grades))
	return nil
}

type attemptOutcome struct {
	infra  error
	grades []*evalctl.Grade
}

// agentEngineLost names the cause of an attempt's infrastructure failure
// err when it is the agent's engine going silent, and drains that engine
// from a pool; otherwise err is returned as it is.
func (r *runner) agentEngineLost(ctx context.Context, box *sandbox.Container, err error) error {
	if ctx.Err() != nil || !box.EngineLost(ctx) {
		return err
	}
	if pool, ok := r.opts.Engine.(*sandbox.Hosts); ok {
		pool.Drain(ctx, box)
	}
	return fmt.Errorf("%w: engine %s (the attempt's agent sandbox): %v", sandbox.ErrEngineLost, box.EngineName(), err)
}

// runAttempt runs the agent and grades its answers; it calls
// releaseEndpoint as soon as the last model response has arrived, so that
// the next attempt on the device starts while this one is graded.
func (r *runner) runAttempt(ctx context.Context, a *evalctl.Attempt, arm *Arm, baseURL string, c *tasks.Case, prep *preparation, releaseEndpoint func()) (out attemptOutcome) {
	client := model.New(model.Config{BaseURL: baseURL, APIKey: apiKey(arm)})
	if prep != nil && prep.err == nil && prep.box != nil && !r.boxes.near(prep.box, a.Device) {
		// Prepared before the replica (and so the machine) was known, on
		// an engine away from it: the agent container goes near its
		// endpoint, as the plan's sandbox hosts ask.
		prep.discard()
		prep = nil
	}
	if prep == nil {
		prep = r.prepareNow(ctx, a, arm, baseURL)
	} else if prep.err == nil && prep.info == nil {
		// Prepared before the replica (or the profile's server) was known:
		// only the identity is left.
		if prep.info, prep.err = identify(ctx, client, arm, baseURL); prep.err != nil {
			prep.discard()
		}
	}
	if prep.err != nil {
		return attemptOutcome{infra: prep.err}
	}
	a.Endpoint = prep.info
	box := prep.box
	prep.box = nil // this attempt's from here on
	a.SandboxEngine = box.EngineName()
	released := false
	release := func() {
		if !released {
			released = true
			r.boxes.release(box, a.Device)
		}
	}
	defer release()
	// A failure whose cause is the agent's engine going silent says so
	// (and drains the engine): an infrastructure failure, replaceable.
	defer func() {
		if out.infra != nil && !released {
			out.infra = r.agentEngineLost(ctx, box, out.infra)
		}
	}()
	tf, err := os.OpenFile(filepath.Join(r.store.AttemptDir(a.ID), runstore.TranscriptFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return attemptOutcome{infra: err}
	}
	defer tf.Close()
	stream := arm.Stream == nil || *arm.Stream
	loop, err := agent.New(agent.Config{
		Model: client, ModelName: arm.Endpoint.Model, Params: arm.Params(a.Seed), NoStream: !stream,
		Sandbox: box, Transcript: io.MultiWriter(tf, r.prog.transcriptTap(a)), CommandTimeout: seconds(*arm.Budgets.CommandTimeoutSeconds),
		Budgets: agent.Budgets{WallTime: seconds(*arm.Budgets.WallSeconds), GeneratedTokens: *arm.Budgets.GeneratedTokens, ToolCalls: *arm.Budgets.ToolCalls},
	})
	if err != nil {
		return attemptOutcome{infra: err}
	}
	var snaps []*sandbox.Snapshot // the phases' answers, as written to the run directory
	counters := startCounters(ctx, client)
	// done closes the attempt's model part at its last model response: the
	// /metrics bracket ends and the endpoint is given back before the last
	// snapshot, which needs only the container.
	modelDone := false
	done := func() {
		if modelDone {
			return
		}
		modelDone = true
		a.Measurements = loop.Measurements()
		a.ServerCounters = counters.stop(ctx)
		releaseEndpoint()
	}
	for i, p := range c.Phases {
		if p.OverlayDir != "" {
			over, err := sandbox.DirEntries(p.OverlayDir, tasks.Ignored)
			if err == nil {
				err = box.CopyIn(ctx, "/workspace", over)
			}
			if err != nil {
				return attemptOutcome{infra: fmt.Errorf("phase %d overlay: %w", p.Number, err)}
			}
		}
		prompt := p.Prompt
		if p.Number == 1 && c.CorpusDir != "" {
			in, text, err := corpusInput(ctx, arm, c, p.Prompt, client)
			if err != nil {
				return attemptOutcome{infra: err}
			}
			a.Input, prompt = in, p.Prompt+text
		}
		turn, err := loop.RunPhase(ctx, p.Number, prompt)
		a.Turns = append(a.Turns, turn)
		if err != nil || ctx.Err() != nil {
			return out // interrupted: the caller records it
		}
		if infraFailure(turn) {
			return attemptOutcome{infra: fmt.Errorf("endpoint unavailable in phase %d, the request never reached it (%s): %s", p.Number, turn.ModelErrorKind, turn.Error)}
		}
		// A budget stop or an error ends the attempt; what exists is graded.
		last := i == len(c.Phases)-1 || turn.Termination != evalctl.TermCompleted
		if last {
			done()
		}
		snap, err := box.Snapshot(ctx, "/workspace", tasks.Ignored)
		if err != nil {
			return attemptOutcome{infra: fmt.Errorf("snapshot phase %d: %w", p.Number, err)}
		}
		path := r.store.SnapshotPath(a.ID, p.Number)
		if err := runstore.WriteFileAtomic(path, snap.Tar, 0o644); err != nil {
			return attemptOutcome{infra: err}
		}
		a.Snapshots = append(a.Snapshots, evalctl.Snapshot{Phase: p.Number, File: filepath.Base(path), SHA256: snap.SHA256, Bytes: int64(len(snap.Tar))})
		snaps = append(snaps, snap)
		if last {
			break
		}
	}
	done()
	a.ArmUnchanged = r.armUnchanged(a)
	// The agent is done with its container: remove it, so that the next
	// attempt's container is started while this one is graded.
	release()
	// Grade every phase snapshot in a fresh container.
	for i, s := range a.Snapshots {
		r.prog.phase(a, fmt.Sprintf("grading phase %d", s.Phase))
		g, err := r.grader.Grade(ctx, r.suite, c, s.Phase, snaps[i], grader.Labels{Run: r.run.ID, Attempt: a.ID})
		if err != nil {
			if ctx.Err() != nil {
				return out
			}
			return attemptOutcome{infra: fmt.Errorf("grade phase %d: %w", s.Phase, err)}
		}
		if err := r.store.WriteGrade(a.ID, g); err != nil && !errors.Is(err, os.ErrExist) {
			return attemptOutcome{infra: err}
		}
		out.grades = append(out.grades, g)
	}
	return out
}

// infraFailure is the runner's side of the one classification rule
// (model.Class, README "Model failures"): a turn ended by a model call that
// never reached the server, retries spent (refused, a dead keep-alive
// connection, 429, 503), makes the attempt an infrastructure failure:
// unscored, replaceable. Every other failure is scored: a response the
// server failed after taking the request (server_error: under a fixed seed
// it fails the same way again, and --replace-infra must never re-sample
// the model's failures) and the arm's own refusals (model_error).
func infraFailure(turn evalctl.Turn) bool {
	return turn.Termination == evalctl.TermModelError && model.Kind(turn.ModelErrorKind).Class() == model.ClassUnavailable
}

// armUnchanged compares the arm the attempt ran under with the registered
// plan on disk: the plan file must still hash as registered and hold the
// same arm, byte for byte.
func (r *runner) armUnchanged(a *evalctl.Attempt) *bool {
	// The runner's plan was read from plan.json when its SHA-256 matched
	// the registered one: a file that still matches holds that very arm.
	sum, err := runstore.FileSHA256(r.store.Path(runstore.PlanFile))
	if err != nil {
		return nil
	}
	arm := r.plan.Arm(a.Arm)
	ok := sum == r.run.PlanSHA256 && arm != nil && arm.Hash() == a.ArmHash
	return &ok
}

// apiKey reads the arm's API key from its environment variable.
func apiKey(a *Arm) string {
	if a.Endpoint.APIKeyEnv == "" {
		return ""
	}
	return os.Getenv(a.Endpoint.APIKeyEnv)
}

// Cancel ends a run for good: every slot that has not run is recorded as
// cancelled (unscored, null outcomes), so that reports count it as planned
// but never run, and a later resume has nothing left to do.
func Cancel(ctx context.Context, dir string, why string) (int, error) {
	store, err := runstore.Open(dir)
	if err != nil {
		return 0, err
	}
	if err := store.Lock(); err != nil {
		return 0, err
	}
	defer store.Unlock()
	all, err := store.Attempts()
	if err != nil {
		return 0, err
	}
	replaced := map[string]bool{}
	for _, a := range all {
		if a.ReplacementOf != "" {
			replaced[a.ReplacementOf] = true
		}
	}
	if why == "" {
		why = "cancelled by the user"
	}
	n := 0
	for _, a := range all {
		if replaced[a.ID] || (a.State != evalctl.Planned && a.State != evalctl.Running) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		a.State, a.Error, a.Measurements = evalctl.Cancelled, why, nil
		if err := store.WriteAttempt(a); err != nil {
			return n, err
		}
		store.AppendEvent(runstore.Event{Kind: string(evalctl.Cancelled), Attempt: a.ID, Detail: why})
		n++
	}
	return n, nil
}
