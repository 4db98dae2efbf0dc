// Package summary gathers runs of every kind (cohorts, throughput screens,
// capacity probes, regrades recorded in cohort runs, fixture diagnoses)
// into one results document of the seed results file's shape: pooled
// cohorts per arm, screens, the regrade, the diagnoses, capacity, power and
// derived figures (gain percentages, tokens per week, extra peak MiB).
//
// Every figure names the run ids it comes from; a figure that cannot be
// computed is null, never 0. Nothing is measured here: cohorts are pooled
// by the report package's own pooling (so the document and `evalctl report`
// agree to the last bit), screens and capacity probes by the serving
// package's report builders.
package summary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

// Schema names the version of the document's shape.
const Schema = "evalctl.results/v1"

// MetricDefinition says what decode TPS is, as the seed results file does.
const MetricDefinition = "Pooled native decode TPS = summed generated tokens / summed decode seconds. Includes thinking and tool syntax; excludes prompt processing. Not whole-task delivery speed or QPS."

// DiagnosisSchema is the schema of a fixture diagnosis file (evalctl
// controls --out FILE) that Summarize accepts beside run directories.
const DiagnosisSchema = "evalctl.fixture_diagnosis/v1"

// Document is the results document. Maps are keyed by a cohort's or
// screen's name (its plan name, or its run id when the plan has none).
type Document struct {
	Schema           string `json:"schema"`
	MetricDefinition string `json:"metric_definition"`
	// Runs lists every input in the order given.
	Runs []RunRef `json:"runs"`
	// Cohorts are complete cohorts; PartialCohorts those with planned
	// attempts not completed (completed/planned say how far they got).
	Cohorts        map[string]*Cohort `json:"cohorts"`
	PartialCohorts map[string]*Cohort `json:"partial_cohorts"`
	// Sweeps are the cohorts' arms declared once with a sweep, in the
	// seed's mtp_depth shape, ordered by value; keyed COHORT.SWEEP.
	Sweeps map[string]*Sweep `json:"sweeps"`
	// LongContext is, per cohort with long-context attempts, each arm's
	// input tokens, output tokens, checks passed of run and server prefill
	// + decode seconds (the seed's long_context_one_task_one_seed).
	LongContext map[string]*LongContext `json:"long_context"`
	// Diagnostics are diagnostic reruns (evalctl rerun): the original
	// attempt and the rerun side by side with the settings changed.
	Diagnostics       []*Diagnostic        `json:"diagnostics"`
	ShortInputScreens map[string]*Screen   `json:"short_input_screens"`
	Regrades          []*Regrade           `json:"regrades"`
	Diagnoses         []*Diagnosis         `json:"fixture_diagnoses"`
	Capacity          map[string]*Capacity `json:"context_capacity"`
	Power             *Power               `json:"power"`
	// Derived holds the derived figures by name, as the seed's derived
	// section; DerivedSources says for each how it was computed and from
	// which runs.
	Derived        map[string]*float64 `json:"derived"`
	DerivedSources map[string]*Source  `json:"derived_sources"`
}

// RunRef is one input.
type RunRef struct {
	RunID string `json:"run_id"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Path  string `json:"path"`
}

// Cohort is one cohort run pooled per arm.
type Cohort struct {
	RunIDs []string `json:"run_ids"`
	Suite  string   `json:"suite"`
	// State is the run's progress state ("running", "stopped, resumable",
	// "complete"); Progress says it in words ("running, 7 of 18 attempts
	// ended; ..."), as the report does.
	State     string `json:"state"`
	Progress  string `json:"progress"`
	Completed int    `json:"completed"`
	Planned   int    `json:"planned"`
	// ArmOrder is the arms in plan order (a map does not keep it).
	ArmOrder []string        `json:"arm_order"`
	Arms     map[string]*Arm `json:"metrics"`
}

// Arm is one arm's pooled figures in the seed's shape. Attempts counts
// planned slots; Scored the attempts with an outcome (functional and
// delivered are over them); Measured the attempts the token and second
// sums and both TPS figures pool.
type Arm struct {
	Attempts           int      `json:"attempts"`
	Scored             int      `json:"scored"`
	Measured           int      `json:"measured"`
	NativeOutputTokens *int64   `json:"native_output_tokens"`
	DecodeSeconds      *float64 `json:"decode_seconds"`
	TaskSeconds        *float64 `json:"task_seconds"`
	Functional         int      `json:"functional"`
	Delivered          int      `json:"delivered"`
	DecodeTPS          *float64 `json:"decode_tps"`
	TaskOutputTPS      *float64 `json:"task_output_tps"`
	TimingsSource      *string  `json:"timings_source"`
	RunIDs             []string `json:"run_ids"`
}

// Sweep is one swept arm's trend.
type Sweep struct {
	RunIDs []string      `json:"run_ids"`
	Fields []string      `json:"fields"`
	Points []*SweepPoint `json:"points"`
}

// SweepPoint is one value of a sweep, in the seed's shape: cases are the
// planned attempts; the TPS pools the measured ones.
type SweepPoint struct {
	Arm                         string            `json:"arm"`
	Values                      []json.RawMessage `json:"values"`
	Cases                       int               `json:"cases"`
	Measured                    int               `json:"measured"`
	PooledNativeTPS             *float64          `json:"pooled_native_tps"`
	NativeOutputTokens          *int64            `json:"native_output_tokens"`
	NativeDecodeSeconds         *float64          `json:"native_decode_seconds"`
	TotalTaskSecondsAllAttempts *float64          `json:"total_task_seconds_all_attempts"`
	TotalTaskSecondsAttempts    int               `json:"total_task_seconds_attempts"`
}

// Diagnostic is one diagnostic rerun; RunIDs are the original run's and
// the rerun's.
type Diagnostic struct {
	RunIDs []string `json:"run_ids"`
	*report.RerunSideBySide
}

// LongContext is one cohort's long-context arms.
type LongContext struct {
	RunIDs []string                `json:"run_ids"`
	Arms   []report.LongContextArm `json:"arms"`
}

// Screen is a throughput screen in the seed's short_input_screens shape.
type Screen struct {
	RunIDs                []string               `json:"run_ids"`
	State                 string                 `json:"state"`
	CompletedMeasurements int                    `json:"completed_measurements"`
	PlannedMeasurements   int                    `json:"planned_measurements"`
	Baseline              string                 `json:"baseline"`
	Aggregates            []screen.Aggregate     `json:"aggregates"`
	MeasuredGPUMeanW      *float64               `json:"measured_gpu_mean_w"`
	CPUPeakC              *float64               `json:"cpu_peak_c"`
	Memory                map[string]*ModeMemory `json:"memory"`
}

// ModeMemory is a mode's whole-GPU memory peak over its legs.
type ModeMemory struct {
	PeakGiB       *float64 `json:"peak_gib"`
	FreeMiBAtPeak *float64 `json:"free_mib_at_peak"`
	usedBytes     *int64
}

// Regrade is one regrade recorded in a cohort run: outcomes of the
// attempts it graded under its suite version, per arm.
type Regrade struct {
	RunIDs []string `json:"run_ids"`
	Record string   `json:"record"`
	At     string   `json:"at"`
	Suite  string   `json:"suite"`
	// Arms are the regraded attempts' outcomes under Suite.
	Arms map[string]*RegradeArm `json:"arms"`
	// ModelsCalled is false: a regrade grades stored answers only (the
	// regrade package imports no model client).
	ModelsCalled bool `json:"models_called"`
	// OriginalResultsUnchanged is whether every grade under the run's own
	// suite of the regraded attempts predates the regrade (grades are only
	// ever added); null when they have no such grades.
	OriginalResultsUnchanged *bool `json:"original_results_unchanged"`
}

// RegradeArm is one arm's regraded attempts.
type RegradeArm struct {
	Attempts   int `json:"attempts"`
	Scored     int `json:"scored"`
	Functional int `json:"functional"`
	Delivered  int `json:"delivered"`
}

// Diagnosis is a fixture diagnosis in the seed's shape.
type Diagnosis struct {
	RunIDs                   []string       `json:"run_ids"`
	File                     string         `json:"file"`
	Case                     string         `json:"case"`
	OriginalSuite            string         `json:"original_suite"`
	CorrectedSuite           *string        `json:"corrected_suite"`
	Results                  []DiagnosisRow `json:"results"`
	NegativeControlsRejected *bool          `json:"negative_controls_rejected"`
	ModelsCalled             bool           `json:"models_called"`
}

// DiagnosisRow is one graded candidate.
type DiagnosisRow struct {
	Candidate        string `json:"candidate"`
	RunID            string `json:"run_id,omitempty"`
	OriginalPassed   *int   `json:"original_passed"`
	CorrectedPassed  *int   `json:"corrected_passed"`
	Tests            *int   `json:"tests"`
	CandidateChanged *bool  `json:"candidate_changed"`
}

// Capacity is one capacity probe, keyed by size like the seed's
// context_capacity ("192", "220", "256").
type Capacity struct {
	RunIDs  []string                          `json:"run_ids"`
	Profile string                            `json:"profile"`
	State   string                            `json:"state"`
	Sizes   map[string]*screen.CapacityResult `json:"sizes"`
}

// Power is the measured power with its scope, per run that measured it.
type Power struct {
	PowerScope         string      `json:"power_scope"`
	WholePCACWMeasured bool        `json:"whole_pc_ac_w_measured"`
	MeasuredGPUMeanW   []RunFigure `json:"measured_gpu_mean_w"`
}

// RunFigure is a figure of one run.
type RunFigure struct {
	RunID string   `json:"run_id"`
	Value *float64 `json:"value"`
}

// Source says how a derived figure was computed and from what.
type Source struct {
	Formula string   `json:"formula"`
	RunIDs  []string `json:"run_ids"`
}

// ErrInput is returned for an input that is neither a run directory of a
// known kind nor a fixture diagnosis file.
var ErrInput = errors.New("not a run directory or fixture diagnosis")

// Summarize reads every input (run directories, or fixture diagnosis JSON
// files) and gathers them into one document.
func Summarize(ctx context.Context, inputs []string) (*Document, error) {
	doc := &Document{
		Schema: Schema, MetricDefinition: MetricDefinition, Runs: []RunRef{},
		Cohorts: map[string]*Cohort{}, PartialCohorts: map[string]*Cohort{}, Sweeps: map[string]*Sweep{}, LongContext: map[string]*LongContext{}, Diagnostics: []*Diagnostic{},
		ShortInputScreens: map[string]*Screen{}, Regrades: []*Regrade{}, Diagnoses: []*Diagnosis{},
		Capacity: map[string]*Capacity{}, Derived: map[string]*float64{}, DerivedSources: map[string]*Source{},
		Power: &Power{PowerScope: screen.PowerScope, MeasuredGPUMeanW: []RunFigure{}},
	}
	seen := map[string]string{}
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fi, err := os.Stat(in)
		if err != nil {
			return nil, fmt.Errorf("summarize: %w", err)
		}
		if !fi.IsDir() {
			if err := doc.addDiagnosis(in); err != nil {
				return nil, err
			}
			continue
		}
		st, err := runstore.Open(in)
		if err != nil {
			return nil, fmt.Errorf("summarize %s: %w", in, err)
		}
		run, err := st.ReadRun()
		if err != nil {
			return nil, fmt.Errorf("summarize %s: %w", in, err)
		}
		if prev, ok := seen[run.ID]; ok {
			return nil, fmt.Errorf("summarize: run %s given twice (%s and %s)", run.ID, prev, in)
		}
		seen[run.ID] = in
		switch run.Kind {
		case runstore.KindCohort, "":
			err = doc.addCohort(ctx, in, st, run)
		case screen.KindScreen:
			err = doc.addScreen(in)
		case screen.KindCapacity:
			err = doc.addCapacity(in)
		default:
			err = fmt.Errorf("%s: run kind %q: %w", in, run.Kind, ErrInput)
		}
		if err != nil {
			return nil, err
		}
	}
	doc.Power.PowerScope = "GPU board power not measured; whole-PC AC power unavailable"
	for _, f := range doc.Power.MeasuredGPUMeanW {
		if f.Value != nil {
			doc.Power.PowerScope = screen.PowerScope
		}
	}
	return doc, nil
}

// name is a cohort's key: its plan's name, else its run id; a second run
// of the same name is keyed NAME@RUNID.
func uniqueKey[V any](m map[string]V, name, runID string) string {
	if _, taken := m[name]; !taken {
		return name
	}
	return name + "@" + runID
}

func planName(st *runstore.Store, fallback string) string {
	var p evalctl.Plan
	if data, err := os.ReadFile(st.Path(runstore.PlanFile)); err == nil {
		if json.Unmarshal(data, &p) == nil && p.Name != "" {
			return p.Name
		}
	}
	return fallback
}

func (doc *Document) addCohort(ctx context.Context, dir string, st *runstore.Store, run *runstore.Run) error {
	in, err := report.Load(ctx, []string{dir}, "")
	if err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		return fmt.Errorf("summarize %s: %w", dir, err)
	}
	name := planName(st, run.ID)
	doc.Runs = append(doc.Runs, RunRef{RunID: run.ID, Kind: "cohort", Name: name, Path: dir})
	ids := []string{run.ID}
	c := &Cohort{RunIDs: ids, Suite: tasks.Label(run.Suite.Name, run.Suite.Version), ArmOrder: []string{}, Arms: map[string]*Arm{}}
	for _, a := range rep.Arms {
		c.ArmOrder = append(c.ArmOrder, a.Arm)
		c.Planned += a.Attempts
		c.Completed += a.Completed
		c.Arms[a.Arm] = &Arm{
			Attempts: a.Attempts, Scored: a.Scored, Measured: a.Measured,
			NativeOutputTokens: a.NativeOutputTokens, DecodeSeconds: a.DecodeSeconds, TaskSeconds: a.TaskSeconds,
			Functional: a.Functional.Count, Delivered: a.Delivered.Count,
			DecodeTPS: a.DecodeTPS, TaskOutputTPS: a.TaskOutputTPS, TimingsSource: a.TimingsSource, RunIDs: ids,
		}
	}
	target := doc.Cohorts
	if p := rep.Runs[0].Progress; p != nil {
		c.State, c.Progress = p.State, p.Words
	}
	if c.Completed < c.Planned {
		target = doc.PartialCohorts
	}
	key := uniqueKey(target, name, run.ID)
	target[key] = c
	doc.deriveCohort(key, c)
	for _, s := range rep.Sweeps {
		sw := &Sweep{RunIDs: ids, Fields: s.Fields, Points: []*SweepPoint{}}
		for _, p := range s.Points {
			a := rep.Arm(p.Arm)
			sw.Points = append(sw.Points, &SweepPoint{Arm: p.Arm, Values: p.Values, Cases: a.Attempts, Measured: a.Measured,
				PooledNativeTPS: a.DecodeTPS, NativeOutputTokens: a.NativeOutputTokens, NativeDecodeSeconds: a.DecodeSeconds,
				TotalTaskSecondsAllAttempts: a.TotalTaskSeconds, TotalTaskSecondsAttempts: a.TotalTaskSecondsAttempts})
		}
		doc.Sweeps[key+"."+s.Name] = sw
	}
	if len(rep.LongContext) > 0 {
		doc.LongContext[key] = &LongContext{RunIDs: ids, Arms: rep.LongContext}
	}
	switch sbs, err := report.LoadRerun(dir); {
	case err == nil:
		doc.Diagnostics = append(doc.Diagnostics, &Diagnostic{RunIDs: []string{sbs.Original.RunID, run.ID}, RerunSideBySide: sbs})
	case !errors.Is(err, report.ErrNotRerun):
		return fmt.Errorf("summarize: %w", err)
	}
	return doc.addRegrades(ctx, dir, st, run)
}

// deriveCohort adds each arm's tokens per week of continuous decoding and
// every ordered pair's decode gain in percent. Names carry the cohort key:
// KEY.ARM_continuous_decode_tokens_per_week, KEY.A_decode_gain_vs_B_percent.
func (doc *Document) deriveCohort(key string, c *Cohort) {
	for _, a := range c.ArmOrder {
		// report's one definition (tokens x 604800 / decode seconds), so
		// that the document and 'evalctl report' print the same figure.
		arm := c.Arms[a]
		doc.derive(key+"."+a+"_continuous_decode_tokens_per_week", report.TokensPerWeek(arm.NativeOutputTokens, arm.DecodeSeconds),
			fmt.Sprintf("%s native_output_tokens x %d / decode_seconds (decode_tps x one week)", a, report.SecondsPerWeek), c.RunIDs)
	}
	for _, a := range c.ArmOrder {
		for _, b := range c.ArmOrder {
			if a == b {
				continue
			}
			doc.derive(key+"."+a+"_decode_gain_vs_"+b+"_percent", gain(c.Arms[a].DecodeTPS, c.Arms[b].DecodeTPS),
				fmt.Sprintf("(%s decode_tps / %s decode_tps - 1) x 100", a, b), c.RunIDs)
		}
	}
}

func (doc *Document) derive(name string, v *float64, formula string, ids []string) {
	doc.Derived[name] = v
	doc.DerivedSources[name] = &Source{Formula: formula, RunIDs: ids}
}

// gain is the report's gain: (v / base - 1) x 100, null without both.
func gain(v, base *float64) *float64 {
	if v == nil || base == nil || *base == 0 {
		return nil
	}
	g := (*v / *base - 1) * 100
	return &g
}

func (doc *Document) addRegrades(ctx context.Context, dir string, st *runstore.Store, run *runstore.Run) error {
	files, err := filepath.Glob(st.Path(runstore.RegradesDir, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil
	}
	attempts, err := st.Attempts()
	if err != nil {
		return fmt.Errorf("summarize %s: %w", dir, err)
	}
	byID := map[string]*evalctl.Attempt{}
	for _, a := range attempts {
		byID[a.ID] = a
	}
	own := tasks.Label(run.Suite.Name, run.Suite.Version)
	for _, f := range files {
		var rec evalctl.RegradeRecord
		if err := runstore.ReadJSON(f, &rec); err != nil {
			return fmt.Errorf("summarize: %w", err)
		}
		if rec.Kind != evalctl.RegradeKind || rec.Suite == "" {
			return fmt.Errorf("summarize: %s: not a regrade record (kind %q, suite %q)", f, rec.Kind, rec.Suite)
		}
		in, err := report.Load(ctx, []string{dir}, rec.Suite)
		if err != nil {
			return fmt.Errorf("summarize: %w", err)
		}
		want := map[string]bool{}
		for _, id := range rec.Attempts {
			if byID[id] == nil {
				return fmt.Errorf("summarize: %s names attempt %s, which run %s does not hold", f, id, run.ID)
			}
			want[id] = true
		}
		rel, _ := filepath.Rel(dir, f)
		g := &Regrade{RunIDs: []string{run.ID}, Record: rel, At: rec.At.UTC().Format(time.RFC3339Nano), Suite: rec.Suite,
			Arms: regradeArms(in.Rows, want)}
		if g.OriginalResultsUnchanged, err = ownUnchanged(st, byID, want, own, rec.At); err != nil {
			return err
		}
		doc.Regrades = append(doc.Regrades, g)
	}
	return nil
}

// regradeArms counts, per arm, the rows of the attempts in want and their
// scored outcomes.
func regradeArms(rows []report.Row, want map[string]bool) map[string]*RegradeArm {
	arms := map[string]*RegradeArm{}
	for i := range rows {
		r := &rows[i]
		if !want[r.AttemptID] {
			continue
		}
		ra := arms[r.Arm]
		if ra == nil {
			ra = &RegradeArm{}
			arms[r.Arm] = ra
		}
		ra.Attempts++
		if r.Status == report.Scored {
			ra.Scored++
			if *r.Functional {
				ra.Functional++
			}
			if *r.Delivered {
				ra.Delivered++
			}
		}
	}
	return arms
}

// ownUnchanged is whether no grade of the attempts in want under the run's
// own suite (own) was written after the regrade at; null when they have
// none.
func ownUnchanged(st *runstore.Store, byID map[string]*evalctl.Attempt, want map[string]bool, own string, at time.Time) (*bool, error) {
	var seenOwn bool
	unchanged := true
	for id := range want {
		grades, err := st.Grades(byID[id], own)
		if err != nil {
			return nil, fmt.Errorf("summarize: %w", err)
		}
		for _, gr := range grades {
			if gr == nil {
				continue
			}
			seenOwn = true
			if gr.GradedAt.After(at) {
				unchanged = false
			}
		}
	}
	if !seenOwn {
		return nil, nil
	}
	return &unchanged, nil
}

func (doc *Document) addScreen(dir string) error {
	st, run, sc, err := screen.Open(dir)
	if err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	r, err := screen.BuildReport(st, run, sc)
	if err != nil {
		return fmt.Errorf("summarize %s: %w", dir, err)
	}
	doc.Runs = append(doc.Runs, RunRef{RunID: run.ID, Kind: screen.KindScreen, Name: r.Name, Path: dir})
	ids := []string{run.ID}
	s := &Screen{RunIDs: ids, State: r.State, CompletedMeasurements: r.CompletedMeasurements,
		PlannedMeasurements: r.PlannedMeasurements, Baseline: r.Baseline, Aggregates: r.Aggregates,
		MeasuredGPUMeanW: r.MeasuredGPUMeanW, CPUPeakC: r.CPUPeakC, Memory: map[string]*ModeMemory{}}
	if s.Aggregates == nil {
		s.Aggregates = []screen.Aggregate{}
	}
	var modes []string
	for _, leg := range r.Legs {
		m := s.Memory[leg.Mode]
		if m == nil {
			m = &ModeMemory{}
			s.Memory[leg.Mode] = m
			modes = append(modes, leg.Mode)
		}
		p := leg.MemoryPeak
		if p == nil || (m.usedBytes != nil && *m.usedBytes >= p.UsedBytes) {
			continue
		}
		used := p.UsedBytes
		gib := float64(p.UsedBytes) / (1 << 30)
		free := float64(p.FreeBytes) / (1 << 20)
		m.usedBytes, m.PeakGiB, m.FreeMiBAtPeak = &used, &gib, &free
	}
	key := uniqueKey(doc.ShortInputScreens, r.Name, run.ID)
	doc.ShortInputScreens[key] = s
	doc.Power.MeasuredGPUMeanW = append(doc.Power.MeasuredGPUMeanW, RunFigure{RunID: run.ID, Value: r.MeasuredGPUMeanW})
	base := s.Memory[r.Baseline]
	for _, mode := range modes {
		if mode == r.Baseline {
			continue
		}
		var extra *float64
		if m := s.Memory[mode]; base != nil && base.usedBytes != nil && m.usedBytes != nil {
			v := float64(*m.usedBytes-*base.usedBytes) / (1 << 20)
			extra = &v
		}
		doc.derive(key+"."+mode+"_additional_peak_mib_vs_"+r.Baseline, extra,
			fmt.Sprintf("(%s peak used bytes - %s peak used bytes) / 2^20, whole-GPU memory sampled every 200 ms", mode, r.Baseline), ids)
	}
	return nil
}

func (doc *Document) addCapacity(dir string) error {
	st, run, plan, err := screen.OpenCapacity(dir)
	if err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	r, err := screen.BuildCapacityReport(st, run, plan)
	if err != nil {
		return fmt.Errorf("summarize %s: %w", dir, err)
	}
	doc.Runs = append(doc.Runs, RunRef{RunID: run.ID, Kind: screen.KindCapacity, Name: r.Profile, Path: dir})
	doc.Capacity[uniqueKey(doc.Capacity, r.Profile, run.ID)] = &Capacity{RunIDs: []string{run.ID}, Profile: r.Profile, State: r.State, Sizes: r.Sizes}
	return nil
}

// diagnosisFile mirrors what regrade.Diagnosis writes.
type diagnosisFile struct {
	Schema   string `json:"schema"`
	Case     string `json:"case"`
	Original struct {
		ID string `json:"id"`
	} `json:"original_suite"`
	Corrected *struct {
		ID string `json:"id"`
	} `json:"corrected_suite"`
	Results []struct {
		Candidate        string `json:"candidate"`
		RunID            string `json:"run_id"`
		OriginalPassed   *int   `json:"original_passed"`
		CorrectedPassed  *int   `json:"corrected_passed"`
		Tests            *int   `json:"tests"`
		CandidateChanged *bool  `json:"candidate_changed"`
	} `json:"results"`
	NegativeControlsRejected *bool `json:"negative_controls_rejected"`
	ModelsCalled             *bool `json:"models_called"`
}

func (doc *Document) addDiagnosis(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("summarize: %w", err)
	}
	var d diagnosisFile
	if err := json.Unmarshal(data, &d); err != nil || d.Schema != DiagnosisSchema {
		return fmt.Errorf("summarize: %s: %w (want a run directory, or a file of schema %s written by evalctl controls --out)", file, ErrInput, DiagnosisSchema)
	}
	if d.ModelsCalled == nil {
		return fmt.Errorf("summarize: %s: models_called missing", file)
	}
	out := &Diagnosis{RunIDs: []string{}, File: file, Case: d.Case, OriginalSuite: d.Original.ID,
		Results: []DiagnosisRow{}, NegativeControlsRejected: d.NegativeControlsRejected, ModelsCalled: *d.ModelsCalled}
	if d.Corrected != nil {
		id := d.Corrected.ID
		out.CorrectedSuite = &id
	}
	ids := map[string]bool{}
	for _, r := range d.Results {
		out.Results = append(out.Results, DiagnosisRow{Candidate: r.Candidate, RunID: r.RunID, OriginalPassed: r.OriginalPassed,
			CorrectedPassed: r.CorrectedPassed, Tests: r.Tests, CandidateChanged: r.CandidateChanged})
		if r.RunID != "" && !ids[r.RunID] {
			ids[r.RunID] = true
			out.RunIDs = append(out.RunIDs, r.RunID)
		}
	}
	doc.Runs = append(doc.Runs, RunRef{Kind: "fixture_diagnosis", Name: d.Case, Path: file})
	doc.Diagnoses = append(doc.Diagnoses, out)
	return nil
}

// WriteJSON writes the document as indented JSON.
func (doc *Document) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
