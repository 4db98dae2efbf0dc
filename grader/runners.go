package grader

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// outputTail bounds the output kept in a GroupResult.
const outputTail = 4000

// reportCap bounds a machine-readable report read back from the container.
const reportCap = 32 << 20

// runGroup runs one check group in box and reads its result.
func runGroup(ctx context.Context, box gradeBox, g *tasks.Group) (*evalctl.GroupResult, error) {
	return runCompiledGroup(ctx, box, g, nil)
}

// runCompiledGroup is runGroup for a group whose compile pre did (nil: the
// group compiles as it runs). The compile's time counts against the
// group's timeout as though the group had compiled itself.
func runCompiledGroup(ctx context.Context, box gradeBox, g *tasks.Group, pre *compiled) (*evalctl.GroupResult, error) {
	start := time.Now()
	res := &evalctl.GroupResult{Name: g.Name, Required: g.Required}
	dir := "/tmp/evalctl-" + randomName()
	deadline := time.Now().Add(g.Timeout)
	if pre != nil {
		deadline = deadline.Add(-time.Duration(pre.Seconds * float64(time.Second)))
	}
	remaining := func() time.Duration {
		if d := time.Until(deadline); d > time.Second {
			return d
		}
		return time.Second
	}
	var err error
	switch g.Runner {
	case tasks.RunnerPytest:
		err = runPytest(ctx, box, g, dir, remaining, res)
	case tasks.RunnerPyCompile:
		err = runPyCompile(ctx, box, remaining, res)
	case tasks.RunnerNodeTest:
		err = runNodeTest(ctx, box, g, dir, pre, remaining, res)
	case tasks.RunnerTSC:
		err = runTSC(ctx, box, g, pre, remaining, res)
	default:
		err = fmt.Errorf("unknown runner %q", g.Runner)
	}
	if err != nil {
		return nil, err
	}
	res.Failed = res.Total - res.Passed
	// A group that ran no test fails, whatever its exit status, and so does
	// one whose report counts other than the tests the case declares: the
	// process ended early (or the checks are not what the case says).
	res.Declared = g.Tests
	counted := g.Tests == 0 || res.Total == g.Tests
	if !counted && len(res.CollectionErrors) == 0 { // a collection error says why already
		res.Output = fmt.Sprintf("evalctl: the report counts %d tests, the case declares %d: the test run ended early\n", res.Total, g.Tests) + res.Output
	}
	res.Success = res.ExitCode == 0 && !res.TimedOut && res.Total > 0 && res.Passed == res.Total && counted
	res.Seconds = time.Since(start).Seconds()
	if pre != nil {
		res.Seconds += pre.Seconds
	}
	return res, nil
}

func tail(parts ...[]byte) string {
	var b strings.Builder
	for _, p := range parts {
		b.Write(p)
	}
	s := b.String()
	if len(s) > outputTail {
		s = "..." + s[len(s)-outputTail:]
	}
	return s
}

// pytestCommand is the hardened pytest command line, run as the harness
// user: the trusted side of the boundary (/opt/evalctl/run_pytest.py, which
// reaches the answer only through its host, see runPytest), isolated mode,
// nothing of the answer on sys.path, no conftest.py, no plugins, no cache,
// the grader's own configuration, test modules imported by path.
func pytestCommand(junit, basetemp string, paths []string) []string {
	cmd := []string{"python3", "-I", "-B", "/opt/evalctl/run_pytest.py", "-q", "-p", "no:cacheprovider",
		"--noconftest", "--rootdir=/workspace", "-c", "/opt/evalctl/pytest.ini", "--import-mode=importlib",
		"--basetemp=" + basetemp, "--junitxml=" + junit}
	return append(cmd, paths...)
}

// pytestPreload is what the harness user's runner keeps imported for the
// test process (run_pytest.py imports sqlite3, pytest and its
// temporary-directory module before any test): each pytest group then
// starts as a fork of that warm interpreter instead of importing pytest
// afresh, a quarter of a second saved per group. Only modules run_pytest.py
// itself imports before the tests belong here, so that what is imported
// before the tests is unchanged.
var pytestPreload = []string{"sqlite3", "pytest", "_pytest.tmpdir"}

// answerHostCommand starts the answer's host (/opt/evalctl/answerd.py) as
// the command user: the only process that loads the answer's code, serving
// the test process over sock, and only it (answerd.py accepts connections
// of the harness user's first process alone, by peer credentials).
func answerHostCommand(sock string) []string {
	uid, _, _ := strings.Cut(sandbox.HarnessUser, ":")
	return []string{"python3", "-I", "-B", "/opt/evalctl/answerd.py", sock, "/workspace", uid}
}

// runPytest runs a pytest group across the boundary: the answer's host
// runs as the command user, the tests and the report writer as the harness
// user, in a directory only the harness user can write (run_pytest.py
// makes it, so it did not exist before the run). When the tests
// end, every process of the command user is killed before the report is
// read, though nothing of theirs could write it. The socket, the report's
// directory and pytest's base temporary directory have unrelated random
// names: the answer's host learns its socket's name, and from it nothing
// of the others (the answer cannot make them before the harness does).
func runPytest(ctx context.Context, box gradeBox, g *tasks.Group, dir string, remaining func() time.Duration, res *evalctl.GroupResult) error {
	junit := dir + "/junit.xml"
	sock := "/tmp/evalctl-" + randomName() + ".sock"
	host, err := box.Exec(ctx, answerHostCommand(sock), sandbox.ExecOptions{Detach: true, Timeout: remaining()})
	if err != nil {
		return err
	}
	if host.ExitCode != 0 {
		return fmt.Errorf("start the answer's host: %s", host.Stderr)
	}
	// The nonce marks what only the trusted side may write into the report
	// (a test the boundary cannot represent, see UnrepresentableTests).
	nonce := randomName()
	out, err := box.Exec(ctx, pytestCommand(junit, "/tmp/evalctl-"+randomName(), selectArgs(g)), sandbox.ExecOptions{Timeout: remaining(), User: sandbox.HarnessUser,
		Env: []string{"EVALCTL_ANSWER_SOCKET=" + sock, "EVALCTL_REPORT_DIR=" + dir, "EVALCTL_NONCE=" + nonce}, Preload: pytestPreload})
	if err != nil {
		return err
	}
	res.ExitCode, res.TimedOut, res.Output = out.ExitCode, out.TimedOut, tail(out.Stdout, out.Stderr)
	// Nothing the answer's code left running may touch the files of the
	// groups after this one.
	box.KillAll(ctx)
	report, err := box.Exec(ctx, []string{"cat", junit}, sandbox.ExecOptions{Timeout: 30 * time.Second, MaxOutput: reportCap, User: sandbox.HarnessUser})
	if err != nil {
		return err
	}
	if report.ExitCode != 0 {
		return nil // no report: no test ran; the group fails
	}
	total, passed, failed, err := ParseJUnit(report.Stdout)
	if err != nil {
		res.Output = tail([]byte(fmt.Sprintf("unreadable JUnit report: %v\n", err)), []byte(res.Output))
		return nil
	}
	res.Total, res.Passed, res.FailedTests = total, passed, failed
	noteIDs(res, report.Stdout)
	noteUnrepresentable(res, report.Stdout, nonce)
	return nil
}

// noteUnrepresentable records the failed tests the boundary could not
// represent and says so first in the group's output.
func noteUnrepresentable(res *evalctl.GroupResult, report []byte, nonce string) {
	recordUnrepresentable(res, UnrepresentableTests(report, nonce))
}

// recordUnrepresentable records us as the group's tests the boundary
// could not represent and says so first in its output.
func recordUnrepresentable(res *evalctl.GroupResult, us []evalctl.UnrepresentableTest) {
	res.Unrepresentable = us
	res.UnrepresentableCount = len(res.Unrepresentable)
	if msg := UnrepresentableMessage(res.Unrepresentable); msg != "" {
		res.Output = "evalctl: " + msg + " (not a failure of the answer)\n" + res.Output
	}
}

// UnrepresentableMessage says which tests the boundary cannot represent,
// in the words cases check and cases import print: "2 test(s) the
// boundary cannot represent: t.test_a (a module ...), ..."; "" for none.
func UnrepresentableMessage(us []evalctl.UnrepresentableTest) string {
	if len(us) == 0 {
		return ""
	}
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = u.Test + " (" + u.Construct + ")"
	}
	return fmt.Sprintf("%d test(s) the boundary cannot represent: %s", len(us), strings.Join(parts, ", "))
}

type junitCase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Failure   *struct{} `xml:"failure"`
	Error     *struct{} `xml:"error"`
	Skipped   *struct{} `xml:"skipped"`
}

type junitSuite struct {
	Cases  []junitCase  `xml:"testcase"`
	Suites []junitSuite `xml:"testsuite"`
}

// ParseJUnit reads a JUnit XML report. Every test case counts; one passes
// only with no failure, error or skip (an answer must not be able to skip a
// frozen test into success). Failed test ids are the test case names.
func ParseJUnit(data []byte) (total, passed int, failedIDs []string, err error) {
	var root struct {
		XMLName xml.Name
		junitSuite
	}
	if err := xml.Unmarshal(data, &root); err != nil {
		return 0, 0, nil, err
	}
	var walk func(s junitSuite)
	walk = func(s junitSuite) {
		for _, c := range s.Cases {
			total++
			if c.Failure == nil && c.Error == nil && c.Skipped == nil {
				passed++
			} else {
				failedIDs = append(failedIDs, c.Name)
			}
		}
		for _, sub := range s.Suites {
			walk(sub)
		}
	}
	walk(root.junitSuite)
	return total, passed, failedIDs, nil
}

// pyCompileScript byte-compiles (in memory) every Python file of the
// workspace and prints a JSON summary. It runs no code of the answer.
const pyCompileScript = `
import json, os, sys
skip = {"__pycache__", ".pytest_cache", "node_modules", ".git"}
files, failed = 0, []
for root, dirs, names in os.walk("/workspace"):
    dirs[:] = sorted(d for d in dirs if d not in skip)
    for n in sorted(names):
        if n.endswith(".py"):
            p = os.path.join(root, n)
            files += 1
            try:
                with open(p, "rb") as f:
                    compile(f.read(), p, "exec", dont_inherit=True)
            except Exception as e:
                failed.append(os.path.relpath(p, "/workspace"))
                print(f"{p}: {type(e).__name__}: {e}", file=sys.stderr)
print(json.dumps({"files": files, "failed": failed}))
`

func runPyCompile(ctx context.Context, box gradeBox, remaining func() time.Duration, res *evalctl.GroupResult) error {
	out, err := box.Exec(ctx, []string{"python3", "-I", "-B", "-c", pyCompileScript}, sandbox.ExecOptions{Timeout: remaining(), User: sandbox.HarnessUser})
	if err != nil {
		return err
	}
	res.ExitCode, res.TimedOut, res.Output = out.ExitCode, out.TimedOut, tail(out.Stderr)
	var sum struct {
		Files  int      `json:"files"`
		Failed []string `json:"failed"`
	}
	if json.Unmarshal(out.Stdout, &sum) != nil {
		return nil
	}
	res.Total, res.Passed, res.FailedTests = sum.Files, sum.Files-len(sum.Failed), sum.Failed
	if len(sum.Failed) > 0 && res.ExitCode == 0 {
		res.ExitCode = 1
	}
	return nil
}

// runTSC runs a typecheck group: tsc -p TSCONFIG --noEmit through the
// image's typecheck.js, which neutralises the pragmas that switch checking
// off (@ts-nocheck, @ts-ignore, @ts-expect-error) in the answer's files,
// so the group judges the answer's types.
// With pre, the grade's compile process (compileGroups) checked it already.
func runTSC(ctx context.Context, box gradeBox, g *tasks.Group, pre *compiled, remaining func() time.Duration, res *evalctl.GroupResult) error {
	var out *sandbox.ExecResult
	if pre != nil {
		out = &sandbox.ExecResult{Stdout: []byte(pre.Stdout), ExitCode: pre.Status}
	} else {
		var err error
		out, err = box.Exec(ctx, []string{"node", "/opt/evalctl/typecheck.js", g.TSConfig}, sandbox.ExecOptions{Timeout: remaining(), User: sandbox.HarnessUser})
		if err != nil {
			return err
		}
	}
	res.ExitCode, res.TimedOut, res.Output = out.ExitCode, out.TimedOut, tail(out.Stdout, out.Stderr)
	res.Total = 1
	if out.ExitCode == 0 && !out.TimedOut {
		res.Passed = 1
	} else {
		res.FailedTests = []string{"tsc"}
	}
	return nil
}

// compiled is one group's compile as the grade's compile process
// (/opt/evalctl/compile.js) did it: what it printed, its exit status, how
// long it took and, for a node-test group, the directory holding its build.
type compiled struct {
	Job     int     `json:"job"`
	Stdout  string  `json:"stdout"`
	Status  int     `json:"status"`
	Seconds float64 `json:"seconds"`
	dir     string
}

// compileGroups compiles every TypeScript group of groups (in their running
// order) in one process of the harness user's, before any group runs (so
// before any code of the answer's runs, and no compile reads what such
// code wrote): /opt/evalctl/compile.js, which runs each group's own
// compile (tsc for a node-test group, typecheck.js for a typecheck group)
// with the library files parsed once for all. What it built stays in a
// directory only the harness user can enter until the group's turn; what
// it printed comes back on its standard output, which no other process
// sees. It is bounded by the shortest timeout of the groups; a group it
// did not finish (timed out, crashed) is missing from the map and
// compiles itself as it runs, as before.
func compileGroups(ctx context.Context, box gradeBox, groups []*tasks.Group) map[*tasks.Group]*compiled {
	type job struct {
		Kind     string `json:"kind"`
		TSConfig string `json:"tsconfig"`
	}
	var jobs []job
	var which []*tasks.Group
	timeout := time.Duration(0)
	for _, g := range groups {
		kind := ""
		switch g.Runner {
		case tasks.RunnerNodeTest:
			kind = "emit"
		case tasks.RunnerTSC:
			kind = "check"
		default:
			continue
		}
		jobs = append(jobs, job{kind, g.TSConfig})
		which = append(which, g)
		if timeout == 0 || g.Timeout < timeout {
			timeout = g.Timeout
		}
	}
	if len(jobs) == 0 || timeout <= 0 {
		return nil
	}
	spec, err := json.Marshal(jobs)
	if err != nil {
		return nil
	}
	root := "/tmp/evalctl-" + randomName()
	out, err := box.Exec(ctx, []string{"node", "/opt/evalctl/compile.js", root, string(spec)},
		sandbox.ExecOptions{Timeout: timeout, MaxOutput: reportCap, User: sandbox.HarnessUser})
	if err != nil || out.StdoutTruncated {
		return nil
	}
	done := map[*tasks.Group]*compiled{}
	for _, line := range strings.SplitAfter(string(out.Stdout), "\n") {
		var c compiled
		if !strings.HasSuffix(line, "\n") || json.Unmarshal([]byte(line), &c) != nil || c.Job < 0 || c.Job >= len(which) {
			continue
		}
		c.dir = fmt.Sprintf("%s/%d", root, c.Job)
		done[which[c.Job]] = &c
	}
	return done
}

// ownCompile is a node-test group's own compile, as the group runs it when
// the grade's compile process did not: tsc into outDir, which then gets
// its package.json.
func ownCompile(g *tasks.Group, outDir string) []string {
	return []string{"sh", "-c", `tsc -p "$1" --outDir "$2" --pretty false; rc=$?; mkdir -p "$2" && printf '{"type": "commonjs"}\n' > "$2/package.json" || exit 9; exit $rc`,
		"tsc", g.TSConfig, outDir}
}

// runNodeTest compiles a node-test group's tests and the answer, unless
// pre (the grade's compile process) built them already: then pre's
// directory, out of the answer's reach until now, becomes dir.
func runNodeTest(ctx context.Context, box gradeBox, g *tasks.Group, dir string, pre *compiled, remaining func() time.Duration, res *evalctl.GroupResult) error {
	outDir := dir + "/build"
	var tsc *sandbox.ExecResult
	if pre != nil {
		mv, err := box.Exec(ctx, []string{"mv", "-T", "--", pre.dir, dir}, sandbox.ExecOptions{Timeout: remaining(), User: sandbox.HarnessUser, Dir: "/"})
		if err != nil {
			return err
		}
		if mv.ExitCode == 0 && !mv.TimedOut {
			tsc = &sandbox.ExecResult{Stdout: []byte(pre.Stdout), ExitCode: pre.Status}
		}
	}
	if tsc == nil {
		// Type errors are the typecheck groups' business: tsc still emits, and
		// behaviour is judged by the tests. The build directory gets its own
		// package.json, so node, looking for the nearest one above a compiled
		// file, never reads one the answer wrote (/tmp/package.json).
		var err error
		tsc, err = box.Exec(ctx, ownCompile(g, outDir), sandbox.ExecOptions{Timeout: remaining(), User: sandbox.HarnessUser})
		if err != nil {
			return err
		}
	}
	if tsc.TimedOut || tsc.ExitCode > 2 {
		// 0: emitted; 1 and 2: emitted with diagnostics. Anything else
		// (killed, crashed) emitted nothing worth running.
		res.TimedOut, res.ExitCode, res.Output = tsc.TimedOut, tsc.ExitCode, tail(tsc.Stdout, tsc.Stderr)
		return nil
	}
	// The boundary: the answer's compiled modules are loaded only by the
	// answer's host (answerd.js, the command user); the tests run as the
	// harness user, and node_tests.js turns their require of an answer
	// module into a remote handle. harden.js stays as a second line. The
	// hosts' door (nodegate.py) accepts only the harness user's
	// connections, the test processes', by peer credentials.
	sock := dir + "-answer.sock"
	uid, _, _ := strings.Cut(sandbox.HarnessUser, ":")
	// The nonce marks what only the test processes may write into the
	// report (a test the boundary cannot represent, see UnrepresentableTAP).
	nonce := randomName()
	host, err := box.Exec(ctx, []string{"python3", "-I", "-B", "/opt/evalctl/nodegate.py", sock, uid}, sandbox.ExecOptions{Detach: true, Timeout: remaining()})
	if err != nil {
		return err
	}
	if host.ExitCode != 0 {
		return fmt.Errorf("start the answer's host: %s", host.Stderr)
	}
	cmd := []string{"node", "--require", "/opt/evalctl/harden.js", "--require", "/opt/evalctl/node_tests.js", "--test", "--test-reporter=tap"}
	for _, p := range g.Paths {
		cmd = append(cmd, outDir+"/"+strings.TrimPrefix(p, "/"))
	}
	out, err := box.Exec(ctx, cmd, sandbox.ExecOptions{Timeout: remaining(), MaxOutput: reportCap, User: sandbox.HarnessUser, Dir: outDir,
		Env: []string{"EVALCTL_ANSWER_SOCKET=" + sock, "EVALCTL_BUILD_DIR=" + outDir, "HOME=" + outDir, "EVALCTL_NONCE=" + nonce}})
	if err != nil {
		return err
	}
	// Nothing the answer's code left running may touch later groups.
	box.KillAll(ctx)
	res.ExitCode, res.TimedOut = out.ExitCode, out.TimedOut
	res.Total, res.Passed, res.FailedTests = ParseTAP(out.Stdout)
	us := UnrepresentableTAP(out.Stdout, nonce, res.FailedTests)
	if len(us) == 0 {
		res.Output = tail(tsc.Stdout, out.Stderr, []byte(failureLines(out.Stdout)))
		return nil
	}
	// The summary recordUnrepresentable writes says what the marks say.
	res.Output = tail(tsc.Stdout, out.Stderr, []byte(failureLines(withoutMarks(out.Stdout, nonce))))
	recordUnrepresentable(res, us)
	return nil
}

// unrepresentableMark begins the line node_tests.js writes into a test
// file's report for a test during which the boundary met a construct of
// the tests' it cannot carry: the mark, the run's nonce and a JSON object
// {"test": TITLE, "construct": WHAT}. node's TAP reporter prints it as a
// comment ("# evalctl_unrepresentable ...").
const unrepresentableMark = unrepresentableProperty + " "

// markOf is what follows the run's mark on a report line (ok false when
// the line is no mark of this run's).
func markOf(line, nonce string) (string, bool) {
	return strings.CutPrefix(strings.TrimLeft(line, " \t#"), unrepresentableMark+nonce+" ")
}

// withoutMarks is a TAP report without the lines of the run's marks.
func withoutMarks(report []byte, nonce string) []byte {
	lines := strings.Split(string(report), "\n")
	kept := lines[:0]
	for _, l := range lines {
		if _, mark := markOf(l, nonce); !mark {
			kept = append(kept, l)
		}
	}
	return []byte(strings.Join(kept, "\n"))
}

// UnrepresentableTAP reads the marks of a node TAP report: a mark counts
// only with the run's nonce (given to the test processes alone, never to a
// process of the answer's) and for a failed test (failed, the report's
// failed titles, each taken once).
func UnrepresentableTAP(data []byte, nonce string, failed []string) []evalctl.UnrepresentableTest {
	if nonce == "" {
		return nil
	}
	left := map[string]int{}
	for _, f := range failed {
		left[f]++
	}
	var out []evalctl.UnrepresentableTest
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := markOf(line, nonce)
		if !ok {
			continue
		}
		var m struct {
			Test      string `json:"test"`
			Construct string `json:"construct"`
		}
		if json.Unmarshal([]byte(strings.TrimRight(rest, "\r")), &m) != nil || m.Construct == "" || left[m.Test] == 0 {
			continue
		}
		left[m.Test]--
		out = append(out, evalctl.UnrepresentableTest{Test: m.Test, Construct: m.Construct})
	}
	return out
}

var tapPoint = regexp.MustCompile(`^(\s*)(not ok|ok) \d+(?: - (.*?))?(?:\s+#\s*(SKIP|TODO)\b.*)?$`)

// ParseTAP reads node's TAP report. Only leaf test points count (a file or
// suite whose subtests were reported is not a test itself); a skipped or
// todo test does not pass. Failed ids are the test titles.
func ParseTAP(data []byte) (total, passed int, failedIDs []string) {
	type point struct {
		indent int
		ok     bool
		name   string
	}
	var points []point
	for _, line := range strings.Split(string(data), "\n") {
		m := tapPoint.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		name := strings.TrimSpace(m[3])
		if uq, err := strconv.Unquote(`"` + strings.ReplaceAll(name, `"`, `\"`) + `"`); err == nil {
			name = uq
		}
		points = append(points, point{indent: len(m[1]), ok: m[2] == "ok" && m[4] == "", name: name})
	}
	for i, p := range points {
		// Subtests are printed before their parent's test point.
		if i > 0 && points[i-1].indent > p.indent {
			continue
		}
		total++
		if p.ok {
			passed++
		} else {
			failedIDs = append(failedIDs, p.name)
		}
	}
	return total, passed, failedIDs
}

// failureLines keeps the "not ok" lines of a TAP report and what follows
// them, for the group's output.
func failureLines(data []byte) string {
	var b strings.Builder
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.Contains(l, "not ok ") {
			for j := i; j < len(lines) && j < i+12; j++ {
				b.WriteString(lines[j] + "\n")
			}
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "# ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
