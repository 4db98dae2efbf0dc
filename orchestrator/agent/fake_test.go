package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
)

// hostSandbox runs commands with the host's tools in a temporary directory
// standing for /workspace: real processes and a real file system, at the
// Sandbox interface. The real container is tested in sandbox_test.go.
type hostSandbox struct {
	root string
}

func newHostSandbox(t testing.TB, from string) *hostSandbox {
	t.Helper()
	root := t.TempDir()
	if from != "" {
		if err := os.CopyFS(root, os.DirFS(from)); err != nil {
			t.Fatal(err)
		}
	}
	return &hostSandbox{root: root}
}

func (h *hostSandbox) Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error) {
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(cctx, cmd[0], cmd[1:]...)
	c.Dir = h.root
	if rel, ok := strings.CutPrefix(opt.Dir, "/workspace"); ok {
		c.Dir = filepath.Join(h.root, rel)
	}
	c.Stdin = opt.Stdin
	// The distribution's tools, not a developer's shims (pyenv's python3
	// takes two seconds to start).
	c.Env = append([]string{"PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + h.root}, opt.Env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	// Like the real sandbox, stop the command's whole process group.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	start := time.Now()
	err := c.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res := &sandbox.ExecResult{Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if cctx.Err() != nil {
			res.TimedOut, res.ExitCode = true, 124
		}
	default:
		return nil, err
	}
	max := opt.MaxOutput
	if max <= 0 {
		max = sandbox.DefaultMaxOutput
	}
	res.StdoutBytes, res.StderrBytes = int64(out.Len()), int64(errb.Len())
	res.Stdout, res.StdoutTruncated = capBytes(out.Bytes(), max)
	res.Stderr, res.StderrTruncated = capBytes(errb.Bytes(), max)
	return res, nil
}

func capBytes(b []byte, max int) ([]byte, bool) {
	if len(b) <= max {
		return b, false
	}
	return append(b[:max:max], sandbox.TruncationMark...), true
}

// brokenSandbox fails like a sandbox whose container died.
type brokenSandbox struct{}

func (brokenSandbox) Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error) {
	return nil, errors.New("container 0123456789ab is not running")
}

// instantSandbox answers every command at once with exit 0: a trivial tool
// for measuring the loop's own overhead.
type instantSandbox struct{}

func (instantSandbox) Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error) {
	return &sandbox.ExecResult{}, nil
}
