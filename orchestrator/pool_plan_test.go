package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// poolPlan is goodPlan with arm a on a pool of the given replicas (YAML
// flow sequence) and endpoint fields.
func poolPlan(replicas, extra string) string {
	return strings.Replace(goodPlan, `endpoint: {base_url: "http://127.0.0.1:1", model: reference}`,
		`endpoint: {model: reference, replicas: `+replicas+extra+`}`, 1)
}

// TestEndpointPoolPlans: an arm may name replicas, each with its URL and
// device; a pool that also names the arm's own URL or device, a replica
// without a device or with a bad or repeated URL is refused with the field
// path; the replicas are not part of the pooling identity.
func TestEndpointPoolPlans(t *testing.T) {
	two := `[{base_url: "http://127.0.0.1:1", device: gpu0}, {base_url: "http://127.0.0.2:1", device: gpu1}]`
	p, _, err := LoadPlan(writePlan(t, poolPlan(two, ""), armB))
	if err != nil {
		t.Fatal(err)
	}
	a := p.Arm("a")
	if rs := a.Replicas(); len(rs) != 2 || rs[1].BaseURL != "http://127.0.0.2:1" || rs[1].Device != "gpu1" {
		t.Fatalf("replicas %+v", rs)
	}
	if rs := p.Arm("b").Replicas(); len(rs) != 1 || rs[0].BaseURL != "http://127.0.0.1:1" {
		t.Errorf("arm without a pool: %+v", rs)
	}
	moved := *a
	moved.Endpoint.Replicas = []Replica{{BaseURL: "http://10.0.0.9:1", Device: "x"}}
	if ArmIdentityOf(a, nil).SHA256 != ArmIdentityOf(&moved, nil).SHA256 {
		t.Error("the replicas' addresses changed the pooling identity")
	}
	for _, tt := range []struct {
		name, plan string
		want       []string
	}{
		{"own url too", strings.Replace(poolPlan(two, ""), "model: reference,", `base_url: "http://127.0.0.3:1", model: reference,`, 1), []string{"arms[0].endpoint.base_url", "replicas"}},
		{"own device too", poolPlan(two, ", device: gpu0"), []string{"arms[0].endpoint.device"}},
		{"replica without device", poolPlan(`[{base_url: "http://127.0.0.1:1"}]`, ""), []string{"arms[0].endpoint.replicas[0].device", "required"}},
		{"bad replica url", poolPlan(`[{base_url: "127.0.0.1:1", device: g}]`, ""), []string{"arms[0].endpoint.replicas[0].base_url", "http(s)"}},
		{"repeated url", poolPlan(`[{base_url: "http://h:1", device: g}, {base_url: "http://h:1", device: k}]`, ""), []string{"arms[0].endpoint.replicas[1].base_url", "replica 0 already"}},
		{"unknown replica field", poolPlan(`[{base_url: "http://h:1", devcie: g}]`, ""), []string{"devcie"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadPlan(writePlan(t, tt.plan, armB))
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a PlanError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestDevicePoolHandsOutFreeReplicas: an attempt gets a replica whose
// device has a free slot, never more than max per device, and waits while
// none is free until one is released.
func TestDevicePoolHandsOutFreeReplicas(t *testing.T) {
	p := newDevicePool(1)
	rs := []Replica{{BaseURL: "a", Device: "d0"}, {BaseURL: "b", Device: "d1"}}
	ctx := context.Background()
	i, j := p.acquire(ctx, "arm", rs), p.acquire(ctx, "arm", rs)
	if i == j || i < 0 || j < 0 {
		t.Fatalf("two acquires got replicas %d and %d", i, j)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if k := p.acquire(short, "arm", rs); k != -1 {
		t.Fatalf("a third acquire with both devices busy got %d", k)
	}
	got := make(chan int, 1)
	go func() { got <- p.acquire(ctx, "arm", rs) }()
	p.release(rs[j].Device)
	select {
	case k := <-got:
		if k != j {
			t.Errorf("got replica %d, want the freed %d", k, j)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a released slot was not handed to the waiting attempt")
	}
}
