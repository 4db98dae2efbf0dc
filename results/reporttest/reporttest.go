// Package reporttest writes synthetic run directories in the runstore layout
// (run.json, plan.json, attempts/ID/attempt.json, grades/SUITE@VERSION/
// phase-N.json) for the report's tests and benchmarks. The records go
// through runstore's own writers and are scored by evalctl.Score, so a
// fixture cannot describe an outcome the real scoring would not give.
//
// Seed is the fixed development cohort whose per-arm totals reproduce the
// seed results file to the last bit; Synthetic makes cohorts of any size.
package reporttest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

// RunSpec describes a run directory to write.
type RunSpec struct {
	ID string
	// Name is the plan's name recorded in run.json (none when empty).
	Name      string
	CreatedAt time.Time
	Suite     evalctl.SuiteRef
	ImageID   string
	Attempts  []AttemptSpec
	// PlanSweeps, when set, is written as plan.json's "sweeps" (the
	// registered expansion of arms declared with a sweep).
	PlanSweeps []evalctl.SweepRecord
	// PlanArms, when set, is written as plan.json's "arms" (the model x
	// agent table reads them).
	PlanArms []evalctl.Arm
}

// AttemptSpec describes one attempt record. Grades are written under the
// run's suite for every phase in Solved; Regrades adds grades under other
// suite versions (version -> solved per phase).
type AttemptSpec struct {
	Arm, Case, Language, Repeat string
	// ArmHash defaults to a hash of the arm name.
	ArmHash string
	Slot    int
	Seed    int64
	// State defaults to completed.
	State evalctl.State
	// Replaces marks a rerun of an infra-failed attempt; ReplacementOf is
	// then the index in RunSpec.Attempts of the attempt it replaces.
	Replaces      bool
	ReplacementOf int
	// Terminations holds each turn's termination; len is the number of
	// turns. Phases is the expected number of turns.
	Phases       int
	Terminations []evalctl.Termination
	// SelfTestFailed makes the agent's last own test run fail.
	SelfTestFailed bool
	// Solved holds each phase grade's verdict; nil writes no grades.
	Solved          []bool
	ProtectedChange bool
	Regrades        map[string][]bool
	// Measurements (ignored unless completed).
	Tokens                     int64
	Decode, Task               float64
	DraftTokens, DraftAccepted *int64
	// TokensUnknown and DecodeUnknown write native_output_tokens or
	// decode_seconds as null, as the runner records an attempt where some
	// response lacked the figure; Tokens or Decode are then ignored.
	TokensUnknown, DecodeUnknown bool
	// TimingsSource is the attempt's timings_source ("server" when empty).
	TimingsSource string
	ImageID       string
	// Agent is an agent-command attempt's agent record (nil: the
	// built-in loop).
	Agent *evalctl.AgentRecord
}

var fixedTime = time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC)

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Write writes spec as a run directory at dir, which must not hold a run.
func Write(dir string, spec *RunSpec) error {
	st, err := runstore.Create(dir)
	if err != nil {
		return err
	}
	plan := &fixturePlan{Attempts: planEntries(spec), RunID: spec.ID, Suite: spec.Suite, Sweeps: spec.PlanSweeps, Arms: spec.PlanArms}
	if err := writeJSON(st.Path(runstore.PlanFile), plan); err != nil {
		return err
	}
	planSHA, err := runstore.FileSHA256(st.Path(runstore.PlanFile))
	if err != nil {
		return err
	}
	created := spec.CreatedAt
	if created.IsZero() {
		created = fixedTime
	}
	run := &runstore.Run{ID: spec.ID, Name: spec.Name, CreatedAt: created, PlanSHA256: planSHA, Suite: spec.Suite,
		ImageID: spec.ImageID, EvalctlVersion: "devel-fixture", Kind: runstore.KindCohort}
	if err := writeJSON(st.Path(runstore.RunFile), run); err != nil {
		return err
	}
	ids := make([]string, len(spec.Attempts))
	for i := range spec.Attempts {
		ids[i] = fmt.Sprintf("%s-a%05d", spec.ID, i)
	}
	for i := range spec.Attempts {
		a := buildAttempt(spec, i, ids, created)
		if err := writeJSON(filepath.Join(st.AttemptDir(a.ID), runstore.AttemptFile), a); err != nil {
			return err
		}
		as := &spec.Attempts[i]
		write := func(suite evalctl.SuiteRef, solved []bool) error {
			for p, ok := range solved {
				g := buildGrade(spec, as, suite, p+1, ok, created)
				if err := writeJSON(st.GradePath(a.ID, tasks.Label(g.Suite, g.SuiteVersion), g.Phase), g); err != nil {
					return err
				}
			}
			return nil
		}
		if as.State == "" || as.State == evalctl.Completed {
			if err := write(spec.Suite, as.Solved); err != nil {
				return err
			}
			for _, v := range sortedKeys(as.Regrades) {
				ref := evalctl.SuiteRef{Name: spec.Suite.Name, Version: v, Fingerprint: hashOf(spec.Suite.Name + "@" + v)}
				if err := write(ref, as.Regrades[v]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeJSON writes what runstore.WriteJSON writes, byte for byte, without
// its fsyncs: a 10,000-attempt benchmark fixture would otherwise take
// minutes to write.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func sortedKeys(m map[string][]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// fixturePlan is the plan.json of a fixture: not a plan a runner
// registers (readers take a fixture's arms and slots from its attempt
// records), but the records' own place for what a fixture planned, and
// the sweeps a report reads from a plan.
type fixturePlan struct {
	Attempts []fixtureSlot         `json:"attempts"`
	RunID    string                `json:"run_id"`
	Suite    evalctl.SuiteRef      `json:"suite"`
	Sweeps   []evalctl.SweepRecord `json:"sweeps,omitempty"`
	Arms     []evalctl.Arm         `json:"arms,omitempty"`
}

// fixtureSlot is one planned attempt of a fixture.
type fixtureSlot struct {
	Arm    string `json:"arm"`
	Case   string `json:"case"`
	Repeat string `json:"repeat"`
	Seed   int64  `json:"seed"`
	Slot   int    `json:"slot"`
}

func planEntries(spec *RunSpec) []fixtureSlot {
	var out []fixtureSlot
	for _, a := range spec.Attempts {
		if a.Replaces {
			continue
		}
		out = append(out, fixtureSlot{Slot: a.Slot, Arm: a.Arm, Case: a.Case, Repeat: a.Repeat, Seed: a.Seed})
	}
	return out
}

func buildAttempt(spec *RunSpec, i int, ids []string, created time.Time) *evalctl.Attempt {
	as := &spec.Attempts[i]
	state := as.State
	if state == "" {
		state = evalctl.Completed
	}
	armHash := as.ArmHash
	if armHash == "" {
		armHash = hashOf("arm:" + as.Arm)
	}
	img := as.ImageID
	if img == "" {
		img = spec.ImageID
	}
	a := &evalctl.Attempt{
		ID: ids[i], RunID: spec.ID, Slot: as.Slot, Arm: as.Arm, ArmHash: armHash, Case: as.Case,
		Language: as.Language, Repeat: as.Repeat, Seed: as.Seed, State: state, Suite: spec.Suite,
		ImageID: img, EvalctlVersion: "devel-fixture", ExpectedTurns: as.Phases,
		Turns: []evalctl.Turn{}, Snapshots: []evalctl.Snapshot{}, Agent: as.Agent,
	}
	if as.Replaces {
		a.ReplacementOf = ids[as.ReplacementOf]
	}
	start := created.Add(time.Duration(i) * time.Minute)
	switch state {
	case evalctl.Completed:
	case evalctl.InfraFailed:
		a.StartedAt = &start
		a.Error = "sandbox: start container: context deadline exceeded"
		return a
	default:
		return a
	}
	end := start.Add(time.Duration(as.Task * float64(time.Second)))
	a.StartedAt, a.FinishedAt = &start, &end
	unchanged := true
	a.ArmUnchanged = &unchanged
	a.Turns = buildTurns(as)
	n := len(as.Terminations)
	for p := 1; p <= n; p++ {
		a.Snapshots = append(a.Snapshots, evalctl.Snapshot{Phase: p, File: fmt.Sprintf("phase-%d.tar", p),
			SHA256: hashOf(fmt.Sprintf("%s/%d", a.ID, p)), Bytes: 20480})
	}
	a.Measurements = buildMeasurements(as, n)
	return a
}

// buildTurns makes one turn per termination of a completed attempt.
func buildTurns(as *AttemptSpec) []evalctl.Turn {
	turns := []evalctl.Turn{}
	n := len(as.Terminations)
	for t, term := range as.Terminations {
		ok := term == evalctl.TermCompleted
		secs := as.Task
		if n > 1 {
			// Turn seconds split the task time; only the attempt's
			// task_seconds is pooled.
			first := float64(int64(as.Task*0.55*1000)) / 1000
			if t == 0 {
				secs = first
			} else {
				secs = as.Task - first
			}
		}
		turn := evalctl.Turn{
			Phase: t + 1, Termination: term, Seconds: secs,
			ToolCalls: map[string]int{"run": 6, "read_file": 4, "write_file": 3}, Responses: 14,
			FinishReasons: []string{"tool_calls", "stop"}, AgentFinished: ok, FinalText: ok,
			LastTest: &evalctl.SelfCheck{Command: "pytest -q", ExitCode: 0, Passed: !as.SelfTestFailed},
		}
		if as.SelfTestFailed {
			turn.LastTest.ExitCode = 1
		}
		if as.Language == "typescript" {
			turn.LastTest.Command = "npm test"
			turn.LastTypecheck = &evalctl.SelfCheck{Command: "npx tsc --noEmit", Passed: true}
		}
		turns = append(turns, turn)
	}
	return turns
}

// buildMeasurements makes the measurements of a completed attempt of n
// turns.
func buildMeasurements(as *AttemptSpec, n int) *evalctl.Measurements {
	prompt, promptSec, cached, maxSeq := as.Tokens*9, as.Decode/20, as.Tokens*8, int64(24000)+as.Tokens%9000
	tokens, decode := &as.Tokens, &as.Decode
	if as.TokensUnknown {
		tokens = nil
	}
	if as.DecodeUnknown {
		decode = nil
	}
	source := as.TimingsSource
	if source == "" {
		source = "server"
	}
	return &evalctl.Measurements{
		NativeOutputTokens: tokens, DecodeSeconds: decode, TaskSeconds: as.Task,
		PromptTokens: &prompt, PromptSeconds: &promptSec, CachedTokens: &cached,
		ToolCalls: 13 * n, ToolErrors: 1, Responses: 14 * n, MaxSequenceTokens: &maxSeq,
		FinishReasons: map[string]int{"tool_calls": 13 * n, "stop": n},
		DraftTokens:   as.DraftTokens, DraftAccepted: as.DraftAccepted, TimingsSource: source,
	}
}

func buildGrade(spec *RunSpec, as *AttemptSpec, suite evalctl.SuiteRef, phase int, solved bool, created time.Time) *evalctl.Grade {
	groups := []string{"acceptance", "regression", "public", "syntax"}
	if as.Language == "typescript" {
		groups = []string{"acceptance", "regression", "public", "typecheck", "consumer_typecheck"}
	}
	g := &evalctl.Grade{
		Suite: suite.Name, SuiteVersion: suite.Version, SuiteFingerprint: suite.Fingerprint,
		Case: as.Case, Phase: phase, SnapshotSHA256: hashOf(fmt.Sprintf("%s/%d", as.Case, phase)),
		ImageID: spec.ImageID, ProtectedChanges: []string{}, MissingStarterFiles: []string{},
		Solved: solved, GradedAt: created, Seconds: 4.25,
	}
	protected := !solved && as.ProtectedChange
	if protected {
		g.ProtectedChanges = []string{"tests/test_public.py"}
		g.ProtectedChangesCount = 1
	}
	for _, name := range groups {
		gr := evalctl.GroupResult{Name: name, Required: true, Passed: 13, Total: 13, Success: true, Seconds: 1.5}
		if name == "acceptance" && !solved && !protected {
			gr.Passed, gr.Failed, gr.Success, gr.ExitCode = 12, 1, false, 1
			gr.FailedTests = []string{"test_acceptance::test_read_error"}
		}
		g.Groups = append(g.Groups, gr)
	}
	return g
}

// splitDecimal divides total (in units of 10^-digits) into len(weights)
// decimal values with that many digits, proportional to weights, such that
// adding them as float64 in order gives exactly target. Real measurements
// summed in order carry float rounding; this makes a fixture's sums land on
// the very float a real cohort printed. It panics if no split is found.
func splitDecimal(rng *rand.PCG, total int64, digits int, weights []float64, target float64) []float64 {
	scale := 1.0
	for i := 0; i < digits; i++ {
		scale *= 10
	}
	var wsum float64
	for _, w := range weights {
		wsum += w
	}
	units := make([]int64, len(weights))
	var used int64
	for i, w := range weights[:len(weights)-1] {
		units[i] = int64(float64(total) * w / wsum)
		used += units[i]
	}
	units[len(units)-1] = total - used
	vals := make([]float64, len(units))
	for try := 0; try < 100000; try++ {
		var sum float64
		for i, u := range units {
			vals[i] = float64(u) / scale // correctly rounded: the decimal's float
			sum += vals[i]
		}
		if sum == target {
			return vals
		}
		// Move one unit between two values and try again.
		i, j := pick(rng, len(units)), pick(rng, len(units))
		if i != j && units[i] > 1 {
			units[i]--
			units[j]++
		}
	}
	panic(fmt.Sprintf("reporttest: no decimal split of %d units lands on %v", total, target))
}

// pick draws an index in [0, n). Modulo bias is irrelevant for fixtures;
// what matters is that the draws depend only on the specified PCG stream.
func pick(rng *rand.PCG, n int) int { return int(rng.Uint64() % uint64(n)) }

// uniform draws a float in [lo, hi).
func uniform(rng *rand.PCG, lo, hi float64) float64 {
	return lo + (hi-lo)*float64(rng.Uint64()>>11)/(1<<53)
}
