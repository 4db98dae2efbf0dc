package grader_test

import (
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
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
	pass := evalctl.GroupResult{Name: "acceptance", Required: true, Passed: 3, Total: 3, Success: true}
	fail := evalctl.GroupResult{Name: "acceptance", Required: true, Passed: 1, Total: 3, Failed: 2, FailedTests: []string{"test_negative[0]", "test_zero"}}
	short := evalctl.GroupResult{Name: "acceptance", Required: true, Passed: 1, Total: 1, Declared: 3}
	syntax := evalctl.GroupResult{Name: "syntax", Required: true, Passed: 2, Total: 2, Success: true}
	syntaxFail := evalctl.GroupResult{Name: "syntax", Required: true, Passed: 1, Total: 2, Failed: 1}
	ctl := &tasks.Control{Name: "c", Phase: 1, MustFail: map[string][]string{"acceptance": {"test_negative"}}}
	tests := []struct {
		name    string
		v       grader.Variant
		g       evalctl.Grade
		met     bool
		problem string // a substring of the problems; "" when met
		extra   string
	}{
		{name: "solved reference", v: grader.Variant{Kind: grader.KindReference, Groups: declared},
			g: evalctl.Grade{Solved: true, Groups: []evalctl.GroupResult{pass, syntax}}, met: true},
		{name: "unsolved reference", v: grader.Variant{Kind: grader.KindReference, Groups: declared},
			g:       evalctl.Grade{Groups: []evalctl.GroupResult{fail, syntax}},
			problem: "reference is not solved: acceptance 1/3 failed [test_negative[0] test_zero]"},
		{name: "reference cut short", v: grader.Variant{Kind: grader.KindReference, Groups: declared},
			g:       evalctl.Grade{Groups: []evalctl.GroupResult{short, syntax}},
			problem: "(ran 1 of the 3 declared tests)"},
		{name: "reference without declared counts", v: grader.Variant{Kind: grader.KindReference, Groups: undeclared},
			g:       evalctl.Grade{Solved: true, Groups: []evalctl.GroupResult{pass, syntax}},
			problem: "group acceptance declares no test count: the reference ran 3 tests; add 'tests: 3'"},
		{name: "failing starter", v: grader.Variant{Kind: grader.KindStarter, Groups: undeclared},
			g: evalctl.Grade{Groups: []evalctl.GroupResult{fail, syntax}}, met: true},
		{name: "solved starter", v: grader.Variant{Kind: grader.KindStarter},
			g: evalctl.Grade{Solved: true, Groups: []evalctl.GroupResult{pass, syntax}}, problem: "untouched starter is solved"},
		{name: "starter passing acceptance", v: grader.Variant{Kind: grader.KindStarter},
			g: evalctl.Grade{Groups: []evalctl.GroupResult{pass, syntaxFail}}, problem: "untouched starter passes acceptance"},
		{name: "control failing what it declares", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: evalctl.Grade{Groups: []evalctl.GroupResult{fail, syntax}}, met: true},
		{name: "control failing more than it declares", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: evalctl.Grade{Groups: []evalctl.GroupResult{fail, syntaxFail}}, met: true, extra: "also fails syntax (1/2)"},
		{name: "control passing its group", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: evalctl.Grade{Groups: []evalctl.GroupResult{pass, syntax}}, problem: "passes acceptance (3/3)"},
		{name: "control passing a declared test id", v: grader.Variant{Kind: grader.KindControl,
			Control: &tasks.Control{Name: "c", Phase: 1, MustFail: map[string][]string{"acceptance": {"test_both_negative"}}}},
			g: evalctl.Grade{Groups: []evalctl.GroupResult{fail, syntax}}, problem: "passes acceptance test test_both_negative"},
		{name: "control whose group did not run", v: grader.Variant{Kind: grader.KindControl, Control: ctl},
			g: evalctl.Grade{Groups: []evalctl.GroupResult{syntax}}, problem: "group acceptance did not run"},
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

// TestJudgeControls: a case needs two negative controls, one of them
// plausible (passes the public tests, changes no protected file, fails what
// it declares); the row names the plausible ones.
func TestJudgeControls(t *testing.T) {
	pub := func(ok bool) evalctl.GroupResult {
		return evalctl.GroupResult{Name: "public", Required: true, Passed: 1, Total: 1, Success: ok}
	}
	row := func(name string, publicOK bool, protected int, met bool) grader.CheckResult {
		return grader.CheckResult{Case: "c", Kind: grader.KindControl, Variant: name, Met: met,
			Grade: &evalctl.Grade{ProtectedChangesCount: protected, Groups: []evalctl.GroupResult{pub(publicOK)}}}
	}
	// acc is a control graded in a phase without a public group.
	acc := func(name string, passed, total int) grader.CheckResult {
		return grader.CheckResult{Case: "c", Kind: grader.KindControl, Variant: name, Met: true,
			Grade: &evalctl.Grade{Groups: []evalctl.GroupResult{{Name: "acceptance", Required: true, Passed: passed, Failed: total - passed, Total: total, Success: passed == total}}}}
	}
	two := &tasks.Case{Name: "c", Controls: []*tasks.Control{{Name: "a"}, {Name: "b"}}}
	one := &tasks.Case{Name: "c", Controls: []*tasks.Control{{Name: "a"}}}
	tests := []struct {
		name    string
		c       *tasks.Case
		results []grader.CheckResult
		met     bool
		problem string
		extra   string
	}{
		{"one plausible of two", two, []grader.CheckResult{row("a", true, 0, true), row("b", false, 0, true)}, true, "", "plausible: a"},
		{"none passes public", two, []grader.CheckResult{row("a", false, 0, true), row("b", false, 0, true)}, false, "no plausible control", ""},
		{"passing public by changing a protected file is not plausible", two, []grader.CheckResult{row("a", true, 1, true), row("b", false, 0, true)}, false, "no plausible control", ""},
		{"a control that misses its expectation is not plausible", two, []grader.CheckResult{row("a", true, 0, false), row("b", false, 0, true)}, false, "no plausible control", ""},
		{"hidden-only phase: passing part of acceptance is plausible", two, []grader.CheckResult{acc("a", 2, 3), acc("b", 0, 3)}, true, "", "plausible: a"},
		{"hidden-only phase: failing every acceptance test is not plausible", two, []grader.CheckResult{acc("a", 0, 3), acc("b", 0, 3)}, false, "no plausible control", ""},
		{"too few controls", one, []grader.CheckResult{row("a", true, 0, true)}, false, "1 negative control(s); a case needs at least 2", "plausible: a"},
		{"rows of other cases do not count", two, []grader.CheckResult{{Case: "d", Kind: grader.KindControl, Variant: "x", Met: true,
			Grade: &evalctl.Grade{Groups: []evalctl.GroupResult{pub(true)}}}}, false, "no plausible control", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := grader.JudgeControls([]*tasks.Case{tt.c}, tt.results)
			if len(rows) != 1 || rows[0].Kind != grader.KindCase || rows[0].Case != "c" || rows[0].Grade != nil {
				t.Fatalf("rows %+v, want one case row", rows)
			}
			r := rows[0]
			if r.Met != tt.met || !strings.Contains(strings.Join(r.Problems, "; "), tt.problem) || strings.Join(r.Extra, "; ") != tt.extra {
				t.Errorf("met=%v problems %q extra %q; want met=%v, %q, %q", r.Met, r.Problems, r.Extra, tt.met, tt.problem, tt.extra)
			}
		})
	}
}
