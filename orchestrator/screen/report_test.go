package screen

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/runstore"
)

var update = flag.Bool("update", false, "rewrite golden files")

// syntheticScreen writes a finished screen's run directory by hand: two
// modes, two targets, two seeds, one marked sample and one failed, and a
// telemetry summary per leg. Every number is chosen so the report's figures
// can be checked by hand.
func syntheticScreen(t *testing.T) (*runstore.Store, *runstore.Run, *Screen) {
	t.Helper()
	dir := t.TempDir()
	st, err := runstore.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	sc := &Screen{Spec: Spec{Name: "mtp-depth", Baseline: "mtp4",
		Modes:         []ModeSpec{{Name: "mtp4", Profile: "p4.yaml"}, {Name: "mtp2", Profile: "p2.yaml"}},
		PromptTargets: []int{8192, 32768}, Seeds: []int64{11, 22}, OutputTokens: 1024, ToleranceTokens: 64},
		Profiles: map[string]*serving.Profile{"mtp4": {Name: "q4-mtp4", API: serving.APILlamaServer}, "mtp2": {Name: "q4-mtp2", API: serving.APILlamaServer}}}
	run := &runstore.Run{ID: "0190aaaa-0000-7000-8000-000000000001", Kind: KindScreen}
	os.MkdirAll(st.Path(SamplesDir), 0o755)
	at := time.Date(2026, 10, 10, 15, 39, 41, 12160000, time.UTC)
	// decode ms per leg and target; wall adds prompt time.
	decodeMS := map[string]float64{BaselineStart: 20000, "mtp2": 19000, BaselineEnd: 20200}
	promptS := map[int]float64{8192: 8, 32768: 40}
	for _, leg := range sc.Legs() {
		for _, target := range sc.Spec.PromptTargets {
			for i, seed := range sc.Spec.Seeds {
				ms := decodeMS[leg.Label] + float64(i)*400
				s := sample(leg.Label, target, 1024, ms, ms/1000+promptS[target])
				s.Key, s.LegIndex, s.Mode, s.Seed, s.OutputTokensRequested = SampleKey(leg, target, seed), leg.Index, leg.Mode, seed, 1024
				s.Marks = []string{}
				if leg.Label == "mtp2" && target == 32768 && seed == 22 {
					n := int64(1000)
					s.PredictedN, s.Timings.PredictedN = &n, &n
					s.Marks = []string{MarkPredictedN}
				}
				if leg.Label == BaselineEnd && target == 32768 && seed == 22 {
					s = &Sample{Key: SampleKey(leg, target, seed), Leg: leg.Label, Mode: leg.Mode, PromptTarget: target, Seed: seed,
						State: SampleFailed, Error: "/completion: connection refused", OutputTokensRequested: 1024, Marks: []string{}}
				}
				if err := runstore.WriteJSON(st.Path(SamplesDir, s.Key+".json"), s); err != nil {
					t.Fatal(err)
				}
			}
		}
		ld := st.Path(LegsDir, SampleKey(leg, 0, 0)[:3]+leg.Label, "1")
		os.MkdirAll(ld, 0o755)
		w := 300 + 10*float64(leg.Index)
		sum := telemetry.Summary{Samples: 100, PowerSamples: 100, PowerMeanWatts: &w,
			MemoryPeak:  &telemetry.MemoryPeak{At: at.Add(time.Duration(leg.Index) * time.Minute), Stage: leg.Label + "/32768/s11", UsedBytes: int64(22+leg.Index) << 30, FreeBytes: int64(2-leg.Index/2) << 30, TotalBytes: 24 << 30},
			CPUTempPeak: &telemetry.Peak{At: at, Stage: leg.Label, Value: 80 + float64(leg.Index)}}
		runstore.WriteJSON(filepath.Join(ld, TelemetryDc), sum)
		bi, mp := "b10587-3f545be", "/models/q4.gguf"
		runstore.WriteJSON(filepath.Join(ld, IdentityDoc), serving.Identity{Profile: sc.Profiles[leg.Mode].Name, BuildInfo: &bi, ModelPath: &mp, ReadySeconds: 12.5})
	}
	return st, run, sc
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from golden (go test -update to accept):\n%s", name, got)
	}
}

func TestScreenReportGolden(t *testing.T) {
	st, run, sc := syntheticScreen(t)
	rep, err := BuildReport(st, run, sc)
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != "incomplete" || rep.CompletedMeasurements != 11 || rep.PlannedMeasurements != 12 ||
		rep.MarkedMeasurements != 1 || rep.FailedMeasurements != 1 || rep.CountedMeasurements != 10 {
		t.Fatalf("counts: %+v", rep)
	}
	// Mean power is weighted by samples: legs at 300, 310, 320 W, 100 samples each.
	near(t, "gpu mean W", rep.MeasuredGPUMeanW, 310)
	if rep.MemoryPeak == nil || rep.MemoryPeak.UsedBytes != 24<<30 || rep.MemoryPeak.Stage != BaselineEnd+"/32768/s11" {
		t.Fatalf("memory peak %+v", rep.MemoryPeak)
	}
	near(t, "cpu peak", rep.CPUPeakC, 82)
	var js, tab, html, cmpTab bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	rep.WriteTable(&tab)
	cmp, err := rep.Compare("mtp2", "baseline_start")
	if err != nil {
		t.Fatal(err)
	}
	cmp.WriteTable(&cmpTab)
	if err := rep.WriteHTML(&html, cmp); err != nil {
		t.Fatal(err)
	}
	golden(t, "screen.json", js.Bytes())
	golden(t, "screen.txt", tab.Bytes())
	golden(t, "compare.txt", cmpTab.Bytes())
	golden(t, "screen.html", html.Bytes())

	// The seed's aggregate fields are all there, under the seed's names.
	var doc map[string]any
	json.Unmarshal(js.Bytes(), &doc)
	agg := doc["aggregates"].([]any)[0].(map[string]any)
	for _, k := range []string{"mode", "prompt_target", "samples", "output_tokens", "decode_tps", "end_to_end_tps",
		"request_qps", "mean_wall_seconds", "decode_tps_min", "decode_tps_max"} {
		if _, ok := agg[k]; !ok {
			t.Fatalf("aggregate lacks %s", k)
		}
	}
	for _, k := range []string{"state", "completed_measurements", "planned_measurements", "measured_gpu_mean_w", "power_scope"} {
		if _, ok := doc[k]; !ok {
			t.Fatalf("report lacks %s", k)
		}
	}
	if strings.Contains(html.String(), "http://") && !strings.Contains(html.String(), `xmlns="http://www.w3.org/2000/svg"`) {
		t.Fatal("the page must not load anything")
	}
	for _, bad := range []string{"<script", "<link", "src="} {
		if strings.Contains(html.String(), bad) {
			t.Fatalf("page is not self-contained: has %s", bad)
		}
	}

	cj, _ := json.Marshal(cmp)
	var cd struct {
		Comparison []map[string]any `json:"comparison"`
	}
	json.Unmarshal(cj, &cd)
	row := cd.Comparison[0]
	for _, k := range []string{"fixture", "input_tokens", "output_tokens", "mtp2_tps", "baseline_start_tps",
		"mtp2_tps_change_percent", "mtp2_wall_seconds", "baseline_start_wall_seconds"} {
		if _, ok := row[k]; !ok {
			t.Fatalf("comparison row lacks %s: %v", k, row)
		}
	}
	if row["fixture"] != "input8K" {
		t.Fatalf("fixture %v", row["fixture"])
	}
	// mtp2 at 8192: 2048 tokens / (19 + 19.4) s; baseline_start: 2048 / (20 + 20.4) s.
	want := ((2048/38.4)/(2048/40.4) - 1) * 100
	if got := row["mtp2_tps_change_percent"].(float64); got-want > 1e-9 || want-got > 1e-9 {
		t.Fatalf("change %v, want %v", got, want)
	}
	if _, err := rep.Compare("mtp2", "nope"); err == nil {
		t.Fatal("unknown mode must be refused")
	}
}

// TestMeasureMarksWrongTokenCount checks that a server that stops short is
// recorded but marked, never counted as if it had generated N tokens.
func TestMeasureMarksWrongTokenCount(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tokenize":
			var req struct{ Content string }
			json.NewDecoder(r.Body).Decode(&req)
			toks := make([]int, 1+len(req.Content)/4)
			json.NewEncoder(w).Encode(map[string]any{"tokens": toks})
		case "/completion":
			w.Write([]byte(`{"tokens_predicted":900,"stop_type":"eos","timings":{"cache_n":12,"prompt_n":500,"prompt_ms":50,"predicted_n":900,"predicted_ms":9000}}`))
		}
	}))
	defer srv.Close()
	sc := &Screen{Spec: Spec{OutputTokens: 1024, ToleranceTokens: 64, RequestTimeout: serving.Duration(time.Minute)},
		Profiles: map[string]*serving.Profile{"m": {Name: "m"}}}
	s := measure(context.Background(), newClient(srv.URL), &runstore.Run{ID: "r"}, sc, Leg{Label: "m", Mode: "m"},
		sampleSpec{key: "k", target: 512, seed: 1}, "legs/x/1")
	if s.State != SampleMeasured || s.Counted() {
		t.Fatalf("state %s counted %v", s.State, s.Counted())
	}
	if strings.Join(s.Marks, ",") != MarkPredictedN+","+MarkCacheReused {
		t.Fatalf("marks = %v", s.Marks)
	}
	if *s.PredictedN != 900 || *s.ServerPromptTokens != 512 {
		t.Fatalf("sample = %+v", s)
	}
}
