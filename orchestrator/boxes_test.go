package orchestrator

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestBoxesStartTheNextAhead: the first attempt gets a fresh container; once
// it is released, the next attempt's is started ahead and handed over; the
// used one is removed; after the last attempt none is started ahead, and
// close leaves nothing with the run's label.
func TestBoxesStartTheNextAhead(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	ctx := context.Background()
	run := sandboxtest.RunLabel(t)
	labels := map[string]string{sandbox.LabelRun: run}
	b := newBoxes(ctx, engineBoxes{eng}, sandbox.Spec{Image: img.Ref, Role: sandbox.RoleAgent, Run: run}, 2)
	defer b.close()

	first, err := b.take(ctx, "attempt-1", "", "", sandbox.ClassAhead, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.release(first, "")
	// Wait for the removal and the start ahead.
	var ids []string
	if !poll.For(time.Minute, func() bool {
		b.mu.Lock()
		ready := len(b.spares) == 1
		b.mu.Unlock()
		ids, _ = eng.List(ctx, labels)
		return ready && !slices.Contains(ids, id(first))
	}) {
		t.Fatalf("no container started ahead, or the used one not removed: containers %v", ids)
	}
	second, err := b.take(ctx, "attempt-2", "", "", sandbox.ClassAhead, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id(second) == id(first) {
		t.Fatal("the used container was handed out again")
	}
	b.mu.Lock()
	spare := len(b.spares)
	b.mu.Unlock()
	if spare != 0 {
		t.Fatalf("%d containers left ahead after the second take, want the one taken", spare)
	}
	// The container started ahead works like any other.
	res, err := second.c.Exec(ctx, []string{"sh", "-c", "echo ok > /workspace/f && cat /workspace/f"}, sandbox.ExecOptions{Timeout: 10 * time.Second})
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != "ok\n" {
		t.Fatalf("exec in the container started ahead: %+v %v", res, err)
	}
	b.release(second, "")
	b.mu.Lock()
	starting := b.starting[""]
	b.mu.Unlock()
	if starting != 0 {
		t.Errorf("a container was started ahead with no attempt waiting")
	}
	b.close()
	if ids, _ := eng.List(ctx, labels); len(ids) != 0 {
		t.Errorf("containers left after close: %v", ids)
	}
}

func id(e *boxEntry) string { return e.c.(*sandbox.Container).ID }
