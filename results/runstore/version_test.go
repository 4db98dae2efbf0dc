package runstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a git checkout with one commit, dated an hour ago, and
// returns its directory and the commit.
func gitRepo(t *testing.T) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	past := time.Now().Add(-time.Hour)
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		date := past.Format(time.RFC3339)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"src/a.go", ".gitignore"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("runs/\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, f), past, past); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("commit", "-q", "-m", "one")
	return dir, git("rev-parse", "HEAD")
}

// exeAt writes a stand-in executable with the given modification time.
func exeAt(t *testing.T, at time.Time) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "evalctl")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(exe, at, at); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestDescribeBuild: the version is the exact commit with a dirty flag,
// from the build's own stamp or, without one (go run, -buildvcs=false),
// from the checkout the binary was built from, while that checkout still
// holds what was built; otherwise "unknown", never a guess.
func TestDescribeBuild(t *testing.T) {
	repo, commit := gitRepo(t)
	src := filepath.Join(repo, "src")
	now := time.Now()
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	check := func(name string, b Build, version, from string, dirty *bool) {
		t.Helper()
		if b.Version != version || b.From != from || (dirty == nil) != (b.Dirty == nil) || (dirty != nil && *dirty != *b.Dirty) {
			t.Errorf("%s: %+v; want version %q from %q dirty %v", name, b, version, from, dirty)
		}
	}
	yes, no := true, false

	check("clean checkout", describe(devel, src, exeAt(t, now)), commit, "checkout", &no)
	check("no build information", describe(nil, src, exeAt(t, now)), commit, "checkout", &no)
	check("trimmed paths", describe(devel, "github.com/evalctl/evalctl/results/runstore", exeAt(t, now)), "unknown", "", nil)
	check("not a checkout", describe(devel, t.TempDir(), exeAt(t, now)), "unknown", "", nil)
	check("no executable", describe(devel, src, filepath.Join(t.TempDir(), "gone")), "unknown", "", nil)
	check("commit after the build", describe(devel, src, exeAt(t, now.Add(-2*time.Hour))), "unknown", "", nil)
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101000000-abcdef123456+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abcdef1234567890abcdef1234567890abcdef12"}, {Key: "vcs.modified", Value: "true"}}}
	check("stamped by go build", describe(stamped, src, exeAt(t, now)), "abcdef1234567890abcdef1234567890abcdef12+dirty", "build", &yes)
	check("tagged module", describe(&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, src, exeAt(t, now)), "v1.2.3", "module", nil)

	// A change made before the build is in it: dirty. One made after it is
	// not: the checkout no longer says what was built.
	edited := filepath.Join(repo, "src", "a.go")
	if err := os.WriteFile(edited, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mid := now.Add(-30 * time.Minute)
	if err := os.Chtimes(edited, mid, mid); err != nil {
		t.Fatal(err)
	}
	check("edited before the build", describe(devel, src, exeAt(t, now)), commit+"+dirty", "checkout", &yes)
	check("edited after the build", describe(devel, src, exeAt(t, now.Add(-45*time.Minute))), "unknown", "", nil)
	untracked := filepath.Join(repo, "new.go")
	if err := os.WriteFile(untracked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check("a new file written after the build", describe(devel, src, exeAt(t, mid.Add(time.Minute))), "unknown", "", nil)
	if err := os.MkdirAll(filepath.Join(repo, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(untracked)
	if err := os.Chtimes(repo, mid, mid); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "runs", "out.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	check("an ignored file written after the build", describe(devel, src, exeAt(t, mid.Add(time.Minute))), commit+"+dirty", "checkout", &yes)
}

// TestRegisterNamesTheCommit: run.json names the code that registered the
// run: under go test (no build stamp) the commit of this checkout.
func TestRegisterNamesTheCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	dir := filepath.Join(t.TempDir(), "r")
	st, err := Register(dir, "plan.json", []byte("{}\n"), &Run{ID: "id-1", Kind: KindCohort}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))
	if r.EvalctlVersion != commit && r.EvalctlVersion != commit+"+dirty" {
		t.Errorf("run.json evalctl_version %q; want %s (+dirty when the tree has changes)", r.EvalctlVersion, commit)
	}
}
