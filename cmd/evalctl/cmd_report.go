package main

import (
	"context"
	"flag"
	"strings"

	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/orchestrator/summary"
)

func cmdReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", "report RUN... [--suite VERSION] [--baseline ARM] [--format table|md|json|csv|html] [--allow-mixed] [--out FILE]")
	o := poolFlags(fs, "read outcomes under this graded suite version (\"2.0.2\" or \"name@2.0.2\"); default: the suite each run ran under",
		"the first arm of the first run's plan", "the report")
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.Formats, ", "))
	out := fs.String("out", "", "write the report to FILE instead of standard output")
	compare := fs.String("compare", "", "screen runs: compare two modes side by side (A,B)")
	dirs, err := parseArgs(fs, args, 1, -1, "report needs at least one run directory")
	if err != nil {
		return err
	}
	// A throughput screen is reported by the screen's own report.
	d, _ := runstore.Resolve(runsRoot(), dirs[0])
	if k, _ := runKind(d); len(dirs) == 1 && k == "screen" {
		return cmdScreen(ctx, e, []string{"report", d, "--format", *format, "--compare", *compare, "--out", *out})
	}
	if *compare != "" {
		return usagef("--compare applies to screen runs; for cohorts use --baseline")
	}
	if err := report.CheckFormat(*format); err != nil {
		return err
	}
	if dirs, err = resolveRuns(dirs, true); err != nil {
		return err
	}
	return writeReport(e, *out)(report.Make(ctx, dirs, *o, *format))
}

// poolFlags are the flags of commands that pool cohorts per arm.
func poolFlags(fs *flag.FlagSet, suite, baseline, flagged string) *report.Options {
	o := &report.Options{}
	fs.StringVar(&o.Suite, "suite", "", suite)
	fs.StringVar(&o.Baseline, "baseline", "", "arm the others are compared with (default: "+baseline+")")
	fs.BoolVar(&o.AllowMixed, "allow-mixed", false, "pool runs whose suite fingerprint, image or arm hash differ, flagging "+flagged)
	return o
}

func cmdExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "export RUNDIR... --out DIR [--suite VERSION] [--baseline ARM] [--allow-mixed]")
	out := fs.String("out", "", "directory to write the export to (created; must be empty)")
	o := poolFlags(fs, "read outcomes under this graded suite version (default: the suite each run ran under)", "the first arm", "the aggregates")
	dirs, err := parseArgs(fs, args, 1, -1, "export needs at least one run directory")
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("export needs --out DIR")
	}
	if dirs, err = resolveRuns(dirs, true); err != nil {
		return err
	}
	return report.ExportTo(ctx, dirs, *out, *o, e.stdout)
}

func cmdVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "verify", "verify DIR")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("verify takes one export directory")
	}
	return report.VerifyTo(ctx, fs.Arg(0), e.stdout)
}

func cmdSummarize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "summarize", "summarize RUNDIR|DIAGNOSIS.json... [--out results.json]")
	out := fs.String("out", "", "write the results document to FILE instead of standard output")
	inputs, err := parseArgs(fs, args, 1, -1, "summarize needs at least one run directory (cohort, screen or capacity) or fixture diagnosis file")
	if err != nil {
		return err
	}
	doc, err := summary.Summarize(ctx, inputs)
	if err != nil {
		return err
	}
	return writeReport(e, *out)(doc.WriteJSON, nil)
}
