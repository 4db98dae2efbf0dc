package importer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Grader grades an answer; *grader.Grader satisfies it.
type Grader interface {
	Grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels grader.Labels) (*evalctl.Grade, error)
}

// FillCounts grades the reference of every exercise Write laid out in out
// (all at once; the grader bounds how many run) and rewrites each case.yaml
// with the number of acceptance tests the reference ran. A reference that
// does not pass is an error naming the exercise; every such exercise is
// reported, and the others still get their counts.
func FillCounts(ctx context.Context, g Grader, out string, exs []*Exercise, labels grader.Labels) error {
	s, err := tasks.LoadSuite(out)
	if err != nil {
		return fmt.Errorf("import: the written suite does not load: %w", err)
	}
	errs := make([]error, len(exs))
	var wg sync.WaitGroup
	for i, ex := range exs {
		c := s.Case(ex.Name)
		if c == nil {
			return fmt.Errorf("import: case %s missing from %s", ex.Name, out)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fillOne(ctx, g, s, c, ex, labels)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func fillOne(ctx context.Context, g Grader, s *tasks.Suite, c *tasks.Case, ex *Exercise, labels grader.Labels) error {
	start, err := grader.PhaseStart(c, 1)
	if err != nil {
		return err
	}
	ref, err := sandbox.DirEntries(c.Phases[0].ReferenceDir, tasks.Ignored)
	if err != nil {
		return err
	}
	snap, err := sandbox.NewSnapshot(grader.Overlay(start, ref))
	if err != nil {
		return err
	}
	gr, err := g.Grade(ctx, s, c, 1, snap, labels)
	if err != nil {
		return fmt.Errorf("import %s: grade the reference: %w", ex.Source, err)
	}
	acc := gr.Group("acceptance")
	if acc == nil || !gr.Solved {
		why := "acceptance did not run"
		if acc != nil {
			why = fmt.Sprintf("acceptance %d/%d, failed %v, exit %d", acc.Passed, acc.Total, acc.FailedTests, acc.ExitCode)
			if syn := gr.Group("syntax"); syn != nil && !syn.Success {
				why += "; syntax fails"
			}
		}
		return fmt.Errorf("import %s: the reference (the example) is not solved: %s", ex.Source, why)
	}
	return os.WriteFile(filepath.Join(c.Dir, tasks.CaseFile), CaseYAML(ex, map[string]int{"acceptance": acc.Total}), 0o644)
}
