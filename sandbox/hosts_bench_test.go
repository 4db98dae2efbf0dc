package sandbox_test

import (
	"context"
	"crypto/rand"
	"io/fs"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// BenchmarkRemoteVsLocal compares, interleaved, an exec round trip of
// `true` and a sandbox start (create + start + 1 MiB copied in) on a
// remote engine reached over TCP with TLS, and on the local engine reached
// over SSH, with the same on the local engine's socket. All run on this
// machine, so the ratios are the API transports' costs (TLS, TCP, a second
// daemon; ssh and the docker CLI's dial-stdio), not a network's.
func BenchmarkRemoteVsLocal(b *testing.B) {
	local, img := sandboxtest.Engine(b)
	remote := sandboxtest.StartEngine(b, sandboxtest.ExtraOptions{TLS: true}).Connect(b, "remote")
	viaSSH := sandboxtest.StartSSH(b, "/var/run/docker.sock").Connect(b, "ssh")
	if _, err := sandbox.Transfer(context.Background(), local, remote, img); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	label := sandboxtest.RunLabel(b) // the local engine's containers, removed at the end
	payload := make([]byte, 1<<20)
	rand.Read(payload)
	entries := []sandbox.Entry{{Name: "src", Mode: fs.ModeDir | 0o755}}
	for i := 0; i < 16; i++ {
		entries = append(entries, sandbox.Entry{Name: "src/f" + string(rune('a'+i)) + ".py", Mode: 0o644, Data: payload[i<<16 : (i+1)<<16]})
	}
	start := func(e *sandbox.Engine, image string) (*sandbox.Container, time.Duration) {
		t0 := time.Now()
		c, err := e.Start(ctx, sandbox.Spec{Image: image, Role: sandbox.RoleBench, Run: label})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.CopyIn(ctx, "/workspace", entries); err != nil {
			b.Fatal(err)
		}
		return c, time.Since(t0)
	}
	var startL, startR, startS, execL, execR, execS []time.Duration
	cl, _ := start(local, img.Ref)
	cr, _ := start(remote, img.ID)
	cs, _ := start(viaSSH, img.Ref)
	defer cl.Remove(ctx)
	defer cr.Remove(ctx)
	defer cs.Remove(ctx)
	exec := func(c *sandbox.Container) time.Duration {
		t0 := time.Now()
		if _, err := c.Exec(ctx, []string{"true"}, sandbox.ExecOptions{Timeout: 10 * time.Second}); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	exec(cl)
	exec(cr)
	exec(cs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 10; j++ {
			execL = append(execL, exec(cl))
			execR = append(execR, exec(cr))
			execS = append(execS, exec(cs))
		}
		c, d := start(local, img.Ref)
		startL = append(startL, d)
		c.Remove(ctx)
		c, d = start(remote, img.ID)
		startR = append(startR, d)
		c.Remove(ctx)
		c, d = start(viaSSH, img.Ref)
		startS = append(startS, d)
		c.Remove(ctx)
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(quantile(execL, 0.5)), "exec-local-p50-ms")
	b.ReportMetric(ms(quantile(execR, 0.5)), "exec-remote-p50-ms")
	b.ReportMetric(float64(quantile(execR, 0.5))/float64(quantile(execL, 0.5)), "exec-ratio")
	b.ReportMetric(ms(quantile(startL, 0.5)), "start-local-p50-ms")
	b.ReportMetric(ms(quantile(startR, 0.5)), "start-remote-p50-ms")
	b.ReportMetric(float64(quantile(startR, 0.5))/float64(quantile(startL, 0.5)), "start-ratio")
	b.ReportMetric(ms(quantile(execS, 0.5)), "exec-ssh-p50-ms")
	b.ReportMetric(float64(quantile(execS, 0.5))/float64(quantile(execL, 0.5)), "exec-ssh-ratio")
	b.ReportMetric(ms(quantile(startS, 0.5)), "start-ssh-p50-ms")
	b.ReportMetric(float64(quantile(startS, 0.5))/float64(quantile(startL, 0.5)), "start-ssh-ratio")
}

// BenchmarkImageTransfer sends the sandbox image to a fresh engine (save
// from the local engine, load, verify), one new engine per iteration.
func BenchmarkImageTransfer(b *testing.B) {
	local, img := sandboxtest.Engine(b)
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		remote := sandboxtest.StartEngine(b, sandboxtest.ExtraOptions{}).Connect(b, "fresh")
		b.StartTimer()
		t0 := time.Now()
		sent, err := sandbox.Transfer(context.Background(), local, remote, img)
		if err != nil || !sent {
			b.Fatalf("transfer: sent %v, %v", sent, err)
		}
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(quantile(took, 0.5).Milliseconds())/1000, "transfer-p50-s")
}
