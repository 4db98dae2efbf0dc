package screen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/serving/servingtest"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/runstore"
)

// memorySource is a telemetry fake behind telemetry.Source: whole-GPU
// memory grows by 1 MiB a reading, power is fixed.
type memorySource struct {
	mu sync.Mutex
	n  int64
}

func (m *memorySource) Read(ctx context.Context) (telemetry.Reading, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	used, total := (1000+m.n)<<20, int64(24<<30)
	free, w := total-used, 250.0
	return telemetry.Reading{At: time.Now().UTC(), GPUs: []telemetry.GPU{{MemoryUsedBytes: &used, MemoryFreeBytes: &free,
		MemoryTotalBytes: &total, PowerWatts: &w}}, CPUReason: "none in test"}, ctx.Err()
}

// writeScreen writes a spec of two scripted modes, fast (baseline) and slow.
func writeScreen(t *testing.T, dir string, extraSlow ...string) *Screen {
	t.Helper()
	servingtest.ScriptedProfile(t, dir, "fast", "--decode-tps", "2000", "--prompt-tps", "100000")
	servingtest.ScriptedProfile(t, dir, "slow", append([]string{"--decode-tps", "1000", "--prompt-tps", "100000"}, extraSlow...)...)
	spec := `name: scripted-test
baseline: fast
modes:
  - {name: fast, profile: fast.yaml}
  - {name: slow, profile: slow.yaml}
prompt_targets: [300, 1200]
seeds: [1, 2]
output_tokens: 32
ctx_size: 4096
request_timeout: 1m
`
	path := filepath.Join(dir, "screen.yaml")
	os.WriteFile(path, []byte(spec), 0o644)
	sc, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestScreenAgainstScriptedServer(t *testing.T) {
	bin := servingtest.EvalctlBinary(t)
	dir := t.TempDir()
	sc := writeScreen(t, dir)
	st, err := Register(filepath.Join(dir, "runs"), sc)
	if err != nil {
		t.Fatal(err)
	}
	st, run, sc, err := Open(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Evalctl: bin, Telemetry: &memorySource{}, Interval: 5 * time.Millisecond}

	// Interrupt after 5 samples, as Ctrl-C would.
	ctx, cancel := context.WithCancel(context.Background())
	o.Progress = &cancelAfter{n: 5, cancel: cancel}
	if err := Run(ctx, st, run, sc, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted screen: err = %v", err)
	}
	first, _ := Samples(st)
	if len(first) != 5 {
		t.Fatalf("%d samples recorded before the interruption, want 5", len(first))
	}
	before := map[string][]byte{}
	for _, s := range first {
		before[s.Key], _ = os.ReadFile(st.Path(SamplesDir, s.Key+".json"))
	}
	assertServersGone(t, st)

	// Resume: the 5 finished samples are not measured again.
	o.Progress = nil
	if err := Run(context.Background(), st, run, sc, o); err != nil {
		t.Fatal(err)
	}
	all, _ := Samples(st)
	if len(all) != sc.Planned() || sc.Planned() != 12 {
		t.Fatalf("%d samples of %d planned", len(all), sc.Planned())
	}
	for k, b := range before {
		now, _ := os.ReadFile(st.Path(SamplesDir, k+".json"))
		if !bytes.Equal(now, b) {
			t.Fatalf("finished sample %s was measured again", k)
		}
	}
	assertServersGone(t, st)
	for _, s := range all {
		if !s.Counted() || *s.PredictedN != 32 || *s.Timings.CacheN != 0 {
			t.Fatalf("sample %s: state %s marks %v predicted %v", s.Key, s.State, s.Marks, s.PredictedN)
		}
		// Exact: the scripted tokenizer allows every count.
		if int(*s.ServerPromptTokens) != s.PromptTarget || *s.PromptTokens != int(*s.ServerPromptTokens) {
			t.Fatalf("sample %s: prompt %d tokens (tokenize said %d) for target %d", s.Key, *s.ServerPromptTokens, *s.PromptTokens, s.PromptTarget)
		}
		// A sample measured on resume has the resumed leg try as nonce.
		if want := fmt.Sprintf("%02d-%s", s.LegIndex, s.Leg); !strings.Contains(s.Nonce, want) {
			t.Fatalf("sample %s: nonce %q does not name its leg try", s.Key, s.Nonce)
		}
	}
	rep, err := BuildReport(st, run, sc)
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != "complete" || rep.CountedMeasurements != 12 {
		t.Fatalf("report %s, %d counted", rep.State, rep.CountedMeasurements)
	}
	for _, a := range rep.Aggregates {
		want := 2000.0
		if a.Mode == "slow" {
			want = 1000
		}
		near(t, a.Mode+" decode_tps", a.DecodeTPS, want)
		if a.Mode == "slow" {
			near(t, "slow decode gain", a.DecodeGainPercent, -50)
		}
	}
	for _, d := range rep.Drift {
		near(t, "drift", d.DecodeDriftPercent, 0)
	}
	if rep.MeasuredGPUMeanW == nil || *rep.MeasuredGPUMeanW != 250 || rep.MemoryPeak == nil {
		t.Fatalf("telemetry not summarised: power %v peak %v", rep.MeasuredGPUMeanW, rep.MemoryPeak)
	}
	if rep.CPUPeakC != nil || len(rep.TelemetryNotes) == 0 {
		t.Fatalf("absent CPU sensor must be null with a note: %v %v", rep.CPUPeakC, rep.TelemetryNotes)
	}
	// Leg 0 ran its 4 samples at once; leg 1 was interrupted after one
	// sample and started again on resume.
	if rep.Legs[0].BuildInfo == nil || rep.Legs[0].Tries != 1 || rep.Legs[1].Tries != 2 || rep.Legs[2].Tries != 1 {
		t.Fatalf("legs: build %v, tries %d %d %d", rep.Legs[0].BuildInfo, rep.Legs[0].Tries, rep.Legs[1].Tries, rep.Legs[2].Tries)
	}
	// The resumed leg's samples got fresh nonces (its second try).
	for _, s := range all {
		_, early := before[s.Key]
		if s.Leg == "slow" && early != strings.HasSuffix(s.Nonce, "/1") {
			t.Fatalf("slow sample %s (measured before the interruption: %v) has nonce %q", s.Key, early, s.Nonce)
		}
	}
}

func TestScreenRecordsFailedStartAndGoesOn(t *testing.T) {
	bin := servingtest.EvalctlBinary(t)
	dir := t.TempDir()
	sc := writeScreen(t, dir, "--fail-above-ctx", "2048") // the slow mode cannot start at 4096
	st, err := Register(filepath.Join(dir, "runs"), sc)
	if err != nil {
		t.Fatal(err)
	}
	st, run, sc, _ := Open(st.Dir)
	err = Run(context.Background(), st, run, sc, Options{Evalctl: bin})
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err = %v, want ErrIncomplete", err)
	}
	all, _ := Samples(st)
	failed := 0
	for _, s := range all {
		if s.Leg == "slow" {
			failed++
			if s.State != SampleFailed || !strings.Contains(s.Error, "server log kept") {
				t.Fatalf("slow sample %s: %s %q", s.Key, s.State, s.Error)
			}
		} else if !s.Counted() {
			t.Fatalf("baseline sample %s not measured", s.Key)
		}
	}
	if failed != 4 || len(all) != 12 {
		t.Fatalf("%d failed of %d", failed, len(all))
	}
	log, _ := os.ReadFile(st.Path(LegsDir, "01-slow", "1", ServerLog))
	if !strings.Contains(string(log), "failed to allocate") {
		t.Fatalf("failed start's log not kept:\n%s", log)
	}
}

func TestCapacityAgainstScriptedServer(t *testing.T) {
	bin := servingtest.EvalctlBinary(t)
	dir := t.TempDir()
	p, err := serving.LoadProfile(servingtest.ScriptedProfile(t, dir, "cap", "--fail-above-ctx", "20000", "--prompt-tps", "200000", "--decode-tps", "4000"))
	if err != nil {
		t.Fatal(err)
	}
	plan := &CapacityPlan{Profile: p, Contexts: []int{4096, 16384, 32768}}
	if err := plan.Normalize(); err != nil {
		t.Fatal(err)
	}
	st, run, err := RegisterCapacity(filepath.Join(dir, "runs"), plan)
	if err != nil {
		t.Fatal(err)
	}
	st, run, plan, err = OpenCapacity(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := RunCapacity(context.Background(), st, run, plan, Options{Evalctl: bin, Telemetry: &memorySource{}, Interval: 5 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	rep, err := BuildCapacityReport(st, run, plan)
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != "complete" || len(rep.Sizes) != 3 {
		t.Fatalf("report %s with %d sizes", rep.State, len(rep.Sizes))
	}
	for _, key := range []string{"4", "16"} {
		r := rep.Sizes[key]
		if r.State != CapacityComplete || r.ShortGenerationPassed == nil || !*r.ShortGenerationPassed || r.Error != nil {
			t.Fatalf("%sK: %+v", key, r)
		}
		want := int64(0.9 * float64(r.ContextCapacity))
		if r.NearCapacityInputTokens == nil || *r.NearCapacityInputTokens < want-64 || *r.NearCapacityInputTokens > want+64 {
			t.Fatalf("%sK: near-capacity input %v, want about %d", key, r.NearCapacityInputTokens, want)
		}
		if r.LongInputTimings == nil || *r.LongInputTimings.PredictedN != 128 {
			t.Fatalf("%sK: long input timings %+v", key, r.LongInputTimings)
		}
		if r.MemoryPeak == nil || r.MemoryPeak.Stage == "" {
			t.Fatalf("%sK: no memory peak", key)
		}
	}
	bad := rep.Sizes["32"]
	if bad.State != CapacityStartFailed || bad.Error == nil || !strings.Contains(*bad.Error, "32K startup failed: exited during startup (exit status 1); retained sizes/32768/1/server.log") {
		t.Fatalf("32K: %+v", bad)
	}
	if bad.ShortGenerationPassed != nil || bad.LongInputTimings != nil || !strings.Contains(bad.LogTail, "failed to allocate") {
		t.Fatalf("32K: steps never run must be null, log tail kept: %+v", bad)
	}
	if _, err := os.Stat(st.Path(bad.ServerLog)); err != nil {
		t.Fatalf("failed start's log not kept: %v", err)
	}
	var tab bytes.Buffer
	rep.WriteTable(&tab)
	if !strings.Contains(tab.String(), "startup_failed") {
		t.Fatalf("table:\n%s", tab.String())
	}
	// Resuming a finished probe measures nothing again.
	before, _ := os.ReadFile(st.Path(ResultsDir, "4096.json"))
	if err := RunCapacity(context.Background(), st, run, plan, Options{Evalctl: bin}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(st.Path(ResultsDir, "4096.json"))
	if !bytes.Equal(before, after) {
		t.Fatal("a finished size was probed again")
	}
}

// cancelAfter cancels the context once n progress lines have been written.
type cancelAfter struct {
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n -= bytes.Count(p, []byte("\n"))
	if c.n <= 0 {
		c.cancel()
	}
	return len(p), nil
}

// assertServersGone checks that every server a screen started has exited.
func assertServersGone(t *testing.T, st *runstore.Store) {
	t.Helper()
	ids, _ := filepath.Glob(st.Path(LegsDir, "*", "*", IdentityDoc))
	if len(ids) == 0 {
		t.Fatal("no server identity recorded")
	}
	for _, f := range ids {
		var id serving.Identity
		if err := runstore.ReadJSON(f, &id); err != nil {
			t.Fatal(err)
		}
		servingtest.WaitGone(t, id.PID, 2*time.Second)
	}
}
