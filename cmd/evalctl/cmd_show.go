package main

import (
	"context"

	"github.com/evalctl/evalctl/orchestrator/inspect"
	"github.com/evalctl/evalctl/tasks"
)

func init() {
	// The diff of an answer needs the starter; a run made on the built-in
	// suite finds it in the binary when the suite's copy on disk is gone.
	inspect.BuiltinSuite = tasks.Builtin
}

func cmdShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "show", "show ATTEMPT [--run RUN] [--reasoning] [--full] [--format text|json] | show RUN ARM CASE REPEAT")
	r := inspect.ShowRequest{Root: runsRoot()}
	fs.StringVar(&r.Run, "run", "", "look the attempt up in this run only (a directory, id or unique prefix)")
	fs.BoolVar(&r.Reasoning, "reasoning", false, "show the model's reasoning (folded by default)")
	fs.BoolVar(&r.Full, "full", false, "never cut long output (default: 2000 bytes a block, with the true size)")
	fs.StringVar(&r.Format, "format", "text", "output format: text (or table), json")
	var err error
	if r.Args, err = parseArgs(fs, args, 0, -1, ""); err != nil {
		return err
	}
	return writeReport(e, "")(inspect.Show(r))
}
