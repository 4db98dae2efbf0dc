package serving

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/serving/servingtest"
)

func TestStartWaitsThroughLoadingAndStopLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := writeProfile(t, dir, "fake-server", "", "--addr", "{{host}}:{{port}}", "--startup-delay", "400ms",
		"--spawn-child", filepath.Join(dir, "child.pid"))
	logPath := filepath.Join(dir, "logs", "server.log")
	srv, err := Start(context.Background(), p, StartOptions{LogPath: logPath})
	if err != nil {
		t.Fatal(err)
	}
	if srv.ReadySeconds < 0.4 {
		t.Fatalf("ready after %.3fs: the 503 loading phase was not waited through", srv.ReadySeconds)
	}
	child := readPID(t, filepath.Join(dir, "child.pid"), 5*time.Second)
	if servingtest.Gone(srv.PID) || servingtest.Gone(child) {
		t.Fatal("server or its child not running after Start")
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	servingtest.WaitGone(t, srv.PID, time.Second)
	servingtest.WaitGone(t, child, time.Second) // the forked child went with its group
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{"fake-server: starting on 127.0.0.1:", "# evalctl:", "stopped"} {
		if !strings.Contains(string(log), want) {
			t.Fatalf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestStartFailureKeepsLogAndExitCode(t *testing.T) {
	dir := t.TempDir()
	p := writeProfile(t, dir, "fake-server", "", "--addr", "{{host}}:{{port}}", "--fail")
	logPath := filepath.Join(dir, "server.log")
	_, err := Start(context.Background(), p, StartOptions{LogPath: logPath})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StartError", err)
	}
	if se.ExitCode == nil || *se.ExitCode != 1 {
		t.Fatalf("exit code = %v, want 1", se.ExitCode)
	}
	if !strings.Contains(se.LogTail, "failed to allocate KV cache") {
		t.Fatalf("log tail lacks the server's words: %q", se.LogTail)
	}
	if se.LogPath != logPath || !strings.Contains(err.Error(), logPath) {
		t.Fatalf("error does not point at the kept log: %v", err)
	}
	if _, err := os.Stat(logPath); err != nil {
		t.Fatalf("log not kept: %v", err)
	}
}

func TestStartTimeoutStopsServer(t *testing.T) {
	dir := t.TempDir()
	p := writeProfile(t, dir, "fake-server", "", "--addr", "{{host}}:{{port}}", "--startup-delay", "1h",
		"--spawn-child", filepath.Join(dir, "child.pid"))
	p.StartupTimeout = Duration(700 * time.Millisecond)
	_, err := Start(context.Background(), p, StartOptions{LogPath: filepath.Join(dir, "server.log")})
	if !errors.Is(err, ErrNotHealthy) {
		t.Fatalf("err = %v, want ErrNotHealthy", err)
	}
	if !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "Loading model") {
		t.Fatalf("error does not say what the server last answered: %v", err)
	}
	servingtest.WaitGone(t, readPID(t, filepath.Join(dir, "child.pid"), time.Second), time.Second)
}

func TestCancelDuringStartupStopsServer(t *testing.T) {
	dir := t.TempDir()
	p := writeProfile(t, dir, "fake-server", "", "--addr", "{{host}}:{{port}}", "--startup-delay", "1h",
		"--spawn-child", filepath.Join(dir, "child.pid"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPID(t, filepath.Join(dir, "child.pid"), 5*time.Second)
		cancel()
	}()
	_, err := Start(ctx, p, StartOptions{LogPath: filepath.Join(dir, "server.log")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	servingtest.WaitGone(t, readPID(t, filepath.Join(dir, "child.pid"), time.Second), time.Second)
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	dir := t.TempDir()
	p := writeProfile(t, dir, "fake-server", "", "--addr", "{{host}}:{{port}}", "--ignore-term")
	p.StopTimeout = Duration(300 * time.Millisecond)
	logPath := filepath.Join(dir, "server.log")
	srv, err := Start(context.Background(), p, StartOptions{LogPath: logPath})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatal("SIGKILL sent before the stop timeout")
	}
	servingtest.WaitGone(t, srv.PID, time.Second)
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "SIGKILL") {
		t.Fatalf("log does not record the escalation:\n%s", log)
	}
}

func TestCrashedServerIsNoticedAndGroupCleaned(t *testing.T) {
	dir := t.TempDir()
	p := writeProfile(t, dir, "fake-server", "", "--addr", "{{host}}:{{port}}", "--spawn-child", filepath.Join(dir, "child.pid"))
	srv, err := Start(context.Background(), p, StartOptions{LogPath: filepath.Join(dir, "server.log")})
	if err != nil {
		t.Fatal(err)
	}
	child := readPID(t, filepath.Join(dir, "child.pid"), 5*time.Second)
	syscall.Kill(srv.PID, syscall.SIGKILL) // the server crashes
	select {
	case <-srv.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("crash not noticed")
	}
	if srv.ExitErr() == nil {
		t.Fatal("a crash must leave an exit error")
	}
	if servingtest.Gone(child) {
		t.Fatal("test premise: the orphaned child should still run before Stop")
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	servingtest.WaitGone(t, child, time.Second)
}

// TestInterruptedParentStopsServer runs evalctl in miniature as a real
// process and interrupts it as Ctrl-C would.
func TestInterruptedParentStopsServer(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			if sig == syscall.SIGKILL && runtime.GOOS != "linux" {
				t.Skip("the parent-death signal exists on Linux only")
			}
			dir := t.TempDir()
			p := writeProfile(t, dir, "fake-server", "", "--addr", "{{host}}:{{port}}")
			pidFile := filepath.Join(dir, "server.pid")
			cmd := exec.Command(os.Args[0], filepath.Join(dir, "fake-server.yaml"), pidFile, filepath.Join(dir, "server.log"))
			cmd.Env = append(os.Environ(), helperEnv+"=parent")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			_ = p
			pid := readPID(t, pidFile, 10*time.Second)
			if servingtest.Gone(pid) {
				t.Fatal("server not running")
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if sig == syscall.SIGINT && err != nil {
				t.Fatalf("parent did not exit cleanly on Ctrl-C: %v\n%s", err, stderr.String())
			}
			servingtest.WaitGone(t, pid, 5*time.Second)
		})
	}
}
