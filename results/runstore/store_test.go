package runstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenSaysWhatADirectoryIs: a run directory opens; one whose
// registration was cut short (plan.json written, run.json not) says so and
// what to do; anything else is not a run directory.
func TestOpenSaysWhatADirectoryIs(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string // error substring; "" to open
	}{
		{"run", []string{PlanFile, RunFile}, ""},
		{"registration cut short", []string{PlanFile}, "registration did not finish"},
		{"empty", nil, "not a run directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("{}\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Open(dir)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("open: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), dir)):
				t.Fatalf("open: %v, want an error naming %s and saying %q", err, dir, tt.want)
			}
		})
	}
}

func TestDirName(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"mtp4-vs-mtp2", "mtp4-vs-mtp2-ID"},
		{"quant sweep/2", "quant-sweep-2-ID"},
		{"", "ID"},
		{"../..", "ID"},
	} {
		if got := DirName(tt.name, "ID"); got != tt.want {
			t.Errorf("DirName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
