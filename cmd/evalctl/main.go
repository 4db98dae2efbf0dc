// Command evalctl evaluates local coding models: it runs coding cases
// against a model endpoint in a tool-calling loop inside Docker sandboxes,
// grades the answers with frozen checks, and pools the results per arm.
//
// This file dispatches and holds the flag plumbing; the commands live in
// cmd_*.go files by domain. Each parses its flags into the options value of
// the package that does its work and calls it. Errors are mapped to exit
// codes here, in one place: 0 success, 1 the work failed, 2 usage error
// (*evalctl.UsageError, from flags or from the package); run exits 3 when
// stopped and resumable.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
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

// exitError carries an exit code chosen by a command (run: 3, stopped and
// resumable).
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
	return exitCode(e.stderr, args[0], cmd.run(ctx, e, args[1:]))
}

// exitCode prints err in one line on stderr and maps it to an exit code:
// 0 success, 1 the work failed, 2 a usage error, or the command's own.
func exitCode(stderr io.Writer, name string, err error) int {
	var ue *evalctl.UsageError
	var ee *exitError
	code, msg := 1, ""
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue) && ue.See != "":
		code, msg = 2, fmt.Sprintf("%s (%s)", ue.Error(), ue.See)
	case errors.As(err, &ue):
		code, msg = 2, fmt.Sprintf("%s (see 'evalctl %s --help')", ue.Error(), name)
	case errors.As(err, &ee) && ee.msg == "":
		return ee.code
	case errors.As(err, &ee):
		code, msg = ee.code, ee.msg
	default:
		msg = err.Error()
	}
	fmt.Fprintf(stderr, "evalctl %s: %s\n", name, strings.Join(strings.Fields(msg), " "))
	return code
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
// usage line naming the command and its flags spelt with two dashes.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: evalctl %s\n\n", synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(e.stderr, "  --%s\n    \t%s", strings.TrimSpace(f.Name+" "+name), strings.ReplaceAll(usage, "\n", "\n    \t"))
			if d := f.DefValue; d != "" && d != "false" && d != "0" {
				fmt.Fprintf(e.stderr, " (default %q)", d)
			}
			fmt.Fprintln(e.stderr)
		})
		fmt.Fprintln(e.stderr, "  --version\n    \tprint the evalctl version")
	}
	return fs
}

// jsonFlag is the --format table|json flag of commands that print results;
// --json stays as a short form of --format json.
func jsonFlag(fs *flag.FlagSet) func() (bool, error) {
	format := fs.String("format", "table", "output format: table, json")
	asJSON := fs.Bool("json", false, "short for --format json")
	return func() (bool, error) {
		switch {
		case *asJSON && *format != "table" && *format != "json":
			return false, usagef("--json and --format %s disagree", *format)
		case *format != "table" && *format != "json" && !*asJSON:
			return false, usagef("unknown --format %q (want one of table, json)", *format)
		}
		return *asJSON || *format == "json", nil
	}
}

// parseFlags parses args, turning flag errors into usage errors (--help is
// success).
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return evalctl.Usage(err)
	}
	return err
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

// parseArgs parses flags that may come before, between or after positional
// arguments ("report RUNDIR --format json"), which the flag package alone
// stops at ("--" ends flags), and wants min to max (-1: any) positionals,
// else the usage error msg ("": the first one is unexpected).
func parseArgs(fs *flag.FlagSet, args []string, min, max int, msg string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			pos, rest = append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	switch {
	case len(pos) >= min && (max < 0 || len(pos) <= max):
		return pos, nil
	case msg == "":
		return nil, usagef("unexpected argument %q", pos[0])
	}
	return nil, usagef("%s", msg)
}

// parseRunArg parses flags anywhere among args around exactly one run (else
// the usage error need), runs check on the parsed options, and resolves
// the run to its directory.
func parseRunArg(fs *flag.FlagSet, args []string, need string, check func() error) (string, error) {
	pos, err := parseArgs(fs, args, 1, 1, need)
	if err != nil {
		return "", err
	}
	if check != nil {
		if err := check(); err != nil {
			return "", err
		}
	}
	return runstore.Resolve(runstore.Root(), pos[0])
}

// writeReport writes what a built report's fill writes (or returns its
// error) to stdout, or atomically to path.
func writeReport(e *env, path string) func(func(io.Writer) error, error) error {
	return func(fill func(io.Writer) error, err error) error {
		if err != nil {
			return err
		}
		if path != "" {
			if err := runstore.WriteAtomic(path, 0o644, fill); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "wrote %s\n", path)
			return nil
		}
		w := bufio.NewWriter(e.stdout)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	}
}

// stderrIsTerminal reports whether progress goes to a terminal, where it is
// drawn live instead of printed as timestamped lines.
func stderrIsTerminal(e *env) bool {
	f, ok := e.stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func cmdVersion(ctx context.Context, e *env, args []string) error {
	if err := parseNone(newFlags(e, "version", "version"), args, "version takes no arguments"); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "evalctl %s (%s, %s/%s)\n", runstore.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
