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

// corpusCases are the development cases the corpus runs: one phase of
// Python, two phases of Python, TypeScript.
var corpusCases = []string{"cache", "ledger", "pagination"}

// TestGenerateExportCorpus writes the corpus of exports the checkers are
// held together by (testdata/exports, see corpus.json there): real runs
// of the development suite against the scripted model server, in real
// sandboxes, each exported. It runs only with -update (and the Docker
// Engine): the corpus is committed, and TestExportCorpus checks it.
//
//	go test ./results/report -run TestGenerateExportCorpus -update -timeout 60m
func TestGenerateExportCorpus(t *testing.T) {
	if !report.UpdateCorpus() {
		t.Skip("regenerates the committed corpus: run with -update")
	}
	eng, img := sandboxtest.Engine(t)
	suite, err := tasks.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	out := report.CorpusDir
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	var manifest []report.CorpusEntry
	add := func(name, what string, dirs []string, opts report.Options) {
		t.Helper()
		dir := filepath.Join(out, name)
		if _, err := report.Export(context.Background(), dirs, dir, opts); err != nil {
			t.Fatalf("export %s: %v", name, err)
		}
		withoutChecker(t, dir)
		manifest = append(manifest, report.CorpusEntry{Name: name, What: what, Verdict: "ok"})
	}
	ctx := context.Background()

	// The demo as 'evalctl demo --cases ...' runs it.
	demoDir, err := demo.Run(ctx, demo.Options{Cases: corpusCases, OutDir: filepath.Join(work, "demo"), Engine: eng, Progress: io.Discard, Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	add("demo", "the demo on three cases: reference and flawed arms, one repeat", []string{demoDir}, report.Options{})

	// A run in progress, exported while its runner works on it: attempts
	// ended, one in flight with its phase, the rest waiting.
	liveRun(t, ctx, suite, eng, img, work, func(dir string) {
		add("live", "a run exported while it runs: one attempt in flight (its phase recorded), others ended or waiting", []string{dir}, report.Options{})
	})

	// Ctrl-C after the first attempt, then run --resume: an interrupted
	// attempt replaced, the slots run in two sessions.
	stopped := stoppedRun(t, ctx, suite, eng, img, filepath.Join(work, "resumed"))
	if _, err := orchestrator.Run(ctx, orchestrator.Options{ResumeDir: stopped, Engine: eng, Image: img, GradeConcurrency: 2}); err != nil {
		t.Fatal(err)
	}
	add("resumed", "Ctrl-C after the first attempt, then run --resume: an interrupted attempt replaced, two runner sessions", []string{stopped}, report.Options{})

	// Ctrl-C, then run --cancel: cancelled before and after start.
	cancelled := stoppedRun(t, ctx, suite, eng, img, filepath.Join(work, "cancelled"))
	if _, err := orchestrator.Cancel(ctx, cancelled, ""); err != nil {
		t.Fatal(err)
	}
	add("cancelled", "Ctrl-C after the first attempt, then run --cancel: the interrupted slot cancelled after start, the others before", []string{cancelled}, report.Options{})

	// The demo's grades as another harness would hand them over: the
	// verdicts without per-group test counts.
	imported := copyTree(t, demoDir, filepath.Join(work, "imported"))
	dropCounts(t, imported)
	add("imported", "the demo's grades without per-group test counts (as imported from another harness): counts unknown, verdicts as recorded", []string{imported}, report.Options{})

	// A regrade under a new suite version, exported under it.
	regraded := copyTree(t, demoDir, filepath.Join(work, "regraded"))
	next := bumpSuite(t, suite, filepath.Join(work, "suite-next"))
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 2})
	rg, err := regrade.Run(ctx, g, []string{regraded}, regrade.Options{Suite: next, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := rg.Err(); err != nil {
		t.Fatal(err)
	}
	add("regrade", "the demo regraded under the next suite version, exported under it", []string{regraded}, report.Options{Suite: next.Version})

	// A swept arm: max_tokens over two values.
	add("sweep", "an arm declared once with a sweep over max_tokens (two values) beside the reference arm", []string{sweepRun(t, ctx, suite, eng, img, work)}, report.Options{})

	// The seed cohort (no containers: the records of the seed results
	// file's 24-attempt cohorts, an infrastructure failure replaced).
	seed := filepath.Join(work, "seed")
	if err := reporttest.Write(seed, reporttest.Seed()); err != nil {
		t.Fatal(err)
	}
	add("seed", "the seed results file's development cohort (records written by reporttest): three arms, a replaced infrastructure failure", []string{seed}, report.Options{Baseline: "original_q4"})

	data, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, report.CorpusManifest), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corpusPlan is the demo's plan on the corpus cases, with the given arms.
func corpusPlan(t *testing.T, suite *tasks.Suite, url string, arms ...orchestrator.Arm) *orchestrator.Plan {
	t.Helper()
	p := orchestrator.Plan{Name: "corpus", Cases: corpusCases, Repeats: []orchestrator.Repeat{{Label: "repeat-1", Seed: 1}},
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
	for end := time.Now().Add(d); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s after %v", what, d)
		}
	}
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
// attempt ended, another in flight with its phase recorded, the rest
// waiting), has export take the run; then it stops the run.
func liveRun(t *testing.T, ctx context.Context, suite *tasks.Suite, eng *sandbox.Engine, img *sandbox.BuiltImage, work string, export func(dir string)) {
	t.Helper()
	srv := startScripted(t, suite, 30) // slow enough to catch an attempt in flight
	out := filepath.Join(work, "live")
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := orchestrator.Run(rctx, orchestrator.Options{Plan: corpusPlan(t, suite, srv.URL()), OutDir: out, Engine: eng, Image: img, GradeConcurrency: 2})
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, orchestrator.ErrInterrupted) {
			t.Errorf("the stopped live run ended with %v", err)
		}
	}()
	dir := runDirUnder(t, out)
	waitFor(t, "an attempt ended and others in flight with their phases", 30*time.Minute, func() bool {
		n, phases := states(dir)
		return n[evalctl.Completed] >= 1 && n[evalctl.Running] >= 1 && len(phases) == n[evalctl.Running]
	})
	export(dir)
}

// stoppedRun runs the corpus plan and presses Ctrl-C (cancels the run's
// context) once an attempt has ended and others are in flight, as a user
// would: those are recorded as interrupted and the run can be resumed.
func stoppedRun(t *testing.T, ctx context.Context, suite *tasks.Suite, eng *sandbox.Engine, img *sandbox.BuiltImage, out string) string {
	t.Helper()
	srv := startScripted(t, suite, 0)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := orchestrator.Run(rctx, orchestrator.Options{Plan: corpusPlan(t, suite, srv.URL()), OutDir: out, Engine: eng, Image: img, GradeConcurrency: 2})
		done <- err
	}()
	dir := runDirUnder(t, out)
	waitFor(t, "an attempt ended and another in flight", 30*time.Minute, func() bool {
		n, _ := states(dir)
		return n[evalctl.Completed] >= 1 && n[evalctl.Running] >= 1
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
func sweepRun(t *testing.T, ctx context.Context, suite *tasks.Suite, eng *sandbox.Engine, img *sandbox.BuiltImage, work string) string {
	t.Helper()
	srv := startScripted(t, suite, 0)
	plan := filepath.Join(work, "sweep.yaml")
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
`, suite.Dir, srv.URL(), srv.URL())
	if err := os.WriteFile(plan, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p, s, err := orchestrator.LoadPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	res, err := orchestrator.Run(ctx, orchestrator.Options{Plan: p, Suite: s, OutDir: filepath.Join(work, "sweep"), Engine: eng, Image: img, GradeConcurrency: 2})
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
