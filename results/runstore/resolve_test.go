package runstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
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

// TestLookupMistakesAreUsage: naming no run or several is the user's
// mistake (exit 2), and still ErrNoRun or ErrAmbiguous to errors.Is, as
// is a folder of runs that does not exist; one that cannot be read is not.
func TestLookupMistakesAreUsage(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"abc-1", "abc-2"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(filepath.Join(root, name, RunFile), map[string]string{"id": "id-" + name}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		arg, root string
		is        error
		usage     bool
	}{
		{"nosuchrun", root, ErrNoRun, true},
		{"..", root, ErrNoRun, true},
		{"abc", root, ErrAmbiguous, true},
		{"abc", filepath.Join(root, "missing"), ErrNoRun, true},
		{"abc", filepath.Join(root, "abc-1", RunFile), nil, false},
	}
	for _, tt := range tests {
		_, err := Lookup(tt.root, tt.arg)
		var ue *evalctl.UsageError
		if err == nil || errors.As(err, &ue) != tt.usage || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("Lookup(%q, %q) = %v; want usage %v, is %v", tt.root, tt.arg, err, tt.usage, tt.is)
		}
	}
	if d, err := Lookup(root, "abc-1"); err != nil || d != filepath.Join(root, "abc-1") {
		t.Errorf("Lookup(abc-1) = %q, %v", d, err)
	}
}
