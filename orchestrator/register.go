package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

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
	if !opts.knobs.NoPreflight {
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
	agentImages, err := AgentImages(ctx, opts.Engine, plan)
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
		run.ArmIdentities[arm.Name] = withAgentImage(withWeights(ctx, ArmIdentityOf(arm, checkOf(checks, arm.Name)), arm, serving.DefaultHashCache()), agentImages[arm.Name])
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
	store.Log(runstore.Event{Kind: evalctl.EventRegistered, Detail: fmt.Sprintf("plan sha256 %s, %d attempts", sum, len(plan.Slots))})
	fmt.Fprintf(opts.Progress, "registered run %s\n  plan sha256 %s\n  suite %s (%s)\n  image %s\n  %d attempts: %d arms x %d cases x %d repeats\n  directory %s\n",
		run.ID, sum, suite.ID(), suite.Fingerprint, img.ID, len(plan.Slots), len(plan.Arms), len(plan.Cases), len(plan.Repeats), store.Dir)
	r := newRunner(opts, plan, suite, store, run, img)
	r.agentImages = agentImages
	return r, nil
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
			hashes: serving.DefaultHashCache(), events: store.Log},
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
		ReplacementOf: replaces, Suite: run.Suite, ImageID: run.ImageID, EvalctlVersion: runstore.Version(),
		ExpectedTurns: len(c.Phases),
	}
	return a, store.WriteAttempt(a)
}
