package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io/fs"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

func quantile(d []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1)+0.5)]
}

// BenchmarkExecRoundTrip compares `true` through the sandbox API with
// `docker exec CONTAINER true` from the CLI on the same container,
// interleaved so both see the same machine load.
func BenchmarkExecRoundTrip(b *testing.B) {
	c := sandboxtest.Start(b, sandbox.Spec{})
	ctx := context.Background()
	var api, cli []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := c.Exec(ctx, []string{"true"}, sandbox.ExecOptions{Timeout: 10 * time.Second}); err != nil {
			b.Fatal(err)
		}
		api = append(api, time.Since(t0))
		t0 = time.Now()
		if out, err := exec.Command("docker", "exec", c.ID, "true").CombinedOutput(); err != nil {
			b.Fatalf("docker exec: %v %s", err, out)
		}
		cli = append(cli, time.Since(t0))
	}
	b.StopTimer()
	report(b, api, cli)
}

func report(b *testing.B, ours, base []time.Duration) {
	b.ReportMetric(float64(quantile(ours, 0.5).Microseconds())/1000, "ours-p50-ms")
	b.ReportMetric(float64(quantile(ours, 0.95).Microseconds())/1000, "ours-p95-ms")
	b.ReportMetric(float64(quantile(base, 0.5).Microseconds())/1000, "cli-p50-ms")
	b.ReportMetric(float64(quantile(base, 0.95).Microseconds())/1000, "cli-p95-ms")
	b.ReportMetric(float64(quantile(ours, 0.5))/float64(quantile(base, 0.5)), "ratio-p50")
}

// BenchmarkStart compares create + start + copying in a 1 MiB workspace
// through the sandbox API with `docker run --rm IMAGE true`.
func BenchmarkStart(b *testing.B) {
	eng, img := sandboxtest.Engine(b)
	ctx := context.Background()
	payload := make([]byte, 1<<20)
	rand.Read(payload)
	entries := []sandbox.Entry{{Name: "src", Mode: fs.ModeDir | 0o755}}
	for i := 0; i < 16; i++ {
		entries = append(entries, sandbox.Entry{Name: "src/f" + string(rune('a'+i)) + ".py", Mode: 0o644, Data: payload[i<<16 : (i+1)<<16]})
	}
	var ours, base []time.Duration
	label := sandboxtest.RunLabel(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c, err := eng.Start(ctx, sandbox.Spec{Image: img.Ref, Role: sandbox.RoleBench, Run: label})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.CopyIn(ctx, "/workspace", entries); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(t0))
		b.StopTimer()
		c.Remove(ctx)
		b.StartTimer()
		t0 = time.Now()
		var stderr bytes.Buffer
		cmd := exec.Command("docker", "run", "--rm", "--network", "none", img.Ref, "true")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("docker run: %v %s", err, stderr.String())
		}
		base = append(base, time.Since(t0))
	}
	b.StopTimer()
	report(b, ours, base)
}
