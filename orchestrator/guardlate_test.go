package orchestrator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestGuardCheckedWhenTheDeviceIsTaken: a stop file created while the
// first attempt generates stops the second, which was already waiting for
// the device: the guard is checked when an attempt takes its device, not
// only before it waits.
func TestGuardCheckedWhenTheDeviceIsTaken(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServerWith(t, scripted.Config{DecodeTPS: 200})
	stop := filepath.Join(t.TempDir(), "STOP")
	f := adderPlan(t, "", []string{
		`{name: first, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`,
		`{name: second, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`,
	}, "concurrency: 1\nguards: {stop_file: "+stop+"}\n")
	go func() {
		// Once the first attempt's request is in the server.
		c := model.New(model.Config{BaseURL: srv.URL()})
		if poll.For(2*time.Minute, func() bool {
			n, err := c.Busy(context.Background())
			return err == nil && n > 0
		}) {
			os.WriteFile(stop, nil, 0o644)
		}
	}()
	// No preflight: its request would make the server busy before the
	// first attempt.
	res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
	if !errors.Is(err, orchestrator.ErrGuard) {
		t.Fatalf("got %v, want the stop-file guard", err)
	}
	// The attempt that ran first completed; the one waiting for the
	// device was stopped when it took it.
	if n := countStates(res.Attempts); n[evalctl.Completed] != 1 || n[evalctl.Planned] != 1 {
		t.Fatalf("states %v; want 1 completed and 1 planned", n)
	}
}
