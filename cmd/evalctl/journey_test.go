package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// The journey: what README.md tells a new user, run in order as a user
// would (the real binary, built once, on a fresh directory), each step's
// output checked. journeySteps is also the list of README command lines a
// test executes: TestREADMECommands fails on a command line of the README
// that is neither here nor in an illustrative block.
//
// A step's line is the README's, word for word, but for two stand-ins the
// journey fills in: ID (an attempt id prefix, read from an earlier step's
// output) and the scripted server's port 8090 (a free port, in the line
// and in the copy of examples/scripted24.yaml).

// journeyStep is one README command line and what its output must show.
type journeyStep struct {
	line string
	// extra arguments the test adds (view's --addr, so no port is shared).
	extra []string
	// background: the command keeps running (a server); ready says when it
	// is up. Background commands are stopped when the test ends.
	background bool
	ready      *regexp.Regexp
	// interrupt: send SIGINT (Ctrl-C) once stderr matches; the command
	// must then exit with code.
	interrupt func(j *journey, stderr string) bool
	code      int
	check     func(j *journey, r stepResult)
}

type stepResult struct {
	stdout, stderr string
}

// ciCommands are README command lines run by CI itself (.ci/run runs
// exactly 'make test'), not by a test.
var ciCommands = map[string]string{
	"make test": ".ci/run runs exactly this",
}

var journeySteps = []journeyStep{
	{line: "evalctl demo --cases paths", check: checkDemo},
	{line: "evalctl runs", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `(?m)^NAME\s+ID\s+KIND`, `(?m)^demo\s+`+j.vars["DEMO_ID"]+`\s+cohort\s+\S+\s+complete\s+reference,flawed\s+2/2\s+dev@`)
	}},
	{line: "evalctl attempts demo", check: checkAttempts},
	{line: "evalctl show ID", check: checkShow},
	{line: "evalctl show demo flawed paths repeat-1", check: checkShow},
	{line: "evalctl report demo", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `complete, 2 of 2 attempts ended`, `baseline arm: reference`,
			`(?m)^flawed\s+1\s+1\s+1\s+0\s+0\s+0\s+0/1 0\.0%`, `(?m)^reference\s+1\s+1\s+1\s+0\s+0\s+0\s+1/1 100\.0%`,
			`(?m)^case\s+reference\s+flawed\n+paths\s+1/1 / 1/1\s+0/1 / 0/1$|(?m)^case\s+flawed\s+reference\n+paths\s+0/1 / 0/1\s+1/1 / 1/1$`, `Legend`)
	}},
	{line: "evalctl report demo --format md", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `^# evalctl report`, `\| flawed \|`, `\| reference \|`, `## Legend`)
	}},
	{line: "evalctl report demo --format json", check: checkReportJSON},
	{line: "evalctl report demo --format csv", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `^scope,arm,case,attempts,`, `(?m)^arm,flawed,,1,1,1,0,0,0,`, `(?m)^arm,reference,,1,1,1,0,0,0,`)
	}},
	{line: "evalctl report demo --format html > report.html", check: func(j *journey, r stepResult) {
		j.want(j.read("report.html"), `(?i)^<!doctype html>`, `reference`, `flawed`, `</html>`)
	}},
	{line: "evalctl view", extra: []string{"--addr", "127.0.0.1:0"}, background: true,
		ready: regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)/`), check: checkView},
	{line: "evalctl export demo --out export", check: func(j *journey, r stepResult) {
		j.want(r.stdout+r.stderr, `check it with: evalctl verify export \(or without evalctl: python3 export/check.py\)`)
		j.want(j.read("export/SHA256SUMS"), `attempts\.json`, `check\.py`)
	}},
	{line: "evalctl verify export", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `^export: checksums match, every outcome recomputes from its evidence and every aggregate`)
	}},
	{line: "python3 export/check.py", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `^OK: .*export: checksums match`)
	}},
	{line: "evalctl regrade demo --suite fixed-cases", check: func(j *journey, r stepResult) {
		j.want(r.stdout+r.stderr, `attempts: 2 graded`, `original results unchanged`)
		grades, _ := filepath.Glob(filepath.Join(j.dir, j.vars["DEMO_DIR"], "attempts", "*", "grades", "dev@9.0.0", "phase-1.json"))
		if len(grades) != 2 {
			j.t.Errorf("regrade: %d grades under dev@9.0.0, want 2: %v", len(grades), grades)
		}
	}},
	{line: "evalctl controls --case paths --suite cases --answers demo", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `^fixture diagnosis of case paths\n`, `no model was called`,
			`(?m)^reference/repeat-1\s+answer\s+1\s+(\d+)/\d+\s`, `(?m)^flawed/repeat-1\s+answer\s+1\s+\d+/\d+\s`,
			`reference solved: original yes`, `negative control \S+ \(phase 1\) rejected: original yes`)
	}},
	{line: "evalctl summarize demo --out results.json", check: checkSummary},
	{line: "evalctl serve-model --suite cases --addr 127.0.0.1:8090 &", background: true,
		ready: regexp.MustCompile(`scripted model server on http://127\.0\.0\.1:\d+`)},
	{line: "evalctl run --plan examples/scripted24.yaml", code: 3, interrupt: endedAtLeast(1), check: checkStopped},
	{line: "evalctl run --resume scripted-dev24", code: 3, interrupt: endedMore, check: checkStopped},
	{line: "evalctl run --cancel scripted-dev24", check: checkCancelled},
	{line: "evalctl rerun ID --set max_tokens=4096", check: func(j *journey, r stepResult) {
		j.want(r.stdout, `max_tokens`, `32768`, `4096`)
	}},
}

// journey is the state the steps share: the directory the user works
// in, the binary, what earlier steps printed.
type journey struct {
	t    *testing.T
	bin  string
	dir  string
	port string
	vars map[string]string
	ctx  context.Context
}

func TestJourney(t *testing.T) {
	sandboxtest.Long(t)
	eng, _ := sandboxtest.Engine(t)
	j := &journey{t: t, dir: t.TempDir(), vars: map[string]string{}, ctx: context.Background()}
	j.bin = filepath.Join(t.TempDir(), "evalctl")
	if out, err := exec.Command("go", "build", "-o", j.bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	j.port = freeLoopbackPort(t)
	j.setUp()
	// Every container of the journey's runs goes when the test ends.
	t.Cleanup(func() {
		ids, _ := filepath.Glob(filepath.Join(j.dir, "runs", "*", "run.json"))
		for _, f := range ids {
			var r struct {
				ID string `json:"id"`
			}
			if data, err := os.ReadFile(f); err == nil && json.Unmarshal(data, &r) == nil && r.ID != "" {
				eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: r.ID})
			}
		}
	})
	for _, s := range journeySteps {
		if !j.do(s) {
			t.Fatalf("the journey stops at %q", s.line)
		}
	}
}

// setUp lays out what a checkout gives the user: the development suite
// (and a corrected copy of it under a new version, for regrade) and the
// example plan, pointed at the journey's own port.
func (j *journey) setUp() {
	copyTree(j.t, "../../cases", filepath.Join(j.dir, "cases"))
	copyTree(j.t, "../../cases", filepath.Join(j.dir, "fixed-cases"))
	sy := filepath.Join(j.dir, "fixed-cases", "suite.yaml")
	data, err := os.ReadFile(sy)
	if err != nil {
		j.t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^version:.*$`)
	if !re.Match(data) {
		j.t.Fatalf("%s: no version line", sy)
	}
	if err := os.WriteFile(sy, re.ReplaceAll(data, []byte(`version: "9.0.0"`)), 0o644); err != nil {
		j.t.Fatal(err)
	}
	plan, err := os.ReadFile("../../examples/scripted24.yaml")
	if err != nil {
		j.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(j.dir, "examples"), 0o755); err != nil {
		j.t.Fatal(err)
	}
	plan = bytes.ReplaceAll(plan, []byte("127.0.0.1:8090"), []byte("127.0.0.1:"+j.port))
	if err := os.WriteFile(filepath.Join(j.dir, "examples", "scripted24.yaml"), plan, 0o644); err != nil {
		j.t.Fatal(err)
	}
}

// argv turns a README line into the command to run and the file its
// standard output is redirected to.
func (j *journey) argv(s journeyStep) (args []string, redirect string) {
	line := strings.TrimSuffix(strings.TrimSpace(s.line), "&")
	line = strings.ReplaceAll(line, "127.0.0.1:8090", "127.0.0.1:"+j.port)
	if i := strings.Index(line, ">"); i >= 0 {
		redirect = strings.TrimSpace(line[i+1:])
		line = line[:i]
	}
	for _, w := range strings.Fields(line) {
		if v, ok := j.vars[w]; ok && w == strings.ToUpper(w) {
			w = v
		}
		args = append(args, w)
	}
	if args[0] == "evalctl" {
		args[0] = j.bin
	}
	return append(args, s.extra...), redirect
}

// do runs one step and checks it; false when the journey cannot go on.
func (j *journey) do(s journeyStep) bool {
	j.t.Logf("$ %s", s.line)
	start := time.Now()
	defer func() { j.t.Logf("  (%.1f s)", time.Since(start).Seconds()) }()
	args, redirect := j.argv(s)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = j.dir
	cmd.Env = append(os.Environ(), "EVALCTL_RUNS=")
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if redirect != "" {
		f, err := os.Create(filepath.Join(j.dir, redirect))
		if err != nil {
			j.t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	if err := cmd.Start(); err != nil {
		j.t.Errorf("%s: %v", s.line, err)
		return false
	}
	if s.background {
		j.t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
		if !waitUntil(j.t, func() bool { return s.ready.MatchString(out.String()) }) {
			j.t.Errorf("%s: not ready: %q %q", s.line, out.String(), errb.String())
			return false
		}
		if m := s.ready.FindStringSubmatch(out.String()); len(m) > 1 {
			j.vars["URL"] = m[1]
		}
	} else {
		if s.interrupt != nil {
			if !waitUntil(j.t, func() bool { return s.interrupt(j, errb.String()) }) {
				j.t.Errorf("%s: never reached the point to interrupt: %q", s.line, errb.String())
			}
			cmd.Process.Signal(syscall.SIGINT)
		}
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			j.t.Errorf("%s: %v", s.line, err)
			return false
		}
		if code != s.code {
			j.t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", s.line, code, s.code, out.String(), errb.String())
			return false
		}
	}
	if s.check != nil {
		before := j.t.Failed()
		s.check(j, stepResult{stdout: out.String(), stderr: errb.String()})
		if !before && j.t.Failed() {
			j.t.Logf("%s printed:\n%s\nstderr:\n%s", s.line, out.String(), errb.String())
		}
	}
	return !j.t.Failed()
}

// want fails the test for every pattern text does not match.
func (j *journey) want(text string, patterns ...string) {
	j.t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(text) {
			j.t.Errorf("output does not match %q:\n%.3000s", p, text)
		}
	}
}

func (j *journey) read(name string) string {
	data, err := os.ReadFile(filepath.Join(j.dir, name))
	if err != nil {
		j.t.Error(err)
	}
	return string(data)
}

func checkDemo(j *journey, r stepResult) {
	j.want(r.stdout, `(?m)^evalctl report$`, `complete, 2 of 2 attempts ended`, `run directory: runs/demo-`,
		`report again: evalctl report runs/demo-\S+ --format html > report\.html`)
	m := regexp.MustCompile(`run directory: (runs/demo-(\S+))`).FindStringSubmatch(r.stdout)
	if m == nil {
		j.t.Fatalf("demo named no run directory")
	}
	j.vars["DEMO_DIR"], j.vars["DEMO_ID"] = m[1], m[2]
}

// checkAttempts reads the flawed arm's attempt id prefix: the ID of the
// next steps.
func checkAttempts(j *journey, r stepResult) {
	j.want(r.stdout, `(?m)^PREFIX\s+SLOT\s+ARM\s+CASE\s+REPEAT\s+STATE\s+FUNCTIONAL\s+DELIVERED\s+TOKENS\s+ID$`,
		`(?m)^\S+\s+\d\s+reference\s+paths\s+repeat-1\s+completed\s+yes\s+yes\s+\d+\s+\S+$`)
	m := regexp.MustCompile(`(?m)^(\S+)\s+\d\s+flawed\s+paths\s+repeat-1\s+completed\s+no\s+no\s+\d+\s+(\S+)$`).FindStringSubmatch(r.stdout)
	if m == nil {
		j.t.Fatalf("attempts lists no completed flawed paths attempt:\n%s", r.stdout)
	}
	j.vars["ID"], j.vars["DEMO_ATTEMPT"] = m[1], m[2]
}

func checkShow(j *journey, r stepResult) {
	j.want(r.stdout, `^attempt `+j.vars["DEMO_ATTEMPT"]+`\n`, `(?m)^  arm      flawed `, `(?m)^  case     paths \(python\), repeat-1`,
		`(?m)^  state    completed`)
}

func checkReportJSON(j *journey, r stepResult) {
	var rep struct {
		Schema string `json:"schema"`
		Arms   []struct {
			Arm        string `json:"arm"`
			Scored     *int   `json:"scored"`
			Functional struct {
				Count *int `json:"count"`
				Of    *int `json:"of"`
			} `json:"functional"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		j.t.Fatalf("report --format json: %v", err)
	}
	got := map[string]string{}
	for _, a := range rep.Arms {
		got[a.Arm] = fmt.Sprintf("%v/%v of %v scored", deref(a.Functional.Count), deref(a.Functional.Of), deref(a.Scored))
	}
	if rep.Schema != "evalctl.report/v1" || got["reference"] != "1/1 of 1 scored" || got["flawed"] != "0/1 of 1 scored" {
		j.t.Errorf("report json: schema %q, functional/scored %v", rep.Schema, got)
	}
	j.vars["REPORT_JSON"] = r.stdout
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkView fetches the pages a user opens: the viewer, the runs, the
// run's report (the report's own JSON, the same as report --format json
// printed) and its HTML report.
func checkView(j *journey, _ stepResult) {
	id := j.vars["DEMO_ID"]
	pages := []struct{ path, want string }{
		{"/", `evalctl view`},
		{"/api/runs", `"` + id + `"`},
		{"/api/runs/" + id + "/report", `"schema": ?"evalctl.report/v1"`},
		{"/runs/" + id + "/report.html", `(?i)<!doctype html>`},
		{"/api/runs/" + id + "/attempts/" + j.vars["DEMO_ATTEMPT"], `flawed`},
	}
	for _, p := range pages {
		res, err := http.Get(j.vars["URL"] + p.path)
		if err != nil {
			j.t.Errorf("GET %s: %v", p.path, err)
			continue
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !regexp.MustCompile(p.want).Match(body) {
			j.t.Errorf("GET %s: %d %.300s", p.path, res.StatusCode, body)
		}
		if p.path == "/api/runs/"+id+"/report" && !bytes.Equal(body, []byte(j.vars["REPORT_JSON"])) {
			j.t.Errorf("the viewer's report is not byte for byte what 'report --format json' printed:\n%.500s", body)
		}
	}
}

// checkSummary: the results document holds the demo as a cohort, by its
// name, with the run it comes from and the arms' outcomes.
func checkSummary(j *journey, r stepResult) {
	type metrics struct {
		Scored     *int `json:"scored"`
		Functional *int `json:"functional"`
	}
	var doc struct {
		Schema  string `json:"schema"`
		Cohorts map[string]struct {
			RunIDs  []string           `json:"run_ids"`
			State   string             `json:"state"`
			Metrics map[string]metrics `json:"metrics"`
		} `json:"cohorts"`
	}
	data := j.read("results.json")
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		j.t.Fatalf("results.json: %v", err)
	}
	c, ok := doc.Cohorts["demo"]
	if doc.Schema != "evalctl.results/v1" || !ok {
		j.t.Fatalf("results.json: schema %q, no cohort demo in %.500s", doc.Schema, data)
	}
	ref, fl := c.Metrics["reference"], c.Metrics["flawed"]
	got := fmt.Sprintf("%v %s reference %v/%v flawed %v/%v", c.RunIDs, c.State,
		deref(ref.Functional), deref(ref.Scored), deref(fl.Functional), deref(fl.Scored))
	if want := fmt.Sprintf("[%s] complete reference 1/1 flawed 0/1", j.vars["DEMO_ID"]); got != want {
		j.t.Errorf("results.json cohort demo: %s, want %s", got, want)
	}
}

var endedRe = regexp.MustCompile(`completed \[ended (\d+) of (\d+)`)

// lastEnded is the highest "ended N of M" count of a completed attempt
// in the progress lines.
func lastEnded(stderr string) int {
	n := -1
	for _, m := range endedRe.FindAllStringSubmatch(stderr, -1) {
		var k int
		fmt.Sscan(m[1], &k)
		n = max(n, k)
	}
	return n
}

func endedAtLeast(k int) func(*journey, string) bool {
	return func(j *journey, stderr string) bool {
		if n := lastEnded(stderr); n >= k {
			j.vars["ENDED"] = fmt.Sprint(n)
			return true
		}
		return false
	}
}

// endedMore: after a resume, the counts cover the whole run, so the next
// completed attempt is counted after the ones the first session ended.
func endedMore(j *journey, stderr string) bool {
	var before int
	fmt.Sscan(j.vars["ENDED"], &before)
	return endedAtLeast(before+1)(j, stderr)
}

// checkStopped: Ctrl-C stops the run resumably, says how to continue,
// and the report it prints counts the whole run.
func checkStopped(j *journey, r stepResult) {
	j.want(r.stderr, `resume with 'evalctl run --resume runs/scripted-dev24-\S+'`)
	j.want(r.stdout, `stopped, resumable: \d+ of 48 attempts ended`, `next:\n  evalctl run --resume runs/scripted-dev24-`)
	m := regexp.MustCompile(`stopped, resumable: (\d+) of 48`).FindStringSubmatch(r.stdout)
	var n, want int
	if m != nil {
		fmt.Sscan(m[1], &n)
	}
	fmt.Sscan(j.vars["ENDED"], &want)
	if n < want {
		j.t.Errorf("the report counts %d ended attempts, the progress line %d", n, want)
	}
}

// checkCancelled: the attempts not run are cancelled; the completed ones
// stay, and one of them is the ID the rerun takes.
func checkCancelled(j *journey, r stepResult) {
	j.want(r.stdout+r.stderr, `cancel`)
	cmd := exec.Command(j.bin, "attempts", "scripted-dev24")
	cmd.Dir = j.dir
	out, err := cmd.Output()
	if err != nil {
		j.t.Fatalf("attempts scripted-dev24: %v", err)
	}
	j.want(string(out), `(?m)\s+cancelled`)
	if regexp.MustCompile(`(?m)\s+(planned|running)\s`).Match(out) {
		j.t.Errorf("after --cancel an attempt is still planned or running:\n%s", out)
	}
	m := regexp.MustCompile(`(?m)^(\S+)\s+\d+\s+\S+\s+\S+\s+repeat-\d\s+completed\s`).FindSubmatch(out)
	if m == nil {
		j.t.Fatalf("no completed attempt in the cancelled run:\n%s", out)
	}
	j.vars["ID"] = string(m[1])
}

// waitUntil polls cond until it holds or the test's deadline is near.
func waitUntil(t *testing.T, cond func() bool) bool {
	return poll.ForTest(t, cond)
}

func freeLoopbackPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// copyTree copies a directory of regular files (a suite: no links).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}
