package orchestrator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/evalctl/evalctl"
)

// validateReplicas checks an arm's endpoint pool: every replica has an
// http(s) URL and a device label, no URL twice, and the arm names no
// base_url, device or profile of its own.
func validateReplicas(a Arm) *armErr {
	rs := a.Endpoint.Replicas
	if len(rs) == 0 {
		return nil
	}
	switch {
	case a.Endpoint.BaseURL != "":
		return &armErr{"endpoint.base_url", "an arm with replicas takes its URLs from them; leave base_url out"}
	case a.Endpoint.Device != "":
		return &armErr{"endpoint.device", "an arm with replicas takes its devices from them; give each replica its device"}
	case a.Profile != "":
		return &armErr{"profile", "an arm that starts its own server cannot have replicas"}
	}
	seen := map[string]int{}
	for i, r := range rs {
		f := fmt.Sprintf("endpoint.replicas[%d]", i)
		if r.BaseURL == "" {
			return &armErr{f + ".base_url", "is required"}
		}
		if !strings.HasPrefix(r.BaseURL, "http://") && !strings.HasPrefix(r.BaseURL, "https://") {
			return &armErr{f + ".base_url", fmt.Sprintf("%q is not an http(s) URL", r.BaseURL)}
		}
		if r.Device == "" {
			return &armErr{f + ".device", "is required: the machine the replica runs on"}
		}
		if j, ok := seen[r.BaseURL]; ok {
			return &armErr{f + ".base_url", fmt.Sprintf("%q is replica %d already", r.BaseURL, j)}
		}
		seen[r.BaseURL] = i
	}
	return nil
}

// devicePool counts the attempts in flight per device label, at most max
// on each, and hands an attempt whichever of its replicas' devices is free.
type devicePool struct {
	mu      sync.Mutex
	max     int
	used    map[string]int
	next    map[string]int // per arm, the replica to try first (round robin)
	changed chan struct{}
	// rot, when set, keeps replicas out of rotation (see rotation);
	// stopped ends every wait (the run stops).
	rot     *rotation
	stopped bool
}

func newDevicePool(max int) *devicePool {
	return &devicePool{max: max, used: map[string]int{}, next: map[string]int{}, changed: make(chan struct{})}
}

// acquire waits until one of the arm's replicas in rotation has a free
// slot on its device, takes it and returns its index; -1 when ctx ends or
// the run stops first.
func (p *devicePool) acquire(ctx context.Context, arm string, rs []Replica) int {
	for {
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return -1
		}
		start := p.next[arm]
		for j := range rs {
			i := (start + j) % len(rs)
			if len(rs) > 1 && p.rot.isOut(rs[i].BaseURL) {
				continue
			}
			if p.used[rs[i].Device] < p.max {
				p.used[rs[i].Device]++
				p.next[arm] = (i + 1) % len(rs)
				p.mu.Unlock()
				return i
			}
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return -1
		}
	}
}

// describe says how the device slots are used, for the watchdog.
func (p *devicePool) describe() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var devs []string
	for d, n := range p.used {
		name := d
		if name == "" {
			name = "(no device label)"
		}
		devs = append(devs, fmt.Sprintf("%s %d of %d", name, n, p.max))
	}
	sort.Strings(devs)
	return "attempts in flight per device: " + strings.Join(devs, ", ")
}

// release frees a slot on device and wakes the attempts waiting.
func (p *devicePool) release(device string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used[device]--
	p.wakeLocked()
}

// wake wakes the attempts waiting (a replica came back in rotation).
func (p *devicePool) wake() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wakeLocked()
}

// stop ends every wait: the run stops.
func (p *devicePool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.wakeLocked()
}

func (p *devicePool) wakeLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// replicaFields is what a replica's endpoint said that changes how the arm
// behaves: its build, model file and type, chat template and default
// generation settings (sampling defaults, context size, speculative
// settings) from /props, and the models it serves. Where it listens, and
// what changes while it runs (is_sleeping, slots), are left out.
func replicaFields(info *evalctl.EndpointInfo) map[string]string {
	out := map[string]string{}
	if info == nil {
		return out
	}
	if info.Props != nil {
		for _, k := range []string{"build_info", "model_path", "model_ftype", "chat_template", "total_slots", "bos_token", "eos_token"} {
			if v, ok := info.Props[k]; ok {
				flattenJSON(out, "props."+k, v)
			}
		}
		if v, ok := info.Props["default_generation_settings"]; ok {
			flattenJSON(out, "props.default_generation_settings", v)
		}
	}
	out["models"] = strings.Join(ServedModels(info.Models), ", ")
	return out
}

// replicaDifference names, in words, what differs between two replicas'
// fields ("" when nothing does).
func replicaDifference(a, b map[string]string) string {
	var keys []string
	for k := range a {
		if a[k] != b[k] {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %s vs %s", k, shorten(a[k]), shorten(b[k])))
	}
	return strings.Join(parts, "; ")
}

func shorten(s string) string {
	if s == "" {
		return "(absent)"
	}
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
