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
	"regexp"
	"sort"
	"strings"

	"golang.org/x/term"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/yamlcheck"
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
// work failed, 2 a usage error (*evalctl.UsageError, or a mistake in a file
// the user wrote or named: *yamlcheck.Error), or an *Exit's own.
// An error that lists several mistakes (it has a method Errors() []error,
// as a plan's do) prints one line for each.
func ExitCode(stderr io.Writer, name string, err error) int {
	var ue *evalctl.UsageError
	var ee *Exit
	var ye *yamlcheck.Error
	code, see, msg := 1, "", err
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee) && ee.Msg == "":
		return ee.Code
	case errors.As(err, &ee):
		code, msg = ee.Code, ee
	case errors.As(err, &ue) && ue.See != "":
		code, see = 2, " ("+ue.See+")"
	case errors.As(err, &ue):
		code, see = 2, fmt.Sprintf(" (see 'evalctl %s --help')", name)
	case errors.As(err, &ye):
		code = 2 // a mistake in a file the user wrote, or names and is not there
	}
	lines := []string{msg.Error()}
	var list interface{ Errors() []error }
	if errors.As(err, &list) && len(list.Errors()) > 1 {
		lines = lines[:0]
		for _, e := range list.Errors() {
			lines = append(lines, e.Error())
		}
	}
	for i, l := range lines {
		if i == len(lines)-1 {
			l += see
		}
		fmt.Fprintf(stderr, "evalctl %s: %s\n", name, strings.Join(strings.Fields(l), " "))
	}
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
// --help (or -h) prints that help on stdout (so 'evalctl run --help | less'
// shows it); a flag mistake prints nothing here: Parse returns it as a
// usage error, which ExitCode prints in one line.
func Flags(e *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package writes an error to its output, then calls Usage;
	// -h and --help call Usage alone.
	var failed strings.Builder
	fs.SetOutput(&failed)
	fs.Usage = func() {
		if failed.Len() > 0 {
			failed.Reset()
			return
		}
		writeHelp(e.Stdout, fs, synopsis)
	}
	return fs
}

func writeHelp(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(w, "usage: evalctl %s\n\n", synopsis)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if _, ok := f.Value.(boolFlag); ok {
			name = ""
		}
		fmt.Fprintf(w, "  --%s\n    \t%s", strings.TrimSpace(f.Name+" "+name), strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "false" && d != "0" {
			fmt.Fprintf(w, " (default %q)", d)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintln(w, "  --version\n    \tprint the evalctl version")
}

type boolFlag interface{ IsBoolFlag() bool }

// Help answers a command group called without its one subcommand: help on
// -h or --help, else a usage error.
func Help(e *Env, args []string, sub, help string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(e.Stdout, help)
		return nil
	}
	return evalctl.Usagef("expected '%s'", sub)
}

// Format defines the --format flag of a command that prints results, and
// --json, its alias: text (the default; "table" is read as text), json, and
// the command's own formats. text names the command's text form as its
// package calls it ("text" or "table"); the flag holds text, "json" or one
// of own. A format the command does not have, or --json beside another
// --format, is a usage error naming the formats it has.
//
// A command whose output has no text form passes text "": json is then its
// default.
func Format(fs *flag.FlagSet, text string, own ...string) *string {
	f := &format{value: text, text: text, names: append([]string{"text", "json"}, own...)}
	if text == "" {
		f.value, f.names = "json", append([]string{"json"}, own...)
	}
	fs.Var(f, "format", "output format: "+strings.Join(f.names, ", "))
	fs.BoolFunc("json", "short for --format json", func(string) error {
		if f.set != "" && f.set != "json" {
			return fmt.Errorf("--json and --format %s disagree", f.set)
		}
		f.value, f.json = "json", true
		return nil
	})
	return &f.value
}

type format struct {
	value, text, set string
	names            []string
	json             bool
}

func (f *format) String() string {
	if f == nil || (f.value == f.text && f.text != "") {
		return "text"
	}
	return f.value
}

func (f *format) Set(s string) error {
	name := s
	if s == "table" {
		name = "text"
	}
	found := false
	for _, n := range f.names {
		found = found || n == name
	}
	switch {
	case !found:
		return fmt.Errorf("want one of %s", strings.Join(f.names, ", "))
	case f.json && name != "json":
		return fmt.Errorf("--json and --format %s disagree", s)
	case name == "text":
		f.value = f.text
	default:
		f.value = name
	}
	f.set = s
	return nil
}

// Parse parses args, turning flag errors into usage errors that spell
// flags with two dashes, as the help does (--help is flag.ErrHelp, which
// ExitCode takes for success).
func Parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		msg := twoDashes(err.Error())
		if m := invalidRE.FindStringSubmatch(msg); m != nil && fs.Lookup(m[1]) != nil {
			if want := kinds[fmt.Sprintf("%T", fs.Lookup(m[1]).Value)]; want != "" && !strings.Contains(msg, ": ") {
				msg += " (want " + want + ")"
			}
		}
		return evalctl.Usage(errors.New(msg))
	}
	return err
}

var invalidRE = regexp.MustCompile(`^invalid value ".*" for --([^:\s]+)`)

// kinds say, in words, what the flag package's own value types take.
var kinds = map[string]string{
	"*flag.intValue": "a whole number", "*flag.int64Value": "a whole number", "*flag.uintValue": "a whole number",
	"*flag.uint64Value": "a whole number", "*flag.float64Value": "a number", "*flag.boolValue": "true or false",
	"*flag.durationValue": "a duration such as 90s or 10m",
}

// flagErrors are the flag package's messages, which spell a flag with one
// dash, and their rewording.
var flagErrors = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`^.*: (--json and --format \S+ disagree)$`), "$1"},
	{regexp.MustCompile(`^flag provided but not defined: -+(.*)$`), "unknown flag --$1"},
	{regexp.MustCompile(`^flag needs an argument: -+(.*)$`), "flag --$1 needs a value"},
	{regexp.MustCompile(`^invalid (boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-+([^:\s]+): (?:parse error$)?`), "invalid value $2 for --$3: "},
	{regexp.MustCompile(`^invalid boolean flag -*([^:\s]+): `), "--$1: "},
}

func twoDashes(msg string) string {
	for _, f := range flagErrors {
		if f.re.MatchString(msg) {
			return strings.TrimSuffix(f.re.ReplaceAllString(msg, f.repl), ": ")
		}
	}
	return msg
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
