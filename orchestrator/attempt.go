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
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/proxy"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// attempt runs one attempt end to end and records it. It returns an error
// only for failures of the run itself (a record that cannot be written);
// everything else is recorded in the attempt. served and free are called
// once the endpoint is released after a model part that ended well: served
// tells the circuit breaker the endpoint answered, free gives the device
// slot back to the scheduler (the caller frees it in every other case).
// prep is the start work done before the slot was taken (nil: none).
func (r *runner) attempt(ctx context.Context, a *evalctl.Attempt, rep Replica, prep *preparation, served, free func()) error {
	arm := r.plan.Arm(a.Arm)
	device := rep.Device
	if len(arm.Endpoint.Replicas) > 0 {
		a.Replica = rep.BaseURL
	}
	c := r.suite.Case(a.Case)
	// The attempt starts once its start work is done: until then its
	// device has no request of it to serve. Its container, if still
	// waiting for a sandbox place, now waits as the device's.
	prep.need()
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
	r.store.Log(runstore.Event{Kind: evalctl.EventStart, Attempt: a.ID, Detail: fmt.Sprintf("slot %d %s %s %s", a.Slot, a.Arm, a.Case, a.Repeat)})
	r.prog.begin(a)
	r.progress()
	defer r.progress()
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
			if freeSlot {
				r.speeds.add(a) // the model part ended well: its speed is known
				served()
			}
			if freeSlot && !r.opts.knobs.HoldEndpointWhileGrading {
				free()
			}
		})
	}
	release := func() { releaseAt(true) }
	var baseURL string
	baseURL, out.infra = r.serverFor(ctx, a, arm, rep)
	if out.infra == nil {
		out = r.runAttempt(ctx, a, arm, baseURL, c, prep, release)
	}
	releaseAt(false)
	return r.finish(ctx, a, out)
}

// serverFor is the endpoint the attempt talks to: the replica's, or the
// model server the arm's profile starts (checked once healthy); an error
// is an infrastructure failure.
func (r *runner) serverFor(ctx context.Context, a *evalctl.Attempt, arm *Arm, rep Replica) (string, error) {
	if arm.Profile == "" {
		return rep.BaseURL, nil
	}
	r.prog.phase(a, "starting the model server")
	url, identity, err := r.servers.ensure(ctx, arm)
	a.Server = identity
	if err != nil {
		return url, fmt.Errorf("model server for arm %s: %w", arm.Name, err)
	}
	if key := arm.Name + " " + identity + " " + fmt.Sprint(r.servers.starts); r.checked[key] == "" {
		// A server a profile started gets the preflight once healthy.
		if _, err := CheckEndpoint(ctx, arm, url); err != nil {
			return url, err
		}
		r.checked[key] = url
	}
	return url, nil
}

// finish records how the attempt ended (interrupted, infrastructure
// failure or completed) and tells the progress display its score.
func (r *runner) finish(ctx context.Context, a *evalctl.Attempt, out attemptOutcome) error {
	end := time.Now().UTC()
	a.FinishedAt = &end
	switch {
	case ctx.Err() != nil:
		a.State = evalctl.Interrupted
		a.Error = interruption(ctx)
		a.Measurements = nil
	case out.infra != nil:
		a.State = evalctl.InfraFailed
		a.Error = out.infra.Error()
		a.Measurements = nil
	default:
		a.State = evalctl.Completed
	}
	if a.State != evalctl.Completed {
		r.speeds.drop(a.ID)
	}
	if err := r.store.WriteAttempt(a); err != nil {
		return err
	}
	r.store.Log(runstore.Event{Kind: evalctl.StateEvent(a.State), Attempt: a.ID, Detail: a.Error})
	if errors.Is(out.infra, ErrAgentChanged) {
		return out.infra
	}
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
func (r *runner) agentEngineLost(ctx context.Context, box agentBox, err error) error {
	if ctx.Err() != nil || !box.EngineLost(ctx) {
		return err
	}
	r.boxes.engine.Drain(ctx, box)
	return fmt.Errorf("%w: engine %s (the attempt's agent sandbox): %v", sandbox.ErrEngineLost, box.EngineName(), err)
}

// onDevice makes the attempt's start work ready once it holds its device:
// a container prepared ahead is claimed when it is near the device, still
// holds its place and its engine was not drained; otherwise the start work
// is done now, as the device's (ClassAttempt).
func (r *runner) onDevice(ctx context.Context, a *evalctl.Attempt, arm *Arm, baseURL string, client *model.Client, prep *preparation) *preparation {
	if prep != nil && prep.err == nil && prep.box != nil && (!r.boxes.near(prep.box.c, a.Device) || !r.boxes.claim(prep.box)) {
		// Prepared before the replica (and so the machine) was known, on
		// an engine away from it (the agent container goes near its
		// endpoint, as the plan's sandbox hosts ask), or on an engine
		// drained since, or its place was given to a higher class.
		prep.discard()
		prep = nil
	}
	if prep != nil && errors.Is(prep.err, errYielded) {
		prep = nil
	}
	if prep == nil {
		prep = r.prepareNow(ctx, a, arm, baseURL)
		if prep.err == nil && !r.boxes.claim(prep.box) {
			engine := prep.box.c.EngineName()
			prep.discard()
			prep.err = fmt.Errorf("agent sandbox: %w: engine %s was drained as the attempt started", sandbox.ErrEngineLost, engine)
		}
	} else if prep.err == nil && prep.info == nil {
		// Prepared before the replica (or the profile's server) was known:
		// only the identity is left.
		if prep.info, prep.err = identify(ctx, client, arm, baseURL); prep.err != nil {
			prep.discard()
		}
	}
	return prep
}

// runAttempt runs the agent and grades its answers; it calls
// releaseEndpoint as soon as the last model response has arrived, so that
// the next attempt on the device starts while this one is graded.
func (r *runner) runAttempt(ctx context.Context, a *evalctl.Attempt, arm *Arm, baseURL string, c *tasks.Case, prep *preparation, releaseEndpoint func()) (out attemptOutcome) {
	client := model.New(model.Config{BaseURL: baseURL, APIKey: apiKey(arm)})
	prep = r.onDevice(ctx, a, arm, baseURL, client, prep)
	if prep.err != nil {
		return attemptOutcome{infra: prep.err}
	}
	a.Endpoint = prep.info
	entry := prep.box
	prep.box = nil // this attempt's from here on
	box := entry.c
	a.SandboxEngine = box.EngineName()
	released, once := false, sync.Once{}
	release := func() { once.Do(func() { released = true; r.boxes.release(entry, a.Device) }) }
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
	loop, cmdAgent, err := r.agentFor(ctx, arm, a, client, box, io.MultiWriter(tf, r.prog.transcriptTap(a), progressWriter{r}))
	if err != nil {
		return attemptOutcome{infra: err}
	}
	var snaps []*sandbox.Snapshot // the phases' answers, as written to the run directory
	counters := startCounters(ctx, client, r.overlaps.alone(a.Device, a.ID))
	// done closes the attempt's model part at its last model response: the
	// /metrics bracket ends and the endpoint is given back before the last
	// snapshot, which needs only the container.
	var modelDone sync.Once
	done := func() {
		modelDone.Do(func() {
			a.Measurements = loop.Measurements()
			a.ServerCounters = counters.stop(ctx, cutShort(a.Turns), r.overlaps.alone(a.Device, a.ID))
			releaseEndpoint()
		})
	}
	for i, p := range c.Phases {
		prompt, err := phasePrompt(ctx, a, arm, c, p, box, client)
		if err != nil {
			return attemptOutcome{infra: err}
		}
		turn, err := loop.RunPhase(ctx, p.Number, prompt)
		a.Turns = append(a.Turns, turn)
		if err != nil || ctx.Err() != nil {
			return out // interrupted: the caller records it
		}
		if err := turnInfra(ctx, client, p.Number, turn); err != nil {
			return attemptOutcome{infra: err}
		}
		// A budget stop or an error ends the attempt; what exists is graded.
		last := i == len(c.Phases)-1 || turn.Termination != evalctl.TermCompleted
		if last {
			done()
		}
		snap, err := r.keepSnapshot(ctx, a, p.Number, box)
		if err != nil {
			return attemptOutcome{infra: err}
		}
		snaps = append(snaps, snap)
		if last {
			break
		}
	}
	done()
	a.ArmUnchanged = r.armUnchanged(a)
	a.Agent = cmdAgent.finish(ctx)
	// The agent is done with its container: remove it, so that the next
	// attempt's container is started while this one is graded.
	release()
	return r.gradePhases(ctx, a, c, snaps)
}

// turnInfra is the infrastructure failure a finished turn shows, or nil:
// a request that never reached the endpoint, or an endpoint that vanished
// under the turn (vanished). Any other failure is the model's.
func turnInfra(ctx context.Context, client *model.Client, phase int, turn evalctl.Turn) error {
	if infraFailure(turn) {
		return fmt.Errorf("endpoint unavailable in phase %d, the request never reached it (%s): %s", phase, turn.ModelErrorKind, turn.Error)
	}
	return vanished(ctx, client, phase, turn)
}

// phasePrompt readies phase p in the attempt's container (its overlay
// copied into the workspace) and returns its prompt; the first phase of a
// case with a corpus gets the corpus input the arm's strategy selects,
// recorded in a.Input.
func phasePrompt(ctx context.Context, a *evalctl.Attempt, arm *Arm, c *tasks.Case, p *tasks.Phase, box agentBox, client *model.Client) (string, error) {
	if p.OverlayDir != "" {
		over, err := sandbox.DirEntries(p.OverlayDir, tasks.Ignored)
		if err == nil {
			err = box.CopyIn(ctx, "/workspace", over)
		}
		if err != nil {
			return "", fmt.Errorf("phase %d overlay: %w", p.Number, err)
		}
	}
	if p.Number != 1 || c.CorpusDir == "" {
		return p.Prompt, nil
	}
	in, text, err := corpusInput(ctx, arm, c, p.Prompt, client)
	if err != nil {
		return "", err
	}
	a.Input = in
	return p.Prompt + text, nil
}

// keepSnapshot takes the workspace of the attempt's container as the
// answer of phase, writes it to the run directory and records it in a.
func (r *runner) keepSnapshot(ctx context.Context, a *evalctl.Attempt, phase int, box agentBox) (*sandbox.Snapshot, error) {
	snap, err := box.Snapshot(ctx, "/workspace", tasks.Ignored)
	if err != nil {
		return nil, fmt.Errorf("snapshot phase %d: %w", phase, err)
	}
	path := r.store.SnapshotPath(a.ID, phase)
	if err := runstore.WriteFileAtomic(path, snap.Tar, 0o644); err != nil {
		return nil, err
	}
	a.Snapshots = append(a.Snapshots, evalctl.Snapshot{Phase: phase, File: filepath.Base(path), SHA256: snap.SHA256, Bytes: int64(len(snap.Tar))})
	return snap, nil
}

// gradePhases grades every phase snapshot in a fresh container and writes
// each grade. Cancelled, it returns the grades written so far (the caller
// records the attempt as interrupted); a failed grade is an
// infrastructure failure.
func (r *runner) gradePhases(ctx context.Context, a *evalctl.Attempt, c *tasks.Case, snaps []*sandbox.Snapshot) (out attemptOutcome) {
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

// agentFor builds the attempt's agent: the built-in loop, or the arm's
// agent command behind its recording proxy (cmd non-nil).
func (r *runner) agentFor(ctx context.Context, arm *Arm, a *evalctl.Attempt, client *model.Client, box agentBox, tr io.Writer) (phaseRunner, *commandAgent, error) {
	b := agent.Budgets{WallTime: seconds(*arm.Budgets.WallSeconds), GeneratedTokens: *arm.Budgets.GeneratedTokens, ToolCalls: *arm.Budgets.ToolCalls}
	if arm.Agent == nil {
		loop, err := agent.New(agent.Config{
			Model: client, ModelName: arm.Endpoint.Model, Params: armParams(arm, a.Seed), NoStream: !streams(arm), ColdStart: !arm.ReuseServerCache,
			Sandbox: box, Transcript: tr, CommandTimeout: seconds(*arm.Budgets.CommandTimeoutSeconds), Budgets: b,
		})
		return loop, nil, err
	}
	c, err := startCommandAgent(ctx, arm, box, proxy.Config{Model: client, ModelName: arm.Endpoint.Model, Params: armParams(arm, a.Seed), NoStream: !streams(arm), Budgets: b, Transcript: tr})
	if err != nil {
		return nil, nil, err
	}
	// The container was started from this ID (boxes' specFor), never
	// from a tag looked up again.
	c.rec.ImageID = r.image.ID
	if id := r.agentImageKey(arm); id != "" {
		c.rec.ImageID = id
	}
	if err := r.agentIdentity(arm, c.rec); err != nil {
		c.close()
		return nil, nil, err
	}
	return c, c, nil
}

// agentIdentity holds an arm's agent program to the one its first
// attempt of the run ran: a change stops the run.
func (r *runner) agentIdentity(arm *Arm, rec *evalctl.AgentRecord) error {
	r.agentMu.Lock()
	defer r.agentMu.Unlock()
	id := agentID(rec)
	if r.agentIDs == nil {
		r.agentIDs = map[string]string{}
	}
	was, ok := r.agentIDs[arm.Name]
	if !ok {
		r.agentIDs[arm.Name] = id
		return nil
	}
	if was != id {
		return fmt.Errorf("%w: arm %s ran %q, now %q: rebuild the image the run started with, or register a new arm", ErrAgentChanged, arm.Name, was, id)
	}
	return nil
}

// agentID is the agent program an attempt ran, as agentIdentity compares
// it: its SHA-256 and version text, in its image.
func agentID(rec *evalctl.AgentRecord) string {
	return rec.BinarySHA256 + " " + rec.Version + " in " + rec.ImageID
}

// agentIDsOf is each arm's agent program as the run's first attempt of it
// (by start time) recorded it: a resumed run holds its agents to the ones
// its earlier sessions ran, not only to its own first attempt.
func agentIDsOf(all []*evalctl.Attempt) map[string]string {
	ids, first := map[string]string{}, map[string]time.Time{}
	for _, a := range all {
		if a.Agent == nil || a.Agent.BinarySHA256 == "" || a.StartedAt == nil {
			continue
		}
		if t, ok := first[a.Arm]; ok && !a.StartedAt.Before(t) {
			continue
		}
		first[a.Arm] = *a.StartedAt
		ids[a.Arm] = agentID(a.Agent)
	}
	return ids
}

// vanished is the infrastructure failure of a turn whose endpoint vanished
// under it: a turn that did not end on a finished response (a broken
// stream, a server_error after the request was taken, a wall-time cut
// spent retrying) on a server that, probed right after, no longer answers.
// It is the model's failure only while the server is alive (nil). On a
// pool, the failure then takes the replica out of the rotation and the
// slot runs again on another (run.go, runElsewhere).
func vanished(ctx context.Context, client *model.Client, phase int, turn evalctl.Turn) error {
	if turn.Termination == evalctl.TermSandboxError || !cutShort([]evalctl.Turn{turn}) {
		return nil
	}
	gone := serverGone(ctx, client)
	if gone == nil {
		return nil
	}
	return fmt.Errorf("the endpoint vanished in phase %d (the model server died under the attempt): %s; right after, %w", phase, turn.Error, gone)
}

// serverGone probes the endpoint right after a turn that did not end on a
// finished response (a broken stream, a 500, a cut): a server that no longer answers (refused, or
// loading again after a restart) died under the attempt, which is then an
// infrastructure failure, not the model's; nil while it is alive. A 500 of
// a live server stays scored (infraFailure).
func serverGone(ctx context.Context, c *model.Client) error {
	err := c.Health(ctx)
	var me *model.Error
	if err == nil || ctx.Err() != nil || !errors.As(err, &me) {
		return nil
	}
	switch {
	case me.Class() == model.ClassUnavailable, me.Kind == model.KindDropped, me.Kind == model.KindTimeout:
		return fmt.Errorf("its health probe failed: %v", err)
	}
	return nil
}

// cutShort says the attempt's last turn did not end on a response the
// server finished: a request may still be in the server (a wall-time cut,
// a broken stream), counted only once the server releases it.
func cutShort(turns []evalctl.Turn) bool {
	if len(turns) == 0 {
		return true
	}
	switch turns[len(turns)-1].Termination {
	case evalctl.TermCompleted, evalctl.TermToolCallLimit, evalctl.TermOutputTruncated:
		return false
	}
	return true
}

// infraFailure is the runner's side of the one classification rule
// (model.Class, docs/failures.md): a turn ended by a model call that
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
