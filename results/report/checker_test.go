package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
)

// runChecker runs the shipped Python checker (a trusted copy, outside the
// export) on dir: nil when it printed OK and exited 0, else its output.
func runChecker(t *testing.T, dir string) error {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	trusted := filepath.Join(t.TempDir(), CheckerPy)
	if err := os.WriteFile(trusted, checkerPy, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, trusted, dir).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		if !bytes.HasPrefix(out, []byte("OK: ")) {
			t.Fatalf("checker exited 0 without OK: %s", out)
		}
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		if !bytes.HasPrefix(out, []byte("FAIL: ")) {
			t.Fatalf("checker exited 1 without a FAIL: line: %s", out)
		}
		return errors.New(string(out))
	default:
		t.Fatalf("checker: %v: %s", err, out)
		return nil
	}
}

// richExport exports a synthetic cohort with everything the pools must
// handle: replaced infra failures, two-phase cases, wall-time stops, failed
// self-tests, attempts of unknown tokens, ungraded and unscored records.
func richExport(t *testing.T) string {
	t.Helper()
	spec := reporttest.Synthetic(reporttest.SyntheticSpec{Attempts: 240, Cases: 12, Seed: 17})
	for i := range spec.Attempts {
		a := &spec.Attempts[i]
		switch i % 37 {
		case 5:
			a.TokensUnknown = true
		case 11:
			a.SelfTestFailed = true
		case 19:
			if a.State == "" && !a.Replaces {
				a.Solved = nil // no grades: ungraded
			}
		}
	}
	src := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(src, spec); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "export")
	if _, err := Export(context.Background(), []string{src}, out, Options{Baseline: "current_iq3"}); err != nil {
		t.Fatal(err)
	}
	return out
}

// agentExport is a cohort of two models each under the built-in loop and
// an agent command whose claims fall short of the server's counts on
// some attempts: its aggregates hold the model x agent table.
func agentExport(t *testing.T) string {
	t.Helper()
	spec := reporttest.Synthetic(reporttest.SyntheticSpec{Attempts: 64, Cases: 8, Seed: 5, Arms: []string{"q7-loop", "q7-standin", "q14-loop", "q14-standin"}})
	agent := &evalctl.AgentCommand{Command: []string{"standin-agent"}, Prompt: evalctl.PromptArgument, Usage: "standin"}
	image := *agent
	image.Image = "evalctl-agent-standin"
	spec.PlanArms = []evalctl.Arm{
		{Name: "q7-loop", Endpoint: evalctl.Endpoint{BaseURL: "http://gpu0:8080", Model: "qwen-7b"}},
		{Name: "q7-standin", Endpoint: evalctl.Endpoint{BaseURL: "http://gpu0:8080", Model: "qwen-7b"}, Agent: agent},
		{Name: "q14-loop", Endpoint: evalctl.Endpoint{BaseURL: "http://gpu1:8080", Model: "qwen-14b"}},
		{Name: "q14-standin", Endpoint: evalctl.Endpoint{BaseURL: "http://gpu1:8080", Model: "qwen-14b"}, Agent: &image},
	}
	for i := range spec.Attempts {
		a := &spec.Attempts[i]
		if strings.HasSuffix(a.Arm, "standin") {
			claim := a.Tokens - int64(i%3)*7
			// One agent changed its configuration (not functional), one
			// left it unknown (not scored).
			unchanged := i != 9
			a.Agent = &evalctl.AgentRecord{ConfigUnchanged: &unchanged, Phases: []evalctl.AgentPhase{{Phase: 1, ReportedCompletionTokens: &claim}}}
			if i == 13 {
				a.Agent.ConfigUnchanged = nil
			}
		}
	}
	src := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(src, spec); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "export")
	if _, err := Export(context.Background(), []string{src}, out, Options{Baseline: "q7-loop"}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(out, AggregatesJSON)); err != nil || !bytes.Contains(data, []byte(`"agent_matrix": {`)) || !bytes.Contains(data, []byte(`agent-reported usage, arm q14-standin`)) {
		t.Fatalf("the agent export has no model x agent table or claims note (%v)", err)
	}
	return out
}

func sweepExport(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export")
	if _, err := Export(context.Background(), []string{sweepDir(t)}, out, Options{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// edit replaces old by new once in dir/file.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s lacks %q", file, old)
	}
	if err := os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editCSV sets one cell (record row, the column named col) of a CSV file.
func editCSV(t *testing.T, dir, file string, row int, col, value string) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, _ := os.ReadFile(p)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for j, name := range recs[0] {
		if name == col {
			recs[row][j] = value
		}
	}
	var b bytes.Buffer
	csv.NewWriter(&b).WriteAll(recs)
	os.WriteFile(p, b.Bytes(), 0o644)
}

// reindent writes a JSON file again with four-space indentation and its
// keys in sorted order: the same values, formatted otherwise.
func reindent(t *testing.T, dir, file string) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, _ := os.ReadFile(p)
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(v, "", "    ")
	if bytes.Equal(out, data) {
		t.Fatal("re-indenting changed nothing")
	}
	os.WriteFile(p, out, 0o644)
}

// rewriteRows applies f to the rows of dir's attempts.json and writes them
// back with a matching attempts.csv; with rebuild, the aggregates too, so
// that only the evidence can tell.
func rewriteRows(t *testing.T, dir string, rebuild bool, f func([]Row)) {
	t.Helper()
	var rows []Row
	data, _ := os.ReadFile(filepath.Join(dir, AttemptsJSON))
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	f(rows)
	data, _ = marshalIndent(rows)
	os.WriteFile(filepath.Join(dir, AttemptsJSON), data, 0o644)
	data, _ = attemptsCSV(rows)
	os.WriteFile(filepath.Join(dir, AttemptsCSV), data, 0o644)
	if rebuild {
		var proto Protocol
		pdata, _ := os.ReadFile(filepath.Join(dir, ProtocolJSON))
		if err := json.Unmarshal(pdata, &proto); err != nil {
			t.Fatal(err)
		}
		var agg Report
		adata, _ := os.ReadFile(filepath.Join(dir, AggregatesJSON))
		if err := json.Unmarshal(adata, &agg); err != nil {
			t.Fatal(err)
		}
		rep, err := Build(&Input{Runs: agg.Runs, Rows: rows}, proto.Options)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		WriteJSON(&buf, rep)
		os.WriteFile(filepath.Join(dir, AggregatesJSON), buf.Bytes(), 0o644)
		buf.Reset()
		WriteCSV(&buf, rep)
		os.WriteFile(filepath.Join(dir, AggregatesCSV), buf.Bytes(), 0o644)
	}
}

// firstFailed is the index of the first scored row with functional false.
func firstFailed(rows []Row) int {
	for i, r := range rows {
		if r.Status == Scored && !*r.Functional {
			return i
		}
	}
	panic("no failed row")
}

// boundaryBlockable is a failed row whose failures could all be tests the
// boundary cannot represent: arm unchanged, no protected or missing file,
// every failing required group run to its end with its counts known.
func boundaryBlockable(t *testing.T, rows []Row) int {
	for i, r := range rows {
		if r.Status != Scored || *r.Functional || r.Evidence == nil || r.Evidence.ArmUnchanged == nil || !*r.Evidence.ArmUnchanged ||
			len(r.Evidence.Phases) != r.ExpectedTurns {
			continue
		}
		ok := true
		for _, p := range r.Evidence.Phases {
			if p.Solved {
				continue
			}
			ok = ok && p.ProtectedChangesCount == 0 && p.MissingStarterFilesCount == 0
			for _, g := range p.Groups {
				if g.Required && !g.Success {
					ok = ok && g.Total != nil && *g.Failed > 0 && !g.TimedOut && (g.Declared == 0 || *g.Total == g.Declared)
				}
			}
		}
		if ok {
			return i
		}
	}
	t.Fatal("no failed row whose failures could be the boundary's")
	return -1
}

// markUnrepresentable makes every failing required group's failures tests
// the boundary cannot represent.
func markUnrepresentable(e *Evidence) {
	for p := range e.Phases {
		for g := range e.Phases[p].Groups {
			if gr := &e.Phases[p].Groups[g]; gr.Required && !gr.Success {
				gr.Unrepresentable, gr.ExitCode = *gr.Failed, 1
			}
		}
	}
}

// TestCheckerAgreesWithVerify: evalctl verify and the shipped Python
// checker accept the same exports and reject the same tampered ones.
func TestCheckerAgreesWithVerify(t *testing.T) {
	t.Parallel() // the package's two longest tests run beside the rest
	tests := []struct {
		name   string
		export func(*testing.T) string
		tamper func(*testing.T, string)
		ok     bool
	}{
		{name: "seed export", export: exportSeed, ok: true},
		{name: "rich export", export: richExport, ok: true},
		{name: "sweep export", export: sweepExport, ok: true},
		{name: "schedule export", export: scheduleExport, ok: true},
		{name: "schedule figure edited", export: scheduleExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"place_grants": 15`, `"place_grants": 16`)
			resum(t, d)
		}},
		{name: "schedule event edited in the timeline", export: scheduleExport, tamper: func(t *testing.T, d string) {
			edit(t, d, ProtocolJSON, `"grants": 9`, `"grants": 10`)
			resum(t, d)
		}},
		{name: "agent export", export: agentExport, ok: true},
		{name: "agent configuration flag edited", export: agentExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AttemptsJSON, `"config_unchanged": false`, `"config_unchanged": true`)
			resum(t, d)
		}},
		{name: "agent matrix claim edited", export: agentExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"claim_attempts": 0`, `"claim_attempts": 3`)
			resum(t, d)
		}},
		{name: "agent matrix column edited", export: agentExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"standin-agent in evalctl-agent-standin"`, `"standin-agent"`)
			resum(t, d)
		}},
		{name: "sweep point edited", export: sweepExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"arm": "mtp3",
          "values": [
            3
          ]`, `"arm": "mtp3",
          "values": [
            7
          ]`)
			resum(t, d)
		}},
		{name: "sweep order edited", export: sweepExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"arm": "mtp2"`, `"arm": "mtp9"`)
			resum(t, d)
		}},
		{name: "one byte flipped, sums stale", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"decode_tps": 62.357151060397875`, `"decode_tps": 62.357151060397876`)
		}},
		{name: "decode tps edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"decode_tps": 62.357151060397875`, `"decode_tps": 62.357151060397876`)
			resum(t, d)
		}},
		{name: "median edited", export: richExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"median_attempt_seconds": `, `"median_attempt_seconds": 1`)
			resum(t, d)
		}},
		{name: "transition edited", export: richExport, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"both_pass": `, `"both_pass": 1`)
			resum(t, d)
		}},
		{name: "wilson bound edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"wilson_low": 0.`, `"wilson_low": 0.1`)
			resum(t, d)
		}},
		{name: "bootstrap bound edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"low": `, `"low": 1`)
			resum(t, d)
		}},
		{name: "aggregates csv edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesCSV, "10116.1934", "10116.1935")
			resum(t, d)
		}},
		{name: "attempts csv edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AttemptsCSV, ",completed,", ",cancelled,")
			resum(t, d)
		}},
		{name: "outcome flipped in the row only", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AttemptsJSON, `"functional": false`, `"functional": true`)
			resum(t, d)
		}},
		// The case: an outcome changed everywhere it is stated,
		// aggregates rebuilt to match. Only the evidence disagrees.
		{name: "outcome flipped everywhere", export: exportSeed, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, true, func(rows []Row) {
				i := firstFailed(rows)
				yes := true
				rows[i].Functional, rows[i].Delivered = &yes, &yes
			})
			resum(t, d)
		}},
		{name: "delivered flipped everywhere", export: richExport, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, true, func(rows []Row) {
				for i, r := range rows {
					if r.Status == Scored && *r.Functional && !*r.Delivered {
						yes := true
						rows[i].Delivered = &yes
						return
					}
				}
				t.Fatal("no functional, undelivered row")
			})
			resum(t, d)
		}},
		{name: "group counts edited to pass", export: exportSeed, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, false, func(rows []Row) {
				g := &rows[firstFailed(rows)].Evidence.Phases[0].Groups[0]
				zero := 0
				g.Passed, g.Failed, g.ExitCode = g.Total, &zero, 0 // success left false
			})
			resum(t, d)
		}},
		{name: "evidence made to pass, outcome left", export: exportSeed, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, false, func(rows []Row) {
				e := rows[firstFailed(rows)].Evidence
				for p := range e.Phases {
					for g := range e.Phases[p].Groups {
						gr := &e.Phases[p].Groups[g]
						zero := 0
						gr.Passed, gr.Failed, gr.ExitCode, gr.Success = gr.Total, &zero, 0, true
					}
					e.Phases[p].ProtectedChangesCount, e.Phases[p].Solved = 0, true
				}
			})
			resum(t, d)
		}},
		// A failed attempt whose failing tests the boundary could not
		// represent: ungraded, not failed, by both checkers' rule; left
		// scored as a failure, both reject it.
		{name: "failures unrepresentable: ungraded", export: exportSeed, ok: true, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, true, func(rows []Row) {
				i := boundaryBlockable(t, rows)
				markUnrepresentable(rows[i].Evidence)
				rows[i].Status, rows[i].Functional, rows[i].Delivered = Ungraded, nil, nil
			})
			resum(t, d)
		}},
		{name: "failures unrepresentable, still scored as failed", export: exportSeed, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, true, func(rows []Row) { markUnrepresentable(rows[boundaryBlockable(t, rows)].Evidence) })
			resum(t, d)
		}},
		{name: "arm changed flag dropped", export: exportSeed, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, false, func(rows []Row) {
				for i := range rows {
					if rows[i].Evidence != nil {
						rows[i].Evidence.ArmUnchanged = nil
						return
					}
				}
			})
			resum(t, d)
		}},
		{name: "evidence removed", export: exportSeed, tamper: func(t *testing.T, d string) {
			rewriteRows(t, d, false, func(rows []Row) { rows[5].Evidence = nil })
			resum(t, d)
		}},
		// The symptoms: check.py missed the first three; both
		// accepted the fourth; verify rejected the fifth.
		{name: "number in a note edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `"1 attempt(s) were replaced`, `"2 attempt(s) were replaced`)
			resum(t, d)
		}},
		{name: "number in a comparison's words edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			edit(t, d, AggregatesJSON, `candidate improves on 1,`, `candidate improves on 2,`)
			resum(t, d)
		}},
		{name: "overlapped column edited", export: exportSeed, tamper: func(t *testing.T, d string) {
			editCSV(t, d, AggregatesCSV, 1, "overlapped", "1")
			resum(t, d)
		}},
		{name: "unlisted file added", export: exportSeed, tamper: func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "README.txt"), []byte("not part of the export\n"), 0o644)
		}},
		{name: "re-indented, values unchanged", export: exportSeed, ok: true, tamper: func(t *testing.T, d string) {
			reindent(t, d, AggregatesJSON)
			reindent(t, d, AttemptsJSON)
			resum(t, d)
		}},
		{name: "checker replaced", export: exportSeed, tamper: func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, CheckerPy), []byte("print('OK: fine')\n"), 0o644)
			resum(t, d)
		}},
	}
	// Every copy is made first, then one Python process checks them all.
	// Each export is built once and copied for every row that uses it.
	built := map[uintptr]string{}
	dirs := make([]string, len(tests))
	for i, tt := range tests {
		key := reflect.ValueOf(tt.export).Pointer()
		if _, ok := built[key]; !ok {
			built[key] = tt.export(t)
		}
		dirs[i] = copyDir(t, built[key])
		if tt.tamper != nil {
			tt.tamper(t, dirs[i])
		}
	}
	py := checkerVerdicts(t, dirs)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			goErr, pyErr := Verify(dirs[i]), py[dirs[i]]
			if (goErr == nil) != (pyErr == nil) {
				t.Fatalf("disagree: evalctl verify: %v; check.py: %v", goErr, pyErr)
			}
			if (goErr == nil) != tt.ok {
				t.Fatalf("verify %v, check.py %v; want ok=%v", goErr, pyErr, tt.ok)
			}
			if goErr != nil {
				t.Logf("verify: %v\ncheck.py: %s", goErr, strings.SplitN(pyErr.Error(), "\n", 2)[0])
			}
		})
	}
}

// TestCheckerShippedBeside: the checker in the export runs as is, from the
// export directory, on the data beside it.
func TestCheckerShippedBeside(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	dir := exportSeed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, CheckerPy)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "OK: ") {
		t.Fatalf("python3 check.py in the export: %v: %s", err, out)
	}
}

// TestEvidenceScoresLikeTheRecords: for every row of the committed
// fixtures, the outcome recomputed from the evidence is the outcome
// evalctl.Score gave from the records.
func TestEvidenceScoresLikeTheRecords(t *testing.T) {
	in := mustLoad(t, seedDir)
	for i := range in.Rows {
		if d := checkEvidence(i, &in.Rows[i]); d != nil {
			t.Errorf("row %d: %v", i, d)
		}
	}
}
