// Package servingtest helps tests start real model servers: the evalctl
// binary (whose serve-model is the scripted llama-server), profiles that
// start it, and waiting for a server's process to be gone.
package servingtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// EvalctlBinary builds cmd/evalctl once per test binary, so the scripted
// model server is started exactly as a profile with {{evalctl}}
// serve-model starts it. TestMain calls Cleanup to remove it.
func EvalctlBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "evalctl-serving-test-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "evalctl")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			goTool = "go"
		}
		cmd := exec.Command(goTool, "build", "-o", buildPath, "github.com/evalctl/evalctl/cmd/evalctl")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build evalctl: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// Cleanup removes the binary EvalctlBinary built, if it built one.
func Cleanup() {
	if buildPath != "" {
		os.RemoveAll(filepath.Dir(buildPath))
	}
}

// ScriptedProfile writes a profile NAME.yaml in dir that starts `evalctl
// serve-model` with extra flags, as a user's profile would, and returns
// its path.
func ScriptedProfile(t testing.TB, dir, name string, flags ...string) string {
	t.Helper()
	q := make([]string, len(flags))
	for i, f := range flags {
		q[i] = fmt.Sprintf("%q", f)
	}
	y := fmt.Sprintf(`name: %s
command: ["{{evalctl}}", serve-model, --addr, "{{host}}:{{port}}", --ctx-size, "{{ctx_size}}"%s]
ctx_size: 8192
startup_timeout: 30s
stop_timeout: 5s
`, name, strings.Join(append([]string{""}, q...), ", "))
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Gone reports whether pid no longer runs. A zombie waiting for a slow
// init to reap it has exited, so it counts as gone.
func Gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// "PID (COMM) STATE ...": COMM may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// WaitGone fails the test unless pid is gone within the given time.
func WaitGone(t testing.TB, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !Gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after %s", pid, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
