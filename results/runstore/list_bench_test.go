package runstore

import (
	"fmt"
	"github.com/evalctl/evalctl"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkList1000 is 'evalctl runs' over 1,000 run directories laid out
// as the runner writes them: run.json, plan.json (2 arms x 24 slots),
// events.jsonl (registered, then a start and an end per attempt) and 48
// attempt directories, which the listing does not open (goal: under 1 s).
func BenchmarkList1000(b *testing.B) {
	root := filepath.Join(os.TempDir(), "evalctl-runs-bench-1000-v1")
	if _, err := os.Stat(filepath.Join(root, "done")); err != nil {
		os.RemoveAll(root)
		for i := 0; i < 1000; i++ {
			writeBenchRun(b, root, i)
		}
		os.WriteFile(filepath.Join(root, "done"), nil, 0o644)
	}
	b.ResetTimer()
	for b.Loop() {
		list, err := List(root)
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != 1000 || list[0].Scored == nil || *list[0].Planned != 48 {
			b.Fatalf("listed %d runs: %+v", len(list), list[0])
		}
	}
}

func writeBenchRun(b *testing.B, root string, i int) {
	id := fmt.Sprintf("0192%04x-0000-7000-8000-%012x", i, i)
	dir := filepath.Join(root, DirName(fmt.Sprintf("plan-%d", i%7), id))
	st, err := Create(dir)
	if err != nil {
		b.Fatal(err)
	}
	var slots []map[string]any
	for s := 0; s < 48; s++ {
		slots = append(slots, map[string]any{"index": s, "arm": []string{"a", "b"}[s%2], "case": fmt.Sprintf("case%d", s/6), "repeat": "repeat-1", "seed": 101})
	}
	plan := map[string]any{"name": fmt.Sprintf("plan-%d", i%7), "arms": []map[string]any{{"name": "a"}, {"name": "b"}}, "slots": slots}
	if err := WriteJSON(st.Path(PlanFile), plan); err != nil {
		b.Fatal(err)
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	if err := WriteJSON(st.Path(RunFile), &Run{ID: id, Name: plan["name"].(string), CreatedAt: created, Kind: "cohort", Suite: evalctl.SuiteRef{Name: "dev", Version: "1.0.0"}}); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(st.Path(EventsFile))
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(f, `{"time":"2026-01-01T00:00:00Z","kind":"registered","detail":"plan sha256 x, 48 attempts"}`+"\n")
	for s := 0; s < 48-(i%5); s++ {
		aid := fmt.Sprintf("%s-a%02d", id, s)
		os.MkdirAll(st.AttemptDir(aid), 0o755)
		fmt.Fprintf(f, `{"time":"2026-01-01T00:00:00Z","kind":"start","attempt":"%s","detail":"slot %d a case repeat-1"}`+"\n", aid, s)
		fmt.Fprintf(f, `{"time":"2026-01-01T00:01:00Z","kind":"completed","attempt":"%s"}`+"\n", aid)
	}
	f.Close()
}
