package controls_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

// setup gives a generator and labels unique to the test; the containers
// carrying them are removed when the test ends, also when it fails.
func setup(t *testing.T) (*controls.Generator, grader.Labels) {
	t.Helper()
	eng, img := sandboxtest.Engine(t)
	labels := grader.Labels{Run: fmt.Sprintf("test-%s-%d", filepath.Base(t.Name()), time.Now().UnixNano())}
	t.Cleanup(func() {
		if _, err := eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: labels.Run}); err != nil {
			t.Errorf("prune: %v", err)
		}
	})
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 2})
	return &controls.Generator{Engine: eng, Image: img.Ref, Grader: g}, labels
}

// TestImportedSuitePassesTheGate: each Exercism fixture track (Python,
// JavaScript and TypeScript on the image's Jest layer), imported, counted
// and given generated controls, passes every expectation of 'cases check'.
func TestImportedSuitePassesTheGate(t *testing.T) {
	sandboxtest.Long(t)
	for _, tt := range []struct {
		track  string
		counts map[string]int
		max    int // mutants graded per phase
	}{
		// Four mutants per exercise are enough to keep the two controls
		// asserted below (each killed one is graded twice).
		{"exercism", map[string]int{"leap": 5, "raindrops": 7}, 4},
		{"exercism-js", map[string]int{"digit-sum": 9}, 4},
		{"exercism-ts", map[string]int{"number-stats": 8}, 4},
	} {
		t.Run(tt.track, func(t *testing.T) {
			gen, labels := setup(t)
			ctx := context.Background()
			exs, err := importer.Exercism{}.Exercises("../../tasks/importer/testdata/" + tt.track)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "imported")
			if err := importer.Write(out, exs, importer.Options{Name: "imported", Version: "1.0.0"}); err != nil {
				t.Fatal(err)
			}
			if _, refused, err := controls.FillCounts(ctx, gen.Grader, out, exs, labels); err != nil || len(refused) > 0 {
				t.Fatal(err, refused)
			}
			s, err := tasks.LoadSuite(out)
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.counts {
				if got := s.Case(name).Phases[0].Group("acceptance").Tests; got != want {
					t.Errorf("%s acceptance tests: %d, want %d (what the reference ran)", name, got, want)
				}
			}
			kept := 0
			for _, c := range s.Cases {
				reps, err := gen.Generate(ctx, s, c, controls.Options{Max: tt.max, Labels: labels})
				if err != nil {
					t.Fatal(err)
				}
				r := reps[0]
				if r.Score == nil || r.Graded == 0 || r.Killed > r.Graded || len(r.Kept()) < 2 {
					t.Fatalf("%s: %s, kept %d", c.Name, controls.Summary(r), len(r.Kept()))
				}
				t.Log(controls.Summary(r))
				for _, m := range r.Kept() {
					if !m.Reproducible || len(m.MustFail["acceptance"]) == 0 {
						t.Errorf("%s kept %s: reproducible %v, must_fail %v", c.Name, m.ID, m.Reproducible, m.MustFail)
					}
				}
				kept += len(r.Kept())
				if err := controls.Write(c, reps); err != nil {
					t.Fatal(err)
				}
			}
			s, err = tasks.LoadSuite(out)
			if err != nil {
				t.Fatal(err)
			}
			results, err := gen.Grader.(*grader.Grader).CheckCases(ctx, s, s.Cases)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, grader.JudgeControls(s.Cases, results)...)
			for _, r := range results {
				if !r.Met {
					t.Errorf("%s %s: %v", r.Case, r.Variant, r.Problems)
				}
			}
			// Per case: reference, starter, its controls, and the case row.
			if n, want := len(results), 3*len(s.Cases)+kept; n != want {
				t.Errorf("%d gate rows, want %d", n, want)
			}
			first := s.Cases[0]
			reps, err := controls.ReadReports(first)
			if err != nil || len(reps) != 1 || reps[0].Score == nil {
				t.Errorf("recorded mutation report of %s: %v %v", first.Name, reps, err)
			}
			// Writing the same controls again is refused: nothing is overwritten.
			if err := controls.Write(first, reps); err == nil || !strings.Contains(err.Error(), "exists already") {
				t.Errorf("second write: %v, want 'exists already'", err)
			}
		})
	}
}

// TestDevelopmentCasesMutationScore: on development cases, Python (ledger,
// two phases) and TypeScript (pagination), generation finds plausible
// controls (passing the public tests) and a mutation score in every phase.
// One case per language (ledger also covers a second phase), with few
// mutants each: every case's committed controls pass the fixture gate
// (cases check) in CI already.
func TestDevelopmentCasesMutationScore(t *testing.T) {
	sandboxtest.Long(t)
	if testing.Short() {
		t.Skip("grades dozens of mutants")
	}
	gen, labels := setup(t)
	s, err := tasks.LoadSuite("../../cases")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		max  int
	}{{"ledger", 4}, {"pagination", 6}} {
		t.Run(tt.name, func(t *testing.T) {
			c := s.Case(tt.name)
			reps, err := gen.Generate(context.Background(), s, c, controls.Options{Max: tt.max, Labels: labels})
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) != len(c.Phases) {
				t.Fatalf("%d reports for %d phases", len(reps), len(c.Phases))
			}
			for _, r := range reps {
				t.Log(controls.Summary(r))
				if r.Score == nil || r.Graded != tt.max || r.Killed == 0 {
					t.Errorf("%s", controls.Summary(r))
				}
				plausible := 0
				for _, m := range r.Kept() {
					if m.Plausible {
						plausible++
					}
					if !m.Reproducible || len(m.MustFail) == 0 {
						t.Errorf("phase %d kept %s: reproducible %v, must_fail %v", r.Phase, m.ID, m.Reproducible, m.MustFail)
					}
				}
				if plausible == 0 {
					t.Errorf("phase %d: no plausible control among %d kept", r.Phase, len(r.Kept()))
				}
			}
		})
	}
}

// TestImportedHelperModuleGrades: an exercise whose tests import a helper
// module shipped beside them (test_utils.py, not a file of the answer's
// workspace) is imported with the helper among its checks, and its
// reference grades to all-pass: the helper is loaded by the trusted side,
// from the checks (run_pytest.py), since the workspace has no copy of it.
func TestImportedHelperModuleGrades(t *testing.T) {
	sandboxtest.Long(t)
	gen, labels := setup(t)
	exs, err := importer.Exercism{}.Exercises("../../tasks/importer/testdata/exercism-helpers")
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 1 || exs[0].Acceptance["test_utils.py"] == nil || exs[0].Workspace["test_utils.py"] != nil {
		t.Fatalf("the helper travels with the checks only: %v", exs)
	}
	out := filepath.Join(t.TempDir(), "imported")
	if err := importer.Write(out, exs, importer.Options{Name: "imported", Version: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	counts, refused, err := controls.FillCounts(context.Background(), gen.Grader, out, exs, labels)
	if err != nil || len(refused) > 0 {
		t.Fatal(err, refused)
	}
	if counts["meter"] != 3 {
		t.Errorf("the reference passed %d tests, want all 3", counts["meter"])
	}
}
