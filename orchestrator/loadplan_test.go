package orchestrator_test

import (
	"testing"

	"github.com/evalctl/evalctl/orchestrator"
)

// loadPlan reads a plan file the way 'evalctl run --plan' does.
func loadPlan(t testing.TB, file string) *orchestrator.Plan {
	t.Helper()
	p, _, err := orchestrator.LoadPlan(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
