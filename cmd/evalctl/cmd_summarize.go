package main

import (
	"context"
	"io"

	"github.com/evalctl/evalctl/orchestrator/summary"
)

func cmdSummarize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "summarize", "summarize RUNDIR|DIAGNOSIS.json... [--out results.json]")
	out := fs.String("out", "", "write the results document to FILE instead of standard output")
	inputs, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return usagef("summarize needs at least one run directory (cohort, screen or capacity) or fixture diagnosis file")
	}
	doc, err := summary.Summarize(ctx, inputs)
	if err != nil {
		return err
	}
	return writeOut(e, *out, func(w io.Writer) error { return doc.WriteJSON(w) })
}
