package screen

import (
	"math"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/model"
)

func sample(leg string, target int, predicted int64, predictedMS, wall float64, marks ...string) *Sample {
	dec := float64(predicted) / (predictedMS / 1000)
	e2e := float64(predicted) / wall
	prompt := int64(target)
	return &Sample{Leg: leg, PromptTarget: target, State: SampleMeasured, PredictedN: &predicted,
		Timings: &model.Timings{PredictedN: &predicted, PredictedMS: &predictedMS}, WallSeconds: &wall,
		DecodeTPS: &dec, EndToEndTPS: &e2e, ServerPromptTokens: &prompt, Marks: marks}
}

func near(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = nil, want %v", name, want)
	}
	if math.Abs(*got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Fatalf("%s = %.12g, want %.12g", name, *got, want)
	}
}

func TestAggregatesPoolDriftAndGain(t *testing.T) {
	legs := []Leg{{0, BaselineStart, "mtp4"}, {1, "mtp2", "mtp2"}, {2, BaselineEnd, "mtp4"}}
	samples := []*Sample{
		sample(BaselineStart, 8192, 1024, 20000, 28),
		sample(BaselineStart, 8192, 1024, 20480, 30),
		sample(BaselineEnd, 8192, 1024, 20000, 28),
		sample("mtp2", 8192, 1024, 16000, 24),
		sample("mtp2", 8192, 1000, 16000, 24, MarkPredictedN), // marked: left out
		{Leg: "mtp2", PromptTarget: 8192, State: SampleFailed, Error: "boom"},
	}
	aggs, drift := Aggregates(legs, []int{8192}, 3, samples)
	if len(aggs) != 3 || len(drift) != 1 {
		t.Fatalf("%d aggregates, %d drifts", len(aggs), len(drift))
	}
	bs := aggs[0]
	if bs.Mode != BaselineStart || bs.Samples != 2 || bs.OutputTokens != 2048 || bs.Planned != 3 {
		t.Fatalf("baseline_start = %+v", bs)
	}
	// Pooled, not a mean of rates: 2048 / 40.48 s, not (51.2 + 50) / 2.
	near(t, "decode_tps", bs.DecodeTPS, 2048/40.48)
	near(t, "end_to_end_tps", bs.EndToEndTPS, 2048/58.0)
	near(t, "request_qps", bs.RequestQPS, 1/29.0)
	near(t, "mean_wall_seconds", bs.MeanWallSeconds, 29)
	near(t, "decode_tps_min", bs.DecodeTPSMin, 50)
	near(t, "decode_tps_max", bs.DecodeTPSMax, 51.2)
	near(t, "mean_prompt_tokens", bs.MeanPromptTokens, 8192)

	m := aggs[1]
	if m.Mode != "mtp2" || m.Samples != 1 || m.Marked != 1 || m.Failed != 1 || m.OutputTokens != 1024 {
		t.Fatalf("mtp2 = %+v", m)
	}
	d := drift[0]
	near(t, "drift", d.DecodeDriftPercent, (51.2/(2048/40.48)-1)*100)
	baseMean := (51.2 + 2048/40.48) / 2
	near(t, "baseline mean", d.MeanDecodeTPS, baseMean)
	near(t, "gain", m.DecodeGainPercent, (64/baseMean-1)*100)
	near(t, "e2e gain", m.EndToEndGainPercent, ((1024/24.0)/((2048/58.0+1024/28.0)/2)-1)*100)
}

func TestAggregatesUnknownIsNull(t *testing.T) {
	legs := []Leg{{0, BaselineStart, "a"}, {1, BaselineEnd, "a"}}
	aggs, drift := Aggregates(legs, []int{8192}, 2, []*Sample{
		sample(BaselineStart, 8192, 1024, 20000, 28),
		{Leg: BaselineEnd, PromptTarget: 8192, State: SampleFailed},
	})
	e := aggs[1]
	if e.Samples != 0 || e.DecodeTPS != nil || e.EndToEndTPS != nil || e.RequestQPS != nil || e.DecodeTPSMin != nil {
		t.Fatalf("no counted sample must give null figures, got %+v", e)
	}
	if drift[0].DecodeDriftPercent != nil || aggs[0].DecodeGainPercent != nil {
		t.Fatal("drift and gain need both baseline runs")
	}
}
