package runstore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Build says which code this evalctl is. Every record that names the
// version (run.json, each attempt, an export's protocol) carries its
// Version.
type Build struct {
	// Version is the commit with "+dirty" when the tree had changes, a
	// module version when evalctl was installed from a tagged module, or
	// "unknown": never a guess.
	Version string `json:"version"`
	// Commit is the full commit hash, "" when unknown; Dirty is null when
	// unknown.
	Commit string `json:"commit"`
	Dirty  *bool  `json:"dirty"`
	// From says where the commit came from: "build" (stamped by go build),
	// "checkout" (asked of the git checkout the binary was built from,
	// under go run or -buildvcs=false), "module", or "" when unknown.
	From string `json:"from"`
	Go   string `json:"go"`
	OS   string `json:"os"`
	Arch string `json:"arch"`
}

var (
	buildOnce sync.Once
	build     Build
)

// Version is BuildInfo().Version: what run.json's evalctl_version and
// 'evalctl --version' say.
func Version() string { return BuildInfo().Version }

// BuildInfo returns which code this evalctl is (worked out once).
func BuildInfo() Build {
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		exe, _ := os.Executable()
		bi, _ := debug.ReadBuildInfo()
		build = describe(bi, filepath.Dir(file), exe)
	})
	return build
}

// describe works out the build from the module build information, else
// from the git checkout in srcDir (the source directory the binary was
// compiled from) when it still holds what exe was built from.
func describe(bi *debug.BuildInfo, srcDir, exe string) Build {
	b := Build{Version: "unknown", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	var modified string
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	switch {
	case b.Commit != "":
		b.From = "build"
		if d, err := strconv.ParseBool(modified); err == nil {
			b.Dirty = &d
		}
	case bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		b.Version, b.From = bi.Main.Version, "module"
		return b
	default:
		fi, err := os.Stat(exe)
		if err != nil || !filepath.IsAbs(srcDir) {
			return b // -trimpath, or no executable to date the build by
		}
		commit, dirty, ok := fromCheckout(srcDir, fi.ModTime())
		if !ok {
			return b
		}
		b.Commit, b.Dirty, b.From = commit, &dirty, "checkout"
	}
	b.Version = b.Commit
	switch {
	case b.Dirty == nil:
		b.Version += "+unknown-dirty"
	case *b.Dirty:
		b.Version += "+dirty"
	}
	return b
}

// fromCheckout asks git for the commit of the checkout holding dir and
// whether its tree differs from it. The answer is the build's only if the
// checkout has not changed since built: a commit made later, or a file
// (tracked or not ignored) written later, and ok is false.
func fromCheckout(dir string, built time.Time) (commit string, dirty, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	git := func(args ...string) (string, bool) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	top, ok1 := git("rev-parse", "--show-toplevel")
	commit, ok2 := git("rev-parse", "HEAD")
	when, ok3 := git("log", "-1", "--format=%ct", "HEAD")
	status, ok4 := git("status", "--porcelain", "--untracked-files=all")
	files, ok5 := git("ls-files", "--cached", "--others", "--exclude-standard")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || len(commit) < 40 {
		return "", false, false
	}
	if sec, err := strconv.ParseInt(when, 10, 64); err != nil || time.Unix(sec, 0).After(built) {
		return "", false, false
	}
	for _, f := range strings.Split(files, "\n") {
		p := filepath.Join(top, f)
		fi, err := os.Stat(p)
		if os.IsNotExist(err) {
			fi, err = os.Stat(filepath.Dir(p)) // removed: when its directory changed
		}
		if err == nil && fi.ModTime().After(built) {
			return "", false, false
		}
	}
	return commit, status != "", true
}
