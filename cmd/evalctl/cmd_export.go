package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/evalctl/evalctl/orchestrator/report"
)

func cmdExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "export RUNDIR... --out DIR [--suite VERSION] [--baseline ARM] [--allow-mixed]")
	out := fs.String("out", "", "directory to write the export to (created; must be empty)")
	suite := fs.String("suite", "", "read outcomes under this graded suite version (default: the suite each run ran under)")
	baseline := fs.String("baseline", "", "arm the others are compared with (default: the first arm)")
	allowMixed := fs.Bool("allow-mixed", false, "pool runs whose suite fingerprint, image or arm hash differ, flagging the aggregates")
	dirs, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usagef("export needs at least one run directory")
	}
	if *out == "" {
		return usagef("export needs --out DIR")
	}
	if dirs, err = resolveRuns(dirs, true); err != nil {
		return err
	}
	if err := checkGraded(dirs, *suite); err != nil {
		return err
	}
	rep, err := report.Export(ctx, dirs, *out, report.Options{Suite: *suite, Baseline: *baseline, AllowMixed: *allowMixed})
	if errors.Is(err, report.ErrUnknownArm) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "exported %d run(s), %d arm(s) to %s; check it with: evalctl verify %s (or without evalctl: python3 %s)\n", len(rep.Runs), len(rep.Arms), *out, *out, filepath.Join(*out, report.CheckerPy))
	return nil
}
