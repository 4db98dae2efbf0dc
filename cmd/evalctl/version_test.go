package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionIsTheCommit: built by go build (stamped) and by go build
// -buildvcs=false (not stamped), 'evalctl --version' names the checkout's
// exact commit and whether its tree is dirty, as git says; through go run
// it says the same, or "unknown" where go run reused an executable it
// cached before the checkout's files were written (the build cannot be
// dated then); with -trimpath as well (the same version, printed by a
// small program) it says "unknown", never a made-up version.
func TestVersionIsTheCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds evalctl three times")
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			t.Skipf("not a git checkout: git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	want := git("rev-parse", "HEAD")
	if git("status", "--porcelain", "--untracked-files=all") != "" {
		want += "+dirty"
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		build   []string // go build flags; nil: go run
		pkg     string   // the package go build builds
		version string
		// orUnknown accepts "unknown" too.
		orUnknown bool
	}{
		{"go build", []string{}, ".", want, false},
		{"go build -buildvcs=false", []string{"-buildvcs=false"}, ".", want, false},
		{"go run", nil, ".", want, true},
		// -trimpath recompiles every package the binary links (minutes
		// for the whole of evalctl on two cores), so this row builds a
		// program that prints runstore.Version, what --version prints.
		{"go build -buildvcs=false -trimpath", []string{"-buildvcs=false", "-trimpath"}, "./testdata/printversion", "unknown", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cmd *exec.Cmd
			if tt.build == nil {
				cmd = exec.Command("go", "run", tt.pkg, "--version")
			} else {
				exe := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
				if out, err := exec.Command("go", append(append([]string{"build", "-o", exe}, tt.build...), tt.pkg)...).CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				cmd = exec.Command(exe, "--version")
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := strings.Fields(string(out))
			if tt.orUnknown && len(got) >= 2 && got[1] == "unknown" {
				t.Logf("--version printed %q: go run reused an executable older than the checkout", out)
				return
			}
			if len(got) < 2 || got[0] != "evalctl" || got[1] != tt.version {
				t.Errorf("--version printed %q; want evalctl %s", out, tt.version)
			}
		})
	}
}
