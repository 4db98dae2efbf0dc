package runstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestListing: 'evalctl runs' as a table and as JSON (an empty folder is
// an empty list, not null); a missing folder and a bad format are usage
// errors.
func TestListing(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "r1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ root, format, want string }{
		{root, "json", "[]\n"},
		{root, "table", "(no runs)"},
	} {
		fill, err := Listing(tt.root, tt.format)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := fill(&b); err != nil || !strings.Contains(b.String(), tt.want) {
			t.Errorf("%s: %q, %v; want %q", tt.format, b.String(), err, tt.want)
		}
	}
	for _, tt := range []struct{ root, format, want string }{
		{filepath.Join(root, "nope"), "table", "no folder of runs at " + filepath.Join(root, "nope") + ": give one ('evalctl runs DIR') or set EVALCTL_RUNS"},
		{root, "csv", `unknown --format "csv" (want table or json)`},
	} {
		_, err := Listing(tt.root, tt.format)
		var ue *evalctl.UsageError
		if !errors.As(err, &ue) || err.Error() != tt.want {
			t.Errorf("Listing(%s, %s) = %v; want usage error %q", tt.root, tt.format, err, tt.want)
		}
	}
}
