package orchestrator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/results/runstore"
)

// rotation keeps the replicas of endpoint pools that are out of rotation:
// a replica whose attempt ended as an infrastructure failure is probed
// (its health path) at once and taken out when the probe fails, or
// outright when the circuit breaker tripped on it; it is probed again with
// backoff (1 s doubling to 30 s) and comes back once a probe passes. The
// device pool hands attempts only replicas in rotation, so the run goes on
// on the healthy ones and stops only when none of an arm is left.
type rotation struct {
	mu  sync.Mutex
	out map[string]bool // replica base URL -> out of rotation
	// probe checks a replica's health; wake tells the device pool.
	probe func(ctx context.Context, arm *Arm, url string) error
	wake  func()
	log   func(kind evalctl.EventKind, detail string)
	first time.Duration // the first backoff
	max   time.Duration
}

func newRotation(wake func(), log func(evalctl.EventKind, string)) *rotation {
	return &rotation{out: map[string]bool{}, probe: probeHealth, wake: wake, log: log, first: time.Second, max: 30 * time.Second}
}

// probeHealth asks the replica's health path (5 s at most).
func probeHealth(ctx context.Context, arm *Arm, url string) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return model.New(model.Config{BaseURL: url, APIKey: apiKey(arm)}).Health(pctx)
}

// isOut says whether the replica at url is out of rotation.
func (r *rotation) isOut(url string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out[url]
}

// allOut says whether no replica of rs is in rotation.
func (r *rotation) allOut(rs []Replica) bool {
	for _, rep := range rs {
		if !r.isOut(rep.BaseURL) {
			return false
		}
	}
	return true
}

// failed handles an infrastructure failure on the replica: out of rotation
// when tripped (the breaker) or when a probe now fails, then probed with
// backoff until it passes.
func (r *rotation) failed(ctx context.Context, arm *Arm, rep Replica, tripped, why string) {
	cause := tripped
	if cause == "" {
		err := r.probe(ctx, arm, rep.BaseURL)
		if err == nil {
			return
		}
		cause = fmt.Sprintf("after %s, its health probe failed: %v", why, err)
	}
	r.mu.Lock()
	if r.out[rep.BaseURL] {
		r.mu.Unlock()
		return
	}
	r.out[rep.BaseURL] = true
	r.mu.Unlock()
	r.log(evalctl.EventReplicaOut, fmt.Sprintf("replica %s of arm %s out of rotation: %s", rep.BaseURL, arm.Name, cause))
	go r.reprobe(ctx, arm, rep)
}

// reprobe probes an out replica with backoff until a probe passes (or ctx
// ends) and puts it back.
func (r *rotation) reprobe(ctx context.Context, arm *Arm, rep Replica) {
	wait := r.first
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err := r.probe(ctx, arm, rep.BaseURL); err == nil {
			break
		}
		wait = min(2*wait, r.max)
	}
	r.mu.Lock()
	delete(r.out, rep.BaseURL)
	r.mu.Unlock()
	r.log(evalctl.EventReplicaBack, fmt.Sprintf("replica %s of arm %s back in rotation: its health probe passed", rep.BaseURL, arm.Name))
	r.wake()
}

// logEvent writes a rotation event to the run's log.
func (rn *runner) logEvent(kind evalctl.EventKind, detail string) {
	rn.store.Log(runstore.Event{Kind: kind, Detail: detail})
}
