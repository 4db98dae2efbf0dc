package controls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/tasks"
)

// NoCaseError is a case name the suite does not hold.
type NoCaseError struct{ Suite, Case string }

func (e *NoCaseError) Error() string { return fmt.Sprintf("suite %s has no case %q", e.Suite, e.Case) }

// Select picks the named cases of a partly loaded suite (all when no name
// is given) and the load errors ('broken') among them. A name that is
// neither a case nor a broken case is a *NoCaseError.
func Select(s *tasks.Suite, broken []*tasks.CaseError, names []string) ([]*tasks.Case, []*tasks.CaseError, error) {
	if len(names) == 0 {
		return s.Cases, broken, nil
	}
	var cases []*tasks.Case
	var reported []*tasks.CaseError
	for _, name := range names {
		c := s.Case(name)
		found := c != nil
		if c != nil {
			cases = append(cases, c)
		}
		for _, b := range broken {
			if b.Case == name {
				reported = append(reported, b)
				found = true
			}
		}
		if !found {
			return nil, nil, &NoCaseError{Suite: s.ID(), Case: name}
		}
	}
	return cases, reported, nil
}

// GateOptions tune a fixture gate.
type GateOptions struct {
	// Retries is how many times a variant whose grading failed for an
	// infrastructure reason is graded again.
	Retries int
	// Concurrency is the grader's; the summary line states it.
	Concurrency int
	// Progress receives a line per variant as it is judged (nil: none).
	Progress io.Writer
}

// Gate is the outcome of the fixture gate over some cases of a suite:
// every variant's row, each case's controls as a whole, and the cases that
// did not load.
type Gate struct {
	Suite       *tasks.Suite
	Cases       []*tasks.Case
	Broken      []*tasks.CaseError
	Results     []grader.CheckResult
	Concurrency int
	Duration    time.Duration
	// Infra joins the variants whose grading failed for an infrastructure
	// reason after every retry (*grader.InfraError); their rows are unmet.
	Infra error
}

// RunGate grades every variant of the cases with g (unused when there is
// no case) and judges each case's controls. An error other than an
// infrastructure one ends the gate; infrastructure errors are in Infra.
func RunGate(ctx context.Context, g *grader.Grader, s *tasks.Suite, cases []*tasks.Case, broken []*tasks.CaseError, opt GateOptions) (*Gate, error) {
	gt := &Gate{Suite: s, Cases: cases, Broken: broken, Concurrency: opt.Concurrency}
	start := time.Now()
	if len(cases) > 0 {
		n, total := 0, 0
		for _, c := range cases {
			vs, _ := grader.Variants(c)
			total += len(vs)
		}
		results, err := g.CheckCasesWith(ctx, s, cases, grader.CheckOptions{
			Run: grader.RunLabel("cases-check"), Retries: opt.Retries,
			OnResult: func(r grader.CheckResult) {
				n++
				if opt.Progress != nil {
					fmt.Fprintf(opt.Progress, "[%d/%d %.0fs] %s phase %d %s: %s\n", n, total, time.Since(start).Seconds(), r.Case, r.Phase, r.Variant, verdict(r, false))
				}
			},
		})
		var ie *grader.InfraError
		if err != nil && !errors.As(err, &ie) {
			return nil, err
		}
		gt.Infra = err
		gt.Results = append(results, grader.JudgeControls(cases, results)...)
	}
	gt.Duration = time.Since(start)
	return gt, nil
}

// Unmet is the number of rows whose expectation was not met.
func (gt *Gate) Unmet() int {
	n := 0
	for _, r := range gt.Results {
		if !r.Met {
			n++
		}
	}
	return n
}

// Failure says why the gate failed (unmet expectations or broken cases),
// or "" when it did not.
func (gt *Gate) Failure() string {
	if f := gt.Unmet(); f > 0 || len(gt.Broken) > 0 {
		return fmt.Sprintf("%d of %d fixture expectations unmet, %d cases broken", f, len(gt.Results), len(gt.Broken))
	}
	return ""
}

// WriteJSON writes the rows, the broken cases and the recorded mutation
// reports.
func (gt *Gate) WriteJSON(w io.Writer) error {
	type brokenRow struct {
		Case  string `json:"case"`
		Error string `json:"error"`
	}
	rows := []brokenRow{}
	for _, b := range gt.Broken {
		rows = append(rows, brokenRow{b.Case, b.Err.Error()})
	}
	mutation := map[string][]*Report{}
	for _, c := range gt.Cases {
		if reps, err := ReadReports(c); err == nil && reps != nil {
			mutation[c.Name] = reps
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"results": gt.Results, "broken_cases": rows, "mutation": mutation})
}

// WriteTable writes a row per variant and case, the mutation scores
// 'cases controls generate' recorded, the broken cases and a summary line.
func (gt *Gate) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CASE\tPHASE\tVARIANT\tGROUPS (passed/total)\tSOLVED\tEXPECTATION\n")
	for _, r := range gt.Results {
		if r.Grade == nil { // a case as a whole
			fmt.Fprintf(tw, "%s\t-\t%s\t\t-\t%s\n", r.Case, r.Variant, verdict(r, true))
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
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%v\t%s\n", r.Case, r.Phase, r.Variant, strings.Join(groups, ", "), r.Grade.Solved, verdict(r, true))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first := true
	for _, c := range gt.Cases {
		reps, err := ReadReports(c)
		if err != nil {
			fmt.Fprintf(w, "%s: %v\n", c.Name, err)
			continue
		}
		for _, r := range reps {
			if first {
				fmt.Fprintln(w, "\nmutation scores (recorded by 'cases controls generate'):")
				first = false
			}
			fmt.Fprintln(w, "  "+Summary(r))
		}
	}
	for _, b := range gt.Broken {
		fmt.Fprintf(w, "BROKEN %v\n", b)
	}
	_, err := fmt.Fprintf(w, "\n%s (%s): %d variants and %d cases judged, %d expectations unmet, %d cases broken, %.1fs with concurrency %d\n",
		gt.Suite.ID(), gt.Suite.Fingerprint[:16], len(gt.Results)-len(gt.Cases), len(gt.Cases), gt.Unmet(), len(gt.Broken), gt.Duration.Seconds(), gt.Concurrency)
	return err
}

func verdict(r grader.CheckResult, extra bool) string {
	v := "met"
	if !r.Met {
		v = "UNMET: " + strings.Join(r.Problems, "; ")
	}
	if extra && len(r.Extra) > 0 {
		v += " (" + strings.Join(r.Extra, "; ") + ")"
	}
	return v
}
