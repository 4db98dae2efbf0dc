package summary

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
)

var update = flag.Bool("update", false, "rewrite golden files")

// seed is the seed results file, parsed.
func seed(t testing.TB) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(wd, "testdata", "seed.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var regradeAt = time.Date(2026, 10, 11, 9, 0, 0, 0, time.UTC)

// seededRuns writes, under root, the runs whose attempts carry the seed's
// totals: the quantization cohort, the MTP depth sweep with its mtp4
// regrade under dev@2.0.2, the 220K capacity probe and the ledger fixture
// diagnosis. It returns the inputs relative to root.
func seededRuns(t testing.TB, root string) []string {
	t.Helper()
	sd := seed(t)
	if err := reporttest.Write(filepath.Join(root, "dev24"), reporttest.Seed()); err != nil {
		t.Fatal(err)
	}
	sweep := reporttest.Sweep()
	if err := reporttest.Write(filepath.Join(root, "sweep"), sweep); err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"kind": "regrade", "at": regradeAt, "suite": "dev@" + reporttest.SweepRegrade,
		"fingerprint": "f", "attempts": reporttest.AttemptIDs(sweep, "mtp4"), "note": "graded 8 attempts"}
	os.MkdirAll(filepath.Join(root, "sweep", runstore.RegradesDir), 0o755)
	if err := runstore.WriteJSON(filepath.Join(root, "sweep", runstore.RegradesDir, "20261011T090000.000000000Z-dev@2.0.2.json"), rec); err != nil {
		t.Fatal(err)
	}
	// The capacity probe: the seed's 220K result, as the probe records it.
	st, err := runstore.Create(filepath.Join(root, "capacity"))
	if err != nil {
		t.Fatal(err)
	}
	plan := &screen.CapacityPlan{Profile: &serving.Profile{Name: "iq3-mtp4-220", API: serving.APILlamaServer}, Contexts: []int{225280}}
	planBytes, _ := json.MarshalIndent(plan, "", "  ")
	if err := runstore.WriteFileAtomic(st.Path(screen.CapacityFile), planBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(planBytes)
	if err := st.WriteRun(&runstore.Run{ID: "capacity-220", Kind: screen.KindCapacity, PlanSHA256: hex.EncodeToString(sum[:]),
		CreatedAt: regradeAt}); err != nil {
		t.Fatal(err)
	}
	cap220, _ := json.Marshal(sd["context_capacity"].(map[string]any)["220"])
	var res screen.CapacityResult
	if err := json.Unmarshal(cap220, &res); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(st.Path(screen.ResultsDir), 0o755)
	if err := runstore.WriteJSON(st.Path(screen.ResultsDir, "225280.json"), &res); err != nil {
		t.Fatal(err)
	}
	// The fixture diagnosis, as evalctl controls --out writes it.
	diag := map[string]any{"schema": DiagnosisSchema, "case": "ledger", "models_called": false,
		"original_suite": map[string]any{"id": "dev@1.0.0"}, "corrected_suite": map[string]any{"id": "dev@2.0.2"},
		"negative_controls_rejected": true, "results": sd["ledger_fixture_diagnosis"].(map[string]any)["results"]}
	data, _ := json.MarshalIndent(diag, "", "  ")
	if err := os.WriteFile(filepath.Join(root, "ledger-diagnosis.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"dev24", "sweep", "capacity", "ledger-diagnosis.json"}
}

func summarizeSeeded(t *testing.T) (*Document, []byte) {
	t.Helper()
	root := t.TempDir()
	inputs := seededRuns(t, root)
	t.Chdir(root)
	doc, err := Summarize(context.Background(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := doc.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return doc, buf.Bytes()
}

// num reads a number of the seed.
func num(t *testing.T, m any, path ...string) float64 {
	t.Helper()
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			t.Fatalf("seed: %s is not an object", strings.Join(path, "."))
		}
		m = mm[p]
	}
	f, ok := m.(float64)
	if !ok {
		t.Fatalf("seed: %s = %v is not a number", strings.Join(path, "."), m)
	}
	return f
}

// TestSeedFigures: the document of runs whose attempts carry the seed's
// totals reproduces the seed's figures exactly, to the last bit.
func TestSeedFigures(t *testing.T) {
	doc, _ := summarizeSeeded(t)
	sd := seed(t)
	eqF := func(what string, got *float64, want float64) {
		t.Helper()
		if got == nil || *got != want {
			t.Errorf("%s = %v, want %v (the seed's)", what, fp(got), want)
		}
	}
	dev := doc.Cohorts["dev24-quant"]
	if dev == nil {
		t.Fatalf("no cohort dev24-quant in %v", keys(doc.Cohorts))
	}
	for _, arm := range reporttest.SeedArms {
		a := dev.Arms[arm]
		w := func(k string) float64 { return num(t, sd, "quantization_development24", arm, k) }
		if float64(a.Attempts) != w("attempts") || float64(a.Functional) != w("functional") || float64(a.Delivered) != w("delivered") {
			t.Errorf("%s: attempts/functional/delivered %d/%d/%d, want %v/%v/%v", arm, a.Attempts, a.Functional, a.Delivered, w("attempts"), w("functional"), w("delivered"))
		}
		if a.NativeOutputTokens == nil || float64(*a.NativeOutputTokens) != w("native_output_tokens") {
			t.Errorf("%s tokens %v", arm, a.NativeOutputTokens)
		}
		eqF(arm+" decode_seconds", a.DecodeSeconds, w("decode_seconds"))
		eqF(arm+" task_seconds", a.TaskSeconds, w("task_seconds"))
		eqF(arm+" decode_tps", a.DecodeTPS, w("decode_tps"))
		eqF(arm+" task_output_tps", a.TaskOutputTPS, w("task_output_tps"))
		if len(a.RunIDs) != 1 || a.RunIDs[0] != "dev24-quant" {
			t.Errorf("%s run ids %v", arm, a.RunIDs)
		}
	}
	eqF("candidate decode_tps", dev.Arms["candidate"].DecodeTPS, 62.357151060397875)
	eqF("candidate task_output_tps", dev.Arms["candidate"].TaskOutputTPS, 58.44220695840042)

	sw := doc.Cohorts["mtp-depth-sweep"]
	if sw == nil {
		t.Fatalf("no sweep cohort in %v", keys(doc.Cohorts))
	}
	for _, tot := range reporttest.SweepTotals {
		a := sw.Arms[tot.Arm]
		w := func(k string) float64 { return num(t, sd, "mtp_depth_one_seed_eight_tasks", tot.Arm, k) }
		if float64(a.Attempts) != w("cases") || a.NativeOutputTokens == nil || float64(*a.NativeOutputTokens) != w("native_output_tokens") {
			t.Errorf("%s: attempts %d tokens %v", tot.Arm, a.Attempts, a.NativeOutputTokens)
		}
		eqF(tot.Arm+" pooled_native_tps", a.DecodeTPS, w("pooled_native_tps"))
		eqF(tot.Arm+" native_decode_seconds", a.DecodeSeconds, w("native_decode_seconds"))
		eqF(tot.Arm+" total_task_seconds_all_attempts", a.TaskSeconds, w("total_task_seconds_all_attempts"))
	}

	sp := doc.Sweeps["mtp-depth-sweep.mtp"]
	if sp == nil || len(sp.Points) != 5 {
		t.Fatalf("sweeps %v", keys(doc.Sweeps))
	}
	for i, p := range sp.Points {
		w := func(k string) float64 { return num(t, sd, "mtp_depth_one_seed_eight_tasks", p.Arm, k) }
		if p.Arm != reporttest.SweepTotals[i].Arm || float64(p.Cases) != w("cases") || float64(*p.NativeOutputTokens) != w("native_output_tokens") {
			t.Errorf("sweep point %d %+v", i, p)
		}
		eqF(p.Arm+" sweep pooled_native_tps", p.PooledNativeTPS, w("pooled_native_tps"))
		eqF(p.Arm+" sweep native_decode_seconds", p.NativeDecodeSeconds, w("native_decode_seconds"))
		eqF(p.Arm+" sweep total_task_seconds_all_attempts", p.TotalTaskSecondsAllAttempts, w("total_task_seconds_all_attempts"))
	}
	derived := map[string]string{
		"dev24-quant.current_iq3_decode_gain_vs_original_q4_percent": "iq3_bundle_decode_gain_vs_q4_percent",
		"mtp-depth-sweep.mtp4_decode_gain_vs_mtp2_percent":           "mtp4_decode_gain_vs_mtp2_percent",
		"mtp-depth-sweep.mtp4_continuous_decode_tokens_per_week":     "mtp4_continuous_decode_tokens_per_week",
	}
	for ours, theirs := range derived {
		eqF(ours, doc.Derived[ours], num(t, sd, "derived", theirs))
		if src := doc.DerivedSources[ours]; src == nil || len(src.RunIDs) == 0 {
			t.Errorf("%s has no source runs", ours)
		}
	}
	eqF("tokens per week", doc.Derived["mtp-depth-sweep.mtp4_continuous_decode_tokens_per_week"], 37080611.01661854)

	if len(doc.Regrades) != 1 {
		t.Fatalf("regrades %d, want 1", len(doc.Regrades))
	}
	rg := doc.Regrades[0]
	m4 := rg.Arms["mtp4"]
	wr := func(k string) int { return int(num(t, sd, "mtp4_regrade_v2_0_2", k)) }
	if m4 == nil || m4.Attempts != wr("attempts") || m4.Functional != wr("functional") || m4.Delivered != wr("delivered") || len(rg.Arms) != 1 {
		t.Errorf("regrade arms %+v, want mtp4 only with the seed's 8/8/8", rg.Arms)
	}
	if rg.ModelsCalled || rg.OriginalResultsUnchanged == nil || !*rg.OriginalResultsUnchanged || rg.RunIDs[0] != "mtp-depth-sweep" {
		t.Errorf("regrade %+v: want models_called false, original_results_unchanged true, from the sweep", rg)
	}
	// The original grades still give the sweep's own outcome: ledger failed.
	if f := sw.Arms["mtp4"].Functional; f != 7 {
		t.Errorf("mtp4 functional under dev@1.0.0 = %d, want 7 (the regrade must not change it)", f)
	}

	c := doc.Capacity["iq3-mtp4-220"]
	if c == nil || c.Sizes["220"] == nil || c.RunIDs[0] != "capacity-220" {
		t.Fatalf("capacity %+v", doc.Capacity)
	}
	r220 := c.Sizes["220"]
	if r220.MemoryPeak == nil || r220.MemoryPeak.FreeBytes != 1285816320 || r220.NearCapacityInputTokens == nil || *r220.NearCapacityInputTokens != 179532 {
		t.Errorf("capacity 220 %+v", r220)
	}
	if len(doc.Diagnoses) != 1 || len(doc.Diagnoses[0].Results) != 7 || doc.Diagnoses[0].ModelsCalled ||
		doc.Diagnoses[0].NegativeControlsRejected == nil || !*doc.Diagnoses[0].NegativeControlsRejected {
		t.Errorf("diagnoses %+v", doc.Diagnoses)
	}
	if d := doc.Diagnoses[0].Results[2]; d.Candidate != "mtp4" || *d.OriginalPassed != 12 || *d.CorrectedPassed != 13 || *d.Tests != 13 {
		t.Errorf("diagnosis row %+v", d)
	}
}

// TestGolden: the whole document of the seeded runs, byte for byte.
func TestGolden(t *testing.T) {
	_, got := summarizeSeeded(t)
	golden := filepath.Join(testDir(t), "testdata", "seeded.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("document differs from %s (run with -update after checking the change)", golden)
	}
}

// TestUnknownIsNull: a cohort without measurements gives null speed
// figures and null derived figures, never 0.
func TestUnknownIsNull(t *testing.T) {
	root := t.TempDir()
	spec := reporttest.Seed()
	for i := range spec.Attempts {
		spec.Attempts[i].TokensUnknown = spec.Attempts[i].Arm == "original_q4"
	}
	if err := reporttest.Write(filepath.Join(root, "r"), spec); err != nil {
		t.Fatal(err)
	}
	doc, err := Summarize(context.Background(), []string{filepath.Join(root, "r")})
	if err != nil {
		t.Fatal(err)
	}
	q4 := doc.Cohorts["dev24-quant"].Arms["original_q4"]
	if q4.DecodeTPS != nil || q4.NativeOutputTokens != nil || q4.Measured != 0 {
		t.Errorf("q4 without tokens: %+v", q4)
	}
	g, ok := doc.Derived["dev24-quant.candidate_decode_gain_vs_original_q4_percent"]
	if !ok || g != nil {
		t.Errorf("gain against an unmeasured arm = %v (present %v), want null", fp(g), ok)
	}
	var buf bytes.Buffer
	doc.WriteJSON(&buf)
	if !strings.Contains(buf.String(), `"dev24-quant.original_q4_continuous_decode_tokens_per_week": null`) {
		t.Errorf("tokens per week of an unmeasured arm is not null in the JSON")
	}
}

// TestBadInput: an input that is neither a run nor a diagnosis is named.
func TestBadInput(t *testing.T) {
	f := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(f, []byte(`{"schema":"other"}`), 0o644)
	_, err := Summarize(context.Background(), []string{f})
	if err == nil || !strings.Contains(err.Error(), f) {
		t.Fatalf("err %v, want one naming %s", err, f)
	}
	if _, err := Summarize(context.Background(), []string{filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("a missing input was accepted")
	}
}

var wd, _ = os.Getwd()

func testDir(t *testing.T) string { return wd }

func fp(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestTokensPerWeekOneDefinition: the summary's tokens per week is the
// report's, to the bit and as printed, also where the two formulas it had
// (rate x 604800 in the report, tokens x 604800 / seconds here) differ in
// the last bit; and a running cohort is said to be running, not
// incomplete.
func TestTokensPerWeekOneDefinition(t *testing.T) {
	spec := &reporttest.RunSpec{ID: "tpw", Name: "tpw", Suite: evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: "fp"}, ImageID: "sha256:i"}
	// 230153 tokens in 3835.4772 s: (tokens / s) x 604800 and tokens x
	// 604800 / s differ in the last bit.
	for i, a := range []string{"a", "b"} {
		spec.Attempts = append(spec.Attempts, reporttest.AttemptSpec{Arm: a, Case: "c", Language: "python", Repeat: "repeat-1", Slot: i,
			Phases: 1, Terminations: []evalctl.Termination{evalctl.TermCompleted}, Solved: []bool{true}, Tokens: 230153, Decode: 3835.4772, Task: 4000})
	}
	spec.Attempts = append(spec.Attempts, reporttest.AttemptSpec{Arm: "a", Case: "d", Language: "python", Repeat: "repeat-1", Slot: 2, State: evalctl.Planned, Phases: 1})
	dir := filepath.Join(t.TempDir(), "tpw")
	if err := reporttest.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	if rate := float64(230153) / 3835.4772 * 604800; rate == float64(230153)*604800/3835.4772 {
		t.Fatal("the fixture does not tell the two formulas apart")
	}
	doc, err := Summarize(context.Background(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	in, err := report.Load(context.Background(), []string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range []string{"a", "b"} {
		got := doc.Derived["tpw."+arm+"_continuous_decode_tokens_per_week"]
		want := rep.Arm(arm).TokensPerWeek
		if got == nil || want == nil || *got != *want {
			t.Errorf("arm %s: summary %v, report %v", arm, got, want)
		}
	}
	st, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Lock(); err != nil {
		t.Fatal(err)
	}
	defer st.Unlock()
	doc, err = Summarize(context.Background(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	c := doc.PartialCohorts["tpw"]
	if c == nil || c.State != report.ProgressRunning || c.Progress != "running, 2 of 3 attempts ended; 1 waiting to run" {
		t.Errorf("a cohort its runner works on: %+v", c)
	}
}
