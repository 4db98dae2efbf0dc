package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// hostsPlanFile writes a plan of two arms (the reference and a control)
// on a pool of two scripted replicas (devices m1, m2) over the fixture's
// Python case x 2 repeats, 4 attempts, two in flight; hosts, when set, is its
// sandbox_hosts block.
func hostsPlanFile(t *testing.T, r0, r1, hosts string) string {
	t.Helper()
	suite, _ := filepath.Abs(fixtureSuite)
	reps := fmt.Sprintf(`[{base_url: "%s", device: m1}, {base_url: "%s", device: m2}]`, r0, r1)
	p := fmt.Sprintf("suite: %s\ncases: [adder]\nrepeats: [{label: r1, seed: 1}, {label: r2, seed: 2}]\narms:\n"+
		"  - {name: ref, endpoint: {model: reference, replicas: %s}, max_tokens: 8192}\n"+
		"  - {name: ctl, endpoint: {model: \"control:negative-zero\", replicas: %s}, max_tokens: 8192}\n%s", suite, reps, reps, hosts)
	f := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// outcomes maps each slot (arm case repeat) of a run to what it came to:
// the state of its latest attempt and each phase's verdict and groups.
func outcomes(t *testing.T, dir string) (map[string]string, map[string][]*evalctl.Attempt, []*evalctl.Grade) {
	t.Helper()
	st, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	bySlot := map[string][]*evalctl.Attempt{}
	for _, a := range all {
		k := a.Arm + " " + a.Case + " " + a.Repeat
		bySlot[k] = append(bySlot[k], a)
	}
	out := map[string]string{}
	var grades []*evalctl.Grade
	for k, as := range bySlot {
		sort.Slice(as, func(i, j int) bool { return as[i].ID < as[j].ID })
		last := as[len(as)-1]
		desc := string(last.State)
		gs, err := st.Grades(last, last.Suite.Name+"@"+last.Suite.Version)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			if g == nil {
				desc += " | ungraded phase"
				continue
			}
			grades = append(grades, g)
			desc += fmt.Sprintf(" | phase %d solved=%v", g.Phase, g.Solved)
			for _, gr := range g.Groups {
				desc += fmt.Sprintf(" %s=%v", gr.Name, gr.Success)
			}
		}
		out[k] = desc
	}
	return out, bySlot, grades
}

// syncWriter is a strings.Builder safe for the run's concurrent writers.
type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func twoEngineHosts(remote *sandboxtest.ExtraEngine) string {
	// Room for an attempt's agent, spares, both grades and containers being removed on each
	// engine, so that placement near the endpoint is always possible.
	return fmt.Sprintf("sandbox_hosts:\n  - {name: here, capacity: 8, machine: m1}\n  - {name: there, host: %q, tls_dir: %q, capacity: 8, machine: m2}\n", remote.Host, remote.TLSDir)
}

// TestCohortOnTwoEnginesMatchesOne: the same cohort on one engine and on
// two (a remote over TLS), with two scripted endpoints, comes to the same
// outcomes; the pool's attempts and grades name the engine they ran on,
// both engines are used, and agent containers go to their endpoint's
// machine.
func TestCohortOnTwoEnginesMatchesOne(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	r0, r1 := startScripted(t, scripted.Config{}), startScripted(t, scripted.Config{})
	one, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, hostsPlanFile(t, r0.URL(), r1.URL(), "")), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	remote := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{TLS: true})
	two, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, hostsPlanFile(t, r0.URL(), r1.URL(), twoEngineHosts(remote))), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := outcomes(t, one.Dir)
	got, bySlot, grades := outcomes(t, two.Dir)
	if len(want) != 4 {
		t.Fatalf("one engine: %d slots, want 4", len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: two engines %q, one engine %q", k, got[k], w)
		}
	}
	engines := map[string]int{}
	for _, as := range bySlot {
		for _, a := range as {
			engines[a.SandboxEngine]++
			if want := map[string]string{"m1": "here", "m2": "there"}[a.Device]; a.SandboxEngine != want {
				t.Errorf("attempt %s on device %s: agent container on %q, want %q (its endpoint's machine)", a.ID, a.Device, a.SandboxEngine, want)
			}
		}
	}
	if engines["here"] == 0 || engines["there"] == 0 {
		t.Errorf("agent containers per engine %v: want both engines used", engines)
	}
	for _, g := range grades {
		if g.Engine != "here" && g.Engine != "there" {
			t.Errorf("grade of %s phase %d names engine %q", g.Case, g.Phase, g.Engine)
		}
		if g.ImageID != img.ID {
			t.Errorf("grade image %s, want %s", g.ImageID, img.ID)
		}
	}
}

// TestKillingAnEngineMidRunLosesNoAttempt: the remote engine's dockerd is
// killed (SIGKILL) while its containers are in use. The run goes on on the
// local engine and says so; every planned slot ends completed or as an
// infrastructure failure naming the lost engine, none left running or
// lost; a resume with --replace-infra on the engine left completes the
// cohort with the outcomes of a one-engine run, no slot completed twice.
func TestKillingAnEngineMidRunLosesNoAttempt(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	r0, r1 := startScripted(t, scripted.Config{}), startScripted(t, scripted.Config{})
	one, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, hostsPlanFile(t, r0.URL(), r1.URL(), "")), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := outcomes(t, one.Dir)

	// The remote engine dies while an attempt on device m2 (whose agent
	// container is on that engine) is in its tool loop: at the third chat
	// request its replica receives (the preflight's, then the attempt's
	// first two).
	remote := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{TLS: true})
	var chats atomic.Int32
	killing := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/chat/completions") && chats.Add(1) == 3 {
			remote.Kill()
		}
		r1.ServeHTTP(w, req)
	})
	dying := httptest.NewServer(killing)
	t.Cleanup(dying.Close)
	progress := &syncWriter{b: &strings.Builder{}}
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, hostsPlanFile(t, r0.URL(), dying.URL, twoEngineHosts(remote))), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2, Progress: progress})
	if err != nil && !errors.Is(err, orchestrator.ErrIncomplete) {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(progress.String(), "sandbox engine there stopped answering") {
		t.Errorf("the run did not say it lost the engine:\n%s", progress.String())
	}
	got, bySlot, _ := outcomes(t, res.Dir)
	if len(got) != 4 {
		t.Fatalf("%d slots accounted for, want 4", len(got))
	}
	infra := 0
	for k, as := range bySlot {
		if len(as) != 1 {
			t.Errorf("%s: %d attempts before any replacement", k, len(as))
		}
		switch a := as[0]; a.State {
		case evalctl.Completed:
		case evalctl.InfraFailed:
			infra++
			if !strings.Contains(a.Error, "there") {
				t.Errorf("%s: infra failure %q does not name the lost engine", k, a.Error)
			}
		default:
			t.Errorf("%s: state %s, want completed or infra_failed", k, a.State)
		}
	}
	st, err := runstore.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	events, err := st.Events()
	if err != nil {
		t.Fatal(err)
	}
	drained := 0
	for _, e := range events {
		if e.Kind == "engine_drained" && strings.Contains(e.Detail, "there") {
			drained++
		}
	}
	if drained != 1 {
		t.Errorf("%d engine_drained events for the lost engine, want 1", drained)
	}
	if chats.Load() < 3 {
		t.Fatalf("the replica on m2 saw %d chat requests: the engine was never killed", chats.Load())
	}
	if infra == 0 {
		t.Error("no attempt in flight on the lost engine became an infrastructure failure")
	}

	// Resume on the engine left, replacing what the loss cost.
	_, err = orchestrator.Run(context.Background(), orchestrator.Options{ResumeDir: res.Dir, ReplaceInfra: true, Engine: eng, Image: img, GradeConcurrency: 2,
		SandboxHosts: []orchestrator.SandboxHost{{Name: "here", Capacity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	got, bySlot, _ = outcomes(t, res.Dir)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: after the loss and resume %q, one engine %q", k, got[k], w)
		}
		completed := 0
		for _, a := range bySlot[k] {
			if a.State == evalctl.Completed {
				completed++
			}
		}
		if completed != 1 {
			t.Errorf("%s: %d completed attempts, want exactly 1", k, completed)
		}
	}
}

// TestCapacityTwoCohortNeverHangs is the reported hang: on one engine with
// capacity 2 and no failure at all, a 16-attempt cohort (two in flight,
// two grades at once) stopped after 3 attempts with both places held by
// unused spares. Every attempt now completes; were the run stuck, the
// watchdog would stop it (ErrStalled) instead of hanging the test.
func TestCapacityTwoCohortNeverHangs(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	srv := startScripted(t, scripted.Config{})
	repeats := ""
	for i := range 16 {
		repeats += fmt.Sprintf("{label: r%d, seed: %d}, ", i+1, i+1)
	}
	suite, _ := filepath.Abs(fixtureSuite)
	p := fmt.Sprintf("suite: %s\ncases: [adder]\nrepeats: [%s]\nconcurrency: 2\narms:\n  - {name: ref, endpoint: {model: reference, base_url: %q}, max_tokens: 8192}\nsandbox_hosts:\n  - {name: here, capacity: 2}\n", suite, strings.TrimSuffix(repeats, ", "), srv.URL())
	f := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2, StallAfter: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	states := map[evalctl.State]int{}
	for _, a := range res.Attempts {
		states[a.State]++
	}
	if states[evalctl.Completed] != 16 || len(res.Attempts) != 16 {
		t.Fatalf("attempts by state %v, want 16 completed", states)
	}
}
