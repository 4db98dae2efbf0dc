package report

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
)

// The median of attempt seconds and the totals pool every scored attempt
// that has the figure, also those without decode seconds or tokens; each
// says how many attempts it pools. The speed pool stays the measured ones.
func TestPopulationsIndependentOfDecodeSeconds(t *testing.T) {
	a1 := att("A", "c1", "repeat-1", 0, "", true, 1000, 10) // task 20
	a2 := att("A", "c1", "repeat-2", 1, "", false, 3000, 20)
	a2.DecodeUnknown = true // task 30
	a3 := att("A", "c2", "repeat-1", 2, "", false, 0, 40)
	a3.TokensUnknown, a3.DecodeUnknown = true, true // task 50
	dir := writeRun(t, &reporttest.RunSpec{ID: "population", Attempts: []reporttest.AttemptSpec{a1, a2, a3}})
	a := build(t, []string{dir}, Options{}).Arm("A")
	if a.MedianAttemptSeconds == nil || *a.MedianAttemptSeconds != 30 || a.MedianAttemptSecondsAttempts != 3 {
		t.Errorf("median %v over %d, want 30 over 3 (every attempt with seconds)", a.MedianAttemptSeconds, a.MedianAttemptSecondsAttempts)
	}
	if a.TotalOutputTokens == nil || *a.TotalOutputTokens != 4000 || a.TotalOutputTokensAttempts != 2 {
		t.Errorf("total tokens %v over %d, want 4000 over 2", a.TotalOutputTokens, a.TotalOutputTokensAttempts)
	}
	if a.TotalTaskSeconds == nil || *a.TotalTaskSeconds != 100 || a.TotalTaskSecondsAttempts != 3 {
		t.Errorf("total task seconds %v over %d, want 100 over 3", a.TotalTaskSeconds, a.TotalTaskSecondsAttempts)
	}
	if a.Measured != 1 || *a.NativeOutputTokens != 1000 || *a.DecodeTPS != 100 {
		t.Errorf("speed pool: measured %d tokens %d tps %v; want 1, 1000, 100", a.Measured, *a.NativeOutputTokens, *a.DecodeTPS)
	}
}

// An attempt whose arm_unchanged is unknown has an unknown outcome (not
// scored), never functional false.
func TestUnknownArmUnchangedIsNotAFailure(t *testing.T) {
	dir := writeRun(t, &reporttest.RunSpec{ID: "armnull", Attempts: []reporttest.AttemptSpec{att("A", "c1", "repeat-1", 0, "", true, 1000, 10)}})
	st, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	as, err := st.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	as[0].ArmUnchanged = nil
	if err := st.WriteAttempt(as[0]); err != nil {
		t.Fatal(err)
	}
	r := mustLoad(t, dir).Rows[0]
	if r.Functional != nil || r.Delivered != nil || r.Status == Scored {
		t.Errorf("row %+v: functional %v; want null, not scored", r.Status, r.Functional)
	}
}

// The same attempt reached through two run directories (a copy under
// another run id) is an error, not pooled twice.
func TestSameAttemptThroughTwoRunsIsAnError(t *testing.T) {
	dir := writeRun(t, &reporttest.RunSpec{ID: "orig", Attempts: []reporttest.AttemptSpec{att("A", "c1", "repeat-1", 0, "", true, 1000, 10)}})
	copyDir := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(copyDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	st, err := runstore.Open(copyDir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	run.ID = "copy-of-orig"
	if err := st.WriteRun(run); err != nil {
		t.Fatal(err)
	}
	as, _ := st.Attempts()
	for _, a := range as {
		a.RunID = run.ID
		if err := st.WriteAttempt(a); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Load(context.Background(), []string{dir, copyDir}, "")
	if !errors.Is(err, ErrDuplicateAttempt) || !strings.Contains(err.Error(), as[0].ID) {
		t.Fatalf("err = %v, want a duplicate attempt naming %s", err, as[0].ID)
	}
}
