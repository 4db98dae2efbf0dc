package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/tasks"
)

const casesUsage = `usage: evalctl cases <list|fingerprint|check|import|controls> [flags]

  list         the suite's cases: name, language, phases, controls, summary
  fingerprint  the suite's name, version and SHA-256 fingerprint
  check        the fixture gate: reference solved, starter fails acceptance,
               each negative control fails what it declares (exit 1 if not)
  import       FORMAT SRC --out SUITE: a new suite from an outside one
               (formats: exercism), test counts from the references, controls
               generated
  controls generate [CASE...]
               negative controls from mutants of the reference, and each
               case's mutation score and surviving mutants`

func cmdCases(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("expected 'cases list', 'cases fingerprint' or 'cases check'")
	}
	switch args[0] {
	case "-h", "--help":
		fmt.Fprintln(e.stdout, casesUsage)
		return nil
	case "list":
		return casesList(e, args[1:])
	case "fingerprint":
		return casesFingerprint(e, args[1:])
	case "check":
		return casesCheck(ctx, e, args[1:])
	case "import":
		return casesImport(ctx, e, args[1:])
	case "controls":
		return casesControls(ctx, e, args[1:])
	}
	return usagef("unknown subcommand 'cases %s'", args[0])
}

// suiteFlag is the --suite flag of commands that take a suite: a
// directory, by default ./cases in a checkout and the built-in suite
// elsewhere.
func suiteFlag(fs *flag.FlagSet) func() (*tasks.Suite, error) {
	dir := fs.String("suite", "", "suite directory (default: ./cases when it holds a suite, else the suite built into evalctl)")
	return func() (*tasks.Suite, error) { return tasks.LoadDefault(*dir) }
}

func loadSuiteFlag(e *env, name, synopsis string, args []string) (*tasks.Suite, []string, func() (string, error), error) {
	fs := newFlags(e, name, synopsis)
	load := suiteFlag(fs)
	format := formatFlag(fs, "table", "table", "json")
	if err := parseFlags(fs, args); err != nil {
		return nil, nil, nil, err
	}
	if _, err := format(); err != nil {
		return nil, nil, nil, err
	}
	s, err := load()
	return s, fs.Args(), format, err
}

func casesList(e *env, args []string) error {
	s, rest, format, err := loadSuiteFlag(e, "cases list", "cases list [--suite DIR] [--format table|json]", args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("cases list takes no arguments")
	}
	f, _ := format()
	return s.WriteList(e.stdout, f == "json")
}

func casesFingerprint(e *env, args []string) error {
	s, rest, format, err := loadSuiteFlag(e, "cases fingerprint", "cases fingerprint [--suite DIR] [--format table|json]", args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("cases fingerprint takes no arguments")
	}
	f, _ := format()
	return s.WriteFingerprint(e.stdout, f == "json")
}

func casesCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cases check", "cases check [--suite DIR] [--concurrency N] [--retries N] [--format table|json] [CASE...]")
	dir := fs.String("suite", "", "suite directory (default: ./cases when it holds a suite, else the suite built into evalctl)")
	conc := fs.Int("concurrency", 2, "grades run at once")
	hostsFile := fs.String("sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (README \"Sandbox hosts\")")
	retries := fs.Int("retries", 1, "times a variant whose grading failed for an infrastructure reason is graded again")
	format := formatFlag(fs, "table", "table", "json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *conc < 1 {
		return usagef("--concurrency must be at least 1")
	}
	if *retries < 0 {
		return usagef("--retries must be at least 0")
	}
	f, err := format()
	if err != nil {
		return err
	}
	s, broken, err := tasks.LoadDefaultPartial(*dir)
	if err != nil {
		return err
	}
	cases, reported, err := controls.Select(s, broken, fs.Args())
	var nc *controls.NoCaseError
	if errors.As(err, &nc) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	for _, b := range reported {
		fmt.Fprintf(e.stderr, "BROKEN %v\n", b)
	}
	var g *grader.Grader
	if len(cases) > 0 {
		var done func()
		if g, done, err = newGraderOn(ctx, e, *conc, *hostsFile); err != nil {
			return err
		}
		defer done()
	}
	gate, err := controls.RunGate(ctx, g, s, cases, reported, controls.GateOptions{Retries: *retries, Concurrency: *conc, Progress: e.stderr})
	if err != nil {
		return err
	}
	if f == "json" {
		err = gate.WriteJSON(e.stdout)
	} else {
		err = gate.WriteTable(e.stdout)
	}
	if err != nil {
		return err
	}
	if msg := gate.Failure(); msg != "" {
		return &exitError{code: 1, msg: msg}
	}
	return gate.Infra
}
