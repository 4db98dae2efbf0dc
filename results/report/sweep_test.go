package report

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
)

func sweepDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sweep")
	if err := reporttest.Write(dir, reporttest.Sweep()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSweepOrderedByValue: arms met out of order (and declared out of
// order) are reported by the swept value, with the trend table and the
// line chart with intervals.
func TestSweepOrderedByValue(t *testing.T) {
	in, err := Load(context.Background(), []string{sweepDir(t)}, "")
	if err != nil {
		t.Fatal(err)
	}
	if in.Rows[1].Arm != "mtp5" {
		t.Fatalf("fixture: second attempt is %s, want mtp5 (arms met out of order)", in.Rows[1].Arm)
	}
	rep, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var arms []string
	for _, a := range rep.Arms {
		arms = append(arms, a.Arm)
	}
	if got := strings.Join(arms, " "); got != "mtp2 mtp3 mtp4 mtp5 mtp6" {
		t.Errorf("arms %q, want by value", got)
	}
	if rep.Baseline != "mtp2" {
		t.Errorf("baseline %s", rep.Baseline)
	}
	if len(rep.Sweeps) != 1 || len(rep.Sweeps[0].Points) != 5 {
		t.Fatalf("sweeps %+v", rep.Sweeps)
	}
	for i, p := range rep.Sweeps[0].Points {
		tot := reporttest.SweepTotals[i]
		if p.Arm != tot.Arm || string(p.Values[0]) != tot.Arm[3:] || p.DecodeTPS == nil || *p.DecodeTPS != float64(tot.Tokens)/tot.Decode {
			t.Errorf("point %d: %+v, want %s", i, p, tot.Arm)
		}
		if p.Functional.Count != 7 || p.Functional.Of != 8 || p.Functional.Low == nil {
			t.Errorf("point %d functional %+v", i, p.Functional)
		}
	}
	for _, c := range rep.Cases {
		if c.Arms[0].Arm != "mtp2" || c.Arms[4].Arm != "mtp6" {
			t.Errorf("case %s arms not in value order", c.Case)
		}
	}
	var text, page bytes.Buffer
	if err := Write(&text, rep, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Sweep mtp over extra.spec_draft_n_max (ordered by value)") {
		t.Errorf("no sweep table:\n%s", text.String())
	}
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	if !strings.Contains(h, `id="chart-sweep-0"`) || strings.Count(h, "<polyline") < 3 || !strings.Contains(h, "<title>mtp4 7/8</title>") {
		t.Errorf("no sweep line chart with intervals in the HTML")
	}
	// Without the plan's sweeps the order is the order met.
	in.Sweeps = nil
	rep, _ = Build(in, Options{})
	if rep.Arms[1].Arm != "mtp5" || rep.Sweeps != nil {
		t.Errorf("without sweeps: %s, %v", rep.Arms[1].Arm, rep.Sweeps)
	}
}
