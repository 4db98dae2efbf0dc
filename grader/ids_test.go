package grader

import (
	"reflect"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// report is a pytest JUnit report: two classes defining test_empty (one
// failing), a parametrised test, and a module that failed to import.
const report = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="2" skipped="0" tests="6">
<testcase classname="test_p" name="test_q[1.5]"><failure message="x"/></testcase>
<testcase classname="test_p" name="test_q[2]"/>
<testcase classname="test_p.TestA" name="test_empty"><failure message="x"/></testcase>
<testcase classname="test_p.TestB" name="test_empty"/>
<testcase classname="leap_test.LeapTest" name="test_year"/>
<testcase classname="" name="other_test"><error message="collection failure">ImportError while importing test module '/checks/other_test.py'.
Traceback:
other_test.py:1: in &lt;module&gt;
    from solution import x
E   ImportError: cannot import name 'x' from 'solution' (unknown location)</error></testcase>
</testsuite></testsuites>`

func TestJUnitIDs(t *testing.T) {
	all, failed, coll := JUnitIDs([]byte(report))
	wantAll := []string{"test_p.test_q[1.5]", "test_p.test_q[2]", "test_p.TestA.test_empty", "test_p.TestB.test_empty", "leap_test.LeapTest.test_year"}
	if !reflect.DeepEqual(all, wantAll) {
		t.Errorf("all %q, want %q", all, wantAll)
	}
	if want := []string{"test_p.test_q[1.5]", "test_p.TestA.test_empty", "other_test"}; !reflect.DeepEqual(failed, want) {
		t.Errorf("failed %q, want %q", failed, want)
	}
	if !reflect.DeepEqual(coll, []string{"other_test"}) {
		t.Errorf("collection errors %q", coll)
	}
	res := &evalctl.GroupResult{Output: "E   ImportError\nevalctl: the test session was cut short (Interrupted: 1 error during collection); it does not count as a pass\n"}
	noteIDs(res, []byte(report))
	const msg = "the tests could not be collected: other_test: ImportError: cannot import name 'x' from 'solution' (unknown location)"
	if res.CollectionError != msg {
		t.Errorf("collection error %q, want %q", res.CollectionError, msg)
	}
	if !strings.HasPrefix(res.Output, msg+" (an import error of the answer") {
		t.Errorf("output %q: a collection error is reported as such, first", res.Output)
	}
	if strings.Contains(res.Output, "cut short") || !strings.Contains(res.Output, "E   ImportError") {
		t.Errorf("output %q: the 'cut short' line is dropped, pytest's own output kept", res.Output)
	}
}

func TestResolveID(t *testing.T) {
	all, _, _ := JUnitIDs([]byte(report))
	tests := []struct {
		id   string
		want []string
	}{
		{"test_empty", []string{"test_p.TestA.test_empty", "test_p.TestB.test_empty"}}, // ambiguous
		{"TestA::test_empty", []string{"test_p.TestA.test_empty"}},
		{"test_p.py::TestB::test_empty", []string{"test_p.TestB.test_empty"}},
		{"TestA.test_empty", []string{"test_p.TestA.test_empty"}},
		{"test_q", []string{"test_p.test_q"}},
		{"test_q[2]", []string{"test_p.test_q[2]"}},
		{"test_year", []string{"leap_test.LeapTest.test_year"}},
		{"est_empty", nil}, // a suffix only at a dot
		{"test_emptty", nil},
	}
	for _, tt := range tests {
		if got := ResolveID(all, tt.id); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ResolveID(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// TestControlIDsAreChecked: a must_fail id is met only by the class that
// failed; an id naming no test the reference runs, or tests of two classes,
// is an unmet expectation with its reason.
func TestControlIDsAreChecked(t *testing.T) {
	_, failed, _ := JUnitIDs([]byte(report))
	all, _, _ := JUnitIDs([]byte(report))
	ref := &evalctl.Grade{Case: "c", Phase: 1, Solved: true, Groups: []evalctl.GroupResult{{Name: "acceptance", Success: true, TestIDs: all}}}
	ctl := &evalctl.Grade{Case: "c", Phase: 1, Groups: []evalctl.GroupResult{{Name: "acceptance", Total: 5, Passed: 3, TestIDs: all, FailedIDs: failed,
		FailedTests: []string{"test_q[1.5]", "test_empty"}}}}
	tests := []struct {
		ids  []string
		met  bool
		want string
	}{
		{[]string{"TestA::test_empty"}, true, ""},
		{[]string{"TestB::test_empty"}, false, "passes acceptance test TestB::test_empty"},
		{[]string{"test_empty"}, false, `"test_empty" is ambiguous: it names test_p.TestA.test_empty, test_p.TestB.test_empty`},
		{[]string{"test_emptty"}, false, `"test_emptty" names no test the reference runs (did you mean "test_empty"?)`},
		{[]string{"test_q"}, true, ""},
	}
	for _, tt := range tests {
		c := &tasks.Control{Name: "k", Phase: 1, MustFail: map[string][]string{"acceptance": tt.ids}}
		vs := []Variant{{Name: "reference", Kind: KindReference, Phase: 1}, {Name: "k", Kind: KindControl, Phase: 1, Control: c}}
		results := []CheckResult{Expect(vs[0], ref), Expect(vs[1], ctl)}
		checkControlIDs(results, vs)
		r := results[1]
		if r.Met != tt.met || !strings.Contains(strings.Join(r.Problems, "; "), tt.want) {
			t.Errorf("must_fail %q: met %v problems %q; want met %v, %q", tt.ids, r.Met, r.Problems, tt.met, tt.want)
		}
	}
}

// TestUnrepresentableTests: a failed test is marked unrepresentable only
// by the property with the run's nonce; a mark on a passing test, a mark
// with another nonce or none, and another property do not count.
func TestUnrepresentableTests(t *testing.T) {
	const nonce = "0123abcd"
	prop := func(name, value string) string {
		return `<properties><property name="` + name + `" value="` + value + `"/></properties>`
	}
	report := `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="6">
<testcase classname="t.T" name="test_module">` + prop("evalctl_unrepresentable", nonce+" a module of the tests' side handed to the answer") + `<failure message="x"/></testcase>
<testcase classname="t.T" name="test_deep"><error message="x"/>` + prop("evalctl_unrepresentable", nonce+" a value nested deeper than 200 levels") + `</testcase>
<testcase classname="t.T" name="test_passes">` + prop("evalctl_unrepresentable", nonce+" a module") + `</testcase>
<testcase classname="t.T" name="test_forged">` + prop("evalctl_unrepresentable", "ffff a module") + `<failure message="x"/></testcase>
<testcase classname="t.T" name="test_bare">` + prop("evalctl_unrepresentable", nonce) + `<failure message="x"/></testcase>
<testcase classname="t.T" name="test_other">` + prop("note", nonce+" a module") + `<failure message="x"/></testcase>
</testsuite></testsuites>`
	got := UnrepresentableTests([]byte(report), nonce)
	want := []evalctl.UnrepresentableTest{
		{Test: "t.T.test_module", Construct: "a module of the tests' side handed to the answer"},
		{Test: "t.T.test_deep", Construct: "a value nested deeper than 200 levels"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := UnrepresentableTests([]byte(report), ""); got != nil {
		t.Errorf("without a nonce: %+v, want none", got)
	}
	res := &evalctl.GroupResult{Output: "pytest's output\n"}
	noteUnrepresentable(res, []byte(report), nonce)
	const msg = "evalctl: 2 test(s) the boundary cannot represent: t.T.test_module (a module of the tests' side handed to the answer), t.T.test_deep (a value nested deeper than 200 levels)"
	if res.UnrepresentableCount != 2 || !strings.HasPrefix(res.Output, msg) || !strings.HasSuffix(res.Output, "pytest's output\n") {
		t.Errorf("count %d, output %q", res.UnrepresentableCount, res.Output)
	}
}

// TestUnrepresentableTAP reads the node test processes' marks from a TAP
// report: only with the run's nonce, only for a failed test (each failed
// test once, however many marks name it), only with a construct.
func TestUnrepresentableTAP(t *testing.T) {
	const nonce = "0123abcd"
	mark := func(n, test, what string) string {
		return `# evalctl_unrepresentable ` + n + ` {"test":"` + test + `","construct":"` + what + `"}`
	}
	report := strings.Join([]string{
		"TAP version 13",
		"# Subtest: d",
		"    # Subtest: names a symbol",
		"    " + mark(nonce, "names a symbol", "a symbol (red)"),
		"    not ok 1 - names a symbol",
		"      ---",
		"      error: |-",
		"        " + mark("ffff", "adds", "forged")[2:],
		"        " + mark(nonce+"x", "adds", "forged")[2:],
		"      ...",
		"    # Subtest: adds",
		"    not ok 2 - adds",
		"    # Subtest: passes",
		"    " + mark(nonce, "passes", "a symbol (x)"),
		"    ok 3 - passes",
		"    " + mark(nonce, "adds", ""),
		mark(nonce, "names a symbol", "a symbol (red)"),
		mark(nonce, "measures depth", "a value nested deeper than 200 levels") + "\r",
		"not ok 1 - d",
		"not ok 2 - measures depth",
	}, "\n")
	total, passed, failed := ParseTAP([]byte(report))
	if total != 4 || passed != 1 {
		t.Fatalf("parsed %d/%d %v", passed, total, failed)
	}
	got := UnrepresentableTAP([]byte(report), nonce, failed)
	want := []evalctl.UnrepresentableTest{
		{Test: "names a symbol", Construct: "a symbol (red)"},
		{Test: "measures depth", Construct: "a value nested deeper than 200 levels"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := UnrepresentableTAP([]byte(report), "", failed); got != nil {
		t.Errorf("without a nonce: %+v, want none", got)
	}
}

// TestWithoutMarks: the group's output leaves out the run's own marks (the
// summary says what they say) and keeps everything else, forgeries
// included.
func TestWithoutMarks(t *testing.T) {
	in := "not ok 1 - a\n# evalctl_unrepresentable n1 {}\n    evalctl_unrepresentable n2 {}\n# other\n"
	if got := string(withoutMarks([]byte(in), "n1")); got != "not ok 1 - a\n    evalctl_unrepresentable n2 {}\n# other\n" {
		t.Errorf("got %q", got)
	}
}
