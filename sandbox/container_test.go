package sandbox_test

import (
	"bytes"
	"context"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

func sh(t *testing.T, c *sandbox.Container, script string, opt sandbox.ExecOptions) *sandbox.ExecResult {
	t.Helper()
	res, err := c.Exec(context.Background(), []string{"bash", "-c", script}, opt)
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return res
}

func TestExecCapturesExitCodeAndStreamsSeparately(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	tests := []struct {
		script         string
		code           int
		stdout, stderr string
	}{
		{"true", 0, "", ""},
		{"echo out; echo err >&2; exit 3", 3, "out\n", "err\n"},
		{"printf 'a\\x00b'; exit 255", 255, "a\x00b", ""},
		{"cat", 0, "from stdin", ""},
	}
	// Both paths: the container's command runner and a runtime exec.
	for _, noRunner := range []bool{false, true} {
		for _, tt := range tests {
			opt := sandbox.ExecOptions{Timeout: 10 * time.Second, NoRunner: noRunner}
			if tt.script == "cat" {
				opt.Stdin = strings.NewReader("from stdin")
			}
			res := sh(t, c, tt.script, opt)
			if res.ExitCode != tt.code || string(res.Stdout) != tt.stdout || string(res.Stderr) != tt.stderr || res.TimedOut {
				t.Errorf("%q (runtime exec %v): got code %d stdout %q stderr %q timedout %v; want %d %q %q", tt.script, noRunner, res.ExitCode, res.Stdout, res.Stderr, res.TimedOut, tt.code, tt.stdout, tt.stderr)
			}
		}
	}
}

func TestCommandThatKillsTheRunnerIsReportedAndRecovered(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	res := sh(t, c, "kill -9 -1", sandbox.ExecOptions{})
	if res.ExitCode != 137 || !strings.Contains(string(res.Stderr), "killed the sandbox's command runner") {
		t.Errorf("got exit %d stderr %q", res.ExitCode, res.Stderr)
	}
	if got := string(sh(t, c, "echo again", sandbox.ExecOptions{}).Stdout); got != "again\n" {
		t.Errorf("after the runner was killed: %q", got)
	}
	res, err := c.Exec(context.Background(), []string{"/nonexistent"}, sandbox.ExecOptions{})
	if err != nil || res.ExitCode != 127 {
		t.Errorf("missing program: %+v %v, want exit 127", res, err)
	}
}

// TestTimeoutStopsCommandAndLeavesNoProcess, through the in-container
// runner and through the fallback runtime exec alike.
// TestKillAllLeavesNothingOfTheCommands: daemons that escaped their
// command's process group are gone after KillAll, whether the command
// runner is alive (it kills them and survives) or was killed by a command
// (a runtime exec kills them); the next command runs either way.
func TestKillAllLeavesNothingOfTheCommands(t *testing.T) {
	for _, runnerKilled := range []bool{false, true} {
		t.Run(map[bool]string{false: "runner alive", true: "runner killed"}[runnerKilled], func(t *testing.T) {
			c := sandboxtest.Start(t, sandbox.Spec{})
			runner := strings.TrimSpace(string(sh(t, c, "setsid sleep 301 >/dev/null 2>&1 & nohup sleep 302 >/dev/null 2>&1 & echo $PPID", sandbox.ExecOptions{}).Stdout))
			if runnerKilled {
				c.Exec(context.Background(), []string{"bash", "-c", "kill -9 $PPID"}, sandbox.ExecOptions{})
			}
			c.KillAll(context.Background())
			left := sh(t, c, "ps -eo args= | grep -c '^sleep 30[12]$' || true", sandbox.ExecOptions{})
			if got := strings.TrimSpace(string(left.Stdout)); got != "0" {
				t.Errorf("%s sleeps left after KillAll, want 0", got)
			}
			after := strings.TrimSpace(string(sh(t, c, "echo $PPID", sandbox.ExecOptions{}).Stdout))
			if !runnerKilled && after != runner {
				t.Errorf("the runner changed from %s to %s: KillAll killed it", runner, after)
			}
			if runnerKilled && after == runner {
				t.Errorf("the runner %s answered after it was killed", runner)
			}
		})
	}
}

func TestTimeoutStopsCommandAndLeavesNoProcess(t *testing.T) {
	for _, noRunner := range []bool{false, true} {
		t.Run(map[bool]string{false: "runner", true: "runtime exec"}[noRunner], func(t *testing.T) {
			c := sandboxtest.Start(t, sandbox.Spec{})
			start := time.Now()
			res, err := c.Exec(context.Background(), []string{"sleep", "600"}, sandbox.ExecOptions{Timeout: 2 * time.Second, NoRunner: noRunner})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 6*time.Second {
				t.Errorf("timed-out exec took %v, want a few seconds", took)
			}
			if !res.TimedOut {
				t.Errorf("TimedOut = false (exit %d), want true", res.ExitCode)
			}
			ps := sh(t, c, "ps -eo comm= | grep -c '^sleep$' || true", sandbox.ExecOptions{})
			// The container's own PID 1 child is "sleep infinity".
			if got := strings.TrimSpace(string(ps.Stdout)); got != "1" {
				t.Errorf("sleep processes after timeout = %s, want only the container's own (1); ps: %s", got, sh(t, c, "ps -ef", sandbox.ExecOptions{}).Stdout)
			}
			// A background child in the same group dies with it too.
			res = sh(t, c, "sleep 500 & sleep 400", sandbox.ExecOptions{Timeout: time.Second, NoRunner: noRunner})
			if !res.TimedOut {
				t.Errorf("TimedOut = false for a command with a background child")
			}
			ps = sh(t, c, "ps -eo args= | grep -c '^sleep [45]00$' || true", sandbox.ExecOptions{})
			if got := strings.TrimSpace(string(ps.Stdout)); got != "0" {
				t.Errorf("leftover sleeps = %s, want 0", got)
			}
		})
	}
}

func TestOrphanHoldingOutputDoesNotBlock(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	start := time.Now()
	res := sh(t, c, "setsid sleep 300 & echo started", sandbox.ExecOptions{Timeout: 30 * time.Second})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("exec with a detached orphan took %v", took)
	}
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "started") {
		t.Errorf("got %d %q", res.ExitCode, res.Stdout)
	}
}

func TestOutputFloodIsCappedWithoutMemoryGrowth(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const flood = 300 << 20
	res := sh(t, c, "head -c 314572800 /dev/zero; echo tail >&2", sandbox.ExecOptions{Timeout: 2 * time.Minute, MaxOutput: 1 << 20})
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if !res.StdoutTruncated || res.StdoutBytes != flood {
		t.Errorf("truncated=%v bytes=%d, want true %d", res.StdoutTruncated, res.StdoutBytes, flood)
	}
	if len(res.Stdout) != 1<<20+len(sandbox.TruncationMark) || !bytes.HasSuffix(res.Stdout, []byte(sandbox.TruncationMark)) {
		t.Errorf("stdout length %d, want the cap plus the truncation mark", len(res.Stdout))
	}
	if string(res.Stderr) != "tail\n" || res.StderrTruncated {
		t.Errorf("stderr %q truncated %v", res.Stderr, res.StderrTruncated)
	}
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 32<<20 {
		t.Errorf("heap grew by %d MiB for a 300 MiB flood", grew>>20)
	}
}

func TestForkBombIsContainedByPIDLimit(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{Limits: sandbox.Limits{PIDs: 64}})
	res := sh(t, c, "bomb() { bomb | bomb & }; bomb; sleep 3", sandbox.ExecOptions{Timeout: 4 * time.Second})
	if !strings.Contains(string(res.Stderr), "fork") && !strings.Contains(string(res.Stderr), "Resource temporarily unavailable") {
		t.Errorf("stderr does not show the PID limit refusing forks: %.300s", res.Stderr)
	}
	// The bomb's processes were reaped with the command; the sandbox works.
	ok := poll.For(10*time.Second, func() bool {
		res, err := c.Exec(context.Background(), []string{"true"}, sandbox.ExecOptions{Timeout: 5 * time.Second})
		return err == nil && res.ExitCode == 0
	})
	if !ok {
		t.Fatal("sandbox unusable after the fork bomb")
	}
	n := sh(t, c, "cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null", sandbox.ExecOptions{})
	if strings.TrimSpace(string(n.Stdout)) != "64" {
		t.Errorf("pids.max = %q, want 64", n.Stdout)
	}
}

func TestMemoryHogIsKilledAndReportedOOM(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{Limits: sandbox.Limits{MemoryBytes: 96 << 20}})
	res, err := c.Exec(context.Background(), []string{"python3", "-c", "a = b'x' * (512 << 20); print(len(a))"}, sandbox.ExecOptions{Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OOMKilled || res.ExitCode != 137 {
		t.Errorf("OOMKilled=%v exit=%d, want true 137 (stderr %q)", res.OOMKilled, res.ExitCode, res.Stderr)
	}
	// The next ordinary failure is not blamed on memory.
	res = sh(t, c, "kill -9 $$", sandbox.ExecOptions{})
	if res.OOMKilled {
		t.Errorf("a plain SIGKILL was reported as OOM")
	}
}

func TestIsolation(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	tests := []struct {
		name, script, want string
	}{
		{"not root", "id -u; id -g", "1000\n1000\n"},
		{"write /workspace", "touch /workspace/ok && echo yes", "yes\n"},
		{"write /tmp", "touch /tmp/ok && echo yes", "yes\n"},
		{"write /etc refused", "touch /etc/evil 2>/dev/null || echo refused", "refused\n"},
		{"write / refused", "touch /evil 2>/dev/null || echo refused", "refused\n"},
		{"write home refused", "touch /home/agent/x 2>/dev/null || echo refused", "refused\n"},
		// Only the loopback interface exists: no traffic is sent to prove it.
		{"network off", "ls /sys/class/net", "lo\n"},
		{"no capabilities", "grep CapEff /proc/self/status", "CapEff:\t0000000000000000\n"},
		{"no new privileges", "grep NoNewPrivs /proc/self/status", "NoNewPrivs:\t1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(sh(t, c, tt.script, sandbox.ExecOptions{}).Stdout); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSandboxesDoNotSeeEachOther(t *testing.T) {
	a := sandboxtest.Start(t, sandbox.Spec{})
	b := sandboxtest.Start(t, sandbox.Spec{})
	sh(t, a, "echo secret > /workspace/a.txt; echo secret > /tmp/a.txt", sandbox.ExecOptions{})
	res := sh(t, b, "ls /workspace /tmp; cat /workspace/a.txt /tmp/a.txt 2>&1; true", sandbox.ExecOptions{})
	if strings.Contains(string(res.Stdout), "secret") || strings.Contains(string(res.Stdout), "a.txt\n") {
		t.Errorf("sandbox b sees a's files: %q", res.Stdout)
	}
}

func TestCancelRemovesContainer(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	run := sandboxtest.RunLabel(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := eng.Start(ctx, sandbox.Spec{Image: img.Ref, Role: sandbox.RoleTest, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, []string{"sleep", "60"}, sandbox.ExecOptions{Timeout: time.Minute})
		done <- err
	}()
	// Cancel once the command runs in the container. The look is a runtime
	// exec: the command runner serves one command of a user at a time, so a
	// look through it would wait for the sleep to end. It matches the
	// argument 60, since the container's first process is a sleep too.
	poll.Until(t, "the command to start", time.Minute, func() bool {
		res, err := c.Exec(context.Background(), []string{"sh", "-c", "grep -qxz 60 /proc/[0-9]*/cmdline"}, sandbox.ExecOptions{Timeout: 10 * time.Second, NoRunner: true})
		return err == nil && res.ExitCode == 0
	})
	cancel()
	if err := <-done; err == nil {
		t.Error("exec under a cancelled context returned no error")
	}
	var ids []string
	if !poll.For(10*time.Second, func() bool {
		ids, err = eng.List(context.Background(), map[string]string{sandbox.LabelRun: run})
		return err == nil && len(ids) == 0
	}) {
		t.Fatalf("containers with the run's label remain after cancel: %v (%v)", ids, err)
	}
}

func TestPruneRemovesLeakedContainers(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	run := sandboxtest.RunLabel(t)
	for i := 0; i < 2; i++ {
		if _, err := eng.Start(context.Background(), sandbox.Spec{Image: img.Ref, Role: sandbox.RoleAgent, Run: run}); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: run})
	if err != nil || len(removed) != 2 {
		t.Fatalf("prune removed %v, %v; want 2", removed, err)
	}
	if ids, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: run}); len(ids) != 0 {
		t.Errorf("left after prune: %v", ids)
	}
}

func TestSnapshotRoundTripsByteExact(t *testing.T) {
	a := sandboxtest.Start(t, sandbox.Spec{})
	in := []sandbox.Entry{
		{Name: "bin", Mode: fs.ModeDir | 0o755},
		{Name: "bin/run.sh", Mode: 0o755, Data: []byte("#!/bin/sh\necho hi\n")},
		{Name: "empty", Mode: fs.ModeDir | 0o700},
		{Name: "secret.txt", Mode: 0o600, Data: []byte("s\x00\xff")},
		{Name: "zero", Mode: 0o644},
		{Name: "link", Mode: fs.ModeSymlink | 0o777, Linkname: "bin/run.sh"},
		{Name: "deep/er/file.py", Mode: 0o644, Data: bytes.Repeat([]byte("x = 1\n"), 1000)},
		{Name: "deep", Mode: fs.ModeDir | 0o755},
		{Name: "deep/er", Mode: fs.ModeDir | 0o755},
	}
	if err := a.CopyIn(context.Background(), "/workspace", in); err != nil {
		t.Fatal(err)
	}
	sh(t, a, "mkdir -p made/empty && chmod 0750 made && printf new > made/f && chmod 0604 made/f", sandbox.ExecOptions{})
	snap, err := a.Snapshot(context.Background(), "/workspace", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := sandboxtest.Start(t, sandbox.Spec{})
	if err := b.CopyTar(context.Background(), "/workspace", bytes.NewReader(snap.Tar)); err != nil {
		t.Fatal(err)
	}
	snap2, err := b.Snapshot(context.Background(), "/workspace", nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.SHA256 != snap2.SHA256 {
		t.Errorf("round trip changed the snapshot: %s != %s", snap.SHA256, snap2.SHA256)
	}
	// A directory's size is the file system's business (/workspace is a
	// tmpfs): only files and links give theirs.
	got := string(sh(t, b, "cd /workspace && stat -c '%n %a %F %s' bin/run.sh secret.txt zero link made/f && stat -c '%n %a %F' empty made made/empty && cat secret.txt | od -An -tx1", sandbox.ExecOptions{}).Stdout)
	want := "bin/run.sh 755 regular file 18\nsecret.txt 600 regular file 3\nzero 644 regular empty file 0\nlink 777 symbolic link 10\nmade/f 604 regular file 3\nempty 700 directory\nmade 750 directory\nmade/empty 755 directory\n 73 00 ff\n"
	if got != want {
		t.Errorf("in the fresh container:\n%s\nwant:\n%s", got, want)
	}
	entries, err := snap.Entries()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]sandbox.Entry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	for _, e := range in {
		g, ok := byName[e.Name]
		if !ok || g.Mode != e.Mode || !bytes.Equal(g.Data, e.Data) || g.Linkname != e.Linkname {
			t.Errorf("entry %s: got %+v", e.Name, g)
		}
	}
}

func TestArchiveRefusesEscapingNames(t *testing.T) {
	for _, name := range []string{"../x", "/etc/passwd", "a/../../x", ""} {
		var buf bytes.Buffer
		if err := sandbox.WriteArchive(&buf, []sandbox.Entry{{Name: name, Mode: 0o644}}); err == nil {
			t.Errorf("WriteArchive accepted %q", name)
		}
	}
}
