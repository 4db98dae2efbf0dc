package report_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/demo"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// corpusCases are the development cases the demo entry runs: one phase
// of Python, two phases of Python, TypeScript; runCases those of the other
// runs (Python only: a TypeScript grade takes minutes on a loaded machine).
var (
	corpusCases = []string{"cache", "ledger", "pagination"}
	runCases    = []string{"cache", "ledger"}
)

// corpusGen makes the corpus: the sandbox engine and image, the suite, a
// scratch directory and the runs made so far (an entry may reuse
// another's run).
type corpusGen struct {
	t     *testing.T
	ctx   context.Context
	eng   *sandbox.Engine
	img   *sandbox.BuiltImage
	suite *tasks.Suite
	work  string
	runs  map[string]string
}

// corpusEntries are the corpus, in order: each export's name, what it is
// and how its run directories are made.
var corpusEntries = []struct {
	name, what string
	opts       func(g *corpusGen) report.Options
	make       func(g *corpusGen, export func(dirs ...string))
}{
	{"demo", "the demo on three cases (Python in one and two phases, TypeScript): reference and flawed arms, one repeat", nil, func(g *corpusGen, export func(...string)) {
		dir, err := demo.Run(g.ctx, demo.Options{Cases: corpusCases, OutDir: filepath.Join(g.work, "demo"), Engine: g.eng, Progress: io.Discard, Stdout: io.Discard})
		if err != nil {
			g.t.Fatal(err)
		}
		export(dir)
	}},
	{"live", "a run exported while it runs: attempts in flight (their phases recorded), others ended or waiting", nil, func(g *corpusGen, export func(...string)) {
		liveRun(g, export)
	}},
	{"resumed", "Ctrl-C while attempts ran, then run --resume: interrupted attempts replaced, two runner sessions", nil, func(g *corpusGen, export func(...string)) {
		export(g.resumed())
	}},
	{"cancelled", "Ctrl-C as the first attempt runs, then run --cancel: the interrupted slot cancelled after start, the others before", nil, func(g *corpusGen, export func(...string)) {
		dir := stoppedRun(g, "cancelled", 0)
		if _, err := orchestrator.Cancel(g.ctx, dir, ""); err != nil {
			g.t.Fatal(err)
		}
		export(dir)
	}},
	{"imported", "the resumed run's grades without per-group test counts (as imported from another harness): counts unknown, verdicts as recorded", nil, func(g *corpusGen, export func(...string)) {
		dir := copyTree(g.t, g.resumed(), filepath.Join(g.work, "imported", "run"))
		dropCounts(g.t, dir)
		export(dir)
	}},
	{"regrade", "the resumed run regraded under the next suite version, exported under it", func(g *corpusGen) report.Options {
		return report.Options{Suite: g.suite.Version + "-corpus"}
	}, func(g *corpusGen, export func(...string)) {
		dir := copyTree(g.t, g.resumed(), filepath.Join(g.work, "regraded", "run"))
		next := bumpSuite(g.t, g.suite, filepath.Join(g.work, "suite-next"))
		gr := grader.New(g.eng, g.img.Ref, g.img.ID, grader.Options{Concurrency: 2})
		rg, err := regrade.Run(g.ctx, gr, []string{dir}, regrade.Options{Suite: next, Concurrency: 2})
		if err != nil {
			g.t.Fatal(err)
		}
		if err := rg.Err(); err != nil {
			g.t.Fatal(err)
		}
		export(dir)
	}},
	{"sweep", "an arm declared once with a sweep over max_tokens (two values) beside the reference arm", nil, func(g *corpusGen, export func(...string)) {
		export(sweepRun(g))
	}},
	{"seed", "the seed results file's development cohort (records written by reporttest): three arms, a replaced infrastructure failure", func(*corpusGen) report.Options {
		return report.Options{Baseline: "original_q4"}
	}, func(g *corpusGen, export func(...string)) {
		dir := filepath.Join(g.work, "seed")
		if err := reporttest.Write(dir, reporttest.Seed()); err != nil {
			g.t.Fatal(err)
		}
		export(dir)
	}},
}

// resumed is the run stopped with Ctrl-C and resumed to its end (made
// once).
func (g *corpusGen) resumed() string {
	if dir, ok := g.runs["resumed"]; ok {
		return dir
	}
	dir := stoppedRun(g, "resumed", 1)
	if _, err := orchestrator.Run(g.ctx, orchestrator.Options{ResumeDir: dir, Engine: g.eng, Image: g.img, GradeConcurrency: 2}); err != nil {
		g.t.Fatal(err)
	}
	g.runs["resumed"] = dir
	return dir
}

// TestGenerateExportCorpus writes the corpus of exports the checkers are
// held together by (testdata/exports, see corpus.json there): real runs
// of the development suite against the scripted model server, in real
// sandboxes, each exported. It runs only with -update (and the Docker
// Engine): the corpus is committed, and TestExportCorpus checks it.
// EVALCTL_CORPUS=NAME,... regenerates only those entries.
//
//	go test ./results/report -run TestGenerateExportCorpus -update -timeout 180m
func TestGenerateExportCorpus(t *testing.T) {
	if !report.UpdateCorpus() {
		t.Skip("regenerates the committed corpus: run with -update")
	}
	eng, img := sandboxtest.Engine(t)
	suite, err := tasks.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	g := &corpusGen{t: t, ctx: context.Background(), eng: eng, img: img, suite: suite, work: t.TempDir(), runs: map[string]string{}}
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("EVALCTL_CORPUS"), ",") {
		if n != "" {
			only[n] = true
		}
	}
	var manifest []report.CorpusEntry
	for _, e := range corpusEntries {
		manifest = append(manifest, report.CorpusEntry{Name: e.name, What: e.what, Verdict: "ok"})
		if len(only) > 0 && !only[e.name] {
			continue
		}
		opts := report.Options{}
		if e.opts != nil {
			opts = e.opts(g)
		}
		e.make(g, func(dirs ...string) {
			dir := filepath.Join(report.CorpusDir, e.name)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := report.Export(g.ctx, dirs, dir, opts); err != nil {
				t.Fatalf("export %s: %v", e.name, err)
			}
			withoutChecker(t, dir)
			t.Logf("exported %s", e.name)
		})
	}
	data, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(report.CorpusDir, report.CorpusManifest), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corpusPlan is the demo's plan on the corpus cases, with the given arms.
func corpusPlan(t *testing.T, suite *tasks.Suite, url string, arms ...orchestrator.Arm) *orchestrator.Plan {
	t.Helper()
	p := orchestrator.Plan{Name: "corpus", Cases: runCases, Repeats: []orchestrator.Repeat{{Label: "repeat-1", Seed: 1}},
		Arms: arms, Order: orchestrator.Order{Policy: "interleaved", Seed: 7}}
	if len(arms) == 0 {
		for _, m := range []string{"reference", "flawed"} {
			p.Arms = append(p.Arms, orchestrator.Arm{Name: m, Endpoint: orchestrator.Endpoint{BaseURL: url, Model: m}, MaxTokens: 32768})
		}
	}
	plan, err := orchestrator.NewPlan(p, suite)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func startScripted(t *testing.T, suite *tasks.Suite, decodeTPS float64) *scripted.Server {
	t.Helper()
	srv, err := scripted.New(scripted.Config{Suite: suite, DecodeTPS: decodeTPS})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	poll.Until(t, what, d, cond)
}

// runDirUnder is the one run directory under out, once it exists.
func runDirUnder(t *testing.T, out string) string {
	t.Helper()
	var dir string
	waitFor(t, "the run directory", 5*time.Minute, func() bool {
		m, _ := filepath.Glob(filepath.Join(out, "*", runstore.RunFile))
		if len(m) == 1 {
			dir = filepath.Dir(m[0])
		}
		return dir != ""
	})
	return dir
}

// states counts the run's attempt records by state, and the phases file.
func states(dir string) (map[evalctl.State]int, map[string]string) {
	st, err := runstore.Open(dir)
	if err != nil {
		return nil, nil
	}
	all, err := st.Attempts()
	if err != nil {
		return nil, nil
	}
	n := map[evalctl.State]int{}
	for _, a := range all {
		n[a.State]++
	}
	return n, st.Phases()
}

// liveRun starts the corpus plan and, while its runner works on it (an
// attempt ended, others in flight with their phases recorded), has export
// take the run; then it stops the run.
func liveRun(g *corpusGen, export func(...string)) {
	t := g.t
	srv := startScripted(t, g.suite, 30) // slow enough to catch attempts in flight
	out := filepath.Join(g.work, "live")
	rctx, cancel := context.WithCancel(g.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := orchestrator.Run(rctx, orchestrator.Options{Plan: corpusPlan(t, g.suite, srv.URL()), OutDir: out, Engine: g.eng, Image: g.img, GradeConcurrency: 2})
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, orchestrator.ErrInterrupted) && err != nil {
			t.Errorf("the stopped live run ended with %v", err)
		}
	}()
	dir := runDirUnder(t, out)
	waitFor(t, "an attempt ended and others in flight with their phases", 60*time.Minute, func() bool {
		n, phases := states(dir)
		return n[evalctl.Completed] >= 1 && n[evalctl.Running] >= 1 && len(phases) == n[evalctl.Running]
	})
	export(dir)
}

// stoppedRun runs the corpus plan and presses Ctrl-C (cancels the run's
// context) once at least completed attempts have ended and others are in
// flight, as a user would: those are recorded as interrupted and the run
// can be resumed.
func stoppedRun(g *corpusGen, name string, completed int) string {
	t := g.t
	srv := startScripted(t, g.suite, 0)
	rctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	out := filepath.Join(g.work, name)
	done := make(chan error, 1)
	go func() {
		_, err := orchestrator.Run(rctx, orchestrator.Options{Plan: corpusPlan(t, g.suite, srv.URL()), OutDir: out, Engine: g.eng, Image: g.img, GradeConcurrency: 2})
		done <- err
	}()
	dir := runDirUnder(t, out)
	waitFor(t, "attempts ended and another in flight", 60*time.Minute, func() bool {
		n, _ := states(dir)
		return n[evalctl.Completed] >= completed && n[evalctl.Running] >= 1
	})
	cancel()
	if err := <-done; !errors.Is(err, orchestrator.ErrInterrupted) {
		t.Fatalf("the stopped run ended with %v", err)
	}
	if n, _ := states(dir); n[evalctl.Interrupted] < 1 || n[evalctl.Running] != 0 {
		t.Fatalf("after Ctrl-C: %v, want interrupted attempts and none running", n)
	}
	return dir
}

// sweepRun runs a plan with the reference arm and one arm declared once
// with a sweep over max_tokens (one case: three attempts), and returns its
// run directory.
func sweepRun(g *corpusGen) string {
	t := g.t
	srv := startScripted(t, g.suite, 0)
	plan := filepath.Join(g.work, "sweep.yaml")
	yaml := fmt.Sprintf(`name: corpus-sweep
suite: %q
cases: [cache]
repeats:
  - {label: repeat-1, seed: 1}
arms:
  - name: reference
    endpoint: {base_url: %q, model: reference}
    max_tokens: 32768
  - name: "cap{value}"
    endpoint: {base_url: %q, model: reference}
    max_tokens: 1024
    sweep: {field: max_tokens, values: [16384, 8192]}
order: {policy: interleaved, seed: 7}
`, g.suite.Dir, srv.URL(), srv.URL())
	if err := os.WriteFile(plan, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, s, err := orchestrator.LoadPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	res, err := orchestrator.Run(g.ctx, orchestrator.Options{Plan: p, Suite: s, OutDir: filepath.Join(g.work, "sweep"), Engine: g.eng, Image: g.img, GradeConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res.Dir
}

// withoutChecker takes check.py and its SHA256SUMS line out of an export:
// the corpus keeps the data, the tests put the checker under test back.
func withoutChecker(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, report.CheckerPy)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, report.SumsFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(l, "  "+report.CheckerPy+"\n") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropCounts rewrites every grade of the run without per-group test
// counts, as a harness that records only verdicts hands them over.
func dropCounts(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(dir, runstore.AttemptsDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, string(filepath.Separator)+runstore.GradesDir+string(filepath.Separator)) {
			return err
		}
		var g map[string]any
		if err := runstore.ReadJSON(p, &g); err != nil {
			return err
		}
		for _, gr := range g["groups"].([]any) {
			m := gr.(map[string]any)
			delete(m, "passed")
			delete(m, "failed")
			delete(m, "total")
		}
		return runstore.WriteJSON(p, g)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bumpSuite copies suite to dir under the next patch version.
func bumpSuite(t *testing.T, suite *tasks.Suite, dir string) *tasks.Suite {
	t.Helper()
	copyTree(t, suite.Dir, dir)
	p := filepath.Join(dir, "suite.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	next := "version: " + suite.Version + "-corpus"
	data = []byte(strings.Replace(string(data), "version: "+suite.Version, next, 1))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := tasks.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// copyTree copies the directory src to dst and returns dst.
func copyTree(t *testing.T, src, dst string) string {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(fmt.Errorf("copy %s: %w", src, err))
	}
	return dst
}
