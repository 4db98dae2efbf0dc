package report

import (
	"context"
	"strings"
	"testing"
)

// TestSpeedIntervals: every arm's pooled decode and task TPS carry a 95%
// case bootstrap interval that holds the pooled figure, is the same on
// every build, and is null (not 0) with fewer than two measured cases.
func TestSpeedIntervals(t *testing.T) {
	rep := seedReport(t, Options{Baseline: "original_q4"})
	for _, a := range rep.Arms {
		for _, c := range []struct {
			what string
			v    *float64
			iv   *Interval
		}{{"decode", a.DecodeTPS, a.DecodeTPSInterval}, {"task", a.TaskOutputTPS, a.TaskOutputTPSInterval}} {
			if c.iv == nil || c.iv.Low == nil || c.iv.High == nil || c.v == nil {
				t.Fatalf("%s %s: interval %+v", a.Arm, c.what, c.iv)
			}
			if !(*c.iv.Low < *c.v && *c.v < *c.iv.High) || c.iv.Cases != 8 || c.iv.Resamples != BootstrapResamples {
				t.Errorf("%s %s TPS %v outside its interval [%v, %v] (cases %d)", a.Arm, c.what, *c.v, *c.iv.Low, *c.iv.High, c.iv.Cases)
			}
		}
	}
	again := seedReport(t, Options{Baseline: "original_q4"})
	if *again.Arms[0].DecodeTPSInterval.Low != *rep.Arms[0].DecodeTPSInterval.Low {
		t.Error("the interval changes from one build to the next")
	}
	// One case: no interval.
	one := &Input{}
	in, err := Load(context.Background(), []string{seedDir}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in.Rows {
		if r.Case == "ledger" {
			one.Rows = append(one.Rows, r)
		}
	}
	rep1, err := Build(one, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if iv := rep1.Arms[0].DecodeTPSInterval; iv.Low != nil || iv.High != nil || iv.Cases != 1 {
		t.Errorf("one case: %+v, want null bounds", iv)
	}
}

// TestHTMLLook: the page is titled with the plan's name, lists each arm's
// settings and server, draws an interval on every speed bar, ends its
// speed axis near the data, and links grid cells when given where to.
func TestHTMLLook(t *testing.T) {
	rep := seedReport(t, Options{Baseline: "original_q4"})
	rep.Runs[0].Name = "quant-sweep"
	setup := &Setup{Arms: []ArmSetup{{Arm: "candidate", Settings: []string{"model \"q4\"", "sampling: temperature 0.6"}, Server: "build b6000"}},
		CellLink: func(c, arm string) string { return "/#/run/x/cell/" + c + "/" + arm }}
	var b strings.Builder
	if err := WriteHTMLWith(&b, rep, setup); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<title>evalctl report: quant-sweep", "<h1>evalctl report: quant-sweep</h1>", `id="arm-setup"`, "sampling: temperature 0.6", "build b6000",
		`<a class="cell-link" href="/#/run/x/cell/ledger/candidate">`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n, want := strings.Count(page, `class="whisker decode"`)+strings.Count(page, `class="whisker task"`), 2*len(rep.Arms); n != want {
		t.Errorf("%d speed whiskers, want %d", n, want)
	}
	// Without a setup (a file), no links and no settings table.
	var plain strings.Builder
	WriteHTML(&plain, rep)
	if strings.Contains(plain.String(), "cell-link") || strings.Contains(plain.String(), "arm-setup") {
		t.Error("a report without setup links cells or lists settings")
	}
	for v, want := range map[float64]float64{210: 250, 64.1: 80, 500: 500, 101: 120, 7: 10} {
		if got := niceCeil(v); got != want {
			t.Errorf("axis end for %v: %v, want %v", v, got, want)
		}
	}
}
