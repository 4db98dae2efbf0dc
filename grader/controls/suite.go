package controls

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/tasks"
)

// SuiteOptions tune GenerateSuite.
type SuiteOptions struct {
	Options
	// DryRun reports the mutation scores and survivors and writes no
	// control.
	DryRun bool
	// Out receives each case phase's summary as it finishes; Log the
	// cases skipped and the failures.
	Out, Log io.Writer
}

// GenerateSuite generates controls for the named cases of s (all it can
// mutate when none is named: the others are logged and skipped; a named
// one that does not exist is a *NoCaseError), cases at once (the grader
// bounds the grades in flight, so one case's mutating container overlaps
// another's grades), prints each case phase's mutation score as it
// finishes, and writes the kept controls unless DryRun. Every case that
// fails is logged and named in the error; the others still get their
// controls.
func (gen *Generator) GenerateSuite(ctx context.Context, s *tasks.Suite, names []string, opt SuiteOptions) error {
	var cases []*tasks.Case
	if len(names) > 0 {
		for _, n := range names {
			c := s.Case(n)
			if c == nil {
				return &NoCaseError{Suite: s.ID(), Case: n}
			}
			cases = append(cases, c)
		}
	} else {
		for _, c := range s.Cases {
			if !Mutates(c.Language) {
				fmt.Fprintf(opt.Log, "%s: skipped: references in %s are not mutated\n", c.Name, c.Language)
				continue
			}
			cases = append(cases, c)
		}
	}
	o := opt.Options
	if opt.DryRun {
		o.Keep = 0
	}
	o.Labels = grader.Labels{Run: grader.RunLabel("cases-controls")}
	var failed []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps, err := gen.Generate(ctx, s, c, o)
			if err == nil && !opt.DryRun {
				err = Write(c, reps)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fmt.Fprintf(opt.Log, "%s: %v\n", c.Name, err)
				failed = append(failed, c.Name)
				return
			}
			for _, r := range reps {
				fmt.Fprintln(opt.Out, Summary(r))
				var kept, plausible []string
				for _, m := range r.Kept() {
					kept = append(kept, m.ID)
					if m.Plausible {
						plausible = append(plausible, m.ID)
					}
				}
				if !opt.DryRun {
					fmt.Fprintf(opt.Out, "  controls written: %s (plausible: %s)\n", orNone(kept), orNone(plausible))
				}
			}
		}()
	}
	wg.Wait()
	sort.Strings(failed)
	if len(failed) > 0 {
		return &SuiteError{Failed: failed, Cases: len(cases)}
	}
	return nil
}

// SuiteError names the cases whose control generation failed.
type SuiteError struct {
	Failed []string
	Cases  int
}

func (e *SuiteError) Error() string {
	return fmt.Sprintf("control generation failed for %d of %d cases: %s", len(e.Failed), e.Cases, strings.Join(e.Failed, ", "))
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}
