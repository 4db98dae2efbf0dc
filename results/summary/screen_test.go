package summary

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/runstore"
)

// screenRun writes a finished screen of two server modes (the seed's
// dflash220 comparison: mtp4-f16 the baseline, dflash2-f16) with the
// seed's whole-GPU memory peaks per mode, as the telemetry sampler records
// them per leg. cpu false leaves the CPU temperature unmeasured (no sensor).
func screenRun(t *testing.T, out string, cpu bool) string {
	t.Helper()
	sc := &screen.Screen{Spec: screen.Spec{Name: "dflash220", Baseline: "mtp4-f16",
		Modes:         []screen.ModeSpec{{Name: "mtp4-f16", Profile: "a.yaml"}, {Name: "dflash2-f16", Profile: "b.yaml"}},
		PromptTargets: []int{8192}, Seeds: []int64{11}, OutputTokens: 512, ToleranceTokens: 64},
		Profiles: map[string]*serving.Profile{"mtp4-f16": {Name: "mtp4-f16", API: serving.APILlamaServer}, "dflash2-f16": {Name: "dflash2-f16", API: serving.APILlamaServer}}}
	st, err := screen.Register(out, sc)
	if err != nil {
		t.Fatal(err)
	}
	// used and free bytes at each mode's peak: 22.7989501953125 GiB with
	// 1229.875 MiB free, 23.32598876953125 GiB with 690.1875 MiB free.
	peaks := map[string][2]int64{"mtp4-f16": {24480186368, 1289617408}, "dflash2-f16": {25046089728, 723714048}}
	at := time.Date(2026, 10, 10, 15, 0, 0, 0, time.UTC)
	for _, leg := range sc.Legs() {
		for _, target := range sc.Spec.PromptTargets {
			for _, seed := range sc.Spec.Seeds {
				n, ms, wall := int64(512), 9658.3, 17.2
				dec, e2e, prompt := float64(n)/(ms/1000), float64(n)/wall, int64(target)
				s := &screen.Sample{Key: screen.SampleKey(leg, target, seed), Leg: leg.Label, LegIndex: leg.Index, Mode: leg.Mode,
					PromptTarget: target, Seed: seed, State: screen.SampleMeasured, PredictedN: &n, OutputTokensRequested: 512,
					Timings: &model.Timings{PredictedN: &n, PredictedMS: &ms}, WallSeconds: &wall, DecodeTPS: &dec,
					EndToEndTPS: &e2e, ServerPromptTokens: &prompt, Marks: []string{}}
				if err := runstore.WriteJSON(st.Path(screen.SamplesDir, s.Key+".json"), s); err != nil {
					t.Fatal(err)
				}
			}
		}
		ld := st.Path(screen.LegsDir, fmt.Sprintf("%02d-%s", leg.Index, leg.Label), "1")
		os.MkdirAll(ld, 0o755)
		p := peaks[leg.Mode]
		w := 328.0
		// baseline_end peaks a little lower than baseline_start: the mode's
		// peak is the highest of its legs.
		used := p[0]
		if leg.Label == screen.BaselineEnd {
			used -= 1 << 20
		}
		sum := telemetry.Summary{Samples: 100, PowerSamples: 100, PowerMeanWatts: &w,
			MemoryPeak: &telemetry.MemoryPeak{At: at, Stage: leg.Label, UsedBytes: used, FreeBytes: p[1], TotalBytes: 24 << 30}}
		if cpu {
			sum.CPUTempPeak = &telemetry.Peak{At: at, Stage: leg.Label, Value: 82.75}
		} else {
			sum.CPUReason = "no CPU temperature sensor"
		}
		if err := runstore.WriteJSON(filepath.Join(ld, screen.TelemetryDc), sum); err != nil {
			t.Fatal(err)
		}
	}
	return st.Dir
}

// TestScreenMemory: a screen's per-mode memory peaks and the derived extra
// peak MiB are the seed's; a machine without a CPU sensor gives a null
// temperature, never 0.
func TestScreenMemory(t *testing.T) {
	out := t.TempDir()
	dir := screenRun(t, out, false)
	doc, err := Summarize(context.Background(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	s := doc.ShortInputScreens["dflash220"]
	if s == nil || s.State != "complete" || s.CompletedMeasurements != 3 || s.PlannedMeasurements != 3 || len(s.RunIDs) != 1 {
		t.Fatalf("screen %+v", s)
	}
	sd := seed(t)
	mem := sd["dflash220_short_generation_only"].(map[string]any)["memory"].(map[string]any)
	for mode, m := range s.Memory {
		w := mem[mode].(map[string]any)
		if m.PeakGiB == nil || *m.PeakGiB != w["peak_gib"].(float64) || m.FreeMiBAtPeak == nil || *m.FreeMiBAtPeak != w["free_mib_at_peak"].(float64) {
			t.Errorf("%s memory %v GiB %v MiB free, want the seed's %v", mode, fp(m.PeakGiB), fp(m.FreeMiBAtPeak), w)
		}
	}
	name := "dflash220.dflash2-f16_additional_peak_mib_vs_mtp4-f16"
	if g := doc.Derived[name]; g == nil || *g != num(t, sd, "derived", "dflash_additional_peak_mib") {
		t.Errorf("%s = %v, want the seed's 539.6875", name, fp(g))
	}
	if s.CPUPeakC != nil {
		t.Errorf("CPU peak %v without a sensor, want null", *s.CPUPeakC)
	}
	if len(doc.Power.MeasuredGPUMeanW) != 1 || doc.Power.MeasuredGPUMeanW[0].Value == nil || doc.Power.PowerScope != screen.PowerScope {
		t.Errorf("power %+v", doc.Power)
	}
	withCPU, err := Summarize(context.Background(), []string{screenRun(t, t.TempDir(), true)})
	if err != nil {
		t.Fatal(err)
	}
	if c := withCPU.ShortInputScreens["dflash220"].CPUPeakC; c == nil || *c != 82.75 {
		t.Errorf("CPU peak %v, want 82.75", fp(c))
	}
}
