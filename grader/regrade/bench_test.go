package regrade_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// BenchmarkRegrade24 regrades a 24-attempt run (8 each of three answer
// styles, two phases each: 48 grades) under 1.0.1 with the real grader and
// Docker, at concurrency 1 and 2. Each iteration starts from a fresh copy
// of the run (a second regrade would be a no-op). Run it with
//
//	go test ./grader/regrade -run '^$' -bench Regrade24 -benchtime 1x
func BenchmarkRegrade24(b *testing.B) {
	_, s2, _ := suites(b)
	eng, img := sandboxtest.Engine(b)
	styles := [][]string{{"with", "with"}, {"ref", "ref"}, {"with", "nolines"}}
	var specs []attemptSpec
	for i := 0; i < 24; i++ {
		specs = append(specs, attemptSpec{id: fmt.Sprintf("att-%02d", i), arm: fmt.Sprintf("arm%d", i%2),
			repeat: fmt.Sprintf("repeat-%d", i/2+1), styles: styles[i%3]})
	}
	template := filepath.Join(b.TempDir(), "run")
	writeRun(b, nil, template, "bench-24", specs, false)
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("concurrency=%d", n), func(b *testing.B) {
			g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: n})
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "run")
				copyTree(b, template, dir)
				b.StartTimer()
				res, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s2, Concurrency: n})
				if err != nil {
					b.Fatal(err)
				}
				if res.Graded != 24 || res.Err() != nil {
					b.Fatalf("graded %d: %v", res.Graded, res.Err())
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/24, "s/attempt")
		})
	}
}

// BenchmarkRegrade24Engines regrades the same 48 grades at concurrency 2 on
// the local engine alone and on a pool of the local engine and a second
// engine over TCP with TLS (one container each), alternating. Both engines
// share this machine's cores, so the ratio is the pool's overhead, not a
// speed-up:
//
//	go test ./grader/regrade -run '^$' -bench Regrade24Engines -benchtime 1x
func BenchmarkRegrade24Engines(b *testing.B) {
	_, s2, _ := suites(b)
	eng, img := sandboxtest.Engine(b)
	remote := sandboxtest.StartEngine(b, sandboxtest.ExtraOptions{TLS: true}).Connect(b, "there")
	pool, err := sandbox.NewHosts([]sandbox.Host{{Engine: eng, Capacity: 1}, {Engine: remote, Capacity: 1}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	pool.UseImage(img)
	if _, err := sandbox.Transfer(context.Background(), eng, remote, img); err != nil {
		b.Fatal(err)
	}
	styles := [][]string{{"with", "with"}, {"ref", "ref"}, {"with", "nolines"}}
	var specs []attemptSpec
	for i := 0; i < 24; i++ {
		specs = append(specs, attemptSpec{id: fmt.Sprintf("att-%02d", i), arm: fmt.Sprintf("arm%d", i%2),
			repeat: fmt.Sprintf("repeat-%d", i/2+1), styles: styles[i%3]})
	}
	template := filepath.Join(b.TempDir(), "run")
	writeRun(b, nil, template, "bench-24", specs, false)
	one := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 2})
	two := grader.New(pool, img.Ref, img.ID, grader.Options{Concurrency: 2})
	var tOne, tTwo time.Duration
	regradeWith := func(g *grader.Grader) time.Duration {
		dir := filepath.Join(b.TempDir(), "run")
		copyTree(b, template, dir)
		t0 := time.Now()
		res, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s2, Concurrency: 2})
		if err != nil {
			b.Fatal(err)
		}
		if res.Graded != 24 || res.Err() != nil {
			b.Fatalf("graded %d: %v", res.Graded, res.Err())
		}
		return time.Since(t0)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tOne += regradeWith(one)
		tTwo += regradeWith(two)
	}
	b.StopTimer()
	b.ReportMetric(tOne.Seconds()/float64(b.N), "one-engine-s")
	b.ReportMetric(tTwo.Seconds()/float64(b.N), "two-engines-s")
	b.ReportMetric(tTwo.Seconds()/tOne.Seconds(), "ratio")
}
