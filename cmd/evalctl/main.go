// Command evalctl evaluates local coding models: it runs coding cases
// against a model endpoint in a tool-calling loop inside Docker sandboxes,
// grades the answers with frozen checks, and pools the results per arm.
//
// This file only dispatches: each command lives in its own cmd_*.go file,
// parses its flags, builds the pieces and calls one Run function. Errors
// are mapped to exit codes here, in one place: 0 success, 1 the work
// failed, 2 usage error; commands may choose another with exitError (run:
// 3, stopped and resumable).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/runstore"
)

// command is one evalctl subcommand (or a group of them, like "image").
type command struct {
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what a command may touch of the process.
type env struct {
	stdout io.Writer
	stderr io.Writer
}

// commands is the table of subcommands. Add one line per command.
var commands = map[string]command{
	"version":     {"print the evalctl version and build information", cmdVersion},
	"image":       {"build the sandbox image (image build [--force])", cmdImage},
	"sandbox":     {"manage sandbox containers (sandbox prune)", cmdSandbox},
	"cases":       {"list, fingerprint and check the suite's cases", cmdCases},
	"run":         {"run a cohort from a plan, or resume one (run --plan FILE | --resume RUNDIR)", cmdRun},
	"demo":        {"the main job on embedded defaults: scripted model, two arms, the built-in suite", cmdDemo},
	"runs":        {"list runs newest first: name, id, kind, state, arms, scored/planned (runs [DIR])", cmdRuns},
	"show":        {"one attempt, readable: conversation, tool calls, grades, diff (show ATTEMPT | show RUN ARM CASE REPEAT)", cmdShow},
	"view":        {"live web viewer of runs, arms, cases and attempts, on loopback (view [DIR] [--addr])", cmdView},
	"report":      {"pool runs per arm with uncertainty (report RUNDIR... [--format table|md|json|csv|html])", cmdReport},
	"export":      {"write checkable attempts, aggregates and protocol files (export RUNDIR... --out DIR)", cmdExport},
	"verify":      {"recompute an export's aggregates and check its checksums (verify DIR)", cmdVerify},
	"screen":      {"throughput screen of server modes (screen --spec FILE | resume RUNDIR | report RUNDIR [--compare A,B])", cmdScreen},
	"serve-model": {"run the built-in scripted model server (serve-model [--addr] [--suite DIR])", cmdServeModel},
	"capacity":    {"context-capacity probe (capacity --profile P --contexts 196608,225280 | resume | report)", cmdCapacity},
	"regrade":     {"grade stored answers again under another suite version, no model called (regrade RUNDIR... --suite DIR)", cmdRegrade},
	"rerun":       {"diagnostic rerun of one attempt with exactly the named settings changed (rerun RUNDIR/attempts/ID --set FIELD=VALUE [--label NAME] | rerun show RUNDIR)", cmdRerun},
	"summarize":   {"one results document from runs of every kind, each figure with its run ids (summarize RUN... --out results.json)", cmdSummarize},
	"controls":    {"fixture diagnosis: answers, reference and controls under two suite versions (controls --case NAME --suite A [--suite B] [--answers RUNDIR...])", cmdControls},
}

func usagef(format string, a ...any) error { return evalctl.Usagef(format, a...) }

// exitError carries an exit code chosen by a command that has already
// reported its failure (e.g. "cases check" found an unmet expectation).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	// --version works everywhere, as first word or among a command's flags.
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--version" || a == "-version" {
			return exitCode(e.stderr, "version", cmdVersion(ctx, e, nil))
		}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "evalctl: unknown command %q; run 'evalctl --help' for the list\n", args[0])
		return 2
	}
	err := cmd.run(ctx, e, args[1:])
	return exitCode(e.stderr, args[0], err)
}

// exitCode prints err in one line on stderr and maps it to an exit code.
func exitCode(stderr io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *evalctl.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "evalctl %s: %s (see 'evalctl %s --help')\n", name, oneLine(ue.Error()), name)
		return 2
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "evalctl %s: %s\n", name, oneLine(ee.msg))
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "evalctl %s: %s\n", name, oneLine(err.Error()))
	return 1
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: evalctl <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'evalctl <command> --help' (or -h) for a command's flags; 'evalctl --version' for the version.")
}

// newFlags makes a flag set that reports errors instead of exiting, with a
// usage line naming the command.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: evalctl %s\n\n", synopsis)
		printDefaults(e.stderr, fs)
	}
	return fs
}

// printDefaults lists a flag set's flags as the usage lines write them,
// with two dashes (the flag package prints one), each with its default.
func printDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "false" && d != "0" {
			fmt.Fprintf(w, " (default %q)", d)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintln(w, "  --version\n    \tprint the evalctl version")
}

// formatFlag is the one --format flag of every command that prints
// results; --json stays as a short form of --format json.
func formatFlag(fs *flag.FlagSet, def string, names ...string) func() (string, error) {
	format := fs.String("format", def, "output format: "+strings.Join(names, ", "))
	asJSON := fs.Bool("json", false, "short for --format json")
	return func() (string, error) {
		if *asJSON {
			if *format != def && *format != "json" {
				return "", usagef("--json and --format %s disagree", *format)
			}
			return "json", nil
		}
		for _, n := range names {
			if *format == n {
				return n, nil
			}
		}
		return "", usagef("unknown --format %q (want one of %s)", *format, strings.Join(names, ", "))
	}
}

// parseFlags parses args, turning flag errors into usage errors (--help is
// success).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return evalctl.Usage(err)
	}
	return nil
}

// writeOut writes through fill to stdout, or atomically to path.
func writeOut(e *env, path string, fill func(io.Writer) error) error {
	if path == "" {
		w := bufio.NewWriter(e.stdout)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := runstore.WriteAtomic(path, 0o644, fill); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s\n", path)
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseWithPositionals parses flags that may come before, between or after
// positional arguments ("report RUNDIR --format json"), which the flag
// package alone stops at. "--" ends flag parsing.
func parseWithPositionals(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// stderrIsTerminal reports whether progress goes to a terminal, where it is
// drawn live instead of printed as timestamped lines.
func stderrIsTerminal(e *env) bool {
	f, ok := e.stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// parseNoArgs parses flags anywhere among args and refuses any argument.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseWithPositionals(fs, args)
	if err == nil && len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return err
}

// parseRunArg parses flags anywhere among args around exactly one run (else
// the usage error need), runs check on the parsed options when given, and
// resolves the run to its directory.
func parseRunArg(fs *flag.FlagSet, args []string, need string, check func() error) (string, error) {
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usagef("%s", need)
	}
	if check != nil {
		if err := check(); err != nil {
			return "", err
		}
	}
	return resolveRun(pos[0])
}

// writeReport returns what writes a built report (or its error) to stdout
// or atomically to path.
func writeReport(e *env, path string) func(func(io.Writer) error, error) error {
	return func(fill func(io.Writer) error, err error) error {
		if err != nil {
			return err
		}
		return writeOut(e, path, fill)
	}
}

// isJSON reads a --format flag of table or json.
func isJSON(format func() (string, error)) (bool, error) {
	f, err := format()
	return f == "json", err
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// parseNone parses args, which must hold only flags (else the usage error
// msg).
func parseNone(fs *flag.FlagSet, args []string, msg string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("%s", msg)
	}
	return nil
}

// parseArgs parses flags anywhere among args around min to max positional
// arguments (else the usage error msg).
func parseArgs(fs *flag.FlagSet, args []string, min, max int, msg string) ([]string, error) {
	pos, err := parseWithPositionals(fs, args)
	if err == nil && (len(pos) < min || max >= 0 && len(pos) > max) {
		return nil, usagef("%s", msg)
	}
	return pos, err
}

// optArg is the one optional positional argument, or def.
func optArg(pos []string, def string) string {
	if len(pos) == 0 {
		return def
	}
	return pos[0]
}
