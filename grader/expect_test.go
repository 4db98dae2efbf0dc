package grader_test

import (
	"strings"
	"testing"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/tasks"
)

// TestExpectJudgesEveryKind: the fixture gate's verdicts, on hand-made
// grades, including every way a variant can fail its expectation: an
// unsolved reference, a group without a declared test count, a solved
// starter, a starter passing acceptance, a control passing a group or a
// test id it declares. Extra failing groups are reported, not unmet.
func TestExpectJudgesEveryKind(t *testing.T) {
	declared := []*tasks.Group{
		{Name: "acceptance", Runner: tasks.RunnerPytest, Tests: 3, Required: true},
		{Name: "syntax", Runner: tasks.RunnerPyCompile, Required: true},
	}
	undeclared := []*tasks.Group{
		{Name: "acceptance", Runner: tasks.RunnerPytest, Required: true},
		{Name: "syntax", Runner: tasks.RunnerPyCompile, Required: true},
	}
	pass := grader.GroupResult{Name: "acceptance", Required: true, Passed: 3, Total: 3, Success: true}
	fail := grader.GroupResult{Name: "acceptance", Required: true, Passed: 1, Total: 3, Failed: 2, FailedTests: []string{"test_negative[0]", "test_zero"}}
	short := grader.GroupResult{Name: "acceptance", Required: true, Passed: 1, Total: 1, Declared: 3}
	syntax := grader.GroupResult{Name: "syntax", Required: true, Passed: 2, Total: 2, Success: true}
	syntaxFail := grader.GroupResult{Name: "syntax", Required: true, Passed: 1, Total: 2, Failed: 1}
	ctl := &tasks.Control{Name: "c", Phase: 1, MustFail: map[string][]string{"acceptance": {"test_negative"}}}
	tests := []struct {
		name    string
		v       grader.Variant
		g       grader.Grade
		met     bool
		problem string // a substring of the problems; "" when met
		extra   string
	}{
		{name: "solved reference", v: grader.Variant{Kind: grader.KindReference, Groups: declared},
			g: grader.Grade{Solved: true, Groups: []grader.GroupResult{pass, syntax}}, met: true},
		{name: "unsolved reference", v: grader.Variant{Kind: grader.KindReference, Groups: declared},
			g:       grader.Grade{Groups: []grader.GroupResult{fail, syntax}},
			problem: "reference is not solved: acceptance 1/3 failed [test_negative[0] test_zero]"},
		{name: "reference cut short", v: grader.Variant{Kind: grader.KindReference, Groups: declared},
			g:       grader.Grade{Groups: []grader.GroupResult{short, syntax}},
			problem: "(ran 1 of the 3 declared tests)"},
		{name: "reference without declared counts", v: grader.Variant{Kind: grader.KindReference, Groups: undeclared},
			g:       grader.Grade{Solved: true, Groups: []grader.GroupResult{pass, syntax}},
			problem: "group acceptance declares no test count: the reference ran 3 tests; add 'tests: 3'"},
		{name: "failing starter", v: grader.Variant{Kind: grader.KindStarter, Groups: undeclared},
			g: grader.Grade{Groups: []grader.GroupResult{fail, syntax}}, met: true},
		{name: "solved starter", v: grader.Variant{Kind: grader.KindStarter},
			g: grader.Grade{Solved: true, Groups: []grader.GroupResult{pass, syntax}}, problem: "untouched starter is solved"},
		{name: "starter passing acceptance", v: grader.Variant{Kind: grader.KindStarter},
			g: grader.Grade{Groups: []grader.GroupResult{pass, syntaxFail}}, problem: "untouched starter passes acceptance"},
		{name: "control failing what it declares", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: grader.Grade{Groups: []grader.GroupResult{fail, syntax}}, met: true},
		{name: "control failing more than it declares", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: grader.Grade{Groups: []grader.GroupResult{fail, syntaxFail}}, met: true, extra: "also fails syntax (1/2)"},
		{name: "control passing its group", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: grader.Grade{Groups: []grader.GroupResult{pass, syntax}}, problem: "passes acceptance (3/3)"},
		{name: "control passing a declared test id", v: grader.Variant{Kind: grader.KindControl,
			Control: &tasks.Control{Name: "c", Phase: 1, MustFail: map[string][]string{"acceptance": {"test_both_negative"}}}},
			g: grader.Grade{Groups: []grader.GroupResult{fail, syntax}}, problem: "passes acceptance test test_both_negative"},
		{name: "control whose group did not run", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: grader.Grade{Groups: []grader.GroupResult{syntax}}, problem: "group acceptance did not run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := grader.Expect(tt.v, &tt.g)
			if r.Met != tt.met {
				t.Fatalf("met=%v, want %v (problems %q)", r.Met, tt.met, r.Problems)
			}
			if got := strings.Join(r.Problems, "; "); tt.problem != "" && !strings.Contains(got, tt.problem) {
				t.Errorf("problems %q lack %q", got, tt.problem)
			}
			if got := strings.Join(r.Extra, "; "); got != tt.extra {
				t.Errorf("extra %q, want %q", got, tt.extra)
			}
		})
	}
}
