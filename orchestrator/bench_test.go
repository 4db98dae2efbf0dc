package orchestrator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/orchestrator/transcript"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// BenchmarkDevCohort runs the development cohort (8 cases x REPEATS x 2
// arms; EVALCTL_BENCH_REPEATS, default 3) against the scripted server at
// its fast default rates (responses are paced at them), at concurrency 1
// and 2, and reports the wall time, the
// orchestrator's own share = (wall - model - tool exec - grading) / wall,
// and the process's peak RSS.
//
//	go test ./orchestrator -run '^$' -bench DevCohort -benchtime 1x -timeout 2h
func BenchmarkDevCohort(b *testing.B) {
	repeats := 3
	if v, err := strconv.Atoi(os.Getenv("EVALCTL_BENCH_REPEATS")); err == nil && v > 0 {
		repeats = v
	}
	eng, img := sandboxtest.Engine(b)
	suite, err := tasks.LoadSuite("../cases")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := scripted.New(scripted.Config{Suite: suite})
	if err != nil {
		b.Fatal(err)
	}
	srv.Start()
	defer srv.Close()
	for _, conc := range []int{1, 2} {
		b.Run(fmt.Sprintf("concurrency-%d", conc), func(b *testing.B) {
			var reps strings.Builder
			for i := 1; i <= repeats; i++ {
				fmt.Fprintf(&reps, "  - {label: repeat-%d, seed: %d}\n", i, i)
			}
			dir := b.TempDir()
			plan := fmt.Sprintf(`suite: %s
repeats:
%sarms:
  - {name: reference, endpoint: {base_url: "%s", model: reference}, max_tokens: 32768}
  - {name: flawed, endpoint: {base_url: "%s", model: flawed}, max_tokens: 32768}
concurrency: %d
`, suite.Dir, reps.String(), srv.URL(), srv.URL(), conc)
			os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644)
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res, err := orchestrator.Run(context.Background(), orchestrator.Options{
					Plan: loadPlan(b, filepath.Join(dir, "plan.yaml")), OutDir: filepath.Join(dir, "runs"),
					Engine: eng, Image: img, GradeConcurrency: conc,
				})
				if err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start).Seconds()
				model, tools, grading := busyTimes(b, res.Dir)
				b.ReportMetric(wall, "wall-s")
				b.ReportMetric(float64(len(res.Attempts)), "attempts")
				b.ReportMetric(model, "model-s")
				b.ReportMetric(tools, "tool-s")
				b.ReportMetric(grading, "grading-s")
				// With concurrency the busy times overlap; the share is of
				// summed attempt time then, reported for concurrency 1.
				if conc == 1 {
					b.ReportMetric(100*(wall-model-tools-grading)/wall, "orchestrator-%")
				}
				b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
			}
		})
	}
}

// busyTimes sums, over a run, the model response wall time and the tool
// execution time from the transcripts, and the grading time from grades.
func busyTimes(b *testing.B, dir string) (model, tools, grading float64) {
	store, err := runstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	all, _ := store.Attempts()
	run, _ := store.ReadRun()
	for _, a := range all {
		f, err := os.Open(filepath.Join(store.AttemptDir(a.ID), runstore.TranscriptFile))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var e transcript.Event
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if e.Response != nil {
				model += e.Response.WallSeconds
			}
			if e.Tool != nil {
				tools += e.Tool.Seconds
			}
		}
		f.Close()
		grades, _ := store.Grades(a, run.Suite.Name+"@"+run.Suite.Version)
		for _, g := range grades {
			if g != nil {
				grading += g.Seconds
			}
		}
	}
	return model, tools, grading
}

// peakRSS is the process's high-water resident set size in bytes.
func peakRSS() int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
