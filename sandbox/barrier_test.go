package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestDrainIsABarrier: once an engine is drained (here: a pool refusing
// it, as when its image does not verify), no exec, copy or start goes to
// it any more; each is refused with ErrEngineLost at once.
func TestDrainIsABarrier(t *testing.T) {
	_, img := sandboxtest.Engine(t)
	ctx := context.Background()
	eng, err := sandbox.Connect(ctx, sandbox.ConnectOptions{Name: "barrier"})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	run := sandboxtest.RunLabel(t)
	c, err := eng.Start(ctx, sandbox.Spec{Image: img.ID, Role: sandbox.RoleTest, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove(ctx)
	if res, err := c.Exec(ctx, []string{"true"}, sandbox.ExecOptions{Timeout: 30 * time.Second}); err != nil || res.ExitCode != 0 {
		t.Fatalf("exec before the drain: %+v %v", res, err)
	}
	eng.MarkLost()
	if _, err := c.Exec(ctx, []string{"true"}, sandbox.ExecOptions{Timeout: 30 * time.Second}); !errors.Is(err, sandbox.ErrEngineLost) {
		t.Errorf("exec after the drain: %v, want ErrEngineLost", err)
	}
	if err := c.CopyIn(ctx, "/workspace", nil); !errors.Is(err, sandbox.ErrEngineLost) {
		t.Errorf("copy after the drain: %v, want ErrEngineLost", err)
	}
	if _, err := eng.Start(ctx, sandbox.Spec{Image: img.ID, Role: sandbox.RoleTest, Run: run}); !errors.Is(err, sandbox.ErrEngineLost) {
		t.Errorf("start after the drain: %v, want ErrEngineLost", err)
	}
	if !c.Drained() {
		t.Error("the container does not say its engine was drained")
	}
}
