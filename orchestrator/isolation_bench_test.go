package orchestrator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// BenchmarkPreflight measures the preflight of one endpoint against the
// scripted server (identity calls and a one-token chat request with the
// agent's tools) and reports its median and worst time; the goal is under
// one second.
//
//	go test ./orchestrator -run '^$' -bench Preflight -benchtime 50x
func BenchmarkPreflight(b *testing.B) {
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := scripted.New(scripted.Config{Suite: s})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	arm := &orchestrator.Arm{Name: "a", Endpoint: orchestrator.Endpoint{BaseURL: srv.URL(), Model: "reference"}, MaxTokens: 8192}
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := orchestrator.CheckEndpoint(context.Background(), arm, srv.URL()); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms")
}

// BenchmarkCohortIsolation is the price of honesty: the same cohort (two
// arms on two scripted endpoints, the fixture suite's two cases x 2
// repeats, the model paced at 200 tokens per second, or
// EVALCTL_BENCH_DECODE_TPS) run isolated (no
// device labels: one attempt in flight) and with the old per-endpoint
// behaviour (a device label per endpoint: one attempt per endpoint in
// flight), alternately in one run so both see the same load.
//
//	go test ./orchestrator -run '^$' -bench CohortIsolation -benchtime 2x
func BenchmarkCohortIsolation(b *testing.B) {
	eng, img := sandboxtest.Engine(b)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		b.Fatal(err)
	}
	decode := 200.0
	if v, err := strconv.ParseFloat(os.Getenv("EVALCTL_BENCH_DECODE_TPS"), 64); err == nil && v > 0 {
		decode = v
	}
	var urls []string
	for i := 0; i < 2; i++ {
		srv, err := scripted.New(scripted.Config{Suite: s, DecodeTPS: decode, PromptTPS: 5000})
		if err != nil {
			b.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		urls = append(urls, srv.URL())
	}
	suite, _ := filepath.Abs(fixtureSuite)
	write := func(devA, devB string) string {
		f := filepath.Join(b.TempDir(), "plan.yaml")
		p := fmt.Sprintf(`suite: %s
repeats: [{label: r1, seed: 1}, {label: r2, seed: 2}]
arms:
  - {name: a, endpoint: {base_url: "%s", model: reference%s}, max_tokens: 8192}
  - {name: b, endpoint: {base_url: "%s", model: reference%s}, max_tokens: 8192}
`, suite, urls[0], devA, urls[1], devB)
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			b.Fatal(err)
		}
		return f
	}
	isolated, perEndpoint := write("", ""), write(", device: ep0", ", device: ep1")
	var wall [2]float64
	for i := 0; i < b.N; i++ {
		for k, f := range []string{isolated, perEndpoint} {
			start := time.Now()
			if _, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(b, f), OutDir: b.TempDir(), Engine: eng, Image: img}); err != nil {
				b.Fatal(err)
			}
			wall[k] += time.Since(start).Seconds()
		}
	}
	b.ReportMetric(wall[0]/float64(b.N), "isolated-wall-s")
	b.ReportMetric(wall[1]/float64(b.N), "per-endpoint-wall-s")
	b.ReportMetric(wall[0]/wall[1], "isolated/per-endpoint")
}
