package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// syscallProbe tries each way of reaching into another process and prints
// one "name errno" line per try (0: allowed).
const syscallProbe = `import ctypes, os, subprocess, time
libc = ctypes.CDLL(None, use_errno=True)
child = subprocess.Popen(["sleep", "30"])
buf = ctypes.create_string_buffer(8)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 8)
remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 8)
def probe(name, fn):
    ctypes.set_errno(0)
    r = fn()
    print(name, 0 if r != -1 else ctypes.get_errno())
probe("ptrace_traceme", lambda: libc.ptrace(0, 0, 0, 0))
probe("ptrace_attach", lambda: libc.ptrace(16, child.pid, 0, 0))
probe("ptrace_seize", lambda: libc.ptrace(0x4206, child.pid, 0, 0))
probe("process_vm_readv", lambda: libc.process_vm_readv(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
probe("process_vm_writev", lambda: libc.process_vm_writev(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
child.kill()
`

// TestSeccompDeniesTracingAndCrossProcessMemory: every sandbox container
// (agent and grader alike) runs under evalctl's seccomp profile, which
// denies ptrace and process_vm_readv/writev even on a process of one's
// own (Docker's default profile allows them since Linux 4.8).
func TestSeccompDeniesTracingAndCrossProcessMemory(t *testing.T) {
	for _, spec := range []sandbox.Spec{{}, {ReadOnlyWorkspace: true, Volumes: []string{"/checks"}}} {
		c := sandboxtest.Start(t, spec)
		for _, user := range []string{"", sandbox.HarnessUser} {
			res, err := c.Exec(context.Background(), []string{"python3", "-c", syscallProbe}, sandbox.ExecOptions{Dir: "/tmp", User: user, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
				if f := strings.Fields(l); len(f) == 2 {
					got[f[0]] = f[1]
				}
			}
			for _, name := range []string{"ptrace_traceme", "ptrace_attach", "ptrace_seize", "process_vm_readv", "process_vm_writev"} {
				if got[name] != "1" { // EPERM
					t.Errorf("user %q, read-only workspace %v: %s gave errno %q, want 1 (EPERM)\n%s", user, spec.ReadOnlyWorkspace, name, got[name], res.Stderr)
				}
			}
		}
	}
}

// TestAnswerUserCannotReachTheHarness: a process of the harness user can
// be neither signalled, traced nor read through /proc by the command user.
func TestAnswerUserCannotReachTheHarness(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{ReadOnlyWorkspace: true})
	ctx := context.Background()
	if _, err := c.Exec(ctx, []string{"sleep", "60"}, sandbox.ExecOptions{User: sandbox.HarnessUser, Detach: true, Dir: "/tmp"}); err != nil {
		t.Fatal(err)
	}
	res := sh(t, c, `for i in $(seq 50); do pid=$(pgrep -u 1001 -x sleep) && break; sleep 0.1; done
kill -9 $pid 2>/dev/null && echo killed || echo kill-refused
kill -STOP $pid 2>/dev/null && echo stopped || echo stop-refused
cat /proc/$pid/mem 2>/dev/null && echo mem-read || echo mem-refused
cat /proc/$pid/environ >/dev/null 2>&1 && echo environ-read || echo environ-refused
touch /workspace/x 2>/dev/null && echo workspace-written || echo workspace-refused`, sandbox.ExecOptions{Dir: "/tmp"})
	want := "kill-refused\nstop-refused\nmem-refused\nenviron-refused\nworkspace-refused\n"
	if string(res.Stdout) != want {
		t.Errorf("got %q, want %q (stderr %q)", res.Stdout, want, res.Stderr)
	}
	alive := sh(t, c, "pgrep -u 1001 -x sleep >/dev/null && echo alive", sandbox.ExecOptions{User: sandbox.HarnessUser, Dir: "/tmp"})
	if string(alive.Stdout) != "alive\n" {
		t.Errorf("the harness process did not survive the command user's attempts")
	}
}

// TestCommandLeavesNoProcessBehind: when a command ends, every process it
// started ends too, whatever it did to detach; a fork bomb in a session of
// its own does not break the next command.
func TestCommandLeavesNoProcessBehind(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{Limits: sandbox.Limits{PIDs: 128}})
	tests := []struct{ name, script string }{
		{"background job", "sleep 600 &"},
		{"nohup and disown", "nohup sleep 600 >/dev/null 2>&1 & disown"},
		{"setsid", "setsid sleep 600 >/dev/null 2>&1 < /dev/null &"},
		{"double fork", "(sh -c 'sleep 600 >/dev/null 2>&1 &' &)"},
		{"daemon in a new session by python", `python3 -c "import os,time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)"`},
		{"fork bomb under setsid", `setsid bash -c 'b() { b | b & }; b' >/dev/null 2>&1 < /dev/null & sleep 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh(t, c, tt.script, sandbox.ExecOptions{Timeout: 20 * time.Second})
			start := time.Now()
			res := sh(t, c, "ps -u 1000 -o pid=,args=", sandbox.ExecOptions{Timeout: 20 * time.Second})
			if res.ExitCode != 0 {
				t.Fatalf("the next command failed: exit %d, stderr %q", res.ExitCode, res.Stderr)
			}
			if time.Since(start) > 15*time.Second {
				t.Errorf("the next command took %s", time.Since(start))
			}
			for _, l := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
				if strings.Contains(l, "execd") || strings.Contains(l, "ps -u 1000") {
					continue
				}
				t.Errorf("left running: %s", l)
			}
		})
	}
}

// TestWorkspaceHasASizeLimit: /workspace is a tmpfs of a fixed size, not
// the host's disk; a command that fills it fails, and its result says why.
func TestWorkspaceHasASizeLimit(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{Limits: sandbox.Limits{WorkspaceBytes: 16 << 20}})
	res := sh(t, c, "head -c 64M /dev/zero > /workspace/big", sandbox.ExecOptions{})
	if res.ExitCode == 0 {
		t.Fatal("writing 64 MiB into a 16 MiB workspace succeeded")
	}
	for _, want := range []string{"No space left on device", "evalctl: /workspace is full: it holds at most 16 MiB"} {
		if !strings.Contains(string(res.Stderr), want) {
			t.Errorf("stderr %q lacks %q", res.Stderr, want)
		}
	}
	// Freeing space works, and the note goes with it.
	res = sh(t, c, "rm /workspace/big && echo hi > /workspace/small && cat /workspace/small", sandbox.ExecOptions{})
	if string(res.Stdout) != "hi\n" || strings.Contains(string(res.Stderr), "is full") {
		t.Errorf("after freeing space: stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}

// TestSnapshotCountsOnlyWhatIsKept: caches are left out before the size
// limit counts (300 MiB of __pycache__ is no reason to fail), and kept
// files over the limit give the too-large marker, not an error.
func TestSnapshotCountsOnlyWhatIsKept(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{Limits: sandbox.Limits{WorkspaceBytes: 64 << 20}})
	ctx := context.Background()
	skip := func(name string) bool { return name == "__pycache__" }
	// Sparse files: 300 MiB in the archive, nothing on the tmpfs.
	sh(t, c, "mkdir __pycache__ && truncate -s 300M __pycache__/big.pyc && echo ok > answer.py", sandbox.ExecOptions{})
	snap, err := c.Snapshot(ctx, "/workspace", skip)
	if err != nil {
		t.Fatalf("snapshot with a 300 MiB cache: %v", err)
	}
	entries, err := snap.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if sandbox.IsTooLarge(entries) || len(entries) != 1 || entries[0].Name != "answer.py" {
		t.Fatalf("entries %v, want answer.py alone", names(entries))
	}
	sh(t, c, "truncate -s 300M data.bin", sandbox.ExecOptions{})
	snap, err = c.Snapshot(ctx, "/workspace", skip)
	if err != nil {
		t.Fatalf("snapshot of a too large answer: %v (want the marker, not an error)", err)
	}
	if entries, _ = snap.Entries(); !sandbox.IsTooLarge(entries) {
		t.Fatalf("entries %v, want the too-large marker", names(entries))
	}
}

func names(entries []sandbox.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// TestCommandsCannotWriteIntoTheRunner: the command runner is not dumpable,
// so a command of its user cannot open its pipes through /proc and forge
// an answer (a kill reported done, a result) to evalctl.
func TestCommandsCannotWriteIntoTheRunner(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	res := sh(t, c, `pid=$(pgrep -u 1000 -f /opt/evalctl/execd | head -1)
test -n "$pid" || { echo no-runner; exit; }
(echo '{"id": 99, "exit_code": 0}' > /proc/$pid/fd/1) 2>/dev/null && echo wrote || echo refused
ls /proc/$pid/fd >/dev/null 2>&1 && echo listed || echo list-refused`, sandbox.ExecOptions{Dir: "/tmp"})
	if string(res.Stdout) != "refused\nlist-refused\n" {
		t.Errorf("got %q, want refused and list-refused (stderr %q)", res.Stdout, res.Stderr)
	}
	// The runner still answers.
	if res := sh(t, c, "echo ok", sandbox.ExecOptions{}); string(res.Stdout) != "ok\n" {
		t.Errorf("runner broken afterwards: %q", res.Stdout)
	}
}

// TestKillAllRemovesIPCObjects: System V IPC objects outlive the processes
// that made them (shared memory keeps its memory charged to the
// container); KillAll removes every one the command user left, and only
// those: the harness user's stay.
func TestKillAllRemovesIPCObjects(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	ctx := context.Background()
	const count = `echo $(($(wc -l < /proc/sysvipc/shm) - 1)) $(($(wc -l < /proc/sysvipc/sem) - 1)) $(($(wc -l < /proc/sysvipc/msg) - 1))`
	sh(t, c, "ipcmk -M 8388608 && ipcmk -M 4096 && ipcmk -S 2 && ipcmk -Q", sandbox.ExecOptions{Dir: "/tmp"})
	sh(t, c, "ipcmk -M 4096 >/dev/null", sandbox.ExecOptions{Dir: "/tmp", User: sandbox.HarnessUser})
	if got := strings.TrimSpace(string(sh(t, c, count, sandbox.ExecOptions{Dir: "/tmp"}).Stdout)); got != "3 1 1" {
		t.Fatalf("before KillAll: %q IPC objects (shm sem msg), want \"3 1 1\"", got)
	}
	c.KillAll(ctx)
	if got := strings.TrimSpace(string(sh(t, c, count, sandbox.ExecOptions{Dir: "/tmp"}).Stdout)); got != "1 0 0" {
		t.Errorf("after KillAll: %q IPC objects (shm sem msg), want \"1 0 0\" (the harness user's segment alone)", got)
	}
}
