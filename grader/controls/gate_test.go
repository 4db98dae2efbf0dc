package controls_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/tasks"
)

func TestSelect(t *testing.T) {
	s, err := tasks.LoadSuite("../testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	broken := []*tasks.CaseError{{Case: "gone", Err: errors.New("no case.yaml")}}
	cases, reported, err := controls.Select(s, broken, nil)
	if err != nil || len(cases) != len(s.Cases) || len(reported) != 1 {
		t.Errorf("all: %d cases, %d broken, %v", len(cases), len(reported), err)
	}
	cases, reported, err = controls.Select(s, broken, []string{"adder", "gone"})
	if err != nil || len(cases) != 1 || cases[0].Name != "adder" || len(reported) != 1 {
		t.Errorf("named: %v, %v, %v", cases, reported, err)
	}
	_, _, err = controls.Select(s, broken, []string{"nosuch"})
	var nc *controls.NoCaseError
	if !errors.As(err, &nc) || !strings.Contains(err.Error(), `has no case "nosuch"`) {
		t.Errorf("unknown case: %v", err)
	}
}

// TestGateWithoutCases: a gate over only broken cases needs no grader
// and fails, saying how many cases are broken, in both formats.
func TestGateWithoutCases(t *testing.T) {
	s, err := tasks.LoadSuite("../testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	broken := []*tasks.CaseError{{Case: "gone", Err: errors.New("no case.yaml")}}
	gt, err := controls.RunGate(context.Background(), nil, s, nil, broken, controls.GateOptions{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := gt.Failure(), "0 of 0 fixture expectations unmet, 1 cases broken"; got != want {
		t.Errorf("failure %q, want %q", got, want)
	}
	var table, js strings.Builder
	if err := gt.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := gt.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BROKEN case gone: no case.yaml", "0 variants and 0 cases judged, 0 expectations unmet, 1 cases broken", "with concurrency 2"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if !strings.Contains(js.String(), `"error": "no case.yaml"`) {
		t.Errorf("json lacks the broken case:\n%s", js.String())
	}
}

// TestGateTable: a row per variant with its groups, unmet rows with their
// problems, and a case's controls as a whole.
func TestGateTable(t *testing.T) {
	s, err := tasks.LoadSuite("../testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	gt := &controls.Gate{Suite: s, Cases: s.Cases[:1], Results: []grader.CheckResult{
		{Case: "adder", Phase: 1, Variant: "reference", Met: true, Grade: &evalctl.Grade{Solved: true, Groups: []evalctl.GroupResult{{Name: "acceptance", Passed: 3, Total: 3, Success: true}}}},
		{Case: "adder", Phase: 1, Variant: "control:x", Met: false, Problems: []string{"passed acceptance"}, Grade: &evalctl.Grade{Groups: []evalctl.GroupResult{{Name: "acceptance", Passed: 2, Total: 3}}}},
		{Case: "adder", Variant: "controls", Met: true, Extra: []string{"one plausible"}},
	}}
	var b strings.Builder
	if err := gt.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"adder  1      reference  acceptance 3/3", "acceptance 2/3!", "UNMET: passed acceptance", "adder  -      controls", "met (one plausible)", "1 expectations unmet"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if gt.Unmet() != 1 || gt.Failure() == "" {
		t.Errorf("unmet %d, failure %q", gt.Unmet(), gt.Failure())
	}
}

// TestGenerateSuiteUnknownCase: a named case the suite lacks is refused
// before anything is generated.
func TestGenerateSuiteUnknownCase(t *testing.T) {
	s, err := tasks.LoadSuite("../testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	var out, log strings.Builder
	err = (&controls.Generator{}).GenerateSuite(context.Background(), s, []string{"adder", "nosuch"}, controls.SuiteOptions{Out: &out, Log: &log})
	var nc *controls.NoCaseError
	if !errors.As(err, &nc) || nc.Case != "nosuch" || out.Len() != 0 {
		t.Errorf("got %v, output %q; want a NoCaseError for nosuch and no output", err, out.String())
	}
}
