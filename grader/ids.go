package grader

import (
	"encoding/xml"
	"fmt"
	"sort"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// Qualified test ids. A pytest test's bare name (its function or method
// name) is ambiguous when two classes or files define it: must_fail:
// [test_empty] would be met whichever class failed. The grader therefore
// also records each test's qualified id, its JUnit classname and name joined
// by a dot ("test_p.TestA.test_empty", "leap_test.LeapTest.test_x",
// "test_p.test_q[1]"). A must_fail id matches a qualified id when it equals
// it or a dot-bounded suffix of it, written with dots or pytest's "::" and
// an optional ".py" ("TestA::test_empty", "test_p.py::TestA::test_empty",
// "test_empty"); an id without a parameter ("test_q") also matches its
// parametrised forms ("test_q[1]").

// JUnitIDs reads the qualified ids of every test case of a JUnit report,
// those that failed, and the modules pytest could not collect (an import
// error of the answer shows as a "collection failure" error).
func JUnitIDs(data []byte) (all, failed, collection []string) {
	var root struct {
		XMLName xml.Name
		junitSuite
	}
	if xml.Unmarshal(data, &root) != nil {
		return nil, nil, nil
	}
	type rawCase struct {
		Name      string `xml:"name,attr"`
		Classname string `xml:"classname,attr"`
		Error     *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"error"`
	}
	var raw struct {
		Cases  []rawCase `xml:"testcase"`
		Suites []struct {
			Cases []rawCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	_ = xml.Unmarshal(data, &raw)
	var collErr = map[string]bool{}
	note := func(cs []rawCase) {
		for _, c := range cs {
			if c.Error != nil && c.Error.Message == "collection failure" {
				collErr[qualify(c.Classname, c.Name)] = true
			}
		}
	}
	note(raw.Cases)
	for _, s := range raw.Suites {
		note(s.Cases)
	}
	var walk func(s junitSuite)
	walk = func(s junitSuite) {
		for _, c := range s.Cases {
			id := qualify(c.Classname, c.Name)
			if collErr[id] {
				collection = append(collection, id)
				failed = append(failed, id)
				continue
			}
			all = append(all, id)
			if c.Failure != nil || c.Error != nil || c.Skipped != nil {
				failed = append(failed, id)
			}
		}
		for _, sub := range s.Suites {
			walk(sub)
		}
	}
	walk(root.junitSuite)
	return all, failed, collection
}

// CollectionMessage reads why pytest could not collect the modules of a
// JUnit report: per module, the exception line of its collection failure
// ("test_acc: ImportError: cannot import name 'add' from 'adder'"), joined
// by "; ". It is empty when every module was collected.
func CollectionMessage(data []byte) string {
	var raw struct {
		Cases  []junitErrCase `xml:"testcase"`
		Suites []struct {
			Cases []junitErrCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if xml.Unmarshal(data, &raw) != nil {
		return ""
	}
	var msgs []string
	note := func(cs []junitErrCase) {
		for _, c := range cs {
			if c.Error != nil && c.Error.Message == "collection failure" {
				msgs = append(msgs, qualify(c.Classname, c.Name)+": "+errorLine(c.Error.Text))
			}
		}
	}
	note(raw.Cases)
	for _, s := range raw.Suites {
		note(s.Cases)
	}
	return strings.Join(msgs, "; ")
}

type junitErrCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Error     *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"error"`
}

// errorLine is the exception line of pytest's failure text: its last "E "
// line, else its last line.
func errorLine(text string) string {
	var last, lastE string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		last = l
		if strings.HasPrefix(l, "E ") {
			lastE = strings.TrimSpace(l[1:])
		}
	}
	if lastE != "" {
		return lastE
	}
	if last == "" {
		return "unknown error"
	}
	return last
}

func qualify(classname, name string) string {
	if classname == "" {
		return name
	}
	return classname + "." + name
}

// noteIDs adds the qualified ids of a pytest report to res and, when a
// module could not be collected, says so first in its output: an answer
// lacking a name the tests import fails at collection, which is not a
// session cut short.
func noteIDs(res *evalctl.GroupResult, report []byte) {
	res.TestIDs, res.FailedIDs, res.CollectionErrors = JUnitIDs(report)
	if len(res.CollectionErrors) > 0 {
		res.CollectionError = "the tests could not be collected: " + CollectionMessage(report)
		// pytest ends a session with collection errors by raising its
		// Interrupted, a KeyboardInterrupt, which the runner reports as a
		// session cut short: here that line would mislead.
		var kept []string
		for _, l := range strings.SplitAfter(res.Output, "\n") {
			if !(strings.Contains(l, "the test session was cut short") && strings.Contains(l, "during collection")) &&
				!strings.HasPrefix(l, "evalctl: the tests could not be collected") {
				kept = append(kept, l)
			}
		}
		res.Output = strings.Join(kept, "")
		res.Output = fmt.Sprintf("%s (an import error of the answer, such as a name the tests import that it lacks); no test of that module ran\n", res.CollectionError) + res.Output
	}
}

// normID turns a must_fail id as a person writes it into the dotted form
// of qualified ids.
func normID(id string) string {
	id = strings.ReplaceAll(id, ".py::", ".")
	id = strings.ReplaceAll(id, "::", ".")
	return strings.ReplaceAll(id, "/", ".")
}

// MatchID reports whether the must_fail id names the qualified test id q.
func MatchID(q, id string) bool {
	n := normID(id)
	cands := []string{q}
	if !strings.Contains(n, "[") {
		cands = append(cands, stripParam(q))
	}
	for _, c := range cands {
		if c == n || strings.HasSuffix(c, "."+n) {
			return true
		}
	}
	return false
}

func stripParam(q string) string {
	if i := strings.IndexByte(q, '['); i > 0 && strings.HasSuffix(q, "]") {
		return q[:i]
	}
	return q
}

// failedID reports whether the group failed the test id names: by
// qualified ids when the grade has them, else by bare names (grades made
// before qualified ids were recorded).
func failedID(gr *evalctl.GroupResult, id string) bool {
	if len(gr.TestIDs) == 0 && len(gr.FailedIDs) == 0 {
		return failedTest(gr.FailedTests, id)
	}
	for _, q := range gr.FailedIDs {
		if MatchID(q, id) {
			return true
		}
	}
	return false
}

// ResolveID finds the tests of the reference's collected ids that a
// must_fail id names, one entry per test (parametrised forms together).
func ResolveID(collected []string, id string) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range collected {
		if MatchID(q, id) {
			base := q
			if !strings.Contains(normID(id), "[") {
				base = stripParam(q)
			}
			if !seen[base] {
				seen[base] = true
				out = append(out, base)
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkControlIDs checks every must_fail id of the control rows against the
// ids the case's reference collected in the same phase and group: an id
// naming no test is an error (it would read as "passes test X"), and so is
// one naming tests of two classes or files. Groups whose reference grade
// has no qualified ids (node-test) are not checked.
func checkControlIDs(results []CheckResult, variants []Variant) {
	for i := range results {
		r := &results[i]
		if r.Kind != KindControl || r.Grade == nil || variants[i].Control == nil {
			continue
		}
		var ref *evalctl.Grade
		for j := range results {
			if results[j].Case == r.Case && results[j].Phase == r.Phase && results[j].Kind == KindReference {
				ref = results[j].Grade
			}
		}
		if ref == nil {
			continue
		}
		groups := make([]string, 0, len(variants[i].Control.MustFail))
		for g := range variants[i].Control.MustFail {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			rg := ref.Group(g)
			if rg == nil || len(rg.TestIDs) == 0 {
				continue
			}
			for _, id := range variants[i].Control.MustFail[g] {
				switch got := ResolveID(rg.TestIDs, id); {
				case len(got) == 0:
					r.Problems = append(r.Problems, fmt.Sprintf("must_fail %s id %q names no test the reference runs%s", g, id, didYouMean(rg.TestIDs, id)))
				case len(got) > 1:
					r.Problems = append(r.Problems, fmt.Sprintf("must_fail %s id %q is ambiguous: it names %s; qualify it by class or file (Class::name)", g, id, strings.Join(got, ", ")))
				}
			}
		}
		sort.Strings(r.Problems)
		r.Met = len(r.Problems) == 0
	}
}

// didYouMean suggests the collected test whose name is closest to id.
func didYouMean(collected []string, id string) string {
	best, bestD := "", 4
	n := normID(id)
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	for _, q := range collected {
		name := stripParam(q)
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if d := distance(n, name); d < bestD {
			best, bestD = name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// selectArgs are the pytest arguments selecting a group's tests: its
// paths (which may carry node ids) and, when it has one, its keyword
// expression as one argument of -k.
func selectArgs(g *tasks.Group) []string {
	if g.Keyword == "" {
		return g.Paths
	}
	return append([]string{"-k", g.Keyword}, g.Paths...)
}

// unrepresentableProperty is the JUnit property run_pytest.py gives a
// failed test during which the boundary met a construct of the tests' it
// cannot carry; its value is the run's nonce, a space, and the construct.
const unrepresentableProperty = "evalctl_unrepresentable"

// UnrepresentableTests reads the failed tests of a JUnit report that the
// trusted side marked unrepresentable. A mark counts only with the run's
// nonce (given to the trusted side alone, never to a process of the
// answer's) and on a test that failed.
func UnrepresentableTests(data []byte, nonce string) []evalctl.UnrepresentableTest {
	if nonce == "" {
		return nil
	}
	type prop struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	type rawCase struct {
		Name       string    `xml:"name,attr"`
		Classname  string    `xml:"classname,attr"`
		Failure    *struct{} `xml:"failure"`
		Error      *struct{} `xml:"error"`
		Properties []prop    `xml:"properties>property"`
	}
	type rawSuite struct {
		Cases  []rawCase  `xml:"testcase"`
		Suites []rawSuite `xml:"testsuite"`
	}
	var root struct {
		XMLName xml.Name
		rawSuite
	}
	if xml.Unmarshal(data, &root) != nil {
		return nil
	}
	var out []evalctl.UnrepresentableTest
	var walk func(s rawSuite)
	walk = func(s rawSuite) {
		for _, c := range s.Cases {
			if c.Failure == nil && c.Error == nil {
				continue
			}
			for _, p := range c.Properties {
				what, ok := strings.CutPrefix(p.Value, nonce+" ")
				if p.Name == unrepresentableProperty && ok && what != "" {
					out = append(out, evalctl.UnrepresentableTest{Test: qualify(c.Classname, c.Name), Construct: what})
					break
				}
			}
		}
		for _, sub := range s.Suites {
			walk(sub)
		}
	}
	walk(root.rawSuite)
	return out
}
