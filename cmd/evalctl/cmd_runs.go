package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/evalctl/evalctl/orchestrator/runstore"
)

// runsRoot is where run ids and prefixes are looked up, and what 'runs'
// and 'view' list by default: "runs" (run's --out default), or
// $EVALCTL_RUNS.
func runsRoot() string {
	if d := os.Getenv("EVALCTL_RUNS"); d != "" {
		return d
	}
	return "runs"
}

// resolveRun turns what a user typed for a run (a directory, an id, or a
// unique prefix of a directory name or id under runsRoot) into its
// directory. Not finding it is a usage error (exit 2).
func resolveRun(arg string) (string, error) {
	dir, err := runstore.Resolve(runsRoot(), arg)
	if errors.Is(err, runstore.ErrNoRun) || errors.Is(err, runstore.ErrAmbiguous) {
		return "", usagef("%v", err)
	}
	return dir, err
}

// resolveRuns resolves each argument; with folders true, a folder that
// holds run directories stands for all its cohorts (oldest first).
func resolveRuns(args []string, folders bool) ([]string, error) {
	var out []string
	for _, a := range args {
		if folders && !runstore.IsRunDir(a) {
			if fi, err := os.Stat(a); err == nil && fi.IsDir() {
				dirs, err := runstore.Expand(a, "cohort")
				if err != nil {
					return nil, err
				}
				if len(dirs) > 0 {
					out = append(out, dirs...)
					continue
				}
			}
		}
		d, err := resolveRun(a)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
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
		return writeRunsTable(w, list)
	})
}

// writeRunsTable prints a listing, one run a line; unknown counts are "-".
func writeRunsTable(w io.Writer, list []runstore.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tKIND\tCREATED\tSTATE\tARMS\tSCORED/PLANNED\tSUITE")
	for _, s := range list {
		kind := s.Kind
		if s.Regrades > 0 {
			kind += fmt.Sprintf("+%d regrade(s)", s.Regrades)
		}
		arms := strings.Join(s.Arms, ",")
		if arms == "" {
			arms = "-"
		}
		state := s.State
		if state == "" {
			state = "-"
		}
		suite := s.SuiteVersion
		if suite == "" {
			suite = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\n", s.Name, s.ID, kind, s.CreatedAt, state, arms,
			count(s.Scored), count(s.Planned), suite)
	}
	if len(list) == 0 {
		fmt.Fprintln(tw, "(no runs)")
	}
	return tw.Flush()
}

func count(n *int) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}
