package orchestrator_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestDeadServerIsInfra kills the model server in the middle of an
// attempt's stream (as kill -9 does: the connection breaks, then nothing
// answers). The broken stream alone would be the model's server_error,
// scored; with the server gone right after, the attempt is infra_failed,
// unscored, and --replace-infra re-runs it once a server is back.
func TestDeadServerIsInfra(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := startServerWith(t, scripted.Config{Addr: addr, DecodeTPS: 1000})
	f := adderPlan(t, "", []string{`{name: long, endpoint: {base_url: "http://` + addr + `", model: runaway}, budgets: {wall_seconds: 2}}`}, "concurrency: 1\n")
	type result struct {
		res *orchestrator.Result
		err error
	}
	done := make(chan result, 1)
	out := t.TempDir()
	go func() {
		res, err := orchestrator.Run(context.Background(), orchestrator.WithKnobs(orchestrator.Options{Plan: loadPlan(t, f), OutDir: out, Engine: eng, Image: img}, orchestrator.TestKnobs{NoPreflight: true}))
		done <- result{res, err}
	}()
	// Kill the server once the attempt's response is being generated.
	client := model.New(model.Config{BaseURL: srv.URL()})
	poll.Until(t, "the attempt's request in the server", 2*time.Minute, func() bool {
		n, err := client.Busy(context.Background())
		return err == nil && n > 0
	})
	srv.Close()
	r := <-done
	if !errors.Is(r.err, orchestrator.ErrIncomplete) {
		t.Fatalf("got %v, want ErrIncomplete: the attempt is left to re-run (%s %s %+v)", r.err, r.res.Attempts[0].State, r.res.Attempts[0].Error, r.res.Attempts[0].Turns)
	}
	a := r.res.Attempts[0]
	if a.State != evalctl.InfraFailed || a.Measurements != nil {
		t.Fatalf("state %s (%s), turns %+v; want infra_failed without measurements", a.State, a.Error, a.Turns)
	}

	// A server is back on the address: --replace-infra re-runs the attempt.
	startServerWith(t, scripted.Config{Addr: addr, DecodeTPS: 1000})
	res2, err := orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: r.res.Dir, ReplaceInfra: true, Engine: eng, Image: img})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	var repl *evalctl.Attempt
	for _, b := range res2.Attempts {
		if b.ReplacementOf == a.ID {
			repl = b
		}
	}
	if repl == nil || repl.State != evalctl.Completed {
		t.Fatalf("no completed replacement of %s among %d records", a.ID, len(res2.Attempts))
	}
}
