package orchestrator

import (
	"context"
	"fmt"
	"sync"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// preparation is an attempt's start work that needs no device slot: what
// its endpoint says about itself, its agent container and the starter
// workspace copied in. The runner does it while the attempts before still
// generate, so that a device waits on none of it between one attempt's
// endpoint release and the next one's first request. None of it sends the
// model a request or moves the endpoint's /metrics counters (the identity
// reads /v1/models and /props), so what the attempt measures is unchanged.
type preparation struct {
	done chan struct{}
	once sync.Once
	r    *runner

	// Set by the work, read after done is closed.
	info *evalctl.EndpointInfo // nil until known (a pool's replica is picked with the slot)
	box  *boxEntry             // nil once the attempt took it
	err  error                 // an infrastructure failure of the attempt
	near string                // the device the container was placed near (a pool of engines)
	// class is what its sandbox place is for: ClassAhead before the
	// attempt holds its device, ClassAttempt once it does (prepareNow).
	class sandbox.Class
	// needed is closed when the attempt takes its device (need): a
	// container still waiting for a place then waits as ClassAttempt.
	needed   chan struct{}
	needOnce sync.Once
}

// need says the attempt holds its device now (a nil preparation has no
// work).
func (p *preparation) need() {
	if p != nil {
		p.needOnce.Do(func() { close(p.needed) })
	}
}

// prepare starts the attempt's start work in the background. The identity
// is read only when the arm has one endpoint that is already there (no
// pool, no server profile).
func (r *runner) prepare(ctx context.Context, a *evalctl.Attempt, arm *Arm) *preparation {
	p := &preparation{done: make(chan struct{}), r: r, class: sandbox.ClassAhead, needed: make(chan struct{})}
	baseURL := ""
	if len(arm.Endpoint.Replicas) == 0 && arm.Profile == "" {
		baseURL = arm.Endpoint.BaseURL
	}
	// The container goes near the arm's device when the arm has one (a
	// pool's replica, and so its device, is picked with the slot).
	if len(arm.Endpoint.Replicas) == 0 {
		p.near = arm.Endpoint.Device
	}
	go func() {
		defer close(p.done)
		p.run(ctx, a, arm, baseURL)
	}()
	return p
}

// prepareNow does the start work at once (baseURL "": no identity).
func (r *runner) prepareNow(ctx context.Context, a *evalctl.Attempt, arm *Arm, baseURL string) *preparation {
	p := &preparation{done: make(chan struct{}), r: r, class: sandbox.ClassAttempt, needed: make(chan struct{})}
	p.run(ctx, a, arm, baseURL)
	close(p.done)
	return p
}

func (p *preparation) run(ctx context.Context, a *evalctl.Attempt, arm *Arm, baseURL string) {
	if baseURL != "" {
		client := model.New(model.Config{BaseURL: baseURL, APIKey: apiKey(arm)})
		if p.info, p.err = identify(ctx, client, arm, baseURL); p.err != nil {
			return
		}
	}
	if p.near == "" {
		p.near = a.Device
	}
	c := p.r.suite.Case(a.Case)
	box, err := p.r.boxes.prepareBox(ctx, a.ID, p.near, p.r.agentImageKey(arm), p.class, p.needed, func(box agentBox) error {
		starter, err := sandbox.DirEntries(c.WorkspaceDir, tasks.Ignored)
		if err == nil {
			err = box.CopyIn(ctx, "/workspace", starter)
		}
		if err != nil {
			return p.r.agentEngineLost(ctx, box, fmt.Errorf("copy the starter workspace in: %w", err))
		}
		return nil
	})
	p.box, p.err = box, err
}

// identify reads what the endpoint says about itself; an endpoint that does
// not answer before any token is an infrastructure failure, never a model
// failure.
func identify(ctx context.Context, client *model.Client, arm *Arm, baseURL string) (*evalctl.EndpointInfo, error) {
	info, err := client.Endpoint(ctx, arm.Endpoint.Model)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s unreachable before the attempt: %w", baseURL, err)
	}
	return info, nil
}

// wait returns once the work is done; a nil preparation has none.
func (p *preparation) wait() {
	if p != nil {
		<-p.done
	}
}

// discard waits for the work and gives back a container no attempt took.
func (p *preparation) discard() {
	if p == nil {
		return
	}
	p.wait()
	p.once.Do(func() {
		if p.box != nil {
			p.r.boxes.release(p.box, p.near)
			p.box = nil
		}
	})
}
