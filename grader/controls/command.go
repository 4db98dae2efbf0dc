package controls

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// This file holds the work of 'evalctl cases check' and 'cases controls
// generate': the command line parses flags into these values and calls one
// function; mistakes in the options are *evalctl.UsageError.

// CheckOptions are the choices of 'cases check'.
type CheckOptions struct {
	Suite       string   // suite directory; "": the default suite (tasks.LoadDefault)
	Cases       []string // cases to check; none: all
	Concurrency int      // grades at once, at least 1
	Retries     int      // regrades of an infrastructure failure, at least 0
	JSON        bool     // JSON instead of a table
	HostsFile   string   // the Docker Engines to grade on ("": the local one)
}

// Check runs the fixture gate as o says: the cases that do not load are
// reported BROKEN on stderr, the gate's table (or JSON) goes to stdout, and
// the error says what was not met. newGrader builds the grader, only when
// some case is to be graded; the returned func releases it.
func Check(ctx context.Context, o CheckOptions, newGrader func(conc int) (*grader.Grader, func(), error), stdout, stderr io.Writer) error {
	if o.Concurrency < 1 {
		return evalctl.Usagef("--concurrency must be at least 1")
	}
	if o.Retries < 0 {
		return evalctl.Usagef("--retries must be at least 0")
	}
	s, broken, err := tasks.LoadDefaultPartial(o.Suite)
	if err != nil {
		return err
	}
	cases, reported, err := Select(s, broken, o.Cases)
	if err != nil {
		return usageIfNoCase(err)
	}
	for _, b := range reported {
		fmt.Fprintf(stderr, "BROKEN %v\n", b)
	}
	var g *grader.Grader
	if len(cases) > 0 {
		var done func()
		if g, done, err = newGrader(o.Concurrency); err != nil {
			return err
		}
		defer done()
	}
	gate, err := RunGate(ctx, g, s, cases, reported, GateOptions{Retries: o.Retries, Concurrency: o.Concurrency, Progress: stderr})
	if err != nil {
		return err
	}
	if o.JSON {
		err = gate.WriteJSON(stdout)
	} else {
		err = gate.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	if msg := gate.Failure(); msg != "" {
		return errors.New(msg)
	}
	return gate.Infra
}

// CheckLimits refuses generation limits below 1 (the flags of 'cases
// controls generate').
func CheckLimits(concurrency int, o Options) error {
	if concurrency < 1 || o.Max < 1 || o.Keep < 1 {
		return evalctl.Usagef("--concurrency, --max and --keep must be at least 1")
	}
	return nil
}

// GenerateDir generates controls for the named cases of the suite in dir
// (all when none is named) like GenerateSuite and, when it wrote them,
// tells on opt.Out that the suite changed and how to check it.
func (gen *Generator) GenerateDir(ctx context.Context, dir string, names []string, opt SuiteOptions) error {
	s, err := tasks.LoadSuite(dir)
	if err != nil {
		return err
	}
	err = gen.GenerateSuite(ctx, s, names, opt)
	if err == nil && !opt.DryRun {
		fmt.Fprintf(opt.Out, "the suite changed: its fingerprint is new; run 'evalctl cases check --suite %s'\n", dir)
	}
	return usageIfNoCase(err)
}

// usageIfNoCase makes naming a case the suite lacks a usage error.
func usageIfNoCase(err error) error {
	var nc *NoCaseError
	if errors.As(err, &nc) {
		return evalctl.Usage(err)
	}
	return err
}

// SuiteHelp says what a --suite flag defaulting to "" means: ./cases in a
// checkout, the built-in suite elsewhere.
const SuiteHelp = "suite directory (default: ./cases when it holds a suite, else the suite built into evalctl)"

// Bind defines the flags of 'evalctl cases check' that fill o.
func (o *CheckOptions) Bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Suite, "suite", "", SuiteHelp)
	fs.IntVar(&o.Concurrency, "concurrency", 2, "grades run at once")
	fs.IntVar(&o.Retries, "retries", 1, "times a variant whose grading failed for an infrastructure reason is graded again")
	fs.StringVar(&o.HostsFile, "sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (docs/sandbox-hosts.md)")
}

// Bind defines the flags of 'evalctl cases controls generate' that fill o.
func (o *SuiteOptions) Bind(fs *flag.FlagSet) {
	fs.IntVar(&o.Max, "max", 24, "mutants graded per case phase (spread over all made)")
	fs.IntVar(&o.Keep, "keep", 3, "controls kept per case phase")
	fs.BoolVar(&o.DryRun, "dry-run", false, "report the mutation score and survivors; write nothing")
}

// Connect connects to the local Docker Engine, builds the sandbox image if
// needed (saying so on log), and returns a control generator whose grader
// grades conc variants at once; the returned func releases the engine.
func Connect(ctx context.Context, conc int, log io.Writer) (*Generator, func(), error) {
	eng, img, err := sandbox.ConnectImage(ctx, log)
	if err != nil {
		return nil, nil, err
	}
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: conc})
	return &Generator{Engine: eng, Image: img.Ref, Grader: g}, func() { eng.Close() }, nil
}
