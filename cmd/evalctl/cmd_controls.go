package main

import (
	"context"
	"strings"

	"github.com/evalctl/evalctl/orchestrator/regrade"
	"github.com/evalctl/evalctl/tasks"
)

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func cmdControls(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "controls", "controls --case NAME --suite A [--suite B] [--answers RUNDIR...] [--concurrency N] [--format table|json]")
	caseName := fs.String("case", "", "case to diagnose (required)")
	var suites, answers listFlag
	fs.Var(&suites, "suite", "suite directory: first the original (A), then optionally the corrected version (B)")
	fs.Var(&answers, "answers", "run directory whose stored answers of the case are graded (repeatable; further arguments are run directories too)")
	conc := fs.Int("concurrency", 2, "grades run at once")
	format := formatFlag(fs, "table", "table", "json")
	rest, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	f, err := format()
	if err != nil {
		return err
	}
	asJSON := f == "json"
	answers = append(answers, rest...)
	if len(answers) > 0 {
		if answers, err = resolveRuns(answers, false); err != nil {
			return err
		}
	}
	if *caseName == "" {
		return usagef("--case NAME is required")
	}
	if len(suites) == 0 || len(suites) > 2 {
		return usagef("give --suite once (original) or twice (original, then corrected); got %d", len(suites))
	}
	if *conc < 1 {
		return usagef("--concurrency must be at least 1")
	}
	opts := regrade.DiagnoseOptions{Case: *caseName, Answers: answers}
	for i, dir := range suites {
		s, err := tasks.LoadSuite(dir)
		if err != nil {
			return err
		}
		if s.Case(*caseName) == nil {
			return usagef("suite %s (%s) has no case %q", s.ID(), dir, *caseName)
		}
		if i == 0 {
			opts.Original = s
		} else {
			opts.Corrected = s
		}
	}
	g, done, err := newGrader(ctx, e, *conc)
	if err != nil {
		return err
	}
	defer done()
	d, err := regrade.Diagnose(ctx, g, opts)
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(e.stdout, d); err != nil {
			return err
		}
	} else if err := regrade.WriteDiagnosisText(e.stdout, d); err != nil {
		return err
	}
	return d.Err()
}
