package view

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
)

// benchRun writes (once per machine, under the temp directory, where the
// report benchmark keeps the same run) a synthetic run of n attempts and
// returns the folder holding it and its id.
func benchRun(b *testing.B, n int) (root, id string) {
	b.Helper()
	root = filepath.Join(os.TempDir(), "evalctl-view-bench")
	dir := filepath.Join(root, fmt.Sprintf("synthetic-%d-v2", n))
	spec := reporttest.Synthetic(reporttest.SyntheticSpec{Attempts: n, Seed: 1})
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
		return root, spec.ID
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := reporttest.Write(tmp, spec); err != nil {
		b.Fatal(err)
	}
	// The event log a runner writes beside the records: registered, then
	// a start and an end per attempt.
	st, err := runstore.Open(tmp)
	if err != nil {
		b.Fatal(err)
	}
	all, err := st.Attempts()
	if err != nil {
		b.Fatal(err)
	}
	var log bytes.Buffer
	planned := 0
	for _, a := range all {
		if a.ReplacementOf == "" {
			planned++
		}
	}
	fmt.Fprintf(&log, `{"time":"2026-10-10T12:00:00Z","kind":"registered","detail":"plan sha256 x, %d attempts"}`+"\n", planned)
	for _, a := range all {
		if a.ReplacementOf != "" {
			fmt.Fprintf(&log, `{"time":"2026-10-10T12:00:00Z","kind":"replace_infra","attempt":%q,"detail":"replaces %s"}`+"\n", a.ID, a.ReplacementOf)
		}
		fmt.Fprintf(&log, `{"time":"2026-10-10T12:00:00Z","kind":"start","attempt":%q}`+"\n", a.ID)
		fmt.Fprintf(&log, `{"time":"2026-10-10T12:00:00Z","kind":%q,"attempt":%q}`+"\n", a.State, a.ID)
	}
	if err := os.WriteFile(st.Path(runstore.EventsFile), log.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	// plan.json as a runner writes it (name, arms, slots), so the run's
	// summary reads it instead of every record.
	plan := map[string]any{"name": "synthetic-10k"}
	var arms []map[string]any
	seen := map[string]bool{}
	var slots []map[string]any
	for _, a := range all {
		if !seen[a.Arm] {
			seen[a.Arm] = true
			arms = append(arms, map[string]any{"name": a.Arm})
		}
		if a.ReplacementOf == "" {
			slots = append(slots, map[string]any{"index": a.Slot, "arm": a.Arm, "case": a.Case, "repeat": a.Repeat, "seed": a.Seed})
		}
	}
	plan["arms"], plan["slots"] = arms, slots
	if err := runstore.WriteJSON(st.Path(runstore.PlanFile), plan); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return root, spec.ID
}

var servingRE = regexp.MustCompile(`on (http://[^/ ]+)/`)

// BenchmarkViewerFirstPaint is 'evalctl view' (a fresh process each time,
// so nothing is cached) serving a run of 10,000 attempts to headless
// Chromium: the time from navigating to the run's page to its per-arm
// table and grid being painted, and the server's peak resident memory
// (goals: under 2 s, under 200 MB).
func BenchmarkViewerFirstPaint(b *testing.B) {
	bin := findChromium()
	if bin == "" {
		b.Skip("no Chromium binary found")
	}
	root, id := benchRun(b, 10000)
	evalctl := filepath.Join(b.TempDir(), "evalctl")
	if out, err := exec.Command("go", "build", "-o", evalctl, "../../cmd/evalctl").CombinedOutput(); err != nil {
		b.Fatalf("build evalctl: %v\n%s", err, out)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancelC := chromedp.NewContext(actx)
	defer cancelC()
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil { // start the browser outside the timing
		b.Fatal(err)
	}
	var paint []time.Duration
	var peakMB []float64
	for b.Loop() {
		b.StopTimer()
		cmd := exec.Command(evalctl, "view", root, "--addr", "127.0.0.1:0")
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		m := servingRE.FindStringSubmatch(line)
		if m == nil {
			cmd.Process.Kill()
			b.Fatalf("evalctl view said %q", line)
		}
		b.StartTimer()
		start := time.Now()
		tctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := chromedp.Run(tctx, chromedp.Navigate(m[1]+"/#/run/"+id), chromedp.WaitVisible(`#grid td.cell`, chromedp.ByQuery), chromedp.WaitVisible(`#arms td[data-field="decode_tps"]`, chromedp.ByQuery))
		cancel()
		paint = append(paint, time.Since(start))
		b.StopTimer()
		peakMB = append(peakMB, peakRSSMB(cmd.Process.Pid))
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil {
			b.Fatal(err)
		}
		chromedp.Run(ctx, chromedp.Navigate("about:blank"))
		b.StartTimer()
	}
	var worst time.Duration
	var sum time.Duration
	for _, d := range paint {
		sum += d
		worst = max(worst, d)
	}
	maxMB := 0.0
	for _, v := range peakMB {
		maxMB = max(maxMB, v)
	}
	b.ReportMetric(float64(sum.Milliseconds())/float64(len(paint)), "ms/first-paint")
	b.ReportMetric(float64(worst.Milliseconds()), "ms/worst-first-paint")
	b.ReportMetric(maxMB, "MB-server-peak-RSS")
}

// peakRSSMB reads a process's peak resident set size (VmHWM).
func peakRSSMB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
