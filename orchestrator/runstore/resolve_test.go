package runstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteTable: unknown counts, arms, states and suites print as "-",
// regrades are counted beside the kind, an empty listing says so.
func TestWriteTable(t *testing.T) {
	four, two := 4, 2
	var b strings.Builder
	if err := WriteTable(&b, []Summary{
		{Name: "a", ID: "id-a", Kind: "cohort", CreatedAt: "2026-11-02T08:00:00Z", State: "stopped", Arms: []string{"x", "y"}, Scored: &two, Planned: &four, SuiteVersion: "dev@1.0.0", Regrades: 1},
		{Name: "b", ID: "id-b", Kind: "screen", CreatedAt: "2026-11-01T08:00:00Z", Planned: &four},
	}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for i, want := range [][]string{
		{"NAME", "ID", "KIND", "CREATED", "STATE", "ARMS", "SCORED/PLANNED", "SUITE"},
		{"a", "id-a", "cohort+1", "regrade(s)", "2026-11-02T08:00:00Z", "stopped", "x,y", "2/4", "dev@1.0.0"},
		{"b", "id-b", "screen", "2026-11-01T08:00:00Z", "-", "-", "-/4", "-"},
	} {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("line %d: %q, want %q", i, got, want)
		}
	}
	b.Reset()
	WriteTable(&b, nil)
	if !strings.Contains(b.String(), "(no runs)") {
		t.Errorf("empty listing: %q", b.String())
	}
}

// TestResolveAllFolder: a folder without run directories is no run (it
// does not stand for an empty list of cohorts).
func TestResolveAllFolder(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveAll(root, []string{empty}, true); err == nil {
		t.Error("an empty folder resolved to runs")
	}
	t.Setenv(RunsEnv, "")
	if Root() != "runs" {
		t.Errorf("Root() = %q without %s", Root(), RunsEnv)
	}
	t.Setenv(RunsEnv, root)
	if Root() != root {
		t.Errorf("Root() = %q with %s=%s", Root(), RunsEnv, root)
	}
}
