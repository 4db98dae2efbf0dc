package screen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/runstore"
)

// PowerScope says what the power figure covers, as the results file does.
const PowerScope = "GPU board power measured; whole-PC AC power unavailable"

// LegReport is one server run of a screen as the report shows it.
type LegReport struct {
	Index   int    `json:"index"`
	Label   string `json:"label"`
	Mode    string `json:"mode"`
	Profile string `json:"profile"`
	// Tries is the number of server starts the leg took (resumes, failures).
	Tries          int                   `json:"tries"`
	BuildInfo      *string               `json:"build_info"`
	ModelPath      *string               `json:"model_path"`
	Files          []serving.FileDigest  `json:"files"`
	ReadySeconds   *float64              `json:"ready_seconds"`
	PowerMeanWatts *float64              `json:"power_mean_watts"`
	PowerSamples   int                   `json:"power_samples"`
	MemoryPeak     *telemetry.MemoryPeak `json:"memory_peak_200ms"`
	CPUPeakC       *float64              `json:"cpu_peak_c"`
}

// MarkedSample lists a measured sample left out of the aggregates.
type MarkedSample struct {
	Key        string   `json:"key"`
	Marks      []string `json:"marks"`
	PredictedN *int64   `json:"predicted_n"`
	Requested  int      `json:"output_tokens_requested"`
}

// RateNote tells a reader comparing with llama-server's own figures why
// they differ slightly.
const RateNote = "note: decode tps here is predicted_n / predicted_ms (n/ms); llama-server's own timings.predicted_per_second is (predicted_n - 1) / predicted_ms, a little lower"

// Report is a screen's results: the results file's
// short_input_screens entry (state, counts, aggregates) plus drift, power,
// memory and temperature.
type Report struct {
	Name                  string      `json:"name"`
	RunID                 string      `json:"run_id"`
	State                 string      `json:"state"`
	CompletedMeasurements int         `json:"completed_measurements"`
	PlannedMeasurements   int         `json:"planned_measurements"`
	CountedMeasurements   int         `json:"counted_measurements"`
	MarkedMeasurements    int         `json:"marked_measurements"`
	FailedMeasurements    int         `json:"failed_measurements"`
	Baseline              string      `json:"baseline"`
	OutputTokens          int         `json:"output_tokens_per_sample"`
	Aggregates            []Aggregate `json:"aggregates"`
	// ModeAggregates pools each mode over its legs (the baseline mode over
	// baseline_start and baseline_end).
	ModeAggregates   []Aggregate           `json:"mode_aggregates"`
	Drift            []Drift               `json:"baseline_drift"`
	MeasuredGPUMeanW *float64              `json:"measured_gpu_mean_w"`
	PowerScope       string                `json:"power_scope"`
	MemoryPeak       *telemetry.MemoryPeak `json:"memory_peak_200ms"`
	CPUPeakC         *float64              `json:"cpu_peak_c"`
	// TelemetryNotes say why a figure above is null.
	TelemetryNotes []string       `json:"telemetry_notes,omitempty"`
	Legs           []LegReport    `json:"legs"`
	Marked         []MarkedSample `json:"marked_samples"`
	Failed         []MarkedSample `json:"failed_samples"`
	// Notes: how the rates relate to llama-server's own.
	Notes []string `json:"notes"`
	// Fixed is a fixed-input screen: prompt_target is a fixture's number,
	// each aggregate names its fixture.
	Fixed bool `json:"fixed_inputs,omitempty"`
	// FixtureTelemetry is, for a fixed-input screen, per leg and fixture
	// the memory and temperature peaks while it was measured.
	FixtureTelemetry []FixtureTelemetry `json:"fixture_telemetry,omitempty"`
}

// BuildReport reads a screen's run directory into its report.
func BuildReport(st *runstore.Store, run *runstore.Run, sc *Screen) (*Report, error) {
	samples, err := Samples(st)
	if err != nil {
		return nil, err
	}
	legs := sc.Legs()
	aggs, drift := Aggregates(legs, sc.targets(), len(sc.Spec.Seeds), samples)
	r := &Report{Name: sc.Spec.Name, RunID: run.ID, PlannedMeasurements: sc.Planned(), Baseline: sc.Spec.Baseline,
		OutputTokens: sc.Spec.OutputTokens, Aggregates: aggs, Drift: drift, Marked: []MarkedSample{}, Failed: []MarkedSample{},
		Notes: []string{RateNote}}
	r.countSamples(samples)
	modes := []string{sc.Spec.Baseline}
	for _, m := range sc.Spec.Modes {
		if m.Name != sc.Spec.Baseline {
			modes = append(modes, m.Name)
		}
	}
	r.ModeAggregates = ModeAggregates(modes, sc.targets(), len(sc.Spec.Seeds), samples, drift)
	r.Fixed = sc.Fixed()
	if r.Fixed {
		if r.FixtureTelemetry, err = fixtureTelemetry(st, sc, legs); err != nil {
			return nil, err
		}
	}
	for _, as := range [][]Aggregate{r.Aggregates, r.ModeAggregates} {
		for i := range as {
			if f := sc.fixture(as[i].PromptTarget); f != nil {
				as[i].Fixture = f.Name
			}
		}
	}
	r.State = "incomplete"
	if r.CompletedMeasurements == r.PlannedMeasurements {
		r.State = "complete"
	}
	if err := r.addLegs(st, sc, legs); err != nil {
		return nil, err
	}
	return r, nil
}

// countSamples counts the measurements by state and lists the failed
// ones and those whose marks keep them out of the figures.
func (r *Report) countSamples(samples []*Sample) {
	for _, s := range samples {
		switch {
		case s.State == SampleFailed:
			r.FailedMeasurements++
			r.Failed = append(r.Failed, MarkedSample{Key: s.Key, Marks: []string{s.Error}, Requested: s.OutputTokensRequested})
		case s.Counted():
			r.CompletedMeasurements++
			r.CountedMeasurements++
		default:
			r.CompletedMeasurements++
			r.MarkedMeasurements++
			r.Marked = append(r.Marked, MarkedSample{Key: s.Key, Marks: s.Marks, PredictedN: s.PredictedN, Requested: s.OutputTokensRequested})
		}
	}
}

// powerTotal sums power samples across legs, so the screen's mean power
// weighs each leg by how long it was measured.
type powerTotal struct {
	sum float64
	n   int
}

// addLegs reports each leg from its tries' identity and telemetry files
// and sets the screen's power figure (measured or why not) and its
// telemetry notes (each reason once, sorted).
func (r *Report) addLegs(st *runstore.Store, sc *Screen, legs []Leg) error {
	var pow powerTotal
	notes := map[string]bool{}
	for _, l := range legs {
		lr := LegReport{Index: l.Index, Label: l.Label, Mode: l.Mode, Profile: sc.Profiles[l.Mode].Name}
		tries, _ := filepath.Glob(st.Path(LegsDir, fmt.Sprintf("%02d-%s", l.Index, l.Label), "*"))
		sort.Slice(tries, func(i, j int) bool { return tryNum(tries[i]) < tryNum(tries[j]) })
		lr.Tries = len(tries)
		for _, dir := range tries {
			if err := r.addTry(&lr, dir, &pow, notes); err != nil {
				return err
			}
		}
		r.Legs = append(r.Legs, lr)
	}
	if pow.n > 0 {
		m := pow.sum / float64(pow.n)
		r.MeasuredGPUMeanW = &m
		r.PowerScope = PowerScope
	} else {
		r.PowerScope = "GPU board power not measured; whole-PC AC power unavailable"
	}
	for n := range notes {
		r.TelemetryNotes = append(r.TelemetryNotes, n)
	}
	sort.Strings(r.TelemetryNotes)
	return nil
}

// addTry adds one try's server identity and telemetry (if written) to
// its leg lr and the screen's peaks; a reading that was unavailable adds
// its reason to notes.
func (r *Report) addTry(lr *LegReport, dir string, pow *powerTotal, notes map[string]bool) error {
	var id serving.Identity
	if runstore.ReadJSON(filepath.Join(dir, IdentityDoc), &id) == nil {
		lr.BuildInfo, lr.ModelPath, lr.Files = id.BuildInfo, id.ModelPath, id.Files
		rs := id.ReadySeconds
		lr.ReadySeconds = &rs
	}
	var sum telemetry.Summary
	if err := runstore.ReadJSON(filepath.Join(dir, TelemetryDc), &sum); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if sum.PowerMeanWatts != nil && sum.PowerSamples > 0 {
		pow.sum += *sum.PowerMeanWatts * float64(sum.PowerSamples)
		pow.n += sum.PowerSamples
		lr.PowerSamples += sum.PowerSamples
		lr.PowerMeanWatts = weighted(lr.PowerMeanWatts, lr.PowerSamples-sum.PowerSamples, *sum.PowerMeanWatts, sum.PowerSamples)
	} else if sum.PowerReason != "" {
		notes["power: "+sum.PowerReason] = true
	}
	if sum.MemoryPeak != nil {
		if lr.MemoryPeak == nil || sum.MemoryPeak.UsedBytes > lr.MemoryPeak.UsedBytes {
			lr.MemoryPeak = sum.MemoryPeak
		}
		if r.MemoryPeak == nil || sum.MemoryPeak.UsedBytes > r.MemoryPeak.UsedBytes {
			r.MemoryPeak = sum.MemoryPeak
		}
	} else if sum.MemoryReason != "" {
		notes["GPU memory: "+sum.MemoryReason] = true
	}
	if sum.CPUTempPeak != nil {
		lr.CPUPeakC = maxPtr(lr.CPUPeakC, sum.CPUTempPeak.Value)
		r.CPUPeakC = maxPtr(r.CPUPeakC, sum.CPUTempPeak.Value)
	} else if sum.CPUReason != "" {
		notes["CPU temperature: "+sum.CPUReason] = true
	}
	return nil
}

func weighted(prev *float64, prevN int, v float64, n int) *float64 {
	if prev == nil || prevN == 0 {
		return &v
	}
	m := (*prev*float64(prevN) + v*float64(n)) / float64(prevN+n)
	return &m
}

func tryNum(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(dir))
	return n
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as aligned text for a terminal.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "screen %s (run %s): %s, %d of %d measured (%d counted, %d marked), %d failed; %d output tokens per sample; baseline %s\n\n",
		r.Name, r.RunID, r.State, r.CompletedMeasurements, r.PlannedMeasurements, r.CountedMeasurements,
		r.MarkedMeasurements, r.FailedMeasurements, r.OutputTokens, r.Baseline)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttarget\tprompt\tn\tdecode tps\tmin\tmax\te2e tps\tqps\tmean wall s\tdecode gain %\te2e gain %\t")
	for _, a := range r.Aggregates {
		target := strconv.Itoa(a.PromptTarget)
		if a.Fixture != "" {
			target = a.Fixture
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.Mode, target, fmtF(a.MeanPromptTokens, 0),
			a.Samples, a.Planned, fmtF(a.DecodeTPS, 2), fmtF(a.DecodeTPSMin, 2), fmtF(a.DecodeTPSMax, 2),
			fmtF(a.EndToEndTPS, 2), fmtF(a.RequestQPS, 4), fmtF(a.MeanWallSeconds, 2),
			fmtSigned(a.DecodeGainPercent), fmtSigned(a.EndToEndGainPercent))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, d := range r.Drift {
		fmt.Fprintf(w, "baseline drift at %d: decode %s%% (%s -> %s tok/s), end-to-end %s%%\n", d.PromptTarget,
			fmtSigned(d.DecodeDriftPercent), fmtF(d.StartDecodeTPS, 2), fmtF(d.EndDecodeTPS, 2), fmtSigned(d.EndToEndDriftPercent))
		if d.DriftNullReason != "" {
			fmt.Fprintf(w, "  drift unknown: %s\n", d.DriftNullReason)
		}
	}
	fmt.Fprintln(w, RateNote)
	if r.MeasuredGPUMeanW != nil {
		fmt.Fprintf(w, "GPU board power: mean %.1f W (%s)\n", *r.MeasuredGPUMeanW, r.PowerScope)
	} else {
		fmt.Fprintf(w, "GPU board power: unknown (%s)\n", r.PowerScope)
	}
	if p := r.MemoryPeak; p != nil {
		fmt.Fprintf(w, "GPU memory peak: %.2f GiB used, %.0f MiB free of %.2f GiB at %s (%s)\n",
			gib(p.UsedBytes), float64(p.FreeBytes)/(1<<20), gib(p.TotalBytes), p.At.Format("2006-01-02T15:04:05.000Z07:00"), p.Stage)
	}
	if r.CPUPeakC != nil {
		fmt.Fprintf(w, "CPU temperature peak: %.2f °C\n", *r.CPUPeakC)
	}
	for _, f := range r.FixtureTelemetry {
		mem, cpu := "unknown", "unknown (no sensor)"
		if p := f.MemoryPeak; p != nil {
			mem = fmt.Sprintf("%.2f GiB used, %.1f MiB free at the peak", gib(p.UsedBytes), float64(p.FreeBytes)/(1<<20))
		}
		if f.CPUPeakC != nil {
			cpu = fmt.Sprintf("%.2f °C", *f.CPUPeakC)
		}
		fmt.Fprintf(w, "%s on %s: GPU memory peak %s; CPU temperature peak %s (%d readings)\n", f.Leg, f.Fixture, mem, cpu, f.Readings)
	}
	if r.Fixed {
		// Fixed-input comparisons: memory and temperature per leg.
		for _, l := range r.Legs {
			mem, cpu := "unknown", "unknown (no sensor)"
			if p := l.MemoryPeak; p != nil {
				mem = fmt.Sprintf("%.2f GiB used, %.1f MiB free at the peak", gib(p.UsedBytes), float64(p.FreeBytes)/(1<<20))
			}
			if l.CPUPeakC != nil {
				cpu = fmt.Sprintf("%.2f °C", *l.CPUPeakC)
			}
			fmt.Fprintf(w, "leg %s (%s): GPU memory peak %s; CPU temperature peak %s\n", l.Label, l.Mode, mem, cpu)
		}
	}
	for _, n := range r.TelemetryNotes {
		fmt.Fprintf(w, "unknown %s\n", n)
	}
	for _, m := range r.Marked {
		fmt.Fprintf(w, "marked %s: %s (predicted_n %s of %d)\n", m.Key, strings.Join(m.Marks, ", "), fmtI(m.PredictedN), m.Requested)
	}
	for _, m := range r.Failed {
		fmt.Fprintf(w, "failed %s: %s\n", m.Key, strings.Join(m.Marks, ", "))
	}
	return nil
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }

func fmtF(p *float64, prec int) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', prec, 64)
}

func fmtSigned(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%+.2f", *p)
}

func fmtI(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}
