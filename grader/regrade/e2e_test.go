package regrade_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// countingHandler counts every HTTP request that reaches the model server.
type countingHandler struct {
	n    atomic.Int64
	next http.Handler
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.next.ServeHTTP(w, r)
}

// A real cohort run by the orchestrator against the scripted model server
// (which answers every case the way a correct agent that opens files with
// "with" would), graded under 1.0.0; then a regrade under 1.0.1 while the
// server is still listening: it must receive zero requests, and the run
// directory may only gain grade files and one event line.
func TestRegradeOfARealRunCallsNoModel(t *testing.T) {
	sandboxtest.Long(t)
	t.Parallel()
	s1, s2, _ := suites(t)
	eng, img := sandboxtest.Engine(t)

	// The model's "reference" answers are the with-style ones.
	scriptDir := filepath.Join(t.TempDir(), "script-suite")
	copyTree(t, "testdata/suite-v2", scriptDir)
	wc := filepath.Join(scriptDir, "wordcount", "reference")
	if err := os.WriteFile(filepath.Join(wc, "phase-1", "wordcount.py"), []byte(withP1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wc, "phase-2", "wordcount.py"), []byte(withP2), 0o644); err != nil {
		t.Fatal(err)
	}
	scriptSuite, err := tasks.LoadSuite(scriptDir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.New(scripted.Config{Suite: scriptSuite})
	if err != nil {
		t.Fatal(err)
	}
	counter := &countingHandler{next: srv}
	hs := httptest.NewServer(counter)
	defer hs.Close()

	out := t.TempDir()
	plan := filepath.Join(out, "plan.yaml")
	abs, _ := filepath.Abs(s1.Dir)
	if err := os.WriteFile(plan, []byte(fmt.Sprintf(`name: regrade-e2e
suite: %s
cases: [wordcount]
repeats:
  - {label: repeat-1, seed: 1}
arms:
  - name: with-style
    endpoint: {base_url: "%s", model: reference}
    max_tokens: 4096
  - name: swallows-errors
    endpoint: {base_url: "%s", model: "control:swallow-read-error"}
    max_tokens: 4096
order: {policy: sequential, seed: 1}
`, abs, hs.URL, hs.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, plan), OutDir: out, Engine: eng, Image: img, GradeConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Attempts {
		if a.State != evalctl.Completed || len(a.Snapshots) != 2 {
			t.Fatalf("attempt %s %s: state %s, %d snapshots; %s", a.Arm, a.ID, a.State, len(a.Snapshots), a.Error)
		}
	}
	if counter.n.Load() == 0 {
		t.Fatal("the run made no model request: the counter does not see the server")
	}

	dir := res.Dir
	before := hashTree(t, dir)
	requests := counter.n.Load()

	rg, err := regrade.Run(context.Background(), cached, []string{dir}, regrade.Options{Suite: s2, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := rg.Err(); err != nil {
		t.Fatal(err)
	}
	if got := counter.n.Load() - requests; got != 0 {
		t.Errorf("the model server received %d requests during the regrade", got)
	}

	// Only new files: four grades and the regrade's record; nothing changed.
	added, changed, removed := treeDiff(before, hashTree(t, dir))
	if len(added) != 5 || len(removed) != 0 || len(changed) != 0 {
		t.Errorf("added %v changed %v removed %v", added, changed, removed)
	}
	for _, p := range added {
		if !strings.Contains(p, "/grades/regradefx@1.0.1/phase-") && p != rg.Runs[0].Record {
			t.Errorf("unexpected new file %s", p)
		}
	}

	want := map[string][2]regrade.Counts{
		"with-style":      {{Of: 1}, {Functional: 1, Delivered: 1, Of: 1}},
		"swallows-errors": {{Of: 1}, {Of: 1}},
	}
	for _, a := range rg.Arms {
		if w := want[a.Arm]; a.Before != w[0] || a.After != w[1] {
			t.Errorf("%s: %+v -> %+v, want %+v -> %+v", a.Arm, a.Before, a.After, w[0], w[1])
		}
	}
	if len(rg.Changed) != 1 || rg.Changed[0].Arm != "with-style" {
		t.Errorf("changed %+v", rg.Changed)
	}
}

// loadPlan reads a plan file the way 'evalctl run --plan' does.
func loadPlan(t testing.TB, file string) *orchestrator.Plan {
	t.Helper()
	p, _, err := orchestrator.LoadPlan(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
