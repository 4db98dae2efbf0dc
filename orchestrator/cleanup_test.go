package orchestrator_test

import (
	"context"
	"testing"

	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
)

// runLabel is the container run label of the run in dir: its run id.
func runLabel(t testing.TB, dir string) string {
	t.Helper()
	st, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// removeRunContainers removes, when the test ends (passed or failed), the
// containers of the run whose directory dir() names by then: a runner
// killed on purpose, or a test that failed half-way, leaves its run's
// containers behind.
func removeRunContainers(t testing.TB, eng *sandbox.Engine, dir func() string) {
	t.Cleanup(func() {
		d := dir()
		if d == "" {
			return
		}
		st, err := runstore.Open(d)
		if err != nil {
			return
		}
		if r, err := st.ReadRun(); err == nil && r.ID != "" {
			eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: r.ID})
		}
	})
}
