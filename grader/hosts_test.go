package grader_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestCasesCheckOnTwoEnginesMatchesOne: the gate (cases check) of the
// fixture's Python case on a pool of the local engine and a remote one over
// TLS gives every variant the verdict and groups it gets on one engine, and
// the pool's grades name both engines.
func TestCasesCheckOnTwoEnginesMatchesOne(t *testing.T) {
	s, _ := setup(t)
	eng, img := sandboxtest.Engine(t)
	remote := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{TLS: true}).Connect(t, "there")
	pool, err := sandbox.NewHosts([]sandbox.Host{{Engine: eng, Capacity: 1}, {Engine: remote, Capacity: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool.UseImage(img)
	adder := s.Cases[:1]
	check := func(e grader.Engine) (map[string]string, map[string]int) {
		run := fmt.Sprintf("test-gate-hosts-%d", time.Now().UnixNano())
		t.Cleanup(func() { eng.Prune(context.Background(), map[string]string{sandbox.LabelRun: run}) })
		g := grader.New(e, img.Ref, img.ID, grader.Options{Concurrency: 2})
		results, err := g.CheckCasesWith(context.Background(), s, adder, grader.CheckOptions{Run: run})
		if err != nil {
			t.Fatal(err)
		}
		verdicts, engines := map[string]string{}, map[string]int{}
		for _, r := range results {
			v := fmt.Sprintf("met=%v", r.Met)
			if r.Grade != nil {
				v += fmt.Sprintf(" solved=%v", r.Grade.Solved)
				for _, grp := range r.Grade.Groups {
					v += fmt.Sprintf(" %s=%v/%d/%d", grp.Name, grp.Success, grp.Passed, grp.Failed)
				}
				engines[r.Grade.Engine]++
			}
			verdicts[fmt.Sprintf("%s phase %d %s", r.Case, r.Phase, r.Variant)] = v
		}
		return verdicts, engines
	}
	one, _ := check(eng)
	two, engines := check(pool)
	if len(one) < 2 {
		t.Fatalf("one engine checked %d variants", len(one))
	}
	for k, v := range one {
		if two[k] != v {
			t.Errorf("%s: two engines %q, one engine %q", k, two[k], v)
		}
	}
	if len(two) != len(one) {
		t.Errorf("%d variants on two engines, %d on one", len(two), len(one))
	}
	if engines[eng.Name()] == 0 || engines["there"] == 0 {
		t.Errorf("grades per engine %v: want both engines used", engines)
	}
}
