package grader

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// CheckOptions tune a fixture gate run.
type CheckOptions struct {
	// Run labels every grading container of this gate run; give each run
	// its own, so that two gates never prune or count each other's
	// containers ("cases-check" when empty).
	Run string
	// Retries is how many times a variant whose grading failed for an
	// infrastructure reason (the sandbox, not the answer) is graded again.
	Retries int
	// OnResult, when set, is called with each variant's row as soon as it
	// is judged (from several goroutines, one call at a time), so a long
	// gate shows progress.
	OnResult func(CheckResult)
}

// InfraError is a variant whose grading failed for a reason outside the
// answer (the sandbox, Docker) after every retry; its row is unmet with
// the error, and the other variants keep their results.
type InfraError struct {
	Case, Variant string
	Phase         int
	Err           error
}

func (e *InfraError) Error() string {
	return fmt.Sprintf("%s phase %d %s: %v", e.Case, e.Phase, e.Variant, e.Err)
}

func (e *InfraError) Unwrap() error { return e.Err }

// CheckCasesWith is CheckCases with options. A variant whose grading
// still fails after the retries gets an unmet row saying so (Grade nil)
// and the error is returned, joined with the others, as *InfraError
// values; every other row is complete.
func (g *Grader) CheckCasesWith(ctx context.Context, s *tasks.Suite, cases []*tasks.Case, opt CheckOptions) ([]CheckResult, error) {
	if opt.Run == "" {
		opt.Run = "cases-check"
	}
	type job struct {
		c *tasks.Case
		v Variant
	}
	var jobs []job
	for _, c := range cases {
		vs, err := Variants(c)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			jobs = append(jobs, job{c, v})
		}
	}
	results := make([]CheckResult, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := sandbox.NewSnapshot(j.v.Entries)
			if err != nil {
				errs[i] = err
				return
			}
			var gr *evalctl.Grade
			for try := 0; try <= opt.Retries; try++ {
				gr, err = g.Grade(ctx, s, j.c, j.v.Phase, snap, Labels{Run: opt.Run})
				if err == nil || ctx.Err() != nil {
					break
				}
			}
			if err != nil {
				ie := &InfraError{Case: j.c.Name, Variant: j.v.Name, Phase: j.v.Phase, Err: err}
				errs[i] = ie
				results[i] = CheckResult{Case: j.c.Name, Phase: j.v.Phase, Variant: j.v.Name, Kind: j.v.Kind,
					Problems: []string{fmt.Sprintf("infrastructure error after %d tries: %v", opt.Retries+1, err)}}
			} else {
				results[i] = Expect(j.v, gr)
			}
			if opt.OnResult != nil {
				mu.Lock()
				opt.OnResult(results[i])
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	vs := make([]Variant, len(jobs))
	for i, j := range jobs {
		vs[i] = j.v
	}
	checkControlIDs(results, vs)
	return results, errors.Join(errs...)
}
