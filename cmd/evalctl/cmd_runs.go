package main

import (
	"context"

	"github.com/evalctl/evalctl/orchestrator/inspect"
	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/orchestrator/view"
	"github.com/evalctl/evalctl/tasks"
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
	pos, err := parseArgs(fs, args, 0, 1, "runs takes at most one directory")
	if err != nil {
		return err
	}
	return writeReport(e, "")(runstore.Listing(append(pos, runsRoot())[0], *format))
}

func cmdView(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "view", "view [DIR] [--addr 127.0.0.1:8765]")
	addr := fs.String("addr", "127.0.0.1:8765", "address to serve on (loopback by default: runs hold prompts and code)")
	pos, err := parseArgs(fs, args, 0, 1, "view takes at most one directory (a folder of runs or one run)")
	if err != nil {
		return err
	}
	return view.ServeRuns(ctx, runsRoot(), append(pos, "")[0], *addr, e.stdout, e.stderr)
}

// runKind is the kind of the run in dir ("" for a cohort of an older
// evalctl).
func runKind(dir string) (string, error) {
	st, err := runstore.Open(dir)
	if err != nil {
		return "", err
	}
	r, err := st.ReadRun()
	if err != nil {
		return "", err
	}
	return r.Kind, nil
}

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
