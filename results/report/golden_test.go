package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
)

var update = flag.Bool("update", false, "rewrite golden files and the testdata run")

// seedDir is the fixed synthetic cohort in the runstore layout, written by
// reporttest.Seed (TestSeedFixtureUpToDate keeps the two in step).
const seedDir = "testdata/dev24"

// TestSeedFixtureUpToDate regenerates the seed run and compares it with
// testdata file by file, so the committed run is exactly what the
// generator describes.
func TestSeedFixtureUpToDate(t *testing.T) {
	if *update {
		if err := os.RemoveAll(seedDir); err != nil {
			t.Fatal(err)
		}
		if err := reporttest.Write(seedDir, reporttest.Seed()); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(t.TempDir(), "dev24")
	if err := reporttest.Write(tmp, reporttest.Seed()); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, tmp)
	got := readTree(t, seedDir)
	for name, data := range want {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s/%s differs from what reporttest.Seed writes; run go test -update", seedDir, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s/%s is not written by reporttest.Seed; run go test -update", seedDir, name)
		}
	}
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func seedReport(t testing.TB, opts Options) *Report {
	t.Helper()
	in, err := Load(context.Background(), []string{seedDir}, opts.Suite)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSeedTotalsExact checks the pooled figures of the seed cohort against
// the seed results file, bit for bit.
func TestSeedTotalsExact(t *testing.T) {
	rep := seedReport(t, Options{Baseline: "original_q4"})
	for _, name := range reporttest.SeedArms {
		want := reporttest.SeedTotals[name]
		a := rep.Arm(name)
		if a == nil {
			t.Fatalf("no arm %s", name)
		}
		if a.Attempts != 24 || a.Scored != 24 || a.Measured != 24 {
			t.Errorf("%s: attempts %d scored %d measured %d, want 24 each", name, a.Attempts, a.Scored, a.Measured)
		}
		if *a.NativeOutputTokens != want.Tokens || *a.DecodeSeconds != want.Decode || *a.TaskSeconds != want.Task {
			t.Errorf("%s: sums %d / %v / %v, want %d / %v / %v", name, *a.NativeOutputTokens, *a.DecodeSeconds, *a.TaskSeconds, want.Tokens, want.Decode, want.Task)
		}
		if *a.DecodeTPS != want.DecodeTPS || *a.TaskOutputTPS != want.TaskTPS {
			t.Errorf("%s: decode TPS %v task TPS %v, want %v and %v", name, *a.DecodeTPS, *a.TaskOutputTPS, want.DecodeTPS, want.TaskTPS)
		}
		if a.Functional.Count != want.Functional || a.Delivered.Count != want.Delivered {
			t.Errorf("%s: functional %d delivered %d, want %d and %d", name, a.Functional.Count, a.Delivered.Count, want.Functional, want.Delivered)
		}
	}
	// The seed's derived figure: IQ3 bundle decode gain vs Q4.
	if g := rep.Arm("current_iq3").DecodeTPSGainPercent; g == nil || *g != 79.82189350695602 {
		t.Errorf("current_iq3 decode gain = %v, want 79.82189350695602", g)
	}
	if rep.Arm("original_q4").DecodeTPSGainPercent != nil {
		t.Error("the baseline has a gain against itself")
	}
	if w := rep.Arm("candidate").TokensPerWeek; w == nil || *w != 62.357151060397875*604800 {
		t.Errorf("tokens per week = %v", w)
	}
	if rep.Arm("original_q4").DraftAcceptance != nil {
		t.Error("original_q4 reported no drafts, yet has a draft acceptance")
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"decode_tps": 62.357151060397875`, `"task_output_tps": 58.44220695840042`,
		`"decode_seconds": 10116.1934`, `"decode_seconds": 10311.041000000001`, `"decode_tps": 59.866312237532554`,
		`"decode_tps_gain_percent": 79.82189350695602`, `"draft_acceptance": null`} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("JSON lacks %s", s)
		}
	}
}

func TestGoldenReports(t *testing.T) {
	rep := seedReport(t, Options{Baseline: "original_q4"})
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, rep, format); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "golden", "dev24."+format), buf.Bytes())
		})
	}
	if err := Write(&bytes.Buffer{}, rep, "pdf"); err == nil {
		t.Error("an unknown format was accepted")
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (run go test -update after checking the change):\n%s", path, firstDiff(want, got))
	}
}

func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < min(len(wl), len(gl)); i++ {
		if wl[i] != gl[i] {
			return "line " + itoa(i+1) + ":\nwant: " + wl[i] + "\ngot:  " + gl[i]
		}
	}
	return "lengths differ"
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestJSONStable checks the JSON round-trips into the Report type with
// nothing unknown: the field names are the documented ones.
func TestJSONStable(t *testing.T) {
	rep := seedReport(t, Options{})
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	var back Report
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Baseline != "candidate" {
		t.Errorf("default baseline = %q, want the first arm", back.Baseline)
	}
	if len(back.Arms) != 3 || len(back.Cases) != 8 || len(back.Comparisons) != 2 {
		t.Errorf("arms %d cases %d comparisons %d", len(back.Arms), len(back.Cases), len(back.Comparisons))
	}
}
