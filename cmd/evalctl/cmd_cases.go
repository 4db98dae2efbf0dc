package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
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
	var o controls.CheckOptions
	fs.StringVar(&o.Suite, "suite", "", "suite directory (default: ./cases when it holds a suite, else the suite built into evalctl)")
	fs.IntVar(&o.Concurrency, "concurrency", 2, "grades run at once")
	fs.IntVar(&o.Retries, "retries", 1, "times a variant whose grading failed for an infrastructure reason is graded again")
	format := formatFlag(fs, "table", "table", "json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f, err := format()
	if err != nil {
		return err
	}
	o.Cases, o.JSON = fs.Args(), f == "json"
	return controls.Check(ctx, o, func(conc int) (*grader.Grader, func(), error) { return newGrader(ctx, e, conc) }, e.stdout, e.stderr)
}

func casesImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cases import", "cases import FORMAT SRC --out SUITE [--name NAME] [--version V] [--prompt-template FILE] [--concurrency N] [--no-controls]")
	var r importer.Request
	fs.StringVar(&r.Out, "out", "", "directory of the new suite (must not exist or be empty; required)")
	fs.StringVar(&r.Name, "name", "", "suite name (default: the base name of --out)")
	fs.StringVar(&r.Version, "version", "1.0.0", "suite version")
	fs.StringVar(&r.PromptFile, "prompt-template", "", "text/template file rendering each case's prompt (fields .Name .Language .Instructions .Solution .Files; default: instructions plus the files to change)")
	fs.IntVar(&r.Concurrency, "concurrency", 2, "grades run at once")
	noControls := fs.Bool("no-controls", false, "do not generate negative controls (the suite then fails 'cases check' until it has some)")
	var err error
	if r.Args, err = parseWithPositionals(fs, args); err != nil {
		return err
	}
	im, err := importer.Prepare(r)
	if err != nil {
		return err
	}
	if err := im.Write(e.stderr); err != nil {
		return err
	}
	gen, done, err := newGenerator(ctx, e, r.Concurrency)
	if err != nil {
		return err
	}
	defer done()
	if err := im.Count(ctx, gen.Grader, e.stdout); err != nil || *noControls {
		return err
	}
	return gen.GenerateDir(ctx, r.Out, nil, controls.SuiteOptions{Out: e.stdout, Log: e.stderr})
}

// casesControls is 'cases controls generate [CASE...]'.
func casesControls(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "generate" {
		return usagef("expected 'cases controls generate [--suite DIR] [CASE...]'")
	}
	fs := newFlags(e, "cases controls generate", "cases controls generate [--suite DIR] [--max N] [--keep N] [--concurrency N] [--dry-run] [CASE...]")
	o := controls.SuiteOptions{Out: e.stdout, Log: e.stderr}
	dir := fs.String("suite", "cases", "suite directory")
	fs.IntVar(&o.Max, "max", 24, "mutants graded per case phase (spread over all made)")
	fs.IntVar(&o.Keep, "keep", 3, "controls kept per case phase")
	conc := fs.Int("concurrency", 2, "grades run at once")
	fs.BoolVar(&o.DryRun, "dry-run", false, "report the mutation score and survivors; write nothing")
	pos, err := parseWithPositionals(fs, args[1:])
	if err != nil {
		return err
	}
	if err := controls.CheckLimits(*conc, o.Options); err != nil {
		return err
	}
	gen, done, err := newGenerator(ctx, e, *conc)
	if err != nil {
		return err
	}
	defer done()
	return gen.GenerateDir(ctx, *dir, pos, o)
}

// newGenerator connects to the Docker Engine, builds the sandbox image if
// needed, and returns a control generator with its grader.
func newGenerator(ctx context.Context, e *env, conc int) (*controls.Generator, func(), error) {
	eng, img, err := sandbox.ConnectImage(ctx, e.stderr)
	if err != nil {
		return nil, nil, err
	}
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: conc})
	return &controls.Generator{Engine: eng, Image: img.Ref, Grader: g}, func() { eng.Close() }, nil
}
