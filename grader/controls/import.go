package controls

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

// ImportRequest is 'evalctl cases import': the suite side's request (where
// the exercises are, how to lay them out) and the grader's part of it (how
// many grades at once, the controls to generate).
type ImportRequest struct {
	importer.Request
	Concurrency int  // grades at once, at least 1
	Max         int  // mutants graded per case phase when generating controls, at least 1
	NoControls  bool // generate no negative controls
}

// Bind defines the flags of 'evalctl cases import' that fill r.
func (r *ImportRequest) Bind(fs *flag.FlagSet) {
	r.Request.Bind(fs)
	fs.IntVar(&r.Concurrency, "concurrency", 2, "grades run at once")
	fs.IntVar(&r.Max, "max", 24, "mutants graded per case phase when generating controls (spread over all made)")
	fs.BoolVar(&r.NoControls, "no-controls", false, "do not generate negative controls (the suite then fails 'cases check' until it has some)")
}

// Import is 'evalctl cases import': it writes the new suite, fills in each
// case's test count by running its reference in the sandbox image on the
// local engine, and generates the negative controls (unless r.NoControls).
func Import(ctx context.Context, r ImportRequest, stdout, stderr io.Writer) error {
	if r.Max < 1 {
		return evalctl.Usagef("--max must be at least 1")
	}
	if r.Concurrency < 1 {
		return evalctl.Usagef("--concurrency must be at least 1")
	}
	im, err := importer.Prepare(r.Request)
	if err != nil {
		return err
	}
	if err := im.Write(stderr); err != nil {
		return err
	}
	gen, done, err := Connect(ctx, r.Concurrency, stderr)
	if err != nil {
		return err
	}
	defer done()
	counts, refused, err := FillCounts(ctx, gen.Grader, im.Out, im.Exercises, grader.Labels{Run: grader.RunLabel("cases-import")})
	if err != nil {
		return err
	}
	// An exercise whose reference does not pass is left out; the others
	// are imported, and the table says which and why.
	if err := im.Drop(refused); err != nil {
		return err
	}
	im.WriteTable(stdout, counts)
	if len(im.Exercises) == 0 {
		return fmt.Errorf("import: no exercise of %s could be imported (see the table)", r.Args[1])
	}
	fmt.Fprintf(stdout, "imported %d of %d %s exercises into %s in %.1fs\n", len(im.Exercises), len(im.Exercises)+len(im.Refused), im.Adapter.Name(), im.Out, time.Since(im.Start).Seconds())
	if r.NoControls {
		return nil
	}
	return gen.GenerateDir(ctx, r.Out, nil, SuiteOptions{Options: Options{Max: r.Max}, Out: stdout, Log: stderr})
}

// FillCounts grades the reference of every exercise Write laid out in out
// (all at once; the grader bounds how many run) and rewrites each case.yaml
// with the number of acceptance tests the reference ran (counts, by case).
// A reference that does not pass is refused, naming the exercise and why;
// the others still get their counts. err is what stopped the grading
// (the engine), never a reference's failure.
func FillCounts(ctx context.Context, g Grader, out string, exs []*importer.Exercise, labels grader.Labels) (counts map[string]int, refused []*importer.Refusal, err error) {
	s, err := tasks.LoadSuite(out)
	if err != nil {
		return nil, nil, fmt.Errorf("import: the written suite does not load: %w", err)
	}
	got := make([]int, len(exs))
	errs := make([]error, len(exs))
	var wg sync.WaitGroup
	for i, ex := range exs {
		c := s.Case(ex.Name)
		if c == nil {
			return nil, nil, fmt.Errorf("import: case %s missing from %s", ex.Name, out)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = fillOne(ctx, g, s, c, ex, labels)
		}()
	}
	wg.Wait()
	counts = map[string]int{}
	var stop []error
	for i, ex := range exs {
		var r *importer.Refusal
		switch {
		case errs[i] == nil:
			counts[ex.Name] = got[i]
		case errors.As(errs[i], &r):
			refused = append(refused, r)
		default:
			stop = append(stop, errs[i])
		}
	}
	return counts, refused, errors.Join(stop...)
}

func fillOne(ctx context.Context, g Grader, s *tasks.Suite, c *tasks.Case, ex *importer.Exercise, labels grader.Labels) (int, error) {
	start, err := grader.PhaseStart(c, 1)
	if err != nil {
		return 0, err
	}
	ref, err := sandbox.DirEntries(c.Phases[0].ReferenceDir, tasks.Ignored)
	if err != nil {
		return 0, err
	}
	snap, err := sandbox.NewSnapshot(grader.Overlay(start, ref))
	if err != nil {
		return 0, err
	}
	gr, err := g.Grade(ctx, s, c, 1, snap, labels)
	if err != nil {
		return 0, fmt.Errorf("import %s: grade the reference: %w", ex.Source, err)
	}
	acc := gr.Group("acceptance")
	if acc == nil || !gr.Solved {
		why := "acceptance did not run"
		if acc != nil {
			why = fmt.Sprintf("acceptance %d/%d, failed %v, exit %d", acc.Passed, acc.Total, acc.FailedTests, acc.ExitCode)
			if msg := grader.UnrepresentableMessage(acc.Unrepresentable); msg != "" {
				why += "; " + msg
			}
			if syn := gr.Group("syntax"); syn != nil && !syn.Success {
				why += "; syntax fails"
			}
		}
		verdict := "is not solved"
		if gr.BlockedByBoundary() {
			// The boundary's failure, not the example's (docs/boundary.md).
			verdict = "is ungraded"
		}
		return 0, &importer.Refusal{Name: ex.Name, Source: ex.Source, Err: fmt.Errorf("the reference (the example) %s: %s", verdict, why)}
	}
	return acc.Total, os.WriteFile(filepath.Join(c.Dir, tasks.CaseFile), importer.CaseYAML(ex, map[string]int{"acceptance": acc.Total}), 0o644)
}
