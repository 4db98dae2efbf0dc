package serving

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/serving/servingtest"
)

func TestScriptedServerLifecycle(t *testing.T) {
	bin := servingtest.EvalctlBinary(t)
	dir := t.TempDir()
	p, err := LoadProfile(servingtest.ScriptedProfile(t, dir, "scripted", "--startup-delay", "300ms", "--decode-tps", "500"))
	if err != nil {
		t.Fatal(err)
	}
	p.Env = map[string]string{"HF_TOKEN": "hf_secret"}
	srv, err := Start(context.Background(), p, StartOptions{LogPath: filepath.Join(dir, "server.log"), Evalctl: bin, CtxSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if srv.ReadySeconds < 0.3 {
		t.Fatalf("ready after %.3fs, before the 503 loading phase ended", srv.ReadySeconds)
	}
	id, err := srv.Identity(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if id.BuildInfo == nil || !strings.HasPrefix(*id.BuildInfo, "evalctl-scripted") || id.ContextSize == nil || *id.ContextSize != 4096 {
		t.Fatalf("identity from /props: build %v, n_ctx %v", id.BuildInfo, id.ContextSize)
	}
	if len(id.Env) != 1 || id.Env[0] != "HF_TOKEN=<redacted>" {
		t.Fatalf("identity env %q: the secret must not be recorded", id.Env)
	}
	if !strings.Contains(strings.Join(id.Argv, " "), "--ctx-size 4096") || id.Models == nil {
		t.Fatalf("identity argv %q models %v", id.Argv, id.Models)
	}
	// The server crashes: noticed, and Stop still cleans up.
	syscall.Kill(srv.PID, syscall.SIGKILL)
	select {
	case <-srv.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("crash not noticed")
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	servingtest.WaitGone(t, srv.PID, time.Second)

	// A normal stop.
	srv, err = Start(context.Background(), p, StartOptions{LogPath: filepath.Join(dir, "server2.log"), Evalctl: bin})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	servingtest.WaitGone(t, srv.PID, time.Second)
	if log, _ := os.ReadFile(filepath.Join(dir, "server2.log")); !strings.Contains(string(log), "scripted model server on") {
		t.Fatalf("server log not kept:\n%s", log)
	}

	// Ctrl-C of the process that started it.
	pidFile := filepath.Join(dir, "server.pid")
	cmd := exec.Command(os.Args[0], p.Dir+"/scripted.yaml", pidFile, filepath.Join(dir, "server3.log"))
	cmd.Env = append(os.Environ(), helperEnv+"=parent", "EVALCTL_BIN="+bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, pidFile, 30*time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("parent: %v", err)
	}
	servingtest.WaitGone(t, pid, 5*time.Second)
}

func TestScriptedStartFailureAboveContext(t *testing.T) {
	bin := servingtest.EvalctlBinary(t)
	dir := t.TempDir()
	p, err := LoadProfile(servingtest.ScriptedProfile(t, dir, "scripted", "--fail-above-ctx", "16384"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), p, StartOptions{LogPath: filepath.Join(dir, "server.log"), Evalctl: bin, CtxSize: 32768})
	var se *StartError
	if !errors.As(err, &se) || se.ExitCode == nil || *se.ExitCode != 1 {
		t.Fatalf("err = %v, want a StartError with exit code 1", err)
	}
	if !strings.Contains(se.LogTail, "failed to allocate") {
		t.Fatalf("log tail lacks the server's words:\n%s", se.LogTail)
	}
}
