package runstore

import (
	"errors"
	"github.com/evalctl/evalctl"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegisterAndReopen: every kind of run is registered in one order
// (plan, digest, what the run starts with, run.json last) and reopened
// only as what it was registered as, with the plan's bytes unchanged.
func TestRegisterAndReopen(t *testing.T) {
	plan := []byte(`{"name": "p", "sizes": [4096]}` + "\n")
	tests := []struct {
		name       string
		registered string // kind written in run.json
		open       string // kind asked for
		begin      func(*Store) error
		edit       func(t *testing.T, dir string)
		wantErr    string
		changed    bool // wantErr is ErrChanged
	}{
		{name: "round trip", registered: KindScreen, open: KindScreen},
		{name: "cohort without a kind", registered: "", open: KindCohort},
		{name: "other kind", registered: KindCapacity, open: KindScreen, wantErr: `is a "capacity" run, not a screen`},
		{name: "kindless run is no screen", registered: "", open: KindScreen, wantErr: `is a "" run, not a screen`},
		{name: "edited plan", registered: KindCohort, open: KindCohort, changed: true,
			wantErr: "run changed since registration: plan.json's SHA-256 is",
			edit: func(t *testing.T, dir string) {
				os.WriteFile(filepath.Join(dir, PlanFile), []byte(strings.Replace(string(plan), "4096", "8192", 1)), 0o644)
			}},
		{name: "missing plan", registered: KindCohort, open: KindCohort, wantErr: "plan.json",
			edit: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, PlanFile)) }},
		{name: "begin fails: registration unfinished", registered: KindCohort, open: KindCohort,
			begin:   func(*Store) error { return errors.New("disk full") },
			wantErr: "its registration did not finish"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			run := &Run{ID: "id-1", Name: "p", Kind: tt.registered}
			begun := false
			begin := func(st *Store) error {
				// run.json is not there yet while the run begins.
				if _, err := os.Stat(st.Path(RunFile)); err == nil {
					t.Error("run.json written before the run's first records")
				}
				begun = true
				if tt.begin != nil {
					return tt.begin(st)
				}
				return nil
			}
			st, err := Register(dir, PlanFile, plan, run, begin)
			if tt.begin != nil {
				if err == nil || !strings.Contains(err.Error(), "disk full") {
					t.Fatalf("Register = %v, want begin's error", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !begun || len(run.PlanSHA256) != 64 || run.EvalctlVersion == "" {
					t.Fatalf("registered %+v (begun %v)", run, begun)
				}
				// Registration holds the lock: no second runner gets in.
				other, _ := Open(dir)
				if err := other.Lock(); !errors.Is(err, ErrLocked) {
					t.Fatalf("second lock = %v, want ErrLocked", err)
				}
				st.Unlock()
			}
			if tt.edit != nil {
				tt.edit(t, dir)
			}
			_, got, data, err := OpenRegistered(dir, tt.open, PlanFile)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("error %v, want one naming %s and %q", err, dir, tt.wantErr)
				}
				if errors.Is(err, ErrChanged) != tt.changed {
					t.Fatalf("errors.Is(%v, ErrChanged) = %v, want %v", err, !tt.changed, tt.changed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != run.ID || got.PlanSHA256 != run.PlanSHA256 || string(data) != string(plan) {
				t.Fatalf("reopened %+v %q, registered %+v %q", got, data, run, plan)
			}
		})
	}
}

// TestCurrent: a slot stands where the end of its replacement chain
// stands, whatever order the ids (which follow the clock) come in.
func TestCurrent(t *testing.T) {
	a := func(id string, slot int, of string) *evalctl.Attempt {
		return &evalctl.Attempt{ID: id, Slot: slot, ReplacementOf: of}
	}
	tests := []struct {
		name string
		all  []*evalctl.Attempt
		want map[int]string
	}{
		{"one record per slot", []*evalctl.Attempt{a("1", 0, ""), a("2", 1, "")}, map[int]string{0: "1", 1: "2"}},
		{"chain", []*evalctl.Attempt{a("1", 0, ""), a("2", 0, "1"), a("3", 0, "2")}, map[int]string{0: "3"}},
		{"clock stepped back", []*evalctl.Attempt{a("5", 0, ""), a("3", 0, "5"), a("1", 0, "3")}, map[int]string{0: "1"}},
		{"two replacements of one record: the earlier continues", []*evalctl.Attempt{a("1", 0, ""), a("3", 0, "1"), a("2", 0, "1")}, map[int]string{0: "2"}},
		{"missing predecessor counts as original", []*evalctl.Attempt{a("4", 2, "gone")}, map[int]string{2: "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Current(tt.all)
			if len(got) != len(tt.want) {
				t.Fatalf("Current = %d slots, want %d", len(got), len(tt.want))
			}
			for slot, id := range tt.want {
				if got[slot] == nil || got[slot].ID != id {
					t.Errorf("slot %d: got %+v, want %s", slot, got[slot], id)
				}
			}
		})
	}
}
