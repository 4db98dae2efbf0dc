package regrade

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

// This file holds the work of 'evalctl regrade' and 'evalctl controls':
// the command line parses flags into these values and calls one function;
// mistakes in the options are *evalctl.UsageError.

// Request is what 'evalctl regrade' asks for.
type Request struct {
	Suite           string // suite directory to grade under (required)
	Concurrency     int    // attempts graded at once, at least 1
	AllowOtherSuite bool
	JSON            bool   // the result as JSON instead of text
	HostsFile       string // the Docker Engines to grade on ("": the local one)
}

// Check refuses a request without runs, without a suite or with no
// concurrency.
func (r Request) Check(dirs []string) error {
	switch {
	case len(dirs) == 0:
		return evalctl.Usagef("regrade needs at least one run directory")
	case r.Suite == "":
		return evalctl.Usagef("--suite DIR is required")
	case r.Concurrency < 1:
		return evalctl.Usagef("--concurrency must be at least 1")
	}
	return nil
}

// NewGrader builds the grader of a command, grading concurrency answers at
// once; the returned func releases it.
type NewGrader func(concurrency int) (Grader, func(), error)

// Regrade grades the stored answers of the runs in dirs again as r says,
// writes the result to stdout and progress to stderr; the error says what
// could not be regraded.
func Regrade(ctx context.Context, dirs []string, r Request, newGrader NewGrader, stdout, stderr io.Writer) error {
	if err := r.Check(dirs); err != nil {
		return err
	}
	s, err := tasks.LoadSuite(r.Suite)
	if err != nil {
		return err
	}
	g, done, err := newGrader(r.Concurrency)
	if err != nil {
		return err
	}
	defer done()
	res, err := Run(ctx, g, dirs, Options{Suite: s, AllowOtherSuite: r.AllowOtherSuite, Concurrency: r.Concurrency, Progress: stderr})
	if errors.Is(err, ErrSuiteName) {
		return evalctl.Usage(err)
	}
	if err != nil {
		return err
	}
	if r.JSON {
		err = writeJSON(stdout, res)
	} else {
		err = WriteText(stdout, res)
	}
	if err != nil {
		return err
	}
	return res.Err()
}

// DiagnoseRequest is what 'evalctl controls' asks for.
type DiagnoseRequest struct {
	Case        string   // the case to diagnose (required)
	Suites      []string // the original suite directory, then optionally the corrected one
	Answers     []string // run directories whose stored answers of the case are graded
	Concurrency int      // grades at once, at least 1
	JSON        bool     // the diagnosis as JSON instead of text
	// Out, when set, is a file that also receives the diagnosis as JSON
	// (the fixture diagnosis file 'evalctl summarize' reads), written
	// atomically whatever the printed format; Log is told its name.
	Out string
	Log io.Writer
}

// DiagnoseCommand checks r, diagnoses the case with the grader newGrader
// builds and writes the diagnosis to stdout; the error says what could not
// be graded.
func DiagnoseCommand(ctx context.Context, r DiagnoseRequest, newGrader NewGrader, stdout io.Writer) error {
	if r.Case == "" {
		return evalctl.Usagef("--case NAME is required")
	}
	if len(r.Suites) == 0 || len(r.Suites) > 2 {
		return evalctl.Usagef("give --suite once (original) or twice (original, then corrected); got %d", len(r.Suites))
	}
	if r.Concurrency < 1 {
		return evalctl.Usagef("--concurrency must be at least 1")
	}
	opts := DiagnoseOptions{Case: r.Case, Answers: r.Answers}
	for i, dir := range r.Suites {
		s, err := tasks.LoadSuite(dir)
		if err != nil {
			return err
		}
		if s.Case(r.Case) == nil {
			return evalctl.Usagef("suite %s (%s) has no case %q", s.ID(), dir, r.Case)
		}
		if i == 0 {
			opts.Original = s
		} else {
			opts.Corrected = s
		}
	}
	g, done, err := newGrader(r.Concurrency)
	if err != nil {
		return err
	}
	defer done()
	d, err := Diagnose(ctx, g, opts)
	if err != nil {
		return err
	}
	if r.Out != "" {
		if err := runstore.WriteAtomic(r.Out, 0o644, func(w io.Writer) error { return writeJSON(w, d) }); err != nil {
			return err
		}
		if r.Log != nil {
			fmt.Fprintf(r.Log, "wrote %s\n", r.Out)
		}
	}
	if r.JSON {
		err = writeJSON(stdout, d)
	} else {
		err = WriteDiagnosisText(stdout, d)
	}
	if err != nil {
		return err
	}
	return d.Err()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Bind defines the flags of 'evalctl regrade' that fill r.
func (r *Request) Bind(fs *flag.FlagSet) {
	fs.StringVar(&r.Suite, "suite", "", "suite directory to grade under (required); grades are added under its name@version")
	fs.IntVar(&r.Concurrency, "concurrency", 1, "attempts graded at once")
	fs.BoolVar(&r.AllowOtherSuite, "allow-other-suite", false, "regrade runs that ran under a suite of another name")
	fs.StringVar(&r.HostsFile, "sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (docs/sandbox-hosts.md); set --concurrency to their total capacity")
}

// Bind defines the flags of 'evalctl controls' that fill r.
func (r *DiagnoseRequest) Bind(fs *flag.FlagSet) {
	fs.StringVar(&r.Case, "case", "", "case to diagnose (required)")
	fs.Var((*list)(&r.Suites), "suite", "suite directory: first the original (A), then optionally the corrected version (B)")
	fs.Var((*list)(&r.Answers), "answers", "run directory whose stored answers of the case are graded (repeatable; further arguments are run directories too)")
	fs.IntVar(&r.Concurrency, "concurrency", 2, "grades run at once")
	fs.StringVar(&r.Out, "out", "", "also write the diagnosis as JSON to FILE, the fixture diagnosis file 'evalctl summarize' reads")
}

// list is a repeatable string flag.
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }

func (l *list) Set(v string) error {
	*l = append(*l, v)
	return nil
}
