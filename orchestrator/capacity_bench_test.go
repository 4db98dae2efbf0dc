package orchestrator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// BenchmarkCohortCapacity is the cohort wall time and the device's idle
// share with 1, 2 and 4 sandbox places per engine, on one engine and on
// two (the second an extra dockerd on a loopback address), alternately in
// one run so every configuration sees the same load. One arm on one
// device, a scripted endpoint paced at 50 tokens per second (or
// EVALCTL_BENCH_DECODE_TPS), the fixture suite's Python case x 6 repeats
// (EVALCTL_BENCH_REPEATS), grade concurrency 2; the device is on the local
// engine's machine, so agent containers go there and grades spill to the
// second engine when the first is full. Besides wall time and idle share it
// gives the time containers waited for places and the longest time without
// progress (the run's schedule figures).
//
//	EVALCTL_LONG_TESTS=1 go test ./orchestrator -run '^$' -bench CohortCapacity -benchtime 1x
func BenchmarkCohortCapacity(b *testing.B) {
	sandboxtest.Long(b)
	eng, img := sandboxtest.Engine(b)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		b.Fatal(err)
	}
	decode := 50.0
	if v, err := strconv.ParseFloat(os.Getenv("EVALCTL_BENCH_DECODE_TPS"), 64); err == nil && v > 0 {
		decode = v
	}
	repeats := 6
	if v, err := strconv.Atoi(os.Getenv("EVALCTL_BENCH_REPEATS")); err == nil && v > 0 {
		repeats = v
	}
	srv, err := scripted.New(scripted.Config{Suite: s, DecodeTPS: decode, PromptTPS: 1500})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	remote := sandboxtest.StartEngine(b, sandboxtest.ExtraOptions{})
	suite, _ := filepath.Abs(fixtureSuite)
	var reps []string
	for i := 1; i <= repeats; i++ {
		reps = append(reps, fmt.Sprintf("{label: r%d, seed: %d}", i, i))
	}
	type config struct {
		name  string
		hosts string
	}
	var configs []config
	for _, engines := range []int{1, 2} {
		for _, c := range []int{1, 2, 4} {
			h := fmt.Sprintf("sandbox_hosts:\n  - {name: here, capacity: %d, machine: m1}\n", c)
			if engines == 2 {
				h += fmt.Sprintf("  - {name: there, host: %q, capacity: %d, machine: m2}\n", remote.Host, c)
			}
			configs = append(configs, config{fmt.Sprintf("e%d-c%d", engines, c), h})
		}
	}
	wall, idle, waited, stall := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	for i := 0; i < b.N; i++ {
		for _, c := range configs {
			f := filepath.Join(b.TempDir(), "plan.yaml")
			p := fmt.Sprintf("suite: %s\ncases: [adder]\nrepeats: [%s]\narms:\n  - {name: a, endpoint: {base_url: %q, device: m1, model: reference}, max_tokens: 8192}\n%s",
				suite, strings.Join(reps, ", "), srv.URL(), c.hosts)
			if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(b, f), OutDir: b.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2})
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			wall[c.name] += time.Since(start).Seconds()
			in, err := report.Load(context.Background(), []string{res.Dir}, "")
			if err != nil {
				b.Fatal(err)
			}
			rep, err := report.Build(in, report.Options{})
			if err != nil {
				b.Fatal(err)
			}
			run := rep.Runs[0]
			d := run.EndpointIdle.Devices[0]
			if d.IdleShare == nil {
				b.Fatalf("%s: idle share unknown: %s", c.name, d.Why)
			}
			idle[c.name] += *d.IdleShare
			if sc := run.Schedule; sc != nil {
				if sc.PlaceWaitSeconds != nil {
					waited[c.name] += *sc.PlaceWaitSeconds
				}
				if sc.LongestWithoutProgressSeconds != nil {
					stall[c.name] = max(stall[c.name], *sc.LongestWithoutProgressSeconds)
				}
			}
		}
	}
	n := float64(b.N)
	for _, c := range configs {
		b.ReportMetric(wall[c.name]/n, c.name+"-wall-s")
		b.ReportMetric(idle[c.name]/n*100, c.name+"-idle-%")
		b.ReportMetric(waited[c.name]/n, c.name+"-place-wait-s")
		b.ReportMetric(stall[c.name], c.name+"-no-progress-max-s")
	}
}
