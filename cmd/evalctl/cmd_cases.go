package main

import (
	"context"
	"fmt"
	"io"

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
		return casesShow(e, "list", args[1:], (*tasks.Suite).WriteList)
	case "fingerprint":
		return casesShow(e, "fingerprint", args[1:], (*tasks.Suite).WriteFingerprint)
	case "check":
		return casesCheck(ctx, e, args[1:])
	case "import":
		return casesImport(ctx, e, args[1:])
	case "controls":
		return casesControls(ctx, e, args[1:])
	}
	return usagef("unknown subcommand 'cases %s'", args[0])
}

// suiteHelp says what --suite defaults to: ./cases in a checkout, the
// built-in suite elsewhere.
const suiteHelp = "suite directory (default: ./cases when it holds a suite, else the suite built into evalctl)"

// casesShow is 'cases list' and 'cases fingerprint': write prints the suite.
func casesShow(e *env, sub string, args []string, write func(*tasks.Suite, io.Writer, bool) error) error {
	fs := newFlags(e, "cases "+sub, "cases "+sub+" [--suite DIR] [--format table|json]")
	dir := fs.String("suite", "", suiteHelp)
	format := jsonFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	asJSON, err := format()
	if err != nil {
		return err
	}
	s, err := tasks.LoadDefault(*dir)
	if err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("cases %s takes no arguments", sub)
	}
	return write(s, e.stdout, asJSON)
}

func casesCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cases check", "cases check [--suite DIR] [--concurrency N] [--retries N] [--sandbox-hosts FILE] [--format table|json] [CASE...]")
	var o controls.CheckOptions
	fs.StringVar(&o.Suite, "suite", "", suiteHelp)
	fs.IntVar(&o.Concurrency, "concurrency", 2, "grades run at once")
	fs.IntVar(&o.Retries, "retries", 1, "times a variant whose grading failed for an infrastructure reason is graded again")
	hostsFile := fs.String("sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (README \"Sandbox hosts\")")
	format := jsonFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if o.JSON, err = format(); err != nil {
		return err
	}
	o.Cases = fs.Args()
	return controls.Check(ctx, o, func(conc int) (*grader.Grader, func(), error) { return newGraderOn(ctx, e, conc, *hostsFile) }, e.stdout, e.stderr)
}

func casesImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cases import", "cases import FORMAT SRC --out SUITE [--name NAME] [--version V] [--prompt-template FILE] [--concurrency N] [--max N] [--no-controls]")
	var r importer.Request
	fs.StringVar(&r.Out, "out", "", "directory of the new suite (must not exist or be empty; required)")
	fs.StringVar(&r.Name, "name", "", "suite name (default: the base name of --out)")
	fs.StringVar(&r.Version, "version", "1.0.0", "suite version")
	fs.StringVar(&r.PromptFile, "prompt-template", "", "text/template file rendering each case's prompt (fields .Name .Language .Instructions .Solution .Files; default: instructions plus the files to change)")
	fs.IntVar(&r.Concurrency, "concurrency", 2, "grades run at once")
	max := fs.Int("max", 24, "mutants graded per case phase when generating controls (spread over all made)")
	noControls := fs.Bool("no-controls", false, "do not generate negative controls (the suite then fails 'cases check' until it has some)")
	var err error
	if r.Args, err = parseArgs(fs, args, 0, -1, ""); err != nil {
		return err
	}
	if *max < 1 {
		return usagef("--max must be at least 1")
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
	return gen.GenerateDir(ctx, r.Out, nil, controls.SuiteOptions{Options: controls.Options{Max: *max}, Out: e.stdout, Log: e.stderr})
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
	pos, err := parseArgs(fs, args[1:], 0, -1, "")
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
