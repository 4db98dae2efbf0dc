package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestRequestValidate: the flags of 'evalctl run' that do not go together
// are usage errors; each way of calling it alone is accepted.
func TestRequestValidate(t *testing.T) {
	tests := []struct {
		r    Request
		want string
	}{
		{Request{PlanFile: "p.yaml"}, ""},
		{Request{PlanFile: "p.yaml", Check: true}, ""},
		{Request{Resume: "r", ReplaceInfra: true}, ""},
		{Request{Cancel: "r"}, ""},
		{Request{Cancel: "r", PlanFile: "p.yaml"}, "--cancel goes alone"},
		{Request{Cancel: "r", Resume: "r"}, "--cancel goes alone"},
		{Request{}, "give exactly one of --plan and --resume"},
		{Request{PlanFile: "p.yaml", Resume: "r"}, "give exactly one of --plan and --resume"},
		{Request{PlanFile: "p.yaml", ReplaceInfra: true}, "--replace-infra goes with --resume"},
		{Request{Resume: "r", Check: true}, "--check goes with --plan"},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		var ue *evalctl.UsageError
		if tt.want == "" && err != nil || tt.want != "" && (!errors.As(err, &ue) || err.Error() != tt.want) {
			t.Errorf("%+v: %v, want %q", tt.r, err, tt.want)
		}
	}
}

// TestRequestLoadPlan: a plan mistake is a usage error pointing at the
// plan reference; a plan that loads is returned with its suite; resuming
// loads none.
func TestRequestLoadPlan(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "plan.yaml")
	os.WriteFile(bad, []byte("name: x\narmz: []\n"), 0o644)
	_, _, _, err := Request{PlanFile: bad}.LoadPlan()
	var ue *evalctl.UsageError
	var pe *PlanError
	if !errors.As(err, &ue) || !errors.As(err, &pe) || ue.See != "every plan field: 'evalctl run --help-plan'" || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad plan: %v (%#v)", err, ue)
	}
	if p, s, _, err := (Request{PlanFile: "../examples/full.yaml"}).LoadPlan(); err != nil || p == nil || s == nil {
		t.Errorf("example plan: %v", err)
	}
	if p, s, _, err := (Request{Resume: "r"}).LoadPlan(); p != nil || s != nil || err != nil {
		t.Errorf("resume loaded a plan: %v %v %v", p, s, err)
	}
	if err := PlanUsage(errors.New("disk full")); errors.As(err, &ue) {
		t.Errorf("a failure that is no plan mistake became a usage error: %v", err)
	}
}

// TestCheckRerun: a rerun that cannot be made as asked is a usage error,
// still ErrRerun to errors.Is.
func TestCheckRerun(t *testing.T) {
	err := CheckRerun(t.TempDir(), []string{"max_tokens=1"}, "")
	var ue *evalctl.UsageError
	if !errors.As(err, &ue) || !errors.Is(err, ErrRerun) || !strings.Contains(err.Error(), "is not an attempt directory") {
		t.Errorf("not an attempt: %v", err)
	}
}

// TestRequestDo: what 'evalctl run' does before it needs an engine: the
// plan reference, usage errors for flags that do not go together and for
// plan mistakes, and a run to cancel that does not exist.
func TestRequestDo(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "plan.yaml")
	os.WriteFile(bad, []byte("name: x\narmz: []\n"), 0o644)
	t.Setenv("EVALCTL_RUNS", t.TempDir())
	tests := []struct {
		name   string
		r      Request
		usage  bool
		err    string
		stdout string
	}{
		{"plan reference", Request{HelpPlan: true}, false, "", "| `sampling.temperature` | number | from 0 to 2 |"},
		{"plan and resume", Request{PlanFile: bad, Resume: "r"}, true, "give exactly one of --plan and --resume", ""},
		{"plan mistake", Request{PlanFile: bad, Check: true}, true, bad + `:2: unknown field "armz"; did you mean "arms"?`, ""},
		{"no such run to cancel", Request{Cancel: "no-such-run"}, true, `run "no-such-run": no such run under`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			err := tt.r.Do(context.Background(), evalctl.Console{Stdout: &out, Stderr: &errb})
			var ue *evalctl.UsageError
			if (tt.err == "") != (err == nil) || err != nil && (!strings.Contains(err.Error(), tt.err) || errors.As(err, &ue) != tt.usage) {
				t.Fatalf("error %v (usage %v); want %q (usage %v)", err, errors.As(err, &ue), tt.err, tt.usage)
			}
			if !strings.Contains(out.String(), tt.stdout) || tt.stdout == "" && out.Len() > 0 {
				t.Errorf("stdout %.200q; want %q", out.String(), tt.stdout)
			}
		})
	}
}
