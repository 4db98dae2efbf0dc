package main

import (
	"context"

	"github.com/evalctl/evalctl/orchestrator/regrade"
)

func cmdRegrade(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "regrade", "regrade RUNDIR... --suite DIR [--concurrency N] [--allow-other-suite] [--sandbox-hosts FILE] [--format table|json]")
	var r regrade.Request
	fs.StringVar(&r.Suite, "suite", "", "suite directory to grade under (required); grades are added under its name@version")
	fs.IntVar(&r.Concurrency, "concurrency", 1, "attempts graded at once")
	fs.BoolVar(&r.AllowOtherSuite, "allow-other-suite", false, "regrade runs that ran under a suite of another name")
	hostsFile := fs.String("sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (README \"Sandbox hosts\"); set --concurrency to their total capacity")
	format := jsonFlag(fs)
	dirs, err := parseArgs(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	if r.JSON, err = format(); err != nil {
		return err
	}
	if err := r.Check(dirs); err != nil {
		return err
	}
	if dirs, err = resolveRuns(dirs, false); err != nil {
		return err
	}
	return regrade.Regrade(ctx, dirs, r, graderFor(ctx, e, *hostsFile), e.stdout, e.stderr)
}

func cmdControls(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "controls", "controls --case NAME --suite A [--suite B] [--answers RUNDIR...] [--concurrency N] [--format table|json]")
	var r regrade.DiagnoseRequest
	fs.StringVar(&r.Case, "case", "", "case to diagnose (required)")
	fs.Var((*listFlag)(&r.Suites), "suite", "suite directory: first the original (A), then optionally the corrected version (B)")
	fs.Var((*listFlag)(&r.Answers), "answers", "run directory whose stored answers of the case are graded (repeatable; further arguments are run directories too)")
	fs.IntVar(&r.Concurrency, "concurrency", 2, "grades run at once")
	format := jsonFlag(fs)
	rest, err := parseArgs(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	if r.JSON, err = format(); err != nil {
		return err
	}
	if r.Answers = append(r.Answers, rest...); len(r.Answers) > 0 {
		if r.Answers, err = resolveRuns(r.Answers, false); err != nil {
			return err
		}
	}
	return regrade.DiagnoseCommand(ctx, r, graderFor(ctx, e, ""), e.stdout)
}

// graderFor builds the grader of a command that regrades answers, on the
// engines hostsFile names ("": the local one).
func graderFor(ctx context.Context, e *env, hostsFile string) regrade.NewGrader {
	return func(conc int) (regrade.Grader, func(), error) { return newGraderOn(ctx, e, conc, hostsFile) }
}
