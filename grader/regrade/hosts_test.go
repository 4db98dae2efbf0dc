package regrade_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestRegradeOnTwoEnginesMatchesOne: the fixture run regraded by the real
// grader on one engine and on a pool of two (a remote over TLS) gets the
// same grades, and the pool's grades name both engines.
func TestRegradeOnTwoEnginesMatchesOne(t *testing.T) {
	_, s2, _ := suites(t)
	eng, img := sandboxtest.Engine(t)
	remote := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{TLS: true}).Connect(t, "there")
	pool, err := sandbox.NewHosts([]sandbox.Host{{Engine: eng, Capacity: 1}, {Engine: remote, Capacity: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool.UseImage(img)
	regradeWith := func(g *grader.Grader) (map[string]string, map[string]int) {
		dir := fixtureRun(t)
		res, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s2, Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		st, err := runstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		as, err := st.Attempts()
		if err != nil {
			t.Fatal(err)
		}
		verdicts, engines := map[string]string{}, map[string]int{}
		for _, a := range as {
			gs, err := st.Grades(a, s2.ID())
			if err != nil {
				t.Fatal(err)
			}
			for _, gr := range gs {
				if gr == nil {
					continue
				}
				v := fmt.Sprintf("solved=%v", gr.Solved)
				for _, grp := range gr.Groups {
					v += fmt.Sprintf(" %s=%v/%d/%d", grp.Name, grp.Success, grp.Passed, grp.Failed)
				}
				verdicts[fmt.Sprintf("%s phase %d", a.ID, gr.Phase)] = v
				engines[gr.Engine]++
			}
		}
		return verdicts, engines
	}
	one, _ := regradeWith(grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 2}))
	two, engines := regradeWith(grader.New(pool, img.Ref, img.ID, grader.Options{Concurrency: 2}))
	if len(one) == 0 {
		t.Fatal("the one-engine regrade graded nothing")
	}
	for k, v := range one {
		if two[k] != v {
			t.Errorf("%s: two engines %q, one engine %q", k, two[k], v)
		}
	}
	if len(two) != len(one) {
		t.Errorf("%d grades on two engines, %d on one", len(two), len(one))
	}
	if engines[eng.Name()] == 0 || engines["there"] == 0 {
		t.Errorf("grades per engine %v: want both engines used", engines)
	}
}
