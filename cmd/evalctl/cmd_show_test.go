package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/inspect"
)

// recordedRun is a real run of the grader's fixture suite (arms reference
// and flawed, the scripted model server, graded in the sandbox).
const recordedRun = "testdata/recorded/fixture-ab-01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"

// copyRecorded copies the recorded run under a fresh folder, pointing its
// plan at this checkout's fixture suite (so the diff finds the starter
// wherever the repository lies), and returns the folder.
func copyRecorded(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dst := filepath.Join(root, filepath.Base(recordedRun))
	err := filepath.WalkDir(recordedRun, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(recordedRun, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	suite, _ := filepath.Abs("../../grader/testdata/suite")
	var plan map[string]any
	data, _ := os.ReadFile(filepath.Join(dst, "plan.json"))
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	plan["suite_dir"] = suite
	mustJSON(t, filepath.Join(dst, "plan.json"), plan)
	return root
}

func TestShowCommand(t *testing.T) {
	root := copyRecorded(t)
	t.Setenv("EVALCTL_RUNS", root)
	clean := func(s string) string { return strings.ReplaceAll(s, root, "RUNS") }
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"show-flawed-tsadd.golden", []string{"show", "01a230a6-ae9a"}},
		{"show-flawed-tsadd.golden", []string{"show", "fixture-ab", "flawed", "tsadd", "repeat-1"}},
		{"show-flawed-tsadd.golden", []string{"show", "01a230a6-ae9a-7445-918a-2cc4bb1c7f91"}},
		{"show-flawed-tsadd.golden", []string{"show", "RUNDIR/attempts/01a230a6-ae9a-7445-918a-2cc4bb1c7f91"}},
		{"show-reference-adder-reasoning.golden", []string{"show", "fixture-ab", "reference", "adder", "repeat-1", "--reasoning"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			for i, a := range tt.args {
				tt.args[i] = strings.Replace(a, "RUNDIR", filepath.Join(root, filepath.Base(recordedRun)), 1)
			}
			code, out, errs := runCLI(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden(t, tt.golden, clean(out))
		})
	}
	// What the issue asks to see, in the failing attempt: each tool call
	// and result, token counts and timings, folded reasoning, the failing
	// group with its test ids and output, the diff.
	_, out, _ := runCLI(t, "show", "01a230a6-ae9a")
	for _, want := range []string{"[tool ", "tokens in", "tok/s", "bytes folded (--reasoning shows it)", "FAILED", "    failed: ", "--- /dev/null", "--- starter/src/sum.ts", "+++ answer/"} {
		if !strings.Contains(out, want) {
			t.Errorf("show output lacks %q", want)
		}
	}

	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ambiguous prefix", []string{"show", "01a230a6-ae"}, 2, "matches 4 attempts: 01a230a6-ae77-7e4d-bfff-cc6a6031c8ba (reference adder repeat-1, completed), "},
		{"unknown id", []string{"show", "nope"}, 2, `attempt "nope": no such attempt in 1 run(s)`},
		{"unknown slot", []string{"show", "fixture", "reference", "adder", "repeat-9"}, 2, `no such attempt: the run has no repeat "repeat-9" (did you mean "repeat-1"?)`},
		{"misspelt case", []string{"show", "fixture", "reference", "addr", "repeat-1"}, 2, `the run has no case "addr" (did you mean "adder"?)`},
		{"wrong arity", []string{"show", "a", "b"}, 2, "name one attempt"},
		{"bad format", []string{"show", "01a230a6-ae9a", "--format", "pdf"}, 2, `invalid value "pdf" for --format: want one of text, json`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d stderr %q; want %d with %q", code, errs, tt.code, tt.want)
			}
		})
	}

	code, out, errs := runCLI(t, "show", "01a230a6-ae9a", "--format", "json")
	var d inspect.Detail
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || d.Attempt.Case != "tsadd" || len(d.Transcript) == 0 || len(d.Diff) == 0 {
		t.Errorf("json: exit %d %s: %.300s", code, errs, out)
	}
}

// TestShowCutsLongOutput: a long block is cut with its true size, and
// --full shows it whole.
func TestShowCutsLongOutput(t *testing.T) {
	root := copyRecorded(t)
	dir := filepath.Join(root, filepath.Base(recordedRun))
	d, err := inspect.Load(dir, "01a230a6-ae9a-7445-918a-2cc4bb1c7f91")
	if err != nil {
		t.Fatal(err)
	}
	var short, full strings.Builder
	if err := inspect.WriteText(&short, d, inspect.TextOptions{MaxBytes: 40}); err != nil {
		t.Fatal(err)
	}
	if err := inspect.WriteText(&full, d, inspect.TextOptions{MaxBytes: -1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(short.String(), "[... cut: 213 bytes in all, the first 40 shown]") && !strings.Contains(short.String(), "bytes in all, the first 40 shown]") {
		t.Errorf("no cut mark in:\n%s", short.String())
	}
	if strings.Contains(full.String(), "[... cut:") || len(full.String()) <= len(short.String()) {
		t.Errorf("--full output cut or not longer")
	}
}
