package orchestrator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// BenchmarkEndpointIdle is the endpoint idle share of one device with the
// endpoint released before grading (now) and held until the grade (the
// runners before; HoldEndpointWhileGrading), alternately in one run so both
// see the same load: one arm on a scripted endpoint paced at 50 tokens per
// second (or EVALCTL_BENCH_DECODE_TPS), the fixture suite's two cases x 2
// repeats, grade concurrency 1.
//
//	go test ./orchestrator -run '^$' -bench EndpointIdle -benchtime 1x
func BenchmarkEndpointIdle(b *testing.B) {
	eng, img := sandboxtest.Engine(b)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		b.Fatal(err)
	}
	decode := 50.0
	if v, err := strconv.ParseFloat(os.Getenv("EVALCTL_BENCH_DECODE_TPS"), 64); err == nil && v > 0 {
		decode = v
	}
	srv, err := scripted.New(scripted.Config{Suite: s, DecodeTPS: decode, PromptTPS: 1500})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	suite, _ := filepath.Abs(fixtureSuite)
	f := filepath.Join(b.TempDir(), "plan.yaml")
	p := fmt.Sprintf("suite: %s\nrepeats: [{label: r1, seed: 1}, {label: r2, seed: 2}]\narms:\n  - {name: a, endpoint: {base_url: %q, model: reference, device: gpu0}, max_tokens: 8192}\n", suite, srv.URL())
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		b.Fatal(err)
	}
	var idle, wall [2]float64
	for i := 0; i < b.N; i++ {
		for k, hold := range []bool{false, true} {
			start := time.Now()
			res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(b, f), OutDir: b.TempDir(), Engine: eng, Image: img, GradeConcurrency: 1, HoldEndpointWhileGrading: hold})
			if err != nil {
				b.Fatal(err)
			}
			wall[k] += time.Since(start).Seconds()
			in, err := report.Load(context.Background(), []string{res.Dir}, "")
			if err != nil {
				b.Fatal(err)
			}
			d := in.Runs[0].EndpointIdle.Devices[0]
			if d.IdleShare == nil {
				b.Fatalf("idle share unknown: %s", d.Why)
			}
			idle[k] += *d.IdleShare
		}
	}
	n := float64(b.N)
	b.ReportMetric(idle[0]/n*100, "released-idle-%")
	b.ReportMetric(idle[1]/n*100, "held-idle-%")
	b.ReportMetric(idle[1]/idle[0], "held/released-idle")
	b.ReportMetric(wall[0]/n, "released-wall-s")
	b.ReportMetric(wall[1]/n, "held-wall-s")
}
