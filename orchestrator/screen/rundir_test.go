package screen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRunRefuses: a run directory opens as what it was registered as,
// and is refused, with a message naming the directory and the reason, when
// it is another kind or its plan was edited since registration.
func TestOpenRunRefuses(t *testing.T) {
	type plan struct {
		Name  string `json:"name"`
		Sizes []int  `json:"sizes"`
	}
	tests := []struct {
		name    string
		edit    func(t *testing.T, dir string)
		kind    string
		wantErr string
	}{
		{name: "round trip", kind: KindCapacity},
		{name: "other kind", kind: KindScreen, wantErr: `is a "capacity" run, not a screen`},
		{name: "edited plan", kind: KindCapacity, wantErr: "run changed since registration: " + CapacityFile + "'s SHA-256 is",
			edit: func(t *testing.T, dir string) {
				f := filepath.Join(dir, CapacityFile)
				data, _ := os.ReadFile(f)
				os.WriteFile(f, []byte(strings.Replace(string(data), "4096", "8192", 1)), 0o644)
			}},
		{name: "missing plan", kind: KindCapacity, wantErr: CapacityFile,
			edit: func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, CapacityFile)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := plan{Name: "p", Sizes: []int{4096, 16384}}
			st, run, err := registerRun(t.TempDir(), "capacity-p", KindCapacity, CapacityFile, &want)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(filepath.Base(st.Dir), "capacity-p-") || run.Kind != KindCapacity || len(run.PlanSHA256) != 64 {
				t.Fatalf("registered %s as %+v", st.Dir, run)
			}
			if tt.edit != nil {
				tt.edit(t, st.Dir)
			}
			var got plan
			_, reopened, err := openRun(st.Dir, tt.kind, CapacityFile, &got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), st.Dir) {
					t.Fatalf("error %v, want one naming %s and %q", err, st.Dir, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if reopened.ID != run.ID || got.Name != want.Name || len(got.Sizes) != 2 || got.Sizes[1] != 16384 {
				t.Fatalf("reopened %+v %+v, registered %+v %+v", reopened, got, run, want)
			}
		})
	}
}
