package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/regrade"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

func cmdRegrade(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "regrade", "regrade RUNDIR... --suite DIR [--concurrency N] [--allow-other-suite] [--format table|json]")
	suiteDir := fs.String("suite", "", "suite directory to grade under (required); grades are added under its name@version")
	conc := fs.Int("concurrency", 1, "attempts graded at once")
	hostsFile := fs.String("sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (README \"Sandbox hosts\"); set --concurrency to their total capacity")
	allowOther := fs.Bool("allow-other-suite", false, "regrade runs that ran under a suite of another name")
	format := formatFlag(fs, "table", "table", "json")
	dirs, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	f, err := format()
	if err != nil {
		return err
	}
	asJSON := f == "json"
	if len(dirs) == 0 {
		return usagef("regrade needs at least one run directory")
	}
	if *suiteDir == "" {
		return usagef("--suite DIR is required")
	}
	if *conc < 1 {
		return usagef("--concurrency must be at least 1")
	}
	if dirs, err = resolveRuns(dirs, false); err != nil {
		return err
	}
	s, err := tasks.LoadSuite(*suiteDir)
	if err != nil {
		return err
	}
	g, done, err := newGraderOn(ctx, e, *conc, *hostsFile)
	if err != nil {
		return err
	}
	defer done()
	res, err := regrade.Run(ctx, g, dirs, regrade.Options{Suite: s, AllowOtherSuite: *allowOther, Concurrency: *conc, Progress: e.stderr})
	if errors.Is(err, regrade.ErrSuiteName) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(e.stdout, res); err != nil {
			return err
		}
	} else if err := regrade.WriteText(e.stdout, res); err != nil {
		return err
	}
	return res.Err()
}

// newGrader connects to Docker and reuses (or builds) the sandbox image.
func newGrader(ctx context.Context, e *env, conc int) (*grader.Grader, func(), error) {
	eng, img, err := sandboxImage(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	return grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: conc}), func() { eng.Close() }, nil
}

// newGraderOn is newGrader on the engines a hosts file names (the local
// engine alone when file is empty).
func newGraderOn(ctx context.Context, e *env, conc int, file string) (*grader.Grader, func(), error) {
	if file == "" {
		return newGrader(ctx, e, conc)
	}
	hosts, err := orchestrator.LoadSandboxHosts(file)
	if err != nil {
		return nil, nil, &exitError{code: 2, msg: err.Error()}
	}
	eng, img, err := sandboxImage(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	pool, err := orchestrator.ConnectSandboxHosts(ctx, eng, hosts, e.stderr)
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	pool.UseImage(img)
	return grader.New(pool, img.Ref, img.ID, grader.Options{Concurrency: conc}), func() { pool.Close(); eng.Close() }, nil
}

// sandboxImage connects to the Docker Engine and reuses (or builds) the
// sandbox image; the caller closes the engine.
func sandboxImage(ctx context.Context, e *env) (*sandbox.Engine, *sandbox.BuiltImage, error) {
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	recipe, err := sandbox.DefaultRecipe()
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	img, err := eng.Build(ctx, recipe, sandbox.BuildOptions{Log: e.stderr})
	if err != nil {
		eng.Close()
		return nil, nil, fmt.Errorf("sandbox image: %w", err)
	}
	return eng, img, nil
}
