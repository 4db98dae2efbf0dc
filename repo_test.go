package evalctl_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// maxTracked is the largest file the repository may track outside cases/
// (whose corpora are data): anything bigger is a build output or a
// generated file that slipped in.
const maxTracked = 1 << 20

// git runs git in the module root; the test skips outside a checkout.
func git(t *testing.T, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "not a git repository") {
			t.Skip("not a git checkout")
		}
		if ee, ok := err.(*exec.ExitError); ok && args[0] == "check-ignore" && ee.ExitCode() == 1 {
			return out
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestNoLargeTrackedFiles fails on a tracked file over 1 MiB outside
// cases/: built binaries and outputs are never committed.
func TestNoLargeTrackedFiles(t *testing.T) {
	for _, name := range strings.Split(strings.TrimSpace(string(git(t, "ls-files", "-z"))), "\x00") {
		if name == "" || strings.HasPrefix(name, "cases/") {
			continue
		}
		st, err := os.Lstat(name)
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if st.Size() > maxTracked {
			t.Errorf("%s is tracked and %d bytes (over 1 MiB): a build output or generated file? remove it with 'git rm --cached %s' and cover it in .gitignore", name, st.Size(), name)
		}
	}
}

// TestBuildOutputsIgnored: what 'go build' and 'go test -c' write where a
// developer runs them, and what the commands write by default, is ignored.
func TestBuildOutputsIgnored(t *testing.T) {
	outputs := []string{"evalctl", "cmd/evalctl/evalctl", "orchestrator/orchestrator.test", "cpu.prof",
		"runs/x/run.json", "exports/x/SHA256SUMS", "results.json", "cases/adder/__pycache__/x.pyc"}
	ignored := string(git(t, append([]string{"check-ignore", "--no-index"}, outputs...)...))
	for _, o := range outputs {
		if !strings.Contains("\n"+ignored, "\n"+o+"\n") {
			t.Errorf("%s is not covered by .gitignore", o)
		}
	}
}
