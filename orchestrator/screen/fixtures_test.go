package screen

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/serving/servingtest"
)

// writeFixedScreen writes a screen of two modes over three fixed input
// files of different sizes.
func writeFixedScreen(t *testing.T, dir string) *Screen {
	t.Helper()
	servingtest.ScriptedProfile(t, dir, "fast", "--decode-tps", "2000", "--prompt-tps", "100000")
	servingtest.ScriptedProfile(t, dir, "slow", "--decode-tps", "1000", "--prompt-tps", "100000")
	for name, words := range map[string]int{"small.txt": 60, "medium.txt": 300, "large.txt": 900} {
		var b strings.Builder
		for i := 0; i < words; i++ {
			b.WriteString(fillerWords[(i*7)%len(fillerWords)] + " ")
		}
		os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644)
	}
	spec := `name: fixed
baseline: fast
modes:
  - {name: fast, profile: fast.yaml}
  - {name: slow, profile: slow.yaml}
fixtures:
  - {name: input-small, file: small.txt}
  - {name: input-medium, file: medium.txt}
  - {name: input-large, file: large.txt}
seeds: [1]
output_tokens: 32
ctx_size: 8192
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

// TestFixedInputScreen: every mode is measured on the same fixed inputs,
// their token counts measured on the server; the report gives per mode and
// fixture the decode TPS, wall seconds and the change against the baseline
// mode, and per leg the whole-GPU memory peak with the free memory at it
// from the telemetry source, and a null CPU temperature without a sensor.
func TestFixedInputScreen(t *testing.T) {
	bin := servingtest.EvalctlBinary(t)
	dir := t.TempDir()
	sc := writeFixedScreen(t, dir)
	if sc.Planned() != 3*3 {
		t.Fatalf("planned %d, want 3 legs x 3 fixtures", sc.Planned())
	}
	st, err := Register(filepath.Join(dir, "runs"), sc)
	if err != nil {
		t.Fatal(err)
	}
	st, run, sc, err := Open(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Evalctl: bin, Telemetry: &memorySource{}, Interval: 5 * time.Millisecond}
	if err := Run(context.Background(), st, run, sc, o); err != nil {
		t.Fatal(err)
	}
	assertServersGone(t, st)
	all, _ := Samples(st)
	tokens := map[string]int{}
	for _, s := range all {
		if !s.Counted() || s.Fixture == "" || s.FixtureTokens == nil {
			t.Fatalf("sample %s: state %s marks %v fixture %q", s.Key, s.State, s.Marks, s.Fixture)
		}
		if prev, ok := tokens[s.Fixture]; ok && prev != *s.FixtureTokens {
			t.Errorf("fixture %s: %d tokens in one mode, %d in another: not the same input", s.Fixture, prev, *s.FixtureTokens)
		}
		tokens[s.Fixture] = *s.FixtureTokens
		if int(*s.ServerPromptTokens) <= *s.FixtureTokens {
			t.Errorf("sample %s: the server processed %d prompt tokens for a %d-token fixture", s.Key, *s.ServerPromptTokens, *s.FixtureTokens)
		}
	}
	if !(tokens["input-small"] < tokens["input-medium"] && tokens["input-medium"] < tokens["input-large"]) {
		t.Errorf("fixture token counts %v, want three different sizes in order", tokens)
	}
	rep, err := BuildReport(st, run, sc)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Fixed || rep.State != "complete" {
		t.Fatalf("report fixed %v state %s", rep.Fixed, rep.State)
	}
	slow := 0
	for _, a := range rep.Aggregates {
		if a.Fixture == "" || a.DecodeTPS == nil || a.MeanWallSeconds == nil {
			t.Errorf("aggregate %+v lacks its fixture or figures", a)
		}
		if a.Mode == "slow" {
			slow++
			if a.DecodeGainPercent == nil || *a.DecodeGainPercent > -25 {
				t.Errorf("slow on %s: decode change %v %%, want about -50", a.Fixture, a.DecodeGainPercent)
			}
		}
	}
	if slow != 3 {
		t.Errorf("%d slow aggregates, want one per fixture", slow)
	}
	for _, l := range rep.Legs {
		if l.MemoryPeak == nil || l.MemoryPeak.UsedBytes <= 1000<<20 || l.MemoryPeak.FreeBytes != l.MemoryPeak.TotalBytes-l.MemoryPeak.UsedBytes {
			t.Errorf("leg %s memory peak %+v, want the fake source's", l.Label, l.MemoryPeak)
		}
		if l.CPUPeakC != nil {
			t.Errorf("leg %s CPU peak %v without a sensor, want null", l.Label, *l.CPUPeakC)
		}
	}
	// Per leg and fixture: the peaks of the readings made while the
	// fixture was measured (how many readings fall in a sample depends on
	// the machine's load; TestFixtureTelemetryPeaks checks the peaks on a
	// fixed log).
	seen := map[string]bool{}
	for _, f := range rep.FixtureTelemetry {
		if f.Readings == 0 || f.MemoryPeak == nil || f.CPUPeakC != nil || !strings.HasPrefix(f.MemoryPeak.Stage, f.Leg+"/") {
			t.Errorf("fixture telemetry %+v", f)
		}
		seen[f.Leg+"/"+f.Fixture] = true
	}
	if len(seen) == 0 {
		t.Errorf("no telemetry per leg and fixture")
	}
	var js, table bytes.Buffer
	rep.WriteJSON(&js)
	var back struct {
		Legs []map[string]any `json:"legs"`
	}
	json.Unmarshal(js.Bytes(), &back)
	if v, ok := back.Legs[0]["cpu_peak_c"]; !ok || v != nil {
		t.Errorf("cpu_peak_c in JSON = %v (present %v), want null", v, ok)
	}
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "input-large") || !strings.Contains(table.String(), "CPU temperature peak unknown (no sensor)") {
		t.Errorf("table:\n%s", table.String())
	}

	// A fixture changed after registration is refused, not measured.
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte("other words"), 0o644)
	f := sc.fixture(1)
	if _, err := fixtureText(f); err == nil || !strings.Contains(err.Error(), "changed since the screen was registered") {
		t.Errorf("changed fixture: %v", err)
	}
}

func TestFixedInputSpecRejects(t *testing.T) {
	dir := t.TempDir()
	writeFixedScreen(t, dir)
	path := filepath.Join(dir, "screen.yaml")
	spec, _ := os.ReadFile(path)
	for _, tt := range []struct{ old, new, want string }{
		{"seeds: [1]", "seeds: [1]\nprompt_targets: [300]", "prompt_targets or fixtures, not both"},
		{"file: large.txt", "file: missing.txt", "missing.txt"},
		{"name: input-medium", "name: input-small", "appears twice"},
	} {
		os.WriteFile(path, bytes.Replace(spec, []byte(tt.old), []byte(tt.new), 1), 0o644)
		if _, err := LoadSpec(path); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "screen.yaml") {
			t.Errorf("%s: %v, want an error naming screen.yaml and %q", tt.new, err, tt.want)
		}
	}
}

// TestFixtureTelemetryPeaks: the peaks per leg and fixture are taken from
// the readings whose stage names that leg and fixture, the free memory is
// the one at the used-memory peak, and a CPU without a sensor gives null.
func TestFixtureTelemetryPeaks(t *testing.T) {
	dir := t.TempDir()
	sc := writeFixedScreen(t, dir)
	st, err := Register(filepath.Join(dir, "runs"), sc)
	if err != nil {
		t.Fatal(err)
	}
	legs := sc.Legs()
	ld := st.Path(LegsDir, "01-slow", "1")
	os.MkdirAll(ld, 0o755)
	line := func(stage string, usedMiB, freeMiB int64, cpu *float64) string {
		used, free, total := usedMiB<<20, freeMiB<<20, int64(24<<30)
		r := map[string]any{"stage": stage, "at": "2026-10-10T15:00:00Z", "cpu_temp_c": cpu,
			"gpus": []map[string]any{{"memory_used_bytes": used, "memory_free_bytes": free, "memory_total_bytes": total}}}
		b, _ := json.Marshal(r)
		return string(b)
	}
	hot := 81.5
	log := strings.Join([]string{
		line("slow/startup", 30000, 100, nil), // not a fixture's reading
		line("slow/1/s1", 20000, 4000, nil),
		line("slow/1/s1", 21000, 3000, nil),
		line("slow/1/s1", 20500, 3500, nil),
		line("slow/3/s1", 23000, 1000, &hot),
		line("slow/stop", 30000, 100, nil),
	}, "\n") + "\n"
	os.WriteFile(filepath.Join(ld, TelemetryLg), []byte(log), 0o644)
	got, err := fixtureTelemetry(st, sc, legs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Fixture != "input-small" || got[1].Fixture != "input-large" {
		t.Fatalf("fixture telemetry %+v", got)
	}
	small, large := got[0], got[1]
	if small.Readings != 3 || small.MemoryPeak.UsedBytes != 21000<<20 || small.MemoryPeak.FreeBytes != 3000<<20 || small.CPUPeakC != nil {
		t.Errorf("input-small %+v %+v", small, small.MemoryPeak)
	}
	if large.Readings != 1 || large.MemoryPeak.UsedBytes != 23000<<20 || large.CPUPeakC == nil || *large.CPUPeakC != 81.5 {
		t.Errorf("input-large %+v", large)
	}
}
