package orchestrator_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestResumeRechecksTheServer: a resume runs the preflight again. Against
// another server on the registered address (another build) it stops
// before running anything, naming the difference; against the registered
// server again it runs what is left.
func TestResumeRechecksTheServer(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := startServerWith(t, scripted.Config{Addr: addr})
	stop := filepath.Join(t.TempDir(), "STOP")
	os.WriteFile(stop, nil, 0o644)
	f := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "http://` + addr + `", model: reference}}`}, "guards: {stop_file: "+stop+"}\n")
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
	if !errors.Is(err, orchestrator.ErrGuard) {
		t.Fatalf("got %v, want the stop-file guard", err)
	}
	os.Remove(stop)
	srv.Close()
	other := startServerWith(t, scripted.Config{Addr: addr, BuildInfo: "b9999-another"})
	res2, err := orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img})
	if !errors.Is(err, orchestrator.ErrChanged) || !strings.Contains(err.Error(), "build_info") || !strings.Contains(err.Error(), "b9999-another") {
		t.Fatalf("resume against another server: got %v, want ErrChanged naming the build", err)
	}
	if res2 != nil && countStates(res2.Attempts)[evalctl.Completed] != 0 {
		t.Fatalf("the resume ran attempts against the changed server")
	}
	other.Close()
	startServerWith(t, scripted.Config{Addr: addr})
	res3, err := orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, Engine: eng, Image: img})
	if err != nil {
		t.Fatalf("resume against the registered server: %v", err)
	}
	if n := countStates(res3.Attempts); n[evalctl.Completed] != 1 {
		t.Fatalf("after the resume: %v, want 1 completed", n)
	}
}
