package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestSweepOverServerFlag: an arm declared once and swept over a variable
// its server profile declares (a flag of the server's command line, as the
// seed's speculative-draft depth) becomes one arm per value, each served
// by a server started with that flag.
func TestSweepOverServerFlag(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	bin := buildEvalctl(t)
	suite, _ := filepath.Abs(fixtureSuite)
	dir := t.TempDir()
	profile := `name: scripted
command: ["{{evalctl}}", serve-model, --addr, "{{host}}:{{port}}", --suite, "` + suite + `", --decode-tps, "{{decode_tps}}"]
vars: {decode_tps: "120"}
ctx_size: 32768
startup_timeout: 60s
`
	os.WriteFile(filepath.Join(dir, "scripted.yaml"), []byte(profile), 0o644)
	plan := `suite: ` + suite + `
cases: [adder]
repeats: [{label: r1, seed: 1}]
arms:
  - name: "tps{value}"
    profile: scripted.yaml
    endpoint: {model: reference}
    sweep: {field: profile_vars.decode_tps, values: [300, 150]}
`
	os.WriteFile(filepath.Join(dir, "plan.yaml"), []byte(plan), 0o644)
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{
		Plan: loadPlan(t, filepath.Join(dir, "plan.yaml")), OutDir: filepath.Join(dir, "runs"), Engine: eng, Image: img, Evalctl: bin,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 {
		t.Fatalf("%d attempts", len(res.Attempts))
	}
	for _, a := range res.Attempts {
		var id serving.Identity
		if err := runstore.ReadJSON(filepath.Join(res.Dir, a.Server), &id); err != nil {
			t.Fatal(err)
		}
		want := "--decode-tps " + strings.TrimPrefix(a.Arm, "tps")
		if a.State != evalctl.Completed || !strings.Contains(strings.Join(id.Argv, " "), want) {
			t.Errorf("%s: state %s, server argv %q, want %q", a.Arm, a.State, id.Argv, want)
		}
	}
	noServerLeft(t, bin)

	// A variable the profile does not declare is refused, naming it.
	bad := strings.Replace(plan, "profile_vars.decode_tps", "profile_vars.draft_depth", 1)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644)
	if _, _, err := orchestrator.LoadPlan(filepath.Join(dir, "bad.yaml")); err == nil || !strings.Contains(err.Error(), `declares no variable "draft_depth"`) {
		t.Errorf("undeclared profile variable: %v", err)
	}
}
