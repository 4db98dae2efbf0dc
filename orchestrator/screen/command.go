package screen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
)

// This file holds the work of 'evalctl screen' and 'evalctl capacity': the
// command line parses flags into these option values and calls one
// function; mistakes in the options are *evalctl.UsageError.

// Machine says how to watch the machine while a server runs (the
// --no-telemetry, --telemetry-interval, --gpus, --nvidia-smi and --quiet
// flags of screens and probes).
type Machine struct {
	NoTelemetry bool
	Interval    time.Duration
	GPUs        string // comma-separated indexes; empty: all
	NvidiaSMI   string // empty: from PATH
	Quiet       bool
}

// Options checks m and makes the run options, with progress to progress
// unless m is quiet.
func (m Machine) Options(progress io.Writer) (Options, error) {
	o := Options{Interval: m.Interval, Hashes: serving.DefaultHashCache(), Progress: progress}
	if m.Quiet {
		o.Progress = nil
	}
	if m.Interval <= 0 {
		return o, evalctl.Usagef("--telemetry-interval must be positive")
	}
	if !m.NoTelemetry {
		h := &telemetry.Host{GPU: telemetry.NvidiaSMI{Path: m.NvidiaSMI}}
		if m.GPUs != "" {
			for _, s := range strings.Split(m.GPUs, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n < 0 {
					return o, evalctl.Usagef("--gpus: %q is not a GPU index", s)
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

// Start registers the screen of specFile under out and runs it, printing
// where it is to stderr and its table to stdout.
func Start(ctx context.Context, specFile, out string, m Machine, stdout, stderr io.Writer) error {
	if specFile == "" {
		return evalctl.Usagef("screen needs --spec FILE")
	}
	sc, err := LoadSpec(specFile)
	if err != nil {
		return err
	}
	o, err := m.Options(stderr)
	if err != nil {
		return err
	}
	st, err := Register(out, sc)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "screen %s: %d measurements in %s\n", sc.Spec.Name, sc.Planned(), st.Dir)
	return RunDir(ctx, st.Dir, o, stdout)
}

// RunDir measures what the screen in dir has not, then prints its table
// to stdout. An interrupted or incomplete screen's error names the command
// that resumes it.
func RunDir(ctx context.Context, dir string, o Options, stdout io.Writer) error {
	st, run, sc, err := Open(dir)
	if err != nil {
		return err
	}
	if err := st.Lock(); err != nil {
		return err
	}
	defer st.Unlock()
	runErr := Run(ctx, st, run, sc, o)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; nothing finished was lost: evalctl screen resume %s", dir)
	}
	rep, err := BuildReport(st, run, sc)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w)
	rep.WriteTable(w)
	if err := w.Flush(); err != nil {
		return err
	}
	if errors.Is(runErr, ErrIncomplete) {
		return fmt.Errorf("%w: evalctl screen resume %s", runErr, dir)
	}
	return runErr
}

// ReportOptions are the choices of 'screen report'.
type ReportOptions struct {
	Format  string // table, json or html
	Compare string // "A,B": two modes side by side; empty: none
}

// Check reports a format or comparison the report cannot make.
func (o ReportOptions) Check() error {
	_, _, err := o.modes()
	return err
}

func (o ReportOptions) modes() (a, b string, err error) {
	if o.Format != "table" && o.Format != "json" && o.Format != "html" {
		return "", "", evalctl.Usagef("unknown --format %q (want table, json or html)", o.Format)
	}
	if o.Compare == "" {
		return "", "", nil
	}
	parts := strings.Split(o.Compare, ",")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", evalctl.Usagef("--compare wants two modes, A,B")
	}
	return parts[0], parts[1], nil
}

// ReportDir builds the report of the screen in dir and returns what
// writes it in o's format (the comparison first, when one is asked).
func ReportDir(dir string, o ReportOptions) (func(io.Writer) error, error) {
	a, b, err := o.modes()
	if err != nil {
		return nil, err
	}
	st, run, sc, err := Open(dir)
	if err != nil {
		return nil, err
	}
	rep, err := BuildReport(st, run, sc)
	if err != nil {
		return nil, err
	}
	var cmp *Comparison
	if a != "" {
		if cmp, err = rep.Compare(a, b); err != nil {
			return nil, evalctl.Usagef("%v", err)
		}
	}
	return func(w io.Writer) error {
		switch o.Format {
		case "json":
			if cmp != nil {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"screen": rep, "comparison": cmp})
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
	}, nil
}

// CapacityRequest is what 'evalctl capacity' asks for: the flags of a new
// probe.
type CapacityRequest struct {
	Profile     string // server profile file
	Contexts    string // context sizes, comma-separated
	Out         string // directory that receives the run directory
	InputTokens int
	Fill        float64
	ShortOutput int
	LongOutput  int
}

// parseContexts reads a comma-separated list of context sizes.
func parseContexts(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, evalctl.Usagef("--contexts: %q is not a context size", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// StartCapacity registers the probe r asks for and runs it, printing where
// it is to stderr and its table to stdout.
func StartCapacity(ctx context.Context, r CapacityRequest, m Machine, stdout, stderr io.Writer) error {
	if r.Profile == "" || r.Contexts == "" {
		return evalctl.Usagef("capacity needs --profile and --contexts")
	}
	sizes, err := parseContexts(r.Contexts)
	if err != nil {
		return err
	}
	p, err := serving.LoadProfile(r.Profile)
	if err != nil {
		return err
	}
	plan := &CapacityPlan{Profile: p, Contexts: sizes, InputTokens: r.InputTokens, Fill: r.Fill, ShortOutput: r.ShortOutput, LongOutput: r.LongOutput}
	if err := plan.Normalize(); err != nil {
		return evalctl.Usagef("%v", err)
	}
	o, err := m.Options(stderr)
	if err != nil {
		return err
	}
	st, _, err := RegisterCapacity(r.Out, plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "capacity probe of %s at %d sizes in %s\n", p.Name, len(sizes), st.Dir)
	return RunCapacityDir(ctx, st.Dir, o, stdout)
}

// RunCapacityDir probes the sizes the probe in dir has not, then prints
// its table to stdout.
func RunCapacityDir(ctx context.Context, dir string, o Options, stdout io.Writer) error {
	st, run, plan, err := OpenCapacity(dir)
	if err != nil {
		return err
	}
	if err := st.Lock(); err != nil {
		return err
	}
	defer st.Unlock()
	if err := RunCapacity(ctx, st, run, plan, o); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; finished sizes are kept: evalctl capacity resume %s", dir)
		}
		return err
	}
	rep, err := BuildCapacityReport(st, run, plan)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w)
	rep.WriteTable(w)
	return w.Flush()
}

// CheckCapacityFormat refuses a format a capacity report is not written
// in.
func CheckCapacityFormat(format string) error {
	if format != "table" && format != "json" {
		return evalctl.Usagef("unknown --format %q (want table or json)", format)
	}
	return nil
}

// CapacityReportDir builds the report of the probe in dir and returns what
// writes it as a table or JSON.
func CapacityReportDir(dir, format string) (func(io.Writer) error, error) {
	if err := CheckCapacityFormat(format); err != nil {
		return nil, err
	}
	st, run, plan, err := OpenCapacity(dir)
	if err != nil {
		return nil, err
	}
	rep, err := BuildCapacityReport(st, run, plan)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		if format == "json" {
			return rep.WriteJSON(w)
		}
		return rep.WriteTable(w)
	}, nil
}

// Bind defines the flags that say how to watch the machine while a server
// runs.
func (m *Machine) Bind(fs *flag.FlagSet) {
	fs.BoolVar(&m.NoTelemetry, "no-telemetry", false, "do not sample GPU memory, power and temperatures")
	fs.DurationVar(&m.Interval, "telemetry-interval", telemetry.DefaultInterval, "sampling period of GPU and CPU telemetry")
	fs.StringVar(&m.GPUs, "gpus", "", "GPU indexes to watch, e.g. 0 or 0,1 (default: all)")
	fs.StringVar(&m.NvidiaSMI, "nvidia-smi", "", "path of nvidia-smi (default: from PATH)")
	fs.BoolVar(&m.Quiet, "quiet", false, "no progress lines")
}

// Bind defines the flags of 'evalctl screen report' that fill o.
func (o *ReportOptions) Bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Compare, "compare", "", "two modes A,B to set side by side (A against B)")
}

// Bind defines the flags of 'evalctl capacity' that fill r.
func (r *CapacityRequest) Bind(fs *flag.FlagSet) {
	fs.StringVar(&r.Profile, "profile", "", "server profile (YAML)")
	fs.StringVar(&r.Contexts, "contexts", "", "context sizes to probe, comma-separated (e.g. 196608,225280,262144)")
	fs.StringVar(&r.Out, "out", "runs", "directory that receives the run directory")
	fs.IntVar(&r.InputTokens, "input-tokens", 0, "near-capacity input size for every context (default: --fill x context)")
	fs.Float64Var(&r.Fill, "fill", 0.9, "near-capacity input as a fraction of each context size, when --input-tokens is not given")
	fs.IntVar(&r.ShortOutput, "short-output", 64, "tokens generated by the short generation")
	fs.IntVar(&r.LongOutput, "long-output", 128, "tokens generated after the near-capacity input")
}
