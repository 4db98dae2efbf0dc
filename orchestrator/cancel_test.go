package orchestrator_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/results/runstore"
)

// TestCancelSaysWhatHappened: 'evalctl run --cancel' records a slot that
// never started as cancelled before start and one left running by a
// stopped runner as cancelled after start; an interrupted attempt keeps
// its record byte for byte and its slot gets a replacement cancelled after
// start. Finished attempts are untouched, and a resume has nothing left.
func TestCancelSaysWhatHappened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	st, err := runstore.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteRun(&runstore.Run{ID: "r", Kind: runstore.KindCohort}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	recs := []*evalctl.Attempt{
		{ID: "01-done", Slot: 0, State: evalctl.Completed, StartedAt: &at},
		{ID: "02-planned", Slot: 1, State: evalctl.Planned},
		{ID: "03-running", Slot: 2, State: evalctl.Running, StartedAt: &at},
		{ID: "04-interrupted", Slot: 3, State: evalctl.Interrupted, StartedAt: &at, Error: "cancelled by the user (Ctrl-C)"},
	}
	for _, a := range recs {
		a.RunID, a.Arm, a.Case, a.Repeat = "r", "arm", "case", "repeat-1"
		if err := st.WriteAttempt(a); err != nil {
			t.Fatal(err)
		}
	}
	read := func(id string) []byte {
		data, _ := os.ReadFile(filepath.Join(st.AttemptDir(id), runstore.AttemptFile))
		return data
	}
	done, interrupted := read("01-done"), read("04-interrupted")
	n, err := orchestrator.Cancel(context.Background(), dir, "")
	if err != nil || n != 3 {
		t.Fatalf("cancel: %d, %v; want 3 slots cancelled", n, err)
	}
	all, err := st.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]evalctl.State{}
	var repl *evalctl.Attempt
	for _, a := range all {
		got[a.ID] = a.State
		if a.ReplacementOf == "04-interrupted" {
			repl = a
		}
	}
	if got["02-planned"] != evalctl.CancelledBeforeStart || got["03-running"] != evalctl.CancelledAfterStart || got["04-interrupted"] != evalctl.Interrupted {
		t.Errorf("states after cancel: %v", got)
	}
	if repl == nil || repl.State != evalctl.CancelledAfterStart || repl.Slot != 3 || repl.StartedAt != nil || evalctl.Score(repl, nil) != nil {
		t.Errorf("the interrupted slot's replacement: %+v", repl)
	}
	if !bytes.Equal(read("01-done"), done) || !bytes.Equal(read("04-interrupted"), interrupted) {
		t.Error("cancel rewrote a finished record")
	}
	for slot, a := range runstore.Current(all) {
		if !a.State.Ended() {
			t.Errorf("slot %d is left %s after cancel", slot, a.State)
		}
	}
}
