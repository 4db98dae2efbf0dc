package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/evalctl/evalctl/grader"
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
	return func() (*tasks.Suite, error) { return loadSuiteOrBuiltin(*dir) }
}

func loadSuiteOrBuiltin(dir string) (*tasks.Suite, error) {
	if dir != "" {
		return tasks.LoadSuite(dir)
	}
	if _, err := os.Stat(filepath.Join("cases", "suite.yaml")); err == nil {
		return tasks.LoadSuite("cases")
	}
	return builtinSuite()
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
	if f, _ := format(); f == "json" {
		type caseRow struct {
			Name     string `json:"name"`
			Language string `json:"language"`
			Phases   int    `json:"phases"`
			Controls int    `json:"controls"`
			Summary  string `json:"summary"`
		}
		rows := []caseRow{}
		for _, c := range s.Cases {
			rows = append(rows, caseRow{c.Name, string(c.Language), len(c.Phases), len(c.Controls), c.Summary})
		}
		return writeJSON(e.stdout, map[string]any{"suite": s.ID(), "fingerprint": s.Fingerprint, "cases": rows})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CASE\tLANGUAGE\tPHASES\tCONTROLS\tSUMMARY\n")
	for _, c := range s.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", c.Name, c.Language, len(c.Phases), len(c.Controls), c.Summary)
	}
	return tw.Flush()
}

func casesFingerprint(e *env, args []string) error {
	s, rest, format, err := loadSuiteFlag(e, "cases fingerprint", "cases fingerprint [--suite DIR] [--format table|json]", args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("cases fingerprint takes no arguments")
	}
	if f, _ := format(); f == "json" {
		return writeJSON(e.stdout, map[string]string{"name": s.Name, "version": s.Version, "fingerprint": s.Fingerprint, "dir": s.Dir})
	}
	fmt.Fprintf(e.stdout, "%s %s %s\n", s.Name, s.Version, s.Fingerprint)
	return nil
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
	asJSON := f == "json"
	s, broken, err := loadSuitePartial(*dir)
	if err != nil {
		return err
	}
	brokenNames := map[string]bool{}
	for _, b := range broken {
		brokenNames[b.Case] = true
	}
	cases := s.Cases
	var reported []*tasks.CaseError
	if fs.NArg() > 0 {
		cases = nil
		for _, name := range fs.Args() {
			c := s.Case(name)
			if c == nil && !brokenNames[name] {
				return usagef("suite %s has no case %q", s.ID(), name)
			}
			if c != nil {
				cases = append(cases, c)
			}
			for _, b := range broken {
				if b.Case == name {
					reported = append(reported, b)
				}
			}
		}
	} else {
		reported = broken
	}
	for _, b := range reported {
		fmt.Fprintf(e.stderr, "BROKEN %v\n", b)
	}
	var results []grader.CheckResult
	start := time.Now()
	var infra error
	if len(cases) > 0 {
		g, done, err := newGraderOn(ctx, e, *conc, *hostsFile)
		if err != nil {
			return err
		}
		defer done()
		n, total := 0, 0
		for _, c := range cases {
			vs, _ := grader.Variants(c)
			total += len(vs)
		}
		results, infra = g.CheckCasesWith(ctx, s, cases, grader.CheckOptions{
			Run: gateRunLabel("cases-check"), Retries: *retries,
			OnResult: func(r grader.CheckResult) {
				n++
				verdict := "met"
				if !r.Met {
					verdict = "UNMET: " + strings.Join(r.Problems, "; ")
				}
				fmt.Fprintf(e.stderr, "[%d/%d %.0fs] %s phase %d %s: %s\n", n, total, time.Since(start).Seconds(), r.Case, r.Phase, r.Variant, verdict)
			},
		})
		var ie *grader.InfraError
		if infra != nil && !errors.As(infra, &ie) {
			return infra
		}
		results = append(results, grader.JudgeControls(cases, results)...)
	}
	failed := 0
	for _, r := range results {
		if !r.Met {
			failed++
		}
	}
	if asJSON {
		type brokenRow struct {
			Case  string `json:"case"`
			Error string `json:"error"`
		}
		rows := []brokenRow{}
		for _, b := range reported {
			rows = append(rows, brokenRow{b.Case, b.Err.Error()})
		}
		if err := writeJSON(e.stdout, map[string]any{"results": results, "broken_cases": rows, "mutation": mutationReports(cases)}); err != nil {
			return err
		}
	} else {
		printChecks(e, results)
		printMutation(e, cases)
		for _, b := range reported {
			fmt.Fprintf(e.stdout, "BROKEN %v\n", b)
		}
		fmt.Fprintf(e.stdout, "\n%s (%s): %d variants and %d cases judged, %d expectations unmet, %d cases broken, %.1fs with concurrency %d\n",
			s.ID(), s.Fingerprint[:16], len(results)-len(cases), len(cases), failed, len(reported), time.Since(start).Seconds(), *conc)
	}
	switch {
	case failed > 0 || len(reported) > 0:
		return &exitError{code: 1, msg: fmt.Sprintf("%d of %d fixture expectations unmet, %d cases broken", failed, len(results), len(reported))}
	case infra != nil:
		return infra
	}
	return nil
}

func printChecks(e *env, results []grader.CheckResult) {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CASE\tPHASE\tVARIANT\tGROUPS (passed/total)\tSOLVED\tEXPECTATION\n")
	for _, r := range results {
		verdict := "met"
		if !r.Met {
			verdict = "UNMET: " + strings.Join(r.Problems, "; ")
		}
		if len(r.Extra) > 0 {
			verdict += " (" + strings.Join(r.Extra, "; ") + ")"
		}
		if r.Grade == nil { // a case as a whole
			fmt.Fprintf(tw, "%s\t-\t%s\t\t-\t%s\n", r.Case, r.Variant, verdict)
			continue
		}
		var groups []string
		for _, g := range r.Grade.Groups {
			mark := ""
			if !g.Success {
				mark = "!"
			}
			groups = append(groups, fmt.Sprintf("%s %d/%d%s", g.Name, g.Passed, g.Total, mark))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%v\t%s\n", r.Case, r.Phase, r.Variant, strings.Join(groups, ", "), r.Grade.Solved, verdict)
	}
	tw.Flush()
}
