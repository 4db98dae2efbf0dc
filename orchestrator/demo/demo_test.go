package demo_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/demo"
	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestDemoEndToEnd runs the main job as users do: the whole development
// suite under the reference and flawed arms, graded, with the pooled table
// and the paired transitions printed.
func TestDemoEndToEnd(t *testing.T) {
	eng, _ := sandboxtest.Engine(t)
	var out, progress strings.Builder
	dir, err := demo.Run(context.Background(), demo.Options{SuiteDir: "../../cases", OutDir: t.TempDir(), Engine: eng, Stdout: &out, Progress: &progress})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, progress.String())
	}
	text := out.String()
	// The flawed arm writes a negative control on every other case (4 of
	// 8), which the frozen checks must reject.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`reference\s+8\s+8\s+8\s+0\s+0\s+8/8`),
		regexp.MustCompile(`flawed\s+8\s+8\s+8\s+0\s+0\s+4/8`),
		regexp.MustCompile(`flawed\s+functional\s+8\s+4\s+0\s+0\s+4`),
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
	if len(all) != 16 {
		t.Errorf("%d attempts, want 16", len(all))
	}
}
