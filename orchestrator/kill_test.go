package orchestrator_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// buildEvalctl builds the real binary for tests that kill it.
func buildEvalctl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "evalctl")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/evalctl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build evalctl: %v\n%s", err, out)
	}
	return bin
}

// events returns the kinds in the run's event log.
func events(dir string) []string {
	f, err := os.Open(filepath.Join(dir, runstore.EventsFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	var kinds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, `"kind":"`); i >= 0 {
			k := line[i+8:]
			kinds = append(kinds, k[:strings.Index(k, `"`)])
		}
	}
	return kinds
}

func count(kinds []string, k string) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

// toolRan reports whether the agent of some attempt of the run has run a
// tool: the attempt is under way, with a container to clean up.
func toolRan(dir string) bool {
	ts, _ := filepath.Glob(filepath.Join(dir, "attempts", "*", runstore.TranscriptFile))
	for _, f := range ts {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), `"kind":"tool"`) {
			return true
		}
	}
	return false
}

// grading returns the attempts that have their snapshot but no grade yet.
func grading(dir string) map[string]bool {
	out := map[string]bool{}
	snaps, _ := filepath.Glob(filepath.Join(dir, "attempts", "*", "phase-1.tar"))
	for _, s := range snaps {
		if _, err := os.Stat(filepath.Join(filepath.Dir(s), runstore.GradesDir)); os.IsNotExist(err) {
			out[filepath.Base(filepath.Dir(s))] = true
		}
	}
	return out
}

// TestKillNineAndResume really kills a running evalctl at several points —
// mid-attempt, right after a record was written, and during grading — and
// resumes until the run is done: exactly the planned attempts complete,
// none repeated, all graded, nothing lost.
func TestKillNineAndResume(t *testing.T) {
	sandboxtest.Long(t)
	eng, _ := sandboxtest.Engine(t)
	bin := buildEvalctl(t)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.New(scripted.Config{Suite: s, Realtime: true, DecodeTPS: 400})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := t.TempDir()
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	waitFor := func(what string, cond func() bool, cmd *exec.Cmd) {
		if !poll.ForTest(t, cond) {
			cmd.Process.Kill()
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	var dir string
	removeRunContainers(t, eng, func() string { return dir })
	runDir := func() bool {
		m, _ := filepath.Glob(filepath.Join(out, "*", runstore.RunFile))
		if len(m) == 1 {
			dir = filepath.Dir(m[0])
		}
		return dir != ""
	}
	kill := func(cmd *exec.Cmd) {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	// 1: mid-attempt (the agent is working).
	cmd := start("run", "--plan", pyPlan(t, srv.URL(), ""), "--out", out)
	waitFor("the agent to run a tool in the first attempt", func() bool { return runDir() && count(events(dir), "start") >= 1 && toolRan(dir) }, cmd)
	kill(cmd)
	// 2: right after an attempt was recorded as completed.
	cmd = start("run", "--resume", dir)
	waitFor("an attempt to complete", func() bool { return count(events(dir), "completed") >= 1 }, cmd)
	kill(cmd)
	// 3: during grading, of an attempt this runner ran (not one an earlier
	// kill left with a snapshot and no grade).
	before := grading(dir)
	cmd = start("run", "--resume", dir)
	waitFor("grading", func() bool {
		for id := range grading(dir) {
			if !before[id] {
				return true
			}
		}
		return false
	}, cmd)
	kill(cmd)
	// Finally, run to the end.
	cmd = exec.Command(bin, "run", "--resume", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("final resume: %v\n%s", err, out)
	}

	store, _ := runstore.Open(dir)
	all, err := store.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	completed := map[int]int{}
	replaced := map[string]bool{}
	for _, a := range all {
		if ids[a.ID] {
			t.Errorf("duplicate id %s", a.ID)
		}
		ids[a.ID] = true
		if a.ReplacementOf != "" {
			replaced[a.ReplacementOf] = true
		}
		switch a.State {
		case evalctl.Completed:
			completed[a.Slot]++
			grades, err := store.Grades(a, "graderfixture@0.1.0")
			if err != nil || len(grades) != 1 || grades[0] == nil {
				t.Errorf("completed attempt %s not graded: %v %v", a.ID, grades, err)
			}
		case evalctl.Interrupted:
		default:
			t.Errorf("attempt %s left in state %s", a.ID, a.State)
		}
	}
	for slot := 0; slot < 8; slot++ {
		if completed[slot] != 1 {
			t.Errorf("slot %d completed %d times, want exactly once", slot, completed[slot])
		}
	}
	for _, a := range all {
		if a.State == evalctl.Interrupted && !replaced[a.ID] {
			t.Errorf("interrupted attempt %s has no replacement", a.ID)
		}
	}
	if n := count(events(dir), "interrupted"); n < 2 {
		t.Errorf("%d interrupted attempts recorded, want at least 2 (mid-attempt and mid-grading kills)", n)
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: runLabel(t, dir)}); len(left) != 0 {
		t.Errorf("containers left after the final resume: %v", left)
	}
}

// profileRun runs, through real server processes started from a profile
// with the given restart policy, the adder case x 2 repeats under two arms
// sharing that profile (the scripted models given), and returns the result.
func profileRun(t *testing.T, eng *sandbox.Engine, img *sandbox.BuiltImage, bin, restart, modelA, modelB string) *orchestrator.Result {
	t.Helper()
	suite, _ := filepath.Abs(fixtureSuite)
	dir := t.TempDir()
	profile := `name: scripted
command: ["{{evalctl}}", serve-model, --addr, "{{host}}:{{port}}", --suite, "` + suite + `", --decode-tps, "120"]
ctx_size: 32768
startup_timeout: 60s
hash_files: [weights.bin]
restart: ` + restart + `
`
	os.WriteFile(filepath.Join(dir, "scripted.yaml"), []byte(profile), 0o644)
	os.WriteFile(filepath.Join(dir, "weights.bin"), []byte("the scripted model's weights"), 0o644)
	plan := `suite: ` + suite + `
cases: [adder]
repeats: [{label: r1, seed: 1}, {label: r2, seed: 2}]
arms:
  - {name: a, profile: scripted.yaml, endpoint: {model: ` + modelA + `}}
  - {name: b, profile: scripted.yaml, endpoint: {model: ` + modelB + `}}
`
	os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644)
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{
		Plan: loadPlan(t, filepath.Join(dir, "plan.yaml")), OutDir: filepath.Join(dir, "runs"), Engine: eng, Image: img, Evalctl: bin,
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// noServerLeft fails the test if a serve-model process of bin survives.
func noServerLeft(t *testing.T, bin string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), bin) && strings.Contains(string(data), "serve-model") {
			t.Errorf("server process left: %s", strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
}

// TestArmsStartTheirServerFromProfiles runs arms that name a server
// profile: evalctl starts the scripted server as a real process per arm
// (restart per_arm), records the attempts, and leaves no process behind.
func TestArmsStartTheirServerFromProfiles(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	bin := buildEvalctl(t)
	res := profileRun(t, eng, img, bin, "per_arm", "reference", "noop")
	for _, a := range res.Attempts {
		if a.State != evalctl.Completed || a.Endpoint == nil || a.Endpoint.Props == nil {
			t.Errorf("%s %s: state %s endpoint %+v", a.Arm, a.Repeat, a.State, a.Endpoint)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(res.Dir, "servers", "*.log"))
	if len(logs) < 2 {
		t.Errorf("server logs %v: want a server per arm switch", logs)
	}
	// Each attempt names the identity of the server start it ran under:
	// its command line and what /props said.
	for _, a := range res.Attempts {
		var id serving.Identity
		if a.Server == "" {
			t.Errorf("%s %s: no server identity recorded", a.Arm, a.Repeat)
			continue
		}
		if err := runstore.ReadJSON(filepath.Join(res.Dir, a.Server), &id); err != nil {
			t.Errorf("%s: %v", a.Server, err)
			continue
		}
		if id.Profile != "scripted" || len(id.Argv) == 0 || id.PID == 0 || id.BuildInfo == nil || id.ContextSize == nil {
			t.Errorf("%s: identity %+v lacks the command line or /props", a.Server, id)
		}
	}
	// The arms' pooling identity holds the profile's command line and the
	// weights' digest, not where the server listened.
	st, _ := runstore.Open(res.Dir)
	run, err := st.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range []string{"a", "b"} {
		id := run.ArmIdentities[arm]
		if id == nil || id.Fields["weights.weights.bin"] == "" || !strings.Contains(id.Fields["profile.command"], "serve-model") {
			t.Errorf("arm %s: identity %+v lacks the weights' digest or the command line", arm, id)
		}
	}
	// No scripted server process survives the run.
	noServerLeft(t, bin)
}

// TestCtrlCRecordsInterruptedAndRemovesContainers sends SIGINT to a running
// evalctl run: the attempt in flight is recorded as interrupted, its
// containers are removed, and the process exits 1 saying how to resume.
func TestCtrlCRecordsInterruptedAndRemovesContainers(t *testing.T) {
	eng, _ := sandboxtest.Engine(t)
	bin := buildEvalctl(t)
	s, err := tasks.LoadSuite(fixtureSuite)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.New(scripted.Config{Suite: s, Realtime: true, DecodeTPS: 100})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer srv.Close()
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--plan", pyPlan(t, srv.URL(), ""), "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	removeRunContainers(t, eng, func() string { return dir })
	if !poll.ForTest(t, func() bool {
		m, _ := filepath.Glob(filepath.Join(out, "*", runstore.EventsFile))
		if len(m) == 1 && count(events(filepath.Dir(m[0])), "start") >= 1 && toolRan(filepath.Dir(m[0])) {
			dir = filepath.Dir(m[0])
			return true
		}
		return false
	}) {
		cmd.Process.Kill()
		t.Fatal("no attempt started")
	}
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(stderr.String(), "--resume") {
		t.Errorf("exit %v, stderr %q; want exit 3 (stopped, resumable) naming --resume", err, stderr.String())
	}
	store, _ := runstore.Open(dir)
	all, _ := store.Attempts()
	n := countStates(all)
	if n[evalctl.Interrupted] != 1 || n[evalctl.Running] != 0 {
		t.Errorf("states %v, want exactly one interrupted and none running", n)
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: runLabel(t, dir)}); len(left) != 0 {
		t.Errorf("containers left after Ctrl-C: %v", left)
	}
}

// TestRestartPolicies: a profile's restart policy decides how many server
// starts a cohort makes: never (one server for both arms sharing the
// profile), per_attempt (one per attempt). Every attempt names the identity
// of the start it ran under, and no server process survives.
func TestRestartPolicies(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	bin := buildEvalctl(t)
	for _, tt := range []struct {
		policy string
		starts int
	}{{"never", 1}, {"per_attempt", 4}} {
		t.Run(tt.policy, func(t *testing.T) {
			res := profileRun(t, eng, img, bin, tt.policy, "noop", "noop")
			logs, _ := filepath.Glob(filepath.Join(res.Dir, "servers", "*.log"))
			if len(logs) != tt.starts {
				t.Errorf("%d server starts (%v), want %d", len(logs), logs, tt.starts)
			}
			identities := map[string]bool{}
			for _, a := range res.Attempts {
				if a.State != evalctl.Completed || a.Server == "" {
					t.Errorf("%s %s: state %s, server %q", a.Arm, a.Repeat, a.State, a.Server)
				}
				identities[a.Server] = true
			}
			if len(identities) != tt.starts {
				t.Errorf("attempts name %d server identities, want %d", len(identities), tt.starts)
			}
			noServerLeft(t, bin)
		})
	}
}
