package demo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/demo"
	"github.com/evalctl/evalctl/tasks"
)

// TestPlanOnAnAwkwardPath: the demo's plan is a value, so a suite whose
// path holds ": " and "#" (which broke the YAML text the demo once wrote)
// is registered as it is.
func TestPlanOnAnAwkwardPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my: suites #1")
	if err := os.CopyFS(dir, os.DirFS("../../grader/testdata/suite")); err != nil {
		t.Fatal(err)
	}
	suite, err := tasks.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := demo.Plan(suite, "http://127.0.0.1:1 #x", []string{"adder"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var back orchestrator.Plan
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.SuiteDir != suite.Dir || back.SuiteFingerprint != suite.Fingerprint {
		t.Errorf("registered suite %q (%s), want %q (%s)", back.SuiteDir, back.SuiteFingerprint, suite.Dir, suite.Fingerprint)
	}
	if len(back.Arms) != 2 || back.Arms[0].Endpoint.BaseURL != "http://127.0.0.1:1 #x" || back.Arms[1].Endpoint.Model != "flawed" {
		t.Errorf("arms %+v", back.Arms)
	}
	if len(back.Slots) != 2 || back.Cases[0] != "adder" {
		t.Errorf("%d slots over cases %v, want 2 over [adder]", len(back.Slots), back.Cases)
	}
}
