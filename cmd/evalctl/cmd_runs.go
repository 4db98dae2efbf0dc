package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/evalctl/evalctl/orchestrator/runstore"
)

// runsRoot is where run ids and prefixes are looked up.
func runsRoot() string { return runstore.Root() }

// resolveRun turns what a user typed for a run (a directory, an id, or a
// unique prefix of a directory name or id under runsRoot) into its
// directory. Not finding it is a usage error (exit 2).
func resolveRun(arg string) (string, error) { return runstore.Resolve(runsRoot(), arg) }

// resolveRuns resolves each argument; with folders true, a folder that
// holds run directories stands for all its cohorts (oldest first).
func resolveRuns(args []string, folders bool) ([]string, error) {
	return runstore.ResolveAll(runsRoot(), args, folders)
}

func cmdRuns(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "runs", "runs [DIR] [--format table|json]")
	format := fs.String("format", "table", "output format: table, json")
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("runs takes at most one directory")
	}
	if *format != "table" && *format != "json" {
		return usagef("unknown --format %q (want table or json)", *format)
	}
	root := runsRoot()
	if len(pos) == 1 {
		root = pos[0]
	}
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
		return usagef("no folder of runs at %s: give one ('evalctl runs DIR') or set EVALCTL_RUNS", root)
	}
	list, err := runstore.List(root)
	if err != nil {
		return err
	}
	return writeOut(e, "", func(w io.Writer) error {
		if *format == "json" {
			if list == nil {
				list = []runstore.Summary{}
			}
			return writeJSON(w, list)
		}
		return runstore.WriteTable(w, list)
	})
}

// runKind is the kind of the run in dir ("" for a cohort of an older
// evalctl, or when dir holds no readable run).
func runKind(dir string) string {
	st, err := runstore.Open(dir)
	if err != nil {
		return ""
	}
	r, err := st.ReadRun()
	if err != nil {
		return ""
	}
	return r.Kind
}
