package screen

import (
	"fmt"
	"time"

	"github.com/evalctl/evalctl/orchestrator/model"
)

// Sample states. A measured sample is finished and never measured again; a
// failed one (the request or the server failed) is measured again when the
// screen resumes.
const (
	SampleMeasured = "measured"
	SampleFailed   = "failed"
)

// Marks set on a measured sample that is kept on disk but left out of the
// aggregates, because it did not measure what the screen asked for.
const (
	// MarkPredictedN: the server generated a different number of tokens
	// than requested.
	MarkPredictedN = "predicted_n_mismatch"
	// MarkCacheReused: the server reused cached prompt tokens, so the
	// prompt was not cold.
	MarkCacheReused = "prompt_cache_reused"
	// MarkPromptSize: the server processed a prompt size outside the
	// tolerance of the target.
	MarkPromptSize = "prompt_size_mismatch"
	// MarkNoTimings: the server's timings lacked a figure the screen needs.
	MarkNoTimings = "timings_incomplete"
)

// Sample is one measurement: one cold prompt, exactly N generated tokens.
type Sample struct {
	Key          string `json:"key"`
	Leg          string `json:"leg"`
	LegIndex     int    `json:"leg_index"`
	Mode         string `json:"mode"`
	Profile      string `json:"profile"`
	PromptTarget int    `json:"prompt_target"`
	// Fixture names the fixed input of a fixed-input screen's sample;
	// FixtureTokens is its token count alone, as the server counted it.
	Fixture       string `json:"fixture,omitempty"`
	FixtureTokens *int   `json:"fixture_tokens,omitempty"`
	Seed          int64  `json:"seed"`
	State         string `json:"state"`
	// PromptTokens is the prompt's size as /tokenize counted it;
	// ServerPromptTokens what the server processed (prompt_n + cache_n).
	PromptTokens          *int   `json:"prompt_tokens"`
	ServerPromptTokens    *int64 `json:"server_prompt_tokens"`
	TokenizeRequests      int    `json:"tokenize_requests"`
	OutputTokensRequested int    `json:"output_tokens_requested"`
	// PredictedN is the server's count of generated tokens.
	PredictedN  *int64         `json:"predicted_n"`
	Timings     *model.Timings `json:"timings"`
	StopType    string         `json:"stop_type,omitempty"`
	WallSeconds *float64       `json:"wall_seconds"`
	// DecodeTPS = predicted_n / predicted_ms * 1000; EndToEndTPS =
	// predicted_n / wall seconds.
	DecodeTPS   *float64 `json:"decode_tps"`
	EndToEndTPS *float64 `json:"end_to_end_tps"`
	// Marks say why a measured sample is left out of the aggregates.
	Marks []string `json:"marks"`
	// Nonce makes the sample's prompt unique to this try (its leg try).
	Nonce      string     `json:"nonce,omitempty"`
	Error      string     `json:"error,omitempty"`
	Server     string     `json:"server"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Counted reports whether the sample enters the aggregates: measured and
// unmarked.
func (s *Sample) Counted() bool {
	return s.State == SampleMeasured && len(s.Marks) == 0
}

// Aggregate is one mode at one prompt target, pooled over its counted
// samples. The first fields are the results file's shape; every figure is
// nil when no sample counted.
type Aggregate struct {
	Mode         string `json:"mode"`
	PromptTarget int    `json:"prompt_target"`
	// Fixture names the fixed input of a fixed-input screen (whose
	// prompt_target is then the fixture's number).
	Fixture string `json:"fixture,omitempty"`
	Samples int    `json:"samples"`
	// OutputTokens is the sum of predicted_n over the samples.
	OutputTokens int64 `json:"output_tokens"`
	// DecodeTPS is pooled: sum(predicted_n) / sum(predicted_ms / 1000).
	DecodeTPS *float64 `json:"decode_tps"`
	// EndToEndTPS is sum(predicted_n) / sum(wall seconds).
	EndToEndTPS *float64 `json:"end_to_end_tps"`
	// RequestQPS is 1 / mean wall seconds.
	RequestQPS      *float64 `json:"request_qps"`
	MeanWallSeconds *float64 `json:"mean_wall_seconds"`
	DecodeTPSMin    *float64 `json:"decode_tps_min"`
	DecodeTPSMax    *float64 `json:"decode_tps_max"`
	WallSecondsMin  *float64 `json:"wall_seconds_min"`
	WallSecondsMax  *float64 `json:"wall_seconds_max"`
	// MeanPromptTokens is the mean actual prompt size (server count).
	MeanPromptTokens *float64 `json:"mean_prompt_tokens"`
	// Planned, Marked and Failed count the other samples of this cell.
	Planned int `json:"planned"`
	Marked  int `json:"marked"`
	Failed  int `json:"failed"`
	// Gains over the baseline mean (the mean of baseline_start and
	// baseline_end at this target), in percent.
	DecodeGainPercent   *float64 `json:"decode_gain_percent"`
	EndToEndGainPercent *float64 `json:"end_to_end_gain_percent"`
}

// Drift compares the two baseline runs at one prompt target.
type Drift struct {
	PromptTarget int `json:"prompt_target"`
	// DecodeDriftPercent = (baseline_end / baseline_start - 1) x 100.
	StartDecodeTPS       *float64 `json:"baseline_start_decode_tps"`
	EndDecodeTPS         *float64 `json:"baseline_end_decode_tps"`
	DecodeDriftPercent   *float64 `json:"decode_drift_percent"`
	MeanDecodeTPS        *float64 `json:"baseline_mean_decode_tps"`
	StartEndToEndTPS     *float64 `json:"baseline_start_end_to_end_tps"`
	EndEndToEndTPS       *float64 `json:"baseline_end_end_to_end_tps"`
	EndToEndDriftPercent *float64 `json:"end_to_end_drift_percent"`
	MeanEndToEndTPS      *float64 `json:"baseline_mean_end_to_end_tps"`
	// DriftNullReason says why the drift percentages are null although
	// both baselines were measured: some baseline sample was not measured
	// in bracket order (baseline_start before every mode sample,
	// baseline_end after), as when a resume re-measured it late.
	DriftNullReason string `json:"drift_null_reason,omitempty"`
}

// bracketProblem says why the counted baseline samples at target t were
// not measured in bracket order; "" when they were.
func bracketProblem(samples []*Sample, t int) string {
	var modeFirst, modeLast time.Time
	for _, s := range samples {
		if s.Leg == BaselineStart || s.Leg == BaselineEnd || s.State != SampleMeasured || s.StartedAt == nil || s.FinishedAt == nil {
			continue
		}
		if modeFirst.IsZero() || s.StartedAt.Before(modeFirst) {
			modeFirst = *s.StartedAt
		}
		if s.FinishedAt.After(modeLast) {
			modeLast = *s.FinishedAt
		}
	}
	if modeFirst.IsZero() {
		return ""
	}
	for _, s := range samples {
		if s.PromptTarget != t || !s.Counted() {
			continue
		}
		switch {
		case s.StartedAt == nil || s.FinishedAt == nil:
			if s.Leg == BaselineStart || s.Leg == BaselineEnd {
				return fmt.Sprintf("baseline sample %s has no measurement times", s.Key)
			}
		case s.Leg == BaselineStart && s.FinishedAt.After(modeFirst):
			return fmt.Sprintf("baseline_start sample %s was measured after the first mode sample (re-measured on resume?)", s.Key)
		case s.Leg == BaselineEnd && s.StartedAt.Before(modeLast):
			return fmt.Sprintf("baseline_end sample %s was measured before the last mode sample", s.Key)
		}
	}
	return ""
}

// Aggregates pools samples per (leg label, target) in leg order, then adds
// baseline drift and each row's gain over the baseline mean.
func Aggregates(legs []Leg, targets []int, seeds int, samples []*Sample) ([]Aggregate, []Drift) {
	type cell struct {
		label  string
		target int
	}
	by := map[cell][]*Sample{}
	for _, s := range samples {
		c := cell{s.Leg, s.PromptTarget}
		by[c] = append(by[c], s)
	}
	var aggs []Aggregate
	index := map[cell]int{}
	for _, l := range legs {
		for _, t := range targets {
			a := aggregate(l.Label, t, by[cell{l.Label, t}])
			a.Planned = seeds
			index[cell{l.Label, t}] = len(aggs)
			aggs = append(aggs, a)
		}
	}
	var drifts []Drift
	for _, t := range targets {
		st, okS := index[cell{BaselineStart, t}]
		en, okE := index[cell{BaselineEnd, t}]
		if !okS || !okE {
			continue
		}
		s, e := aggs[st], aggs[en]
		d := Drift{PromptTarget: t,
			StartDecodeTPS: s.DecodeTPS, EndDecodeTPS: e.DecodeTPS,
			StartEndToEndTPS: s.EndToEndTPS, EndEndToEndTPS: e.EndToEndTPS,
			DecodeDriftPercent: gainPercent(e.DecodeTPS, s.DecodeTPS), MeanDecodeTPS: mean2(s.DecodeTPS, e.DecodeTPS),
			EndToEndDriftPercent: gainPercent(e.EndToEndTPS, s.EndToEndTPS), MeanEndToEndTPS: mean2(s.EndToEndTPS, e.EndToEndTPS),
		}
		if why := bracketProblem(samples, t); why != "" {
			d.DecodeDriftPercent, d.EndToEndDriftPercent, d.DriftNullReason = nil, nil, why
		}
		drifts = append(drifts, d)
		for i := range aggs {
			if aggs[i].PromptTarget == t {
				aggs[i].DecodeGainPercent = gainPercent(aggs[i].DecodeTPS, d.MeanDecodeTPS)
				aggs[i].EndToEndGainPercent = gainPercent(aggs[i].EndToEndTPS, d.MeanEndToEndTPS)
			}
		}
	}
	return aggs, drifts
}

// ModeAggregates pools samples per (mode, target) across the legs a mode
// ran in: the baseline mode pools baseline_start and baseline_end. Gains
// are taken against the same baseline mean as the legs'.
func ModeAggregates(modes []string, targets []int, seeds int, samples []*Sample, drift []Drift) []Aggregate {
	var out []Aggregate
	for _, m := range modes {
		legs := map[string]bool{}
		for _, t := range targets {
			var these []*Sample
			for _, s := range samples {
				if s.Mode == m && s.PromptTarget == t {
					these = append(these, s)
					legs[s.Leg] = true
				}
			}
			a := aggregate(m, t, these)
			a.Planned = seeds * max(1, len(legs))
			for _, d := range drift {
				if d.PromptTarget == t {
					a.DecodeGainPercent = gainPercent(a.DecodeTPS, d.MeanDecodeTPS)
					a.EndToEndGainPercent = gainPercent(a.EndToEndTPS, d.MeanEndToEndTPS)
				}
			}
			out = append(out, a)
		}
	}
	return out
}

func aggregate(label string, target int, samples []*Sample) Aggregate {
	a := Aggregate{Mode: label, PromptTarget: target}
	var tokens int64
	var decodeSec, wallSec, promptSum float64
	var promptN int
	for _, s := range samples {
		switch {
		case s.State == SampleFailed:
			a.Failed++
			continue
		case !s.Counted():
			a.Marked++
			continue
		}
		a.Samples++
		n := *s.PredictedN
		tokens += n
		decodeSec += *s.Timings.PredictedMS / 1000
		wallSec += *s.WallSeconds
		a.DecodeTPSMin = minPtr(a.DecodeTPSMin, *s.DecodeTPS)
		a.DecodeTPSMax = maxPtr(a.DecodeTPSMax, *s.DecodeTPS)
		a.WallSecondsMin = minPtr(a.WallSecondsMin, *s.WallSeconds)
		a.WallSecondsMax = maxPtr(a.WallSecondsMax, *s.WallSeconds)
		if s.ServerPromptTokens != nil {
			promptSum += float64(*s.ServerPromptTokens)
			promptN++
		}
	}
	a.OutputTokens = tokens
	if a.Samples == 0 {
		return a
	}
	a.DecodeTPS = ratio(float64(tokens), decodeSec)
	a.EndToEndTPS = ratio(float64(tokens), wallSec)
	meanWall := wallSec / float64(a.Samples)
	a.MeanWallSeconds = &meanWall
	a.RequestQPS = ratio(1, meanWall)
	if promptN > 0 {
		m := promptSum / float64(promptN)
		a.MeanPromptTokens = &m
	}
	return a
}

// gainPercent is (v / base - 1) x 100; nil when either is unknown or base
// is zero.
func gainPercent(v, base *float64) *float64 {
	if v == nil || base == nil || *base == 0 {
		return nil
	}
	g := (*v / *base - 1) * 100
	return &g
}

func mean2(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	m := (*a + *b) / 2
	return &m
}

func ratio(num, den float64) *float64 {
	if den <= 0 {
		return nil
	}
	v := num / den
	return &v
}

func minPtr(p *float64, v float64) *float64 {
	if p == nil || v < *p {
		return &v
	}
	return p
}

func maxPtr(p *float64, v float64) *float64 {
	if p == nil || v > *p {
		return &v
	}
	return p
}
