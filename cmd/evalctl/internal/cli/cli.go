// Package cli holds evalctl's command-line conventions, apart from the
// commands themselves: flags spelt with two dashes and accepted anywhere
// among the arguments, one-line errors, and one mapping from errors to exit
// codes (0 success, 1 the work failed, 2 a usage error, or a command's own
// code, see Exit). It plays the part of cmd/go/internal/base for the go
// command.
package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/term"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// Env is what a command may touch of the process.
type Env struct {
	Stdout, Stderr io.Writer
}

// Live reports whether progress goes to a terminal, where it is drawn live
// instead of printed as timestamped lines.
func (e *Env) Live() bool {
	f, ok := e.Stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Console is where a package's work prints, for the options values of
// the packages that take one.
func (e *Env) Console() evalctl.Console {
	return evalctl.Console{Stdout: e.Stdout, Stderr: e.Stderr, Live: e.Live()}
}

// Command is one subcommand (or a group of them, like "image build").
type Command struct {
	Summary string
	Run     func(ctx context.Context, e *Env, args []string) error
}

// Exit is an error that carries the exit code a command chose (run: 3,
// stopped and resumable); an empty Msg prints nothing.
type Exit struct {
	Code int
	Msg  string
}

func (e *Exit) Error() string { return e.Msg }

// Main runs the command args name and returns the process's exit code.
// "--version" anywhere before "--" runs the "version" command.
func Main(ctx context.Context, e *Env, commands map[string]Command, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.Stdout, commands)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--version" || a == "-version" {
			return ExitCode(e.Stderr, "version", commands["version"].Run(ctx, e, nil))
		}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.Stderr, "evalctl: unknown command %q; run 'evalctl --help' for the list\n", args[0])
		return 2
	}
	return ExitCode(e.Stderr, args[0], cmd.Run(ctx, e, args[1:]))
}

// ExitCode prints err in one line on stderr, prefixed by the command's
// name, and maps it to an exit code: 0 success (--help included), 1 the
// work failed, 2 a usage error (*evalctl.UsageError), or an *Exit's own.
func ExitCode(stderr io.Writer, name string, err error) int {
	var ue *evalctl.UsageError
	var ee *Exit
	code, msg := 1, ""
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue) && ue.See != "":
		code, msg = 2, fmt.Sprintf("%s (%s)", ue.Error(), ue.See)
	case errors.As(err, &ue):
		code, msg = 2, fmt.Sprintf("%s (see 'evalctl %s --help')", ue.Error(), name)
	case errors.As(err, &ee) && ee.Msg == "":
		return ee.Code
	case errors.As(err, &ee):
		code, msg = ee.Code, ee.Msg
	default:
		msg = err.Error()
	}
	fmt.Fprintf(stderr, "evalctl %s: %s\n", name, strings.Join(strings.Fields(msg), " "))
	return code
}

func usage(w io.Writer, commands map[string]Command) {
	fmt.Fprintln(w, "usage: evalctl <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'evalctl <command> --help' (or -h) for a command's flags; 'evalctl --version' for the version.")
}

// Flags makes a flag set that reports errors instead of exiting, with a
// usage line naming the command and its flags spelt with two dashes.
func Flags(e *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "usage: evalctl %s\n\n", synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(e.Stderr, "  --%s\n    \t%s", strings.TrimSpace(f.Name+" "+name), strings.ReplaceAll(usage, "\n", "\n    \t"))
			if d := f.DefValue; d != "" && d != "false" && d != "0" {
				fmt.Fprintf(e.Stderr, " (default %q)", d)
			}
			fmt.Fprintln(e.Stderr)
		})
		fmt.Fprintln(e.Stderr, "  --version\n    \tprint the evalctl version")
	}
	return fs
}

// Help answers a command group called without its one subcommand: help on
// -h or --help, else a usage error.
func Help(e *Env, args []string, sub, help string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(e.Stdout, help)
		return nil
	}
	return evalctl.Usagef("expected '%s'", sub)
}

// JSONFlag defines the --format table|json flag of commands that print
// results, and --json as its short form; the returned func reports
// whether JSON was asked for, after parsing.
func JSONFlag(fs *flag.FlagSet) func() (bool, error) {
	format := fs.String("format", "table", "output format: table, json")
	asJSON := fs.Bool("json", false, "short for --format json")
	return func() (bool, error) {
		switch {
		case *asJSON && *format != "table" && *format != "json":
			return false, evalctl.Usagef("--json and --format %s disagree", *format)
		case *format != "table" && *format != "json" && !*asJSON:
			return false, evalctl.Usagef("unknown --format %q (want one of table, json)", *format)
		}
		return *asJSON || *format == "json", nil
	}
}

// Parse parses args, turning flag errors into usage errors (--help is
// flag.ErrHelp, which ExitCode takes for success).
func Parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return evalctl.Usage(err)
	}
	return err
}

// ParseNone parses args, which must hold only flags (else the usage error
// msg).
func ParseNone(fs *flag.FlagSet, args []string, msg string) error {
	_, err := Args(fs, args, 0, 0, msg)
	return err
}

// Args parses flags that may come before, between or after positional
// arguments ("report RUNDIR --format json"), which the flag package alone
// stops at ("--" ends flags), and wants min to max (-1: any) positionals,
// else the usage error msg ("": the first one is unexpected).
func Args(fs *flag.FlagSet, args []string, min, max int, msg string) ([]string, error) {
	var pos []string
	for {
		if err := Parse(fs, args); err != nil {
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
		return nil, evalctl.Usagef("unexpected argument %q", pos[0])
	}
	return nil, evalctl.Usagef("%s", msg)
}

// Run parses flags anywhere among args around exactly one run (else the
// usage error need), runs check on the parsed options when there is one,
// and resolves the run to its directory under the runs root.
func Run(fs *flag.FlagSet, args []string, need string, check func() error) (string, error) {
	pos, err := Args(fs, args, 1, 1, need)
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

// Write writes what a built report's fill writes (or returns its error)
// to stdout, or atomically to path ("": stdout).
func Write(e *Env, path string) func(func(io.Writer) error, error) error {
	return func(fill func(io.Writer) error, err error) error {
		if err != nil {
			return err
		}
		if path != "" {
			if err := runstore.WriteAtomic(path, 0o644, fill); err != nil {
				return err
			}
			fmt.Fprintf(e.Stderr, "wrote %s\n", path)
			return nil
		}
		w := bufio.NewWriter(e.Stdout)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	}
}
