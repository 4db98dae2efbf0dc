package orchestrator

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// Check does what registration does before it writes anything (check
// every endpoint of the resolved plan) and prints the realised attempt
// order and count, without running or registering anything.
func Check(ctx context.Context, plan *Plan, suite *tasks.Suite, w io.Writer) (*Plan, error) {
	if _, err := Preflight(ctx, plan, w); err != nil {
		return nil, err
	}
	for _, a := range plan.Arms {
		if a.Profile != "" {
			fmt.Fprintf(w, "preflight: arm %s: its server (profile %s) is checked when the run starts it\n", a.Name, a.Profile)
		}
	}
	fmt.Fprintf(w, "plan %s: suite %s, %d attempts = %d arms x %d cases x %d repeats, order %s (seed %d), concurrency %d per device\n",
		plan.Name, suite.ID(), len(plan.Slots), len(plan.Arms), len(plan.Cases), len(plan.Repeats), plan.Order.Policy, plan.Order.Seed, plan.Concurrency)
	devices := map[string][]string{}
	var order []string
	for _, a := range plan.Arms {
		for _, r := range a.Replicas() {
			d := r.Device
			if _, ok := devices[d]; !ok {
				order = append(order, d)
			}
			devices[d] = append(devices[d], a.Name)
		}
	}
	for _, d := range order {
		label := d
		if label == "" {
			label = "(no device label: shared)"
		}
		fmt.Fprintf(w, "device %s: arms %v run at most %d attempt(s) at a time\n", label, devices[d], plan.Concurrency)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "slot\tarm\tcase\trepeat\tseed")
	for _, s := range plan.Slots {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\n", s.Index, s.Arm, s.Case, s.Repeat, s.Seed)
	}
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	_, err := fmt.Fprintf(w, "status: %s: the plan, the suite and every endpoint checked; no inference ran, nothing was registered\n", evalctl.ConfigOnly)
	return plan, err
}
