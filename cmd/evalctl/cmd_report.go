package main

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/runstore"
)

func cmdReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", "report RUN... [--suite VERSION] [--baseline ARM] [--format table|md|json|csv|html] [--allow-mixed] [--out FILE]")
	suite := fs.String("suite", "", "read outcomes under this graded suite version (\"2.0.2\" or \"name@2.0.2\"); default: the suite each run ran under")
	baseline := fs.String("baseline", "", "arm the others are compared with (default: the first arm of the first run's plan)")
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.Formats, ", "))
	allowMixed := fs.Bool("allow-mixed", false, "pool runs whose suite fingerprint, image or arm hash differ, flagging the report")
	out := fs.String("out", "", "write the report to FILE instead of standard output")
	compare := fs.String("compare", "", "screen runs: compare two modes side by side (A,B)")
	dirs, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usagef("report needs at least one run directory")
	}
	// A throughput screen is reported by the screen's own report.
	if len(dirs) == 1 {
		d, _ := runstore.Resolve(runsRoot(), dirs[0])
		if st, err := runstore.Open(d); err == nil {
			if run, err := st.ReadRun(); err == nil && run.Kind == "screen" {
				sargs := []string{"report", d, "--format", *format}
				if *compare != "" {
					sargs = append(sargs, "--compare", *compare)
				}
				if *out != "" {
					sargs = append(sargs, "--out", *out)
				}
				return cmdScreen(ctx, e, sargs)
			}
		}
	}
	if *compare != "" {
		return usagef("--compare applies to screen runs; for cohorts use --baseline")
	}
	if !report.ValidFormat(*format) {
		return usagef("unknown --format %q (want one of %s)", *format, strings.Join(report.Formats, ", "))
	}
	if dirs, err = resolveRuns(dirs, true); err != nil {
		return err
	}
	if err := checkGraded(dirs, *suite); err != nil {
		return err
	}
	in, err := report.Load(ctx, dirs, *suite)
	if err != nil {
		return err
	}
	rep, err := report.Build(in, report.Options{Suite: *suite, Baseline: *baseline, AllowMixed: *allowMixed})
	if errors.Is(err, report.ErrUnknownArm) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if *format == report.FormatHTML {
		// The page also shows each arm's settings and server identity.
		setup, err := report.LoadSetup(dirs)
		if err != nil {
			return err
		}
		return writeOut(e, *out, func(w io.Writer) error { return report.WriteHTMLWith(w, rep, setup) })
	}
	// A diagnostic rerun is set beside the attempt it reran.
	if len(dirs) == 1 && *format == report.FormatTable {
		sbs, err := report.LoadRerun(dirs[0])
		if err != nil && !errors.Is(err, report.ErrNotRerun) {
			return err
		}
		if sbs != nil {
			return writeOut(e, *out, func(w io.Writer) error {
				if err := report.Write(w, rep, *format); err != nil {
					return err
				}
				io.WriteString(w, "\n")
				return sbs.WriteTable(w)
			})
		}
	}
	return writeOut(e, *out, func(w io.Writer) error { return report.Write(w, rep, *format) })
}

// checkGraded refuses a --suite version some run was never graded under
// (a usage error listing the versions that were).
func checkGraded(dirs []string, version string) error {
	err := report.CheckGraded(dirs, version)
	var ng *report.NotGradedError
	if errors.As(err, &ng) {
		return usagef("%v", err)
	}
	return err
}
