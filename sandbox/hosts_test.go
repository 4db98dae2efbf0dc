package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestHostsTransferTheImageOnceAndVerifyIt: eight concurrent starts on a
// fresh engine send the image once, the engine then holds the source's
// image ID, and every container runs it by ID.
func TestHostsTransferTheImageOnceAndVerifyIt(t *testing.T) {
	local, img := sandboxtest.Engine(t)
	remote := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{}).Connect(t, "fresh")
	var log bytes.Buffer
	var logMu sync.Mutex
	hosts, err := sandbox.NewHosts([]sandbox.Host{{Engine: local, Capacity: 0}, {Engine: remote, Capacity: 8, Machine: "m2"}}, &lockedWriter{w: &log, mu: &logMu})
	if err != nil {
		t.Fatal(err)
	}
	hosts.UseImage(img)
	run := "transfer-" + uuid.NewString()
	t.Cleanup(func() { hosts.Prune(context.Background(), map[string]string{sandbox.LabelRun: run}) })
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := hosts.Start(context.Background(), sandbox.Spec{Image: img.Ref, Role: sandbox.RoleTest, Run: run, Near: "m2"})
			if err != nil {
				errs <- err
				return
			}
			defer c.Remove(context.Background())
			if c.EngineName() != "fresh" {
				errs <- errors.New("placed on " + c.EngineName() + ", not the machine it was near")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := hosts.Transfers(); n != 1 {
		t.Errorf("image transferred %d times, want once", n)
	}
	if id, err := remote.ImageID(context.Background(), img.ID); err != nil || id != img.ID {
		t.Errorf("fresh engine holds %q (%v), want %s", id, err, img.ID)
	}
	if !strings.Contains(log.String(), "sent to engine fresh and verified") {
		t.Errorf("log %q does not say the image was sent and verified", log.String())
	}
}

// TestTransferMovesTheRegisteredImageByID: the transfer saves the image
// the run registered by its ID, so a tag that moved (or is gone) on the
// source changes nothing: the engine receives and holds that ID, and no
// tag arrives with it. An ID the source no longer holds is an error that
// names it, and the engine that answers is not drained for it.
func TestTransferMovesTheRegisteredImageByID(t *testing.T) {
	local, img := sandboxtest.Engine(t)
	remote := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{}).Connect(t, "fresh")
	moved := *img
	moved.Ref = "evalctl-sandbox:moved-" + uuid.NewString()[:8] // names no image on the source
	sent, err := sandbox.Transfer(context.Background(), local, remote, &moved)
	if err != nil || !sent {
		t.Fatalf("transfer by ID with the tag gone: sent %v, %v", sent, err)
	}
	if id, err := remote.ImageID(context.Background(), img.ID); err != nil || id != img.ID {
		t.Errorf("the engine holds %q (%v), want %s", id, err, img.ID)
	}
	if id, _ := remote.ImageID(context.Background(), moved.Ref); id != "" {
		t.Errorf("a tag %s arrived with the image (%s)", moved.Ref, id)
	}
	gone := *img
	gone.ID = "sha256:" + strings.Repeat("0", 64)
	_, err = sandbox.Transfer(context.Background(), local, remote, &gone)
	if err == nil || !strings.Contains(err.Error(), "000000000000") || !strings.Contains(err.Error(), "no longer there") {
		t.Fatalf("transfer of an ID the source lacks: %v, want an error naming the ID", err)
	}
	hosts, err := sandbox.NewHosts([]sandbox.Host{{Engine: local, Capacity: 0}, {Engine: remote, Capacity: 1, Machine: "m2"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts.UseImage(&gone)
	if _, err := hosts.Start(context.Background(), sandbox.Spec{Image: gone.Ref, Role: sandbox.RoleTest, Run: "gone-" + uuid.NewString(), Near: "m2"}); err == nil {
		t.Fatal("a pool started a container of an image the source lacks")
	}
	if remote.Lost() {
		t.Error("an engine that answers was drained for the source's missing image")
	}
}

// TestHostsPlaceByCapacityAndDrainALostEngine: a full pool makes the next
// start wait for a free place; a killed engine is drained and work goes on
// on the rest, saying so.
func TestHostsPlaceByCapacityAndDrainALostEngine(t *testing.T) {
	local, img := sandboxtest.Engine(t)
	extra := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{})
	remote := extra.Connect(t, "doomed")
	if _, err := sandbox.Transfer(context.Background(), local, remote, img); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	hosts, err := sandbox.NewHosts([]sandbox.Host{{Engine: local, Capacity: 1}, {Engine: remote, Capacity: 1}}, &lockedWriter{w: &log, mu: &sync.Mutex{}})
	if err != nil {
		t.Fatal(err)
	}
	hosts.UseImage(img)
	run := "place-" + uuid.NewString()
	t.Cleanup(func() { local.Prune(context.Background(), map[string]string{sandbox.LabelRun: run}) })
	spec := sandbox.Spec{Image: img.Ref, Role: sandbox.RoleTest, Run: run}
	a, err := hosts.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hosts.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if a.EngineName() == b.EngineName() {
		t.Fatalf("both containers on %s with a free place elsewhere", a.EngineName())
	}
	onLocal := a
	if b.EngineName() == local.Name() {
		onLocal = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = hosts.Start(ctx, spec)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a start on a full pool: %v, want it to wait (deadline exceeded)", err)
	}
	extra.Kill()
	onLocal.Remove(context.Background())
	// The next start goes to the engine left, and the lost one is drained.
	c, err := hosts.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if c.EngineName() != local.Name() {
		t.Errorf("placed on %s, want %s", c.EngineName(), local.Name())
	}
	c.Remove(context.Background())
	for _, other := range []*sandbox.Container{a, b} {
		if other.EngineName() == "doomed" && !hosts.Drain(context.Background(), other) {
			t.Error("Drain says the killed engine still answers")
		}
	}
	if !strings.Contains(log.String(), "sandbox engine doomed stopped answering") || !strings.Contains(log.String(), "continuing on 1 engine(s)") {
		t.Errorf("log %q does not say the engine was drained", log.String())
	}
	if hosts.Capacity() != 1 {
		t.Errorf("capacity after the loss %d, want 1", hosts.Capacity())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
