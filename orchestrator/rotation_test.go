package orchestrator

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/poll"
)

// TestPoolFailsOver: a replica whose attempt failed and whose health probe
// fails leaves the rotation: the device pool hands attempts only the
// healthy replica; a replica that passes its probe stays; once the dead
// one answers its probe again (with backoff) it comes back; all replicas
// out is what stops a run.
func TestPoolFailsOver(t *testing.T) {
	var dead atomic.Bool
	var mu sync.Mutex
	var events []evalctl.EventKind
	devs := newDevicePool(1)
	rot := newRotation(devs.wake, func(k evalctl.EventKind, _ string) {
		mu.Lock()
		events = append(events, k)
		mu.Unlock()
	})
	rot.first, rot.max = 10*time.Millisecond, 40*time.Millisecond
	rot.probe = func(ctx context.Context, arm *Arm, url string) error {
		if url == "http://r1" && dead.Load() {
			return errors.New("connection refused")
		}
		return nil
	}
	devs.rot = rot
	arm := &Arm{Name: "a"}
	reps := []Replica{{BaseURL: "http://r0", Device: "d0"}, {BaseURL: "http://r1", Device: "d1"}}
	ctx := t.Context()

	// A failure on a replica that is healthy keeps it in rotation.
	rot.failed(ctx, arm, reps[1], "", "a sandbox failure")
	if rot.isOut("http://r1") {
		t.Fatal("a replica whose probe passes left the rotation")
	}
	dead.Store(true)
	rot.failed(ctx, arm, reps[1], "", "endpoint unavailable")
	if !rot.isOut("http://r1") || rot.allOut(reps) {
		t.Fatal("the dead replica is still in rotation, or the healthy one is out")
	}
	for range 4 {
		k := devs.acquire(ctx, "a", reps)
		if k != 0 {
			t.Fatalf("an attempt went to replica %d while it is out of rotation", k)
		}
		devs.release(reps[k].Device)
	}
	dead.Store(false)
	poll.Until(t, "the replica back in rotation after its probe passed", 30*time.Second, func() bool { return !rot.isOut("http://r1") })
	got := map[int]bool{}
	for range 4 {
		k := devs.acquire(ctx, "a", reps)
		got[k] = true
		devs.release(reps[k].Device)
	}
	if !got[0] || !got[1] {
		t.Errorf("after its return the replicas used were %v, want both", got)
	}
	// The breaker tripping takes a replica out whatever its probe says;
	// with both out, none is healthy.
	rot.failed(ctx, arm, reps[0], "3 in a row", "x")
	dead.Store(true)
	rot.failed(ctx, arm, reps[1], "", "x")
	if !rot.allOut(reps) {
		t.Error("with both replicas failing, the arm still has one in rotation")
	}
	devs.stop()
	if k := devs.acquire(ctx, "a", reps); k != -1 {
		t.Errorf("acquire after the run stopped gave %d, want -1", k)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) < 3 || events[0] != evalctl.EventReplicaOut || events[1] != evalctl.EventReplicaBack {
		t.Errorf("rotation events %v, want out, back, out...", events)
	}
}

// TestLastWriteIsTheRelease: an attempt found running at resume gets its
// transcript's last write as its endpoint release, when that is after its
// start; unknown (nil) otherwise.
func TestLastWriteIsTheRelease(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/transcript.jsonl"
	if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f, at, at); err != nil {
		t.Fatal(err)
	}
	before := at.Add(-time.Minute)
	if got := lastWrite(f, &before); got == nil || !got.Equal(at.UTC()) {
		t.Errorf("release %v, want the transcript's last write %v", got, at)
	}
	after := at.Add(time.Minute)
	if got := lastWrite(f, &after); got != nil {
		t.Errorf("release %v for a transcript not written since the start, want unknown", got)
	}
	if got := lastWrite(dir+"/none", &before); got != nil {
		t.Errorf("release %v without a transcript, want unknown", got)
	}
}
