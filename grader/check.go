package grader

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Variant kinds graded by the fixture gate.
const (
	KindReference = "reference"
	KindStarter   = "starter"
	KindControl   = "control"
	// KindCase marks a row judging a case as a whole (its set of controls),
	// not one graded variant; its Grade is nil.
	KindCase = "case"
)

// Variant is a known answer to one phase of a case: its reference, the
// untouched starter, or a negative control.
type Variant struct {
	Name    string
	Kind    string
	Phase   int
	Control *tasks.Control
	Entries []sandbox.Entry
	// Groups are the phase's check groups, as the case declares them.
	Groups []*tasks.Group
}

// PhaseStart is the workspace as phase n begins when every earlier phase
// was answered by its reference: starter, then per phase its overlay and
// (before n) its reference.
func PhaseStart(c *tasks.Case, n int) ([]sandbox.Entry, error) {
	return phaseTree(c, n, true)
}

// Variants lists the reference and starter of every phase and every
// negative control of the case.
func Variants(c *tasks.Case) ([]Variant, error) {
	var out []Variant
	for _, p := range c.Phases {
		start, err := PhaseStart(c, p.Number)
		if err != nil {
			return nil, err
		}
		ref, err := sandbox.DirEntries(p.ReferenceDir, tasks.Ignored)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.Name, err)
		}
		out = append(out,
			Variant{Name: "reference", Kind: KindReference, Phase: p.Number, Entries: Overlay(start, ref), Groups: p.Groups},
			Variant{Name: "starter", Kind: KindStarter, Phase: p.Number, Entries: start, Groups: p.Groups})
		for _, ctl := range c.Controls {
			if ctl.Phase != p.Number {
				continue
			}
			over, err := sandbox.DirEntries(ctl.OverlayDir, tasks.Ignored)
			if err != nil {
				return nil, fmt.Errorf("case %s control %s: %w", c.Name, ctl.Name, err)
			}
			out = append(out, Variant{Name: ctl.Name, Kind: KindControl, Phase: p.Number, Control: ctl, Entries: Overlay(start, over), Groups: p.Groups})
		}
	}
	return out, nil
}

// CheckResult is one row of the fixture gate.
type CheckResult struct {
	Case    string         `json:"case"`
	Phase   int            `json:"phase"`
	Variant string         `json:"variant"`
	Kind    string         `json:"kind"`
	Grade   *evalctl.Grade `json:"grade"`
	// Met is whether the variant behaved as its kind requires.
	Met bool `json:"met"`
	// Problems say which expectation failed; Extra reports groups a control
	// fails beyond those it declares.
	Problems []string `json:"problems,omitempty"`
	Extra    []string `json:"extra,omitempty"`
}

// Expect judges a variant's grade: the reference must be solved, and every
// group that runs tests must declare how many (the grader's defence against
// a test process ended early with status 0); the starter must not be solved
// and must fail acceptance; a control must fail every group it declares and
// every test id it lists.
func Expect(v Variant, g *evalctl.Grade) CheckResult {
	r := CheckResult{Variant: v.Name, Kind: v.Kind, Phase: v.Phase, Case: g.Case, Grade: g}
	switch v.Kind {
	case KindReference:
		switch {
		case g.BlockedByBoundary():
			// Not the reference's failure: the boundary's (docs/boundary.md).
			r.Problems = append(r.Problems, "reference is ungraded: "+unsolvedWhy(g))
		case !g.Solved:
			r.Problems = append(r.Problems, "reference is not solved: "+unsolvedWhy(g))
		}
		for _, decl := range v.Groups {
			if decl.Tests != 0 || (decl.Runner != tasks.RunnerPytest && decl.Runner != tasks.RunnerNodeTest) {
				continue
			}
			n := "some"
			if gr := g.Group(decl.Name); gr != nil {
				n = fmt.Sprint(gr.Total)
			}
			r.Problems = append(r.Problems, fmt.Sprintf("group %s declares no test count: the reference ran %s tests; add 'tests: %s' to the group in case.yaml", decl.Name, n, n))
		}
	case KindStarter:
		if g.Solved {
			r.Problems = append(r.Problems, "untouched starter is solved")
		}
		if a := g.Group("acceptance"); a == nil || a.Success {
			r.Problems = append(r.Problems, "untouched starter passes acceptance")
		}
	case KindControl:
		declared := map[string]bool{}
		for group, ids := range v.Control.MustFail {
			declared[group] = true
			gr := g.Group(group)
			if gr == nil {
				r.Problems = append(r.Problems, fmt.Sprintf("group %s did not run", group))
				continue
			}
			if gr.Success {
				r.Problems = append(r.Problems, fmt.Sprintf("passes %s (%d/%d)", group, gr.Passed, gr.Total))
				continue
			}
			for _, id := range ids {
				if !failedID(gr, id) {
					r.Problems = append(r.Problems, fmt.Sprintf("passes %s test %s", group, id))
				}
			}
		}
		for _, gr := range g.Groups {
			if !gr.Success && !declared[gr.Name] {
				r.Extra = append(r.Extra, fmt.Sprintf("also fails %s (%d/%d)", gr.Name, gr.Passed, gr.Total))
			}
		}
	}
	sort.Strings(r.Problems)
	r.Met = len(r.Problems) == 0
	return r
}

// failedTest reports whether id is among the failed test ids; a bare name
// also matches its parametrised forms ("test_x" matches "test_x[0]").
func failedTest(failed []string, id string) bool {
	for _, f := range failed {
		if f == id || strings.HasPrefix(f, id+"[") {
			return true
		}
	}
	return false
}

func unsolvedWhy(g *evalctl.Grade) string {
	var why []string
	if g.ProtectedChangesCount > 0 {
		why = append(why, fmt.Sprintf("protected changes %v", g.ProtectedChanges))
	}
	if g.MissingStarterFilesCount > 0 {
		why = append(why, fmt.Sprintf("missing starter files %v", g.MissingStarterFiles))
	}
	for _, gr := range g.Groups {
		if gr.Required && !gr.Success {
			w := fmt.Sprintf("%s %d/%d failed %v", gr.Name, gr.Passed, gr.Total, gr.FailedTests)
			if gr.Declared != 0 && gr.Total != gr.Declared {
				w += fmt.Sprintf(" (ran %d of the %d declared tests)", gr.Total, gr.Declared)
			}
			if msg := UnrepresentableMessage(gr.Unrepresentable); msg != "" {
				w += "; " + msg
			}
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// CheckCases grades every variant of the given cases (all at once, bounded
// by the grader's concurrency) and judges each. Results come back in the
// order of cases, phases and variants; see CheckCasesWith.
func (g *Grader) CheckCases(ctx context.Context, s *tasks.Suite, cases []*tasks.Case) ([]CheckResult, error) {
	return g.CheckCasesWith(ctx, s, cases, CheckOptions{})
}

// JudgeControls judges each case's set of negative controls from the
// graded variants: a case needs at least two, and at least one plausible
// wrong answer of the kind a capable model writes, one that passes the
// public tests (and changes no protected file) yet fails what it declares.
// Without one, the checks are only shown to catch answers the public
// tests catch already. It returns one row per case, Kind KindCase.
func JudgeControls(cases []*tasks.Case, results []CheckResult) []CheckResult {
	var out []CheckResult
	for _, c := range cases {
		r := CheckResult{Case: c.Name, Variant: "controls", Kind: KindCase}
		var plausible []string
		for _, res := range results {
			if res.Case != c.Name || res.Kind != KindControl || res.Grade == nil {
				continue
			}
			if res.Met && res.Grade.ProtectedChangesCount == 0 && Plausible(res.Grade) {
				plausible = append(plausible, res.Variant)
			}
		}
		if n := len(c.Controls); n < 2 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d negative control(s); a case needs at least 2", n))
		}
		if len(plausible) == 0 {
			r.Problems = append(r.Problems, "no plausible control: add a wrong answer that passes the public tests (in a phase without public tests: passes part of acceptance) and misses an edge the contract states")
		} else {
			r.Extra = append(r.Extra, "plausible: "+strings.Join(plausible, ", "))
		}
		r.Met = len(r.Problems) == 0
		out = append(out, r)
	}
	return out
}
