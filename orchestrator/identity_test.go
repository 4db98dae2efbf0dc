package orchestrator_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestPoolingIdentity: two runs of one arm whose only difference is the
// server's port pool; a run whose sampling differs does not, and the
// refusal names the field and both values, run by run.
func TestPoolingIdentity(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	srvA, srvB := startServer(t), startServer(t)
	run := func(url, extra string) string {
		t.Helper()
		f := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "` + url + `", model: reference}` + extra + `}`}, "")
		res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
		if err != nil {
			t.Fatal(err)
		}
		return res.Dir
	}
	portA, portB, hot := run(srvA.URL(), ""), run(srvB.URL(), ""), run(srvA.URL(), ", sampling: {temperature: 0.7}")
	load := func(dirs ...string) (*report.Report, error) {
		in, err := report.Load(context.Background(), dirs, "")
		if err != nil {
			t.Fatal(err)
		}
		return report.Build(in, report.Options{})
	}
	rep, err := load(portA, portB)
	if err != nil {
		t.Fatalf("runs differing only in port: %v, want pooled", err)
	}
	if a := rep.Arm("good"); a == nil || a.Scored != 2 || len(a.ArmHashes) != 2 {
		t.Errorf("pooled arm %+v, want 2 scored attempts under two arm hashes (the URLs differ)", a)
	}
	_, err = load(portA, hot)
	var me *report.MixedError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "sampling.temperature unset vs 0.7") || !strings.Contains(err.Error(), "arm good differs between run") {
		t.Errorf("runs differing in sampling: got %v, want a refusal naming sampling.temperature", err)
	}
	// What was checked at preflight is on record.
	st, _ := runstore.Open(portA)
	r, err := st.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Preflight) != 1 || r.Preflight[0].Info == nil || r.Preflight[0].Info.Props == nil || r.Preflight[0].Info.Models == nil ||
		len(r.ArmOrder) != 1 || r.ArmIdentities["good"] == nil || r.ArmIdentities["good"].Fields["server.build_info"] == "" {
		t.Errorf("run.json: preflight %+v, arm order %v, identities %+v", r.Preflight, r.ArmOrder, r.ArmIdentities)
	}
	for k := range r.ArmIdentities["good"].Fields {
		if strings.Contains(k, "base_url") || strings.Contains(k, "device") {
			t.Errorf("identity field %s says where, not how", k)
		}
	}
}

// TestRunExitStatuses: the evalctl binary exits 0 when every planned
// attempt is scored, 3 when the run stopped and can be resumed (printing
// the command), 1 on an error such as a failed preflight (registering
// nothing), 2 on a usage error; resuming a finished run says there is
// nothing left to do and exits 0.
func TestRunExitStatuses(t *testing.T) {
	sandboxtest.Engine(t)
	bin := buildEvalctl(t)
	srv := startServer(t)
	exitOf := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &ee):
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("%v: %v", args, err)
		return -1, ""
	}
	good := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`}, "")
	out := t.TempDir()
	if code, text := exitOf("run", "--plan", good, "--out", out); code != 0 {
		t.Fatalf("good run: exit %d\n%s", code, text)
	}
	m, _ := filepath.Glob(filepath.Join(out, "*", runstore.RunFile))
	if len(m) != 1 {
		t.Fatalf("%d run directories", len(m))
	}
	if code, text := exitOf("run", "--resume", filepath.Dir(m[0])); code != 0 || !strings.Contains(text, "nothing left to do") {
		t.Errorf("resume of a finished run: exit %d, want 0 saying nothing is left\n%s", code, text)
	}
	stop := filepath.Join(t.TempDir(), "STOP")
	os.WriteFile(stop, nil, 0o644)
	guarded := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`}, "guards: {stop_file: "+stop+"}\n")
	if code, text := exitOf("run", "--plan", guarded, "--out", t.TempDir()); code != 3 || !strings.Contains(text, "evalctl run --resume ") {
		t.Errorf("guard: exit %d, want 3 with the command to continue\n%s", code, text)
	}
	dead := adderPlan(t, "", []string{`{name: good, endpoint: {base_url: "` + deadURL(t) + `", model: reference}}`}, "")
	deadOut := t.TempDir()
	if code, text := exitOf("run", "--plan", dead, "--out", deadOut); code != 1 || !strings.Contains(text, "unreachable") || !strings.Contains(text, "arm good") {
		t.Errorf("dead endpoint: exit %d, want 1 saying unreachable for arm good\n%s", code, text)
	}
	if entries, _ := os.ReadDir(deadOut); len(entries) != 0 {
		t.Errorf("a failed preflight left %d entries", len(entries))
	}
	if code, text := exitOf("run", "--plan", good, "--check"); code != 0 || !strings.Contains(text, "1 attempts = 1 arms x 1 cases x 1 repeats") {
		t.Errorf("--check: exit %d\n%s", code, text)
	}
	for _, args := range [][]string{{"run"}, {"run", "--check"}, {"run", "--plan", good, "--resume", out}} {
		if code, _ := exitOf(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
}
