package demo_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/demo"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// TestDemoEndToEnd runs the main job as users do: the built-in development
// suite (embedded in the binary, written to the user's cache directory, so
// the demo needs no checkout) under the reference and flawed arms, graded,
// with the pooled table and the paired transitions printed.
func TestDemoEndToEnd(t *testing.T) {
	sandboxtest.Long(t)
	eng, _ := sandboxtest.Engine(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	onDisk, err := tasks.LoadSuite("../../cases")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // no cases/ directory in sight
	var out, progress strings.Builder
	dir, err := demo.Run(context.Background(), demo.Options{OutDir: t.TempDir(), Engine: eng, Stdout: &out, Progress: &progress})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, progress.String())
	}
	if want := "suite " + onDisk.ID() + " (" + onDisk.Fingerprint + ") from " + filepath.Join(cache, "evalctl", "suites"); !strings.Contains(progress.String(), want) {
		t.Errorf("progress lacks %q:\n%s", want, progress.String())
	}
	text := out.String()
	// The flawed arm writes a negative control on every other case (4 of
	// 9), which the frozen checks must reject.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`reference\s+9\s+9\s+9\s+0\s+0\s+0\s+9/9`),
		regexp.MustCompile(`flawed\s+9\s+9\s+9\s+0\s+0\s+0\s+5/9`),
		regexp.MustCompile(`flawed\s+functional\s+9\s+5\s+0\s+0\s+4`),
		regexp.MustCompile(`run directory: `),
	} {
		if !want.MatchString(text) {
			t.Errorf("demo output lacks %s:\n%s", want, text)
		}
	}
	store, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := store.Attempts()
	if len(all) != 18 {
		t.Errorf("%d attempts, want 18", len(all))
	}
	// The scripted model takes as long as it says: no attempt reports more
	// decode seconds than its task took.
	for _, a := range all {
		if m := a.Measurements; m == nil || m.DecodeSeconds == nil || *m.DecodeSeconds > m.TaskSeconds {
			t.Errorf("attempt %s %s: measurements %+v: decode seconds above task seconds", a.Arm, a.Case, m)
		}
	}
	// A later 'evalctl report' of the run, without --baseline, picks the
	// baseline the demo printed, and says why.
	in, err := report.Load(context.Background(), []string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		rep, err := report.Build(in, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		line := "baseline arm: " + rep.Baseline + " (" + rep.BaselineWhy + ")"
		if rep.Baseline != "reference" || !strings.Contains(text, line) {
			t.Errorf("report picks %q (%s); the demo printed:\n%s", rep.Baseline, rep.BaselineWhy, text)
		}
		for _, a := range rep.Arms {
			if a.TaskOutputTPS == nil || a.DecodeTPS == nil || *a.TaskOutputTPS > *a.DecodeTPS {
				t.Errorf("arm %s: task TPS %v above decode TPS %v", a.Arm, a.TaskOutputTPS, a.DecodeTPS)
			}
		}
	}
	if !strings.Contains(text, "Legend") || !strings.Contains(text, "tokens/week: ") {
		t.Errorf("the demo's report has no legend:\n%s", text)
	}
}
