package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

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
	agentImages, err := AgentImages(ctx, opts.Engine, &plan)
	if err == nil {
		err = sameAgentImages(run, agentImages)
	}
	if err != nil {
		return fail(fmt.Errorf("resume %s: %w", store.Dir, err))
	}
	if !opts.knobs.NoPreflight {
		if err := recheck(ctx, store, &plan, run, opts); err != nil {
			return fail(fmt.Errorf("resume %s: %w", store.Dir, err))
		}
	}
	// Containers a killed runner left behind are of no use now.
	pruneRun(ctx, opts, run.ID, "left by the previous runner")
	store.Log(runstore.Event{Kind: evalctl.EventResumed})
	fmt.Fprintf(opts.Progress, "resuming run %s (plan sha256 %s)\n", run.ID, run.PlanSHA256)
	r := newRunner(opts, &plan, suite, store, run, img)
	r.agentImages = agentImages
	return r, nil
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
	r.agentMu.Lock()
	r.agentIDs = agentIDsOf(all)
	r.agentMu.Unlock()
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
				if a.EndpointReleasedAt == nil {
					// Its last response is its release, so that the run's
					// endpoint idle share stays defined.
					a.EndpointReleasedAt = lastWrite(filepath.Join(r.store.AttemptDir(a.ID), runstore.TranscriptFile), a.StartedAt)
				}
				if err := r.store.WriteAttempt(a); err != nil {
					return nil, 0, err
				}
				r.store.Log(runstore.Event{Kind: evalctl.EventInterrupted, Attempt: a.ID, Detail: "found running at resume"})
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
			r.store.Log(runstore.Event{Kind: evalctl.EventReplaceInfra, Attempt: na.ID, Detail: "replaces " + a.ID})
			todo = append(todo, na)
		default:
			done++
		}
	}
	return todo, done, nil
}

// Cancel ends a run for good: every slot that has not run is recorded as
// cancelled (unscored, null outcomes), so that reports count it as planned
// but never run, and a later resume has nothing left to do. A planned
// record becomes cancelled before start; one left running by a runner that
// stopped, cancelled after start. A slot whose latest attempt was
// interrupted keeps that record as it is (a finished record is never
// rewritten) and gets a replacement recorded as cancelled after start: the
// slot had started.
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
		if replaced[a.ID] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		var err error
		switch a.State {
		case evalctl.Planned:
			err = cancelAttempt(store, a, evalctl.CancelledBeforeStart, why)
		case evalctl.Running:
			err = cancelAttempt(store, a, evalctl.CancelledAfterStart, why)
		case evalctl.Interrupted:
			err = cancelInterrupted(store, a, why)
		default:
			continue
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, store.EventLogErr()
}

func cancelAttempt(store *runstore.Store, a *evalctl.Attempt, state evalctl.State, why string) error {
	a.State, a.Error, a.Measurements = state, why, nil
	if err := store.WriteAttempt(a); err != nil {
		return err
	}
	store.Log(runstore.Event{Kind: evalctl.StateEvent(state), Attempt: a.ID, Detail: why})
	return nil
}

// lastWrite is when the file at path (an attempt's transcript, written at
// every model response and command result) was last written, when that is
// after started; nil when unknown (no transcript, nothing written since
// the start).
func lastWrite(path string, started *time.Time) *time.Time {
	fi, err := os.Stat(path)
	if err != nil || started == nil || !fi.ModTime().After(*started) {
		return nil
	}
	t := fi.ModTime().UTC()
	return &t
}

// cancelInterrupted ends an interrupted slot with a replacement record of
// the same slot, cancelled after start.
func cancelInterrupted(store *runstore.Store, a *evalctl.Attempt, why string) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	c := &evalctl.Attempt{ID: id.String(), RunID: a.RunID, Slot: a.Slot, Arm: a.Arm, ArmHash: a.ArmHash, Case: a.Case,
		Language: a.Language, Repeat: a.Repeat, Seed: a.Seed, ReplacementOf: a.ID, Suite: a.Suite, ImageID: a.ImageID,
		EvalctlVersion: a.EvalctlVersion, ExpectedTurns: a.ExpectedTurns}
	return cancelAttempt(store, c, evalctl.CancelledAfterStart, why+" (the slot had started: its interrupted attempt "+a.ID+" is kept as recorded)")
}

// recheck runs the preflight again, against the endpoints as they are now,
// for the arms that have slots left to run: each must still serve the
// arm's model name and accept its request, and say the same about itself
// (build, model, template, settings) as at registration; a difference
// stops the resume, named.
func recheck(ctx context.Context, store *runstore.Store, plan *Plan, run *runstore.Run, opts Options) error {
	all, err := store.Attempts()
	if err != nil {
		return err
	}
	latest := runstore.Current(all)
	left := map[string]bool{}
	for _, s := range plan.Slots {
		a, ok := latest[s.Index]
		if !ok || !a.State.Ended() || (a.State == evalctl.InfraFailed && opts.ReplaceInfra) {
			left[s.Arm] = true
		}
	}
	sub := *plan
	sub.Arms = nil
	for _, a := range plan.Arms {
		if left[a.Name] {
			sub.Arms = append(sub.Arms, a)
		}
	}
	checks, err := Preflight(ctx, &sub, opts.Progress)
	if err != nil {
		return err
	}
	for _, now := range checks {
		for _, then := range run.Preflight {
			if then.Arm != now.Arm || then.BaseURL != now.BaseURL {
				continue
			}
			if d := replicaDifference(replicaFields(then.Info), replicaFields(now.Info)); d != "" {
				return fmt.Errorf("%w: arm %s, endpoint %s is not the server the run registered (registered vs now: %s); start a new run for the new server, or serve the registered one again", ErrChanged, now.Arm, now.BaseURL, d)
			}
		}
	}
	return nil
}
