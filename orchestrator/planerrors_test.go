package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/yamlcheck"
	screens "github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/tasks"
)

// TestPlanReportsEveryMistake: a plan with several mistakes, in its
// structure and in what its fields mean, in the plan file and in an arm
// file, reports all of them at once, each with its file, line and field
// path, in line order; a mistake is said once (the decoder's, not a
// second from the loader about the value it left unset).
func TestPlanReportsEveryMistake(t *testing.T) {
	plan := `name: t
suite: SUITE
cases: [adder, addr]
repeats:
  - {label: repeat-1, seed: 101}
  - {label: repeat-1, seed: 202}
arms:
  - name: a
    endpoint: {base_url: "127.0.0.1:1", model: [reference]}
    sampling: {temperature: 6}
    max_token: 10
  - file: arm-b.yaml
order: {policy: interleavd}
rest_seconds: -1
`
	arm := "name: b\nendpoint: {base_url: \"http://127.0.0.1:1\"}\nbudgets: {tool_calls: many}\n"
	file := writePlan(t, plan, arm)
	armFile := filepath.Join(filepath.Dir(file), "arm-b.yaml")
	_, _, err := LoadPlan(file)
	var list PlanErrors
	if !errors.As(err, &list) {
		t.Fatalf("got %v, want PlanErrors", err)
	}
	want := []string{
		armFile + `:3: budgets.tool_calls: expected a whole number, got the text "many"`,
		armFile + `:2: endpoint.model: is required (arms[1] of plan.yaml)`,
		file + `:3: cases[1]: suite graderfixture@0.1.0 has no case "addr"; did you mean "adder"?`,
		file + `:6: repeats[1].label: duplicate label "repeat-1"`,
		file + `:9: arms[0].endpoint.model: expected text, got a list`,
		file + `:9: arms[0].endpoint.base_url: "127.0.0.1:1" is not an http(s) URL`,
		file + `:10: arms[0].sampling.temperature: 6 is out of range: from 0 to 2`,
		file + `:11: arms[0]: unknown field "max_token"; did you mean "max_tokens"?`,
		file + `:13: order.policy: "interleavd" is not one of interleaved, sequential (did you mean "interleaved"?)`,
		file + `:14: rest_seconds: -1 is out of range: at least 0`,
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d mistakes reported, want %d:\n%s", len(got), len(want), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("lacks %s\nin:\n%s", w, err)
		}
	}
	for i := 1; i < len(list); i++ {
		if a, b := list[i-1], list[i]; a.File == b.File && a.Line > b.Line {
			t.Errorf("not in line order: %s before %s", a, b)
		}
	}
	var pe *PlanError
	if !errors.As(err, &pe) || len(list.Errors()) != len(want) {
		t.Errorf("errors.As(*PlanError) %v; Errors() %d", pe, len(list.Errors()))
	}
	// One mistake is one *PlanError, as before.
	_, _, err = LoadPlan(writePlan(t, goodPlan+"rest_seconds: -1\n", armB))
	if !errors.As(err, &pe) || errors.As(err, &list) || !strings.HasSuffix(err.Error(), "rest_seconds: -1 is out of range: at least 0") {
		t.Errorf("one mistake: %v", err)
	}
}

// TestPlanWarnings: what a valid plan leaves to chance is said, each
// warning with how to silence it; doing what it says silences it.
func TestPlanWarnings(t *testing.T) {
	t.Setenv("EVALCTL_TEST_KEY_SET", "k")
	os.Unsetenv("EVALCTL_TEST_KEY_UNSET")
	plan := strings.Replace(goodPlan, "{label: repeat-2, seed: 202}", "{label: repeat-2}", 1)
	plan = strings.Replace(plan, `model: reference}`, `model: reference, api_key_env: EVALCTL_TEST_KEY_UNSET}
    extra: {seed: 5}`, 1)
	_, _, warnings, err := loadPlan(writePlan(t, plan, armB))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"repeats[1].seed":              {`repeat "repeat-2" names no seed, so it runs with seed 0`, "write {label: repeat-2, seed: 0}"},
		"arms[0].endpoint.api_key_env": {"names EVALCTL_TEST_KEY_UNSET, which is not set", "export EVALCTL_TEST_KEY_UNSET=KEY"},
		"arms[0].extra.seed":           {"extra sends seed 5 in every request of arm a, in place of each repeat's seed", "remove seed from extra"},
	}
	if len(warnings) != len(want) {
		t.Errorf("%d warnings, want %d: %v", len(warnings), len(want), warnings)
	}
	for _, w := range warnings {
		parts, ok := want[w.Field]
		if !ok || w.Line == 0 || !strings.Contains(w.Msg, parts[0]) || !strings.Contains(w.Silence, parts[1]) ||
			!strings.Contains(w.String(), "(to silence: ") {
			t.Errorf("warning %s; want field %s with %q, silenced by %q", w, w.Field, parts, parts)
		}
	}
	// Silenced as they say.
	plan = strings.Replace(plan, "{label: repeat-2}", "{label: repeat-2, seed: 0}", 1)
	plan = strings.Replace(plan, "EVALCTL_TEST_KEY_UNSET", "EVALCTL_TEST_KEY_SET", 1)
	plan = strings.Replace(plan, "    extra: {seed: 5}\n", "", 1)
	if _, _, warnings, err := loadPlan(writePlan(t, plan, armB)); err != nil || len(warnings) != 0 {
		t.Errorf("silenced plan: %v %v", warnings, err)
	}
	// 'run --check' prints them before anything else.
	var out strings.Builder
	WriteWarnings(&out, []PlanWarning{{File: "p.yaml", Line: 3, Field: "repeats[0].seed", Msg: "m", Silence: "s"}})
	if out.String() != "warning: p.yaml:3: repeats[0].seed: m (to silence: s)\n" {
		t.Errorf("printed %q", out.String())
	}
}

// TestPlanDefaults: the default the reference shows for a field (its
// `default` tag) is the one a loaded file gets when it leaves the field
// out: checked for every field of a plan, an arm, a profile and a screen
// spec that has one, so reference and loaders cannot drift.
func TestPlanDefaults(t *testing.T) {
	dir := t.TempDir()
	suite, _ := filepath.Abs("../grader/testdata/suite")
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("p.yaml", "name: p\ncommand: [x, '{{ctx_size}}']\nctx_size: 1024\n")
	write("in.txt", "x")
	plan, _, err := LoadPlan(write("plan.yaml", "suite: "+suite+"\nrepeats: [{label: r, seed: 1}]\nsandbox_hosts: [{name: local}]\narms: [{name: a, endpoint: {base_url: \"http://127.0.0.1:1\", model: m}}, {name: b, endpoint: {base_url: \"http://127.0.0.1:1\", model: m}, agent: {command: [x]}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	stopped, _, err := LoadPlan(write("stop.yaml", "suite: "+suite+"\nrepeats: [{label: r, seed: 1}]\nstop: {half_width: 0.03}\narms:\n"+
		"  - {name: a, endpoint: {base_url: \"http://127.0.0.1:1\", model: m}}\n  - {name: b, endpoint: {base_url: \"http://127.0.0.1:1\", model: m}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	prof, err := serving.LoadProfile(filepath.Join(dir, "p.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := screens.LoadSpec(write("s.yaml", "name: s\nbaseline: m\nmodes: [{name: m, profile: p.yaml}]\nseeds: [1]\noutput_tokens: 8\nfixtures: [{name: f, file: in.txt}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Applied where the value is used, not filled into the record (an
	// arm's hash covers its fields): checked there.
	arm := plan.Arms[0]
	usedAt := map[string]any{
		"Endpoint.TimeoutSeconds":            armParams(&arm, 1).Timeout.Seconds(),
		"Arm.Stream":                         streams(&arm),
		"Guards.MaxConsecutiveInfraFailures": float64(newBreaker(0).max),
	}
	loaded := []struct {
		typ reflect.Type
		v   reflect.Value
	}{
		{reflect.TypeOf(Order{}), reflect.ValueOf(plan.Order)},
		{reflect.TypeOf(Budgets{}), reflect.ValueOf(arm.Budgets)},
		{reflect.TypeOf(SandboxHost{}), reflect.ValueOf(plan.SandboxHosts[0])},
		{reflect.TypeOf(Repeat{}), reflect.ValueOf(plan.Repeats[0])},
		{reflect.TypeOf(evalctl.AgentCommand{}), reflect.ValueOf(*plan.Arms[1].Agent)},
		{reflect.TypeOf(StopRule{}), reflect.ValueOf(*stopped.Stop)},
		{reflect.TypeOf(serving.Profile{}), reflect.ValueOf(*prof)},
		{reflect.TypeOf(screens.Spec{}), reflect.ValueOf(sc.Spec)},
	}
	checked := map[string]bool{}
	for _, l := range loaded {
		for _, f := range yamlcheck.Fields(l.typ) {
			if f.Default == "" || f.Name == "seed" {
				continue // seeds are the file's own
			}
			want := reflect.New(f.Type)
			if err := yamlcheckDecode(f.Default, want.Interface()); err != nil {
				t.Errorf("%s.%s: default %q is no %s: %v", f.Owner.Name(), f.GoName, f.Default, f.TypeOf(), err)
				continue
			}
			got := l.v.FieldByIndex(f.Index)
			if !reflect.DeepEqual(got.Interface(), want.Elem().Interface()) {
				t.Errorf("%s.%s: loaded %v, the reference says %s", f.Owner.Name(), f.GoName, got.Interface(), f.Default)
			}
			checked[f.Owner.Name()+"."+f.GoName] = true
		}
	}
	if got := plan.Concurrency; got != 1 {
		t.Errorf("concurrency %d, the reference says 1", got)
	}
	for key, got := range usedAt {
		owner, field, _ := strings.Cut(key, ".")
		var typ reflect.Type
		switch owner {
		case "Endpoint":
			typ = reflect.TypeOf(Endpoint{})
		case "Arm":
			typ = reflect.TypeOf(Arm{})
		case "Guards":
			typ = reflect.TypeOf(Guards{})
		}
		for _, f := range yamlcheck.Fields(typ) {
			if f.GoName != field {
				continue
			}
			var want any
			if err := yamlcheckDecode(f.Default, &want); err != nil {
				t.Fatal(err)
			}
			if w, ok := want.(int); ok {
				want = float64(w)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %v where used, the reference says %s", key, got, f.Default)
			}
			checked[key] = true
		}
	}
	// Every default tag of every type in the reference was checked.
	for _, typ := range []reflect.Type{reflect.TypeOf(planYAML{}), reflect.TypeOf(armRef{}), reflect.TypeOf(serving.Profile{}), reflect.TypeOf(screens.Spec{})} {
		walkFields(typ, func(f yamlcheck.Field) {
			key := f.Owner.Name() + "." + f.GoName
			if f.Default != "" && f.Name != "seed" && !checked[key] && key != "planYAML.Concurrency" && key != "planYAML.Cases" && key != "planYAML.RestSeconds" {
				t.Errorf("default of %s (%s) is checked against nothing a loader does", key, f.Default)
			}
		})
	}
	if time.Duration(prof.StartupTimeout) != 10*time.Minute {
		t.Errorf("startup_timeout %v", prof.StartupTimeout)
	}
}

func yamlcheckDecode(text string, v any) error { return yaml.Unmarshal([]byte(text), v) }

// walkFields calls fn for every field of t and of the mappings under it.
func walkFields(t reflect.Type, fn func(yamlcheck.Field)) {
	for _, f := range yamlcheck.Fields(t) {
		fn(f)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != t && ft != reflect.TypeOf(armRef{}) {
			walkFields(ft, fn)
		}
	}
}

// TestRunCheckWarns: 'run --check' prints the plan's warnings, with how
// to silence each, before its check of the endpoints and the order; a run
// prints them on stderr.
func TestRunCheckWarns(t *testing.T) {
	suite, err := tasks.LoadSuite("../grader/testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := scripted.New(scripted.Config{Suite: suite})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	os.Unsetenv("EVALCTL_TEST_KEY_UNSET")
	plan := strings.Replace(goodPlan, "{label: repeat-2, seed: 202}", "{label: repeat-2}", 1)
	plan = strings.ReplaceAll(plan, "http://127.0.0.1:1", srv.URL())
	plan = strings.Replace(plan, "model: reference}", "model: reference, api_key_env: EVALCTL_TEST_KEY_UNSET}", 1)
	file := writePlan(t, plan, strings.ReplaceAll(armB, "http://127.0.0.1:1", srv.URL()))
	var out, errb strings.Builder
	if err := (Request{PlanFile: file, Check: true}).Do(context.Background(), evalctl.Console{Stdout: &out, Stderr: &errb}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "warning: "+file+":6: repeats[1].seed: ") ||
		!strings.Contains(lines[1], "arms[0].endpoint.api_key_env") || !strings.Contains(out.String(), "plan t: suite") {
		t.Errorf("stdout:\n%s", out.String())
	}
}
