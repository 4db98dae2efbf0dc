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

// BenchmarkEndpointIdle is the endpoint idle share of one device under
// three runners, alternately in one run so all see the same load: "now"
// (start work prepared while the attempt before generates, endpoint
// released before grading), "onslot" (start work done after taking the
// slot: the runner before that change, StartOnSlot) and "held" (the slot
// also held until the grade: HoldEndpointWhileGrading). One arm on a
// scripted endpoint paced at 50 tokens per second (or
// EVALCTL_BENCH_DECODE_TPS), the fixture suite's two cases x 2 repeats
// (EVALCTL_BENCH_REPEATS), grade concurrency 1. EVALCTL_BENCH_IDLE_MODES
// (comma-separated) picks the runners. With EVALCTL_BENCH_ATTEMPT_TOKENS=N
// each attempt generates N tokens (the runaway script capped by max_tokens
// and the generated-token budget), N/TPS seconds of decode; otherwise the
// reference script answers (a few hundred tokens). Besides the report's
// figures it gives, from the transcripts, the gap between an attempt's
// endpoint release and the next attempt's first request (what the device
// waits on) and the idle share with busy counted from each attempt's first
// request (the start work is no serving, whichever side of started_at it
// falls on).
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
	repeats := 2
	if v, err := strconv.Atoi(os.Getenv("EVALCTL_BENCH_REPEATS")); err == nil && v > 0 {
		repeats = v
	}
	modes := []string{"now", "onslot", "held"}
	if v := os.Getenv("EVALCTL_BENCH_IDLE_MODES"); v != "" {
		modes = strings.Split(v, ",")
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
	var reps []string
	for i := 1; i <= repeats; i++ {
		reps = append(reps, fmt.Sprintf("{label: r%d, seed: %d}", i, i))
	}
	arm := "model: reference}, max_tokens: 8192"
	if n, err := strconv.Atoi(os.Getenv("EVALCTL_BENCH_ATTEMPT_TOKENS")); err == nil && n > 0 {
		arm = fmt.Sprintf("model: runaway}, max_tokens: %d, budgets: {generated_tokens: %d}", n, n)
	}
	f := filepath.Join(b.TempDir(), "plan.yaml")
	p := fmt.Sprintf("suite: %s\nrepeats: [%s]\narms:\n  - {name: a, endpoint: {base_url: %q, device: gpu0, %s}\n", suite, strings.Join(reps, ", "), srv.URL(), arm)
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		b.Fatal(err)
	}
	idle := map[string]float64{}
	span := map[string]float64{}
	tail := map[string]float64{}
	wall := map[string]float64{}
	gapMax := map[string]float64{}
	gapMean := map[string]float64{}
	reqIdle := map[string]float64{}
	for i := 0; i < b.N; i++ {
		for _, m := range modes {
			opts := orchestrator.Options{Plan: loadPlan(b, f), OutDir: b.TempDir(), Engine: eng, Image: img, GradeConcurrency: 1}
			switch m {
			case "now":
			case "onslot":
				opts = orchestrator.WithKnobs(opts, orchestrator.TestKnobs{StartOnSlot: true})
			case "held":
				opts = orchestrator.WithKnobs(opts, orchestrator.TestKnobs{StartOnSlot: true, HoldEndpointWhileGrading: true})
			default:
				b.Fatalf("EVALCTL_BENCH_IDLE_MODES: unknown runner %q (now, onslot, held)", m)
			}
			start := time.Now()
			res, err := orchestrator.Run(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			wall[m] += time.Since(start).Seconds()
			in, err := report.Load(context.Background(), []string{res.Dir}, "")
			if err != nil {
				b.Fatal(err)
			}
			rep, err := report.Build(in, report.Options{})
			if err != nil {
				b.Fatal(err)
			}
			d := rep.Runs[0].EndpointIdle.Devices[0]
			if d.IdleShare == nil || d.SpanIdleShare == nil || d.TailSeconds == nil {
				b.Fatalf("idle share unknown: %s", d.Why)
			}
			idle[m] += *d.IdleShare
			span[m] += *d.SpanIdleShare
			tail[m] += *d.TailSeconds
			// From the transcripts: what the device waited between an
			// attempt's release and the next one's first request, and the
			// idle share with busy counted from each first request (the
			// start work before it is no serving, whichever side of
			// started_at it falls).
			mx, mean, serving := deviceWaits(b, res.Dir, res.Attempts)
			gapMax[m] = max(gapMax[m], mx.Seconds()*1000)
			gapMean[m] += mean.Seconds() * 1000
			reqIdle[m] += 1 - serving / *d.WallSeconds
		}
	}
	n := float64(b.N)
	for _, m := range modes {
		b.ReportMetric(idle[m]/n*100, m+"-idle-%")
		b.ReportMetric(span[m]/n*100, m+"-span-idle-%")
		b.ReportMetric(tail[m]/n, m+"-tail-s")
		b.ReportMetric(wall[m]/n, m+"-wall-s")
		b.ReportMetric(gapMax[m], m+"-gap-max-ms")
		b.ReportMetric(gapMean[m]/n, m+"-gap-mean-ms")
		b.ReportMetric(reqIdle[m]/n*100, m+"-from-first-request-idle-%")
	}
}
