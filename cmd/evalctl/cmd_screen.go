package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
)

const screenSynopsis = `screen --spec screen.yaml [--out runs]     register and run a throughput screen
       evalctl screen resume RUNDIR                      measure what a stopped screen has not
       evalctl screen report RUNDIR [--format table|json|html] [--compare A,B] [--out FILE]`

func cmdScreen(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "resume":
			return screenResume(ctx, e, args[1:])
		case "report":
			return screenReport(e, args[1:])
		}
	}
	fs := newFlags(e, "screen", screenSynopsis)
	spec := fs.String("spec", "", "screen spec (YAML)")
	out := fs.String("out", "runs", "directory that receives the run directory")
	mo := servingMachineFlags(fs)
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *spec == "" {
		return usagef("screen needs --spec FILE")
	}
	sc, err := screen.LoadSpec(*spec)
	if err != nil {
		return err
	}
	o, err := mo.options(e)
	if err != nil {
		return err
	}
	st, err := screen.Register(*out, sc)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "screen %s: %d measurements in %s\n", sc.Spec.Name, sc.Planned(), st.Dir)
	return runScreenDir(ctx, e, st.Dir, o)
}

func screenResume(ctx context.Context, e *env, args []string) error {
	return servingResume(ctx, e, "screen", args, runScreenDir)
}

// servingResume runs `evalctl NAME resume RUNDIR`: the stopped screen or
// probe in RUNDIR measures what it has not, under this machine's options.
func servingResume(ctx context.Context, e *env, name string, args []string, run func(context.Context, *env, string, screen.Options) error) error {
	fs := newFlags(e, name+" resume", name+" resume RUNDIR")
	mo := servingMachineFlags(fs)
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s resume needs one run directory", name)
	}
	dir, err := resolveRun(pos[0])
	if err != nil {
		return err
	}
	o, err := mo.options(e)
	if err != nil {
		return err
	}
	return run(ctx, e, dir, o)
}

func runScreenDir(ctx context.Context, e *env, dir string, o screen.Options) error {
	st, run, sc, err := screen.Open(dir)
	if err != nil {
		return err
	}
	if err := st.Lock(); err != nil {
		return err
	}
	defer st.Unlock()
	runErr := screen.Run(ctx, st, run, sc, o)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; nothing finished was lost: evalctl screen resume %s", dir)
	}
	rep, err := screen.BuildReport(st, run, sc)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	fmt.Fprintln(w)
	rep.WriteTable(w)
	if err := w.Flush(); err != nil {
		return err
	}
	if errors.Is(runErr, screen.ErrIncomplete) {
		return fmt.Errorf("%w: evalctl screen resume %s", runErr, dir)
	}
	return runErr
}

func screenReport(e *env, args []string) error {
	fs := newFlags(e, "screen report", "screen report RUNDIR [--format table|json|html] [--compare A,B] [--out FILE]")
	format := fs.String("format", "table", "table, json or html")
	compare := fs.String("compare", "", "two modes A,B to set side by side (A against B)")
	out := fs.String("out", "", "write to FILE instead of standard output")
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("screen report needs one run directory")
	}
	if *format != "table" && *format != "json" && *format != "html" {
		return usagef("unknown --format %q (want table, json or html)", *format)
	}
	var a, b string
	if *compare != "" {
		parts := strings.Split(*compare, ",")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return usagef("--compare wants two modes, A,B")
		}
		a, b = parts[0], parts[1]
	}
	dir, err := resolveRun(pos[0])
	if err != nil {
		return err
	}
	st, run, sc, err := screen.Open(dir)
	if err != nil {
		return err
	}
	rep, err := screen.BuildReport(st, run, sc)
	if err != nil {
		return err
	}
	var cmp *screen.Comparison
	if a != "" {
		if cmp, err = rep.Compare(a, b); err != nil {
			return usagef("%v", err)
		}
	}
	return writeOut(e, *out, func(w io.Writer) error {
		switch *format {
		case "json":
			if cmp != nil {
				return writeJSON(w, map[string]any{"screen": rep, "comparison": cmp})
			}
			return rep.WriteJSON(w)
		case "html":
			return rep.WriteHTML(w, cmp)
		}
		if cmp != nil {
			if err := cmp.WriteTable(w); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		return rep.WriteTable(w)
	})
}

// servingMachineOpts are the flags that say how to watch the machine while a
// server runs.
type servingMachineOpts struct {
	noTelemetry *bool
	interval    *time.Duration
	gpus        *string
	nvidiaSMI   *string
	quiet       *bool
}

func servingMachineFlags(fs *flag.FlagSet) *servingMachineOpts {
	return &servingMachineOpts{
		noTelemetry: fs.Bool("no-telemetry", false, "do not sample GPU memory, power and temperatures"),
		interval:    fs.Duration("telemetry-interval", telemetry.DefaultInterval, "sampling period of GPU and CPU telemetry"),
		gpus:        fs.String("gpus", "", "GPU indexes to watch, e.g. 0 or 0,1 (default: all)"),
		nvidiaSMI:   fs.String("nvidia-smi", "", "path of nvidia-smi (default: from PATH)"),
		quiet:       fs.Bool("quiet", false, "no progress lines"),
	}
}

func (m *servingMachineOpts) options(e *env) (screen.Options, error) {
	o := screen.Options{Interval: *m.interval, Hashes: serving.DefaultHashCache(), Progress: e.stderr}
	if *m.quiet {
		o.Progress = nil
	}
	if *m.interval <= 0 {
		return o, usagef("--telemetry-interval must be positive")
	}
	if !*m.noTelemetry {
		h := &telemetry.Host{GPU: telemetry.NvidiaSMI{Path: *m.nvidiaSMI}}
		if *m.gpus != "" {
			for _, s := range strings.Split(*m.gpus, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n < 0 {
					return o, usagef("--gpus: %q is not a GPU index", s)
				}
				h.GPU.GPUs = append(h.GPU.GPUs, n)
			}
		}
		o.Telemetry = h
	}
	if exe, err := os.Executable(); err == nil {
		o.Evalctl = exe
	}
	return o, nil
}
