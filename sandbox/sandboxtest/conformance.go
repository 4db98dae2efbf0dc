package sandboxtest

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/evalctl/evalctl/sandbox"
)

// Backend is what every sandbox backend offers its consumers: containers
// started for a spec, and cleanup by label. *sandbox.Engine (local or
// remote) and *sandbox.Hosts satisfy it; a future backend (Kubernetes pods)
// must too, and pass Conformance.
type Backend interface {
	Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error)
	Prune(ctx context.Context, labels map[string]string) ([]string, error)
}

// Conformance runs the one suite every backend passes (restic runs one
// suite against every storage backend): isolation flags, limits, exec
// semantics, timeouts, copy in and out, snapshot digests and cleanup by
// label. image is the sandbox image as the backend knows it.
func Conformance(t *testing.T, b Backend, image string) {
	cr := &conformanceRun{b: b, image: image, run: "conformance-" + uuid.NewString()}
	t.Cleanup(func() { b.Prune(context.Background(), map[string]string{sandbox.LabelRun: cr.run}) })
	t.Run("isolation", cr.isolation)
	t.Run("limits", cr.limits)
	t.Run("exec", cr.exec)
	t.Run("copy and snapshot", cr.copyAndSnapshot)
	t.Run("cleanup by label", cr.cleanupByLabel)
}

// conformanceRun is one Conformance run against backend b: every
// container it starts carries the run's label, so the run's cleanup
// removes them all, also after a failure.
type conformanceRun struct {
	b          Backend
	image, run string
}

// start starts a container of spec (a test container unless spec says
// otherwise) under the run's label and removes it when t ends.
func (cr *conformanceRun) start(t *testing.T, spec sandbox.Spec) *sandbox.Container {
	t.Helper()
	spec.Image, spec.Run = cr.image, cr.run
	if spec.Role == "" {
		spec.Role = sandbox.RoleTest
	}
	c, err := cr.b.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { c.Remove(context.Background()) })
	return c
}

// sh runs script under bash in c; only a failure to run it at all fails t.
func (cr *conformanceRun) sh(t *testing.T, c *sandbox.Container, script string, opt sandbox.ExecOptions) *sandbox.ExecResult {
	t.Helper()
	res, err := c.Exec(context.Background(), []string{"bash", "-c", script}, opt)
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return res
}

// isolation: the user, read-only root, no network, no capabilities, no
// new privileges and the seccomp profile are what the sandbox promises.
func (cr *conformanceRun) isolation(t *testing.T) {
	c := cr.start(t, sandbox.Spec{})
	tests := []struct{ name, script, want string }{
		{"user", "id -u; id -g", "1000\n1000\n"},
		{"read-only root", "touch /evil 2>/dev/null || echo refused; touch /etc/evil 2>/dev/null || echo refused", "refused\nrefused\n"},
		{"writable workspace and tmp", "touch /workspace/ok /tmp/ok && echo yes", "yes\n"},
		{"no network", "ls /sys/class/net", "lo\n"},
		{"capabilities dropped", "grep CapEff /proc/self/status", "CapEff:\t0000000000000000\n"},
		{"no new privileges", "grep NoNewPrivs /proc/self/status", "NoNewPrivs:\t1\n"},
		{"seccomp denies ptrace", `python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); print(l.ptrace(0, 0, 0, 0), ctypes.get_errno())'`, "-1 1\n"},
	}
	for _, tt := range tests {
		if got := string(cr.sh(t, c, tt.script, sandbox.ExecOptions{}).Stdout); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// limits: memory, process and workspace limits hold.
func (cr *conformanceRun) limits(t *testing.T) {
	c := cr.start(t, sandbox.Spec{Limits: sandbox.Limits{MemoryBytes: 96 << 20, PIDs: 64, WorkspaceBytes: 16 << 20}})
	res, err := c.Exec(context.Background(), []string{"python3", "-c", "a = b'x' * (512 << 20)"}, sandbox.ExecOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OOMKilled || res.ExitCode != 137 {
		t.Errorf("memory hog: OOMKilled=%v exit=%d, want true 137", res.OOMKilled, res.ExitCode)
	}
	if got := strings.TrimSpace(string(cr.sh(t, c, "cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null", sandbox.ExecOptions{}).Stdout)); got != "64" {
		t.Errorf("pids.max = %q, want 64", got)
	}
	res = cr.sh(t, c, "head -c 64M /dev/zero > /workspace/big", sandbox.ExecOptions{})
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "No space left on device") {
		t.Errorf("64 MiB into a 16 MiB workspace: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}

// exec: exit codes, separate streams, capped output and timeouts (which
// kill every process of the command), with and without the runner.
func (cr *conformanceRun) exec(t *testing.T) {
	c := cr.start(t, sandbox.Spec{})
	for _, noRunner := range []bool{false, true} {
		res := cr.sh(t, c, "echo out; echo err >&2; exit 7", sandbox.ExecOptions{NoRunner: noRunner})
		if res.ExitCode != 7 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
			t.Errorf("runner=%v: exit %d stdout %q stderr %q, want 7 out err", !noRunner, res.ExitCode, res.Stdout, res.Stderr)
		}
		res = cr.sh(t, c, "head -c 100000 /dev/zero", sandbox.ExecOptions{MaxOutput: 1000, NoRunner: noRunner})
		if !res.StdoutTruncated || res.StdoutBytes != 100000 || !bytes.HasSuffix(res.Stdout, []byte(sandbox.TruncationMark)) {
			t.Errorf("runner=%v: capped output: truncated %v, counted %d", !noRunner, res.StdoutTruncated, res.StdoutBytes)
		}
		begin := time.Now()
		res = cr.sh(t, c, "sleep 500 & sleep 400", sandbox.ExecOptions{Timeout: time.Second, NoRunner: noRunner})
		if !res.TimedOut || time.Since(begin) > 8*time.Second {
			t.Errorf("runner=%v: timeout: TimedOut %v after %v", !noRunner, res.TimedOut, time.Since(begin))
		}
		if got := strings.TrimSpace(string(cr.sh(t, c, "ps -eo args= | grep -c '^sleep [45]00$' || true", sandbox.ExecOptions{}).Stdout)); got != "0" {
			t.Errorf("runner=%v: %s sleeps outlived their timeout", !noRunner, got)
		}
	}
}

// copyAndSnapshot: files copied in keep mode and content, a snapshot's
// digest is the content's own, and a read-only workspace stays so.
func (cr *conformanceRun) copyAndSnapshot(t *testing.T) {
	in := []sandbox.Entry{
		{Name: "bin", Mode: fs.ModeDir | 0o755},
		{Name: "bin/run.sh", Mode: 0o755, Data: []byte("#!/bin/sh\necho hi\n")},
		{Name: "secret.txt", Mode: 0o600, Data: []byte("s\x00\xff")},
		{Name: "link", Mode: fs.ModeSymlink | 0o777, Linkname: "bin/run.sh"},
	}
	want, err := sandbox.NewSnapshot(in)
	if err != nil {
		t.Fatal(err)
	}
	c := cr.start(t, sandbox.Spec{})
	if err := c.CopyIn(context.Background(), "/workspace", in); err != nil {
		t.Fatal(err)
	}
	if got := string(cr.sh(t, c, "./bin/run.sh", sandbox.ExecOptions{}).Stdout); got != "hi\n" {
		t.Errorf("copied script printed %q", got)
	}
	snap, err := c.Snapshot(context.Background(), "/workspace", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The digest is the content's, whatever engine the bytes passed through.
	if snap.SHA256 != want.SHA256 {
		t.Errorf("snapshot digest %s, want %s (the entries' own)", snap.SHA256, want.SHA256)
	}
	ro := cr.start(t, sandbox.Spec{ReadOnlyWorkspace: true})
	if err := ro.CopyInReadOnly(context.Background(), "/workspace", in); err != nil {
		t.Fatal(err)
	}
	if res := cr.sh(t, ro, "echo x >> secret.txt", sandbox.ExecOptions{}); res.ExitCode == 0 {
		t.Error("a command changed a read-only workspace")
	}
}

// cleanupByLabel: a prune removes exactly the labelled containers, and
// what it removed holds no place any more.
func (cr *conformanceRun) cleanupByLabel(t *testing.T) {
	label := "cleanup-" + uuid.NewString()
	for i := 0; i < 2; i++ {
		if _, err := cr.b.Start(context.Background(), sandbox.Spec{Image: cr.image, Role: sandbox.RoleTest, Run: label}); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := cr.b.Prune(context.Background(), map[string]string{sandbox.LabelRun: label})
	if err != nil || len(removed) != 2 {
		t.Fatalf("prune removed %v (%v), want the 2 labelled containers", removed, err)
	}
	if again, _ := cr.b.Prune(context.Background(), map[string]string{sandbox.LabelRun: label}); len(again) != 0 {
		t.Errorf("left after prune: %v", again)
	}
	// What a prune removed holds no place any more (a pool of small
	// capacity would wait forever otherwise).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := 0; i < 2; i++ {
		c, err := cr.b.Start(ctx, sandbox.Spec{Image: cr.image, Role: sandbox.RoleTest, Run: label})
		if err != nil {
			t.Fatalf("start after the prune: %v", err)
		}
		defer c.Remove(context.Background())
	}
}
