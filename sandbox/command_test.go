package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestBuildImageAndPruneRun runs the work of 'image build' and 'sandbox
// prune' on the shared engine: the image is the one tests use, reused; a
// prune by one run's label removes that run's container and nothing else.
func TestBuildImageAndPruneRun(t *testing.T) {
	_, img := sandboxtest.Engine(t)
	ctx := context.Background()
	var out, log strings.Builder
	if err := sandbox.BuildImage(ctx, false, false, &out, &log); err != nil {
		t.Fatal(err)
	}
	if want := img.Ref + " " + img.ID + "\n"; out.String() != want {
		t.Fatalf("stdout %q, want %q", out.String(), want)
	}
	if !strings.HasPrefix(log.String(), "reused the sandbox image in ") {
		t.Fatalf("log %q", log.String())
	}
	out.Reset()
	if err := sandbox.BuildImage(ctx, false, true, &out, &log); err != nil || strings.Count(log.String(), "reused") != 1 {
		t.Fatalf("quiet build logged: %q (%v)", log.String(), err)
	}

	run := sandboxtest.RunLabel(t)
	sandboxtest.Start(t, sandbox.Spec{Run: run})
	out.Reset()
	if _, err := sandbox.PruneRun(ctx, run, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "1 container(s) removed\n") || !strings.HasPrefix(out.String(), "removed ") {
		t.Fatalf("prune of %s: %q", run, out.String())
	}
}
