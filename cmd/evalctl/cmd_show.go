package main

import (
	"context"
	"errors"
	"io"

	"github.com/evalctl/evalctl/orchestrator/inspect"
	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/tasks"
)

func init() {
	// The diff of an answer needs the starter; a run made on the built-in
	// suite finds it in the binary when the suite's copy on disk is gone.
	inspect.BuiltinSuite = tasks.Builtin
}

func cmdShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "show", "show ATTEMPT [--run RUN] [--reasoning] [--full] [--format text|json] | show RUN ARM CASE REPEAT")
	runArg := fs.String("run", "", "look the attempt up in this run only (a directory, id or unique prefix)")
	reasoning := fs.Bool("reasoning", false, "show the model's reasoning (folded by default)")
	full := fs.Bool("full", false, "never cut long output (default: 2000 bytes a block, with the true size)")
	format := fs.String("format", "text", "output format: text (or table), json")
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if *format != "text" && *format != "table" && *format != "json" {
		return usagef("unknown --format %q (want text or json)", *format)
	}
	var q inspect.Query
	var dirs []string
	switch len(pos) {
	case 1:
		q.ID = pos[0]
		if *runArg != "" {
			d, err := resolveRun(*runArg)
			if err != nil {
				return err
			}
			dirs = []string{d}
		} else {
			list, err := runstore.List(runsRoot())
			if err != nil {
				return usagef("look up attempt %q: %v; name its run with --run", pos[0], err)
			}
			for _, s := range list {
				dirs = append(dirs, s.Dir)
			}
		}
	case 4:
		d, err := resolveRun(pos[0])
		if err != nil {
			return err
		}
		dirs = []string{d}
		q.Arm, q.Case, q.Repeat = pos[1], pos[2], pos[3]
	default:
		return usagef("show takes an attempt id (or prefix), or RUN ARM CASE REPEAT")
	}
	dir, id, err := inspect.Find(dirs, q)
	if errors.Is(err, inspect.ErrNoAttempt) || errors.Is(err, inspect.ErrAmbiguous) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	d, err := inspect.Load(dir, id)
	if err != nil {
		return err
	}
	return writeOut(e, "", func(w io.Writer) error {
		if *format == "json" {
			return writeJSON(w, d)
		}
		o := inspect.TextOptions{Reasoning: *reasoning}
		if *full {
			o.MaxBytes = -1
		}
		return inspect.WriteText(w, d, o)
	})
}
