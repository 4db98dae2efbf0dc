package orchestrator

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/tasks"
)

// planYAML is the plan file as users write it.
type planYAML struct {
	// Name names the run: its directory is NAME-RUNID and reports show it
	// (default: the plan file's name without .yaml).
	Name string `yaml:"name"`
	// Suite is the suite directory, relative to the plan file (required).
	Suite string `yaml:"suite"`
	// SuiteFingerprint, when given, must equal the suite's fingerprint
	// ('evalctl cases fingerprint'): the run refuses a suite that changed.
	SuiteFingerprint string `yaml:"suite_fingerprint"`
	// Cases is "all" (the default) or a list of case names of the suite.
	Cases yaml.Node `yaml:"cases"`
	// Repeats are the repeat labels, each with its seed (required, at least
	// one): the same label runs with the same seed in every arm, so attempts
	// pair up across arms. Seeds must differ.
	Repeats []Repeat `yaml:"repeats"`
	// Arms are the configurations compared (required, at least one): each
	// inline, or {file: PATH} naming a file with the same fields (see Arm).
	Arms []armRef `yaml:"arms"`
	// Order says how attempts are ordered.
	Order Order `yaml:"order"`
	// RestSeconds is a pause between attempts (the GPU cools down).
	RestSeconds float64 `yaml:"rest_seconds" range:"0,"`
	// Concurrency is the number of attempts run at once (default 1); arms
	// that start their own server need 1.
	Concurrency int `yaml:"concurrency" range:"1,"`
	// Guards stop the run cleanly between attempts; resume it later.
	Guards Guards `yaml:"guards"`
	// SandboxHosts are the Docker Engines that run agent and grading
	// containers, each with its capacity (default: the local engine alone,
	// one container per attempt in flight). See README "Sandbox hosts".
	SandboxHosts []SandboxHost `yaml:"sandbox_hosts"`
	// Defaults holds budgets for arms that leave them unset.
	Defaults *armDefault `yaml:"defaults"`
}

// armRef is an inline arm or a reference to an arm file.
type armRef struct {
	// File names a YAML file holding the arm, relative to the plan; then
	// the entry holds nothing else.
	File string `yaml:"file"`
	Arm  `yaml:",inline"`
	// Sweep expands the arm into one arm per value (see expandSweeps).
	Sweep sweepAxes `yaml:"sweep"`
}

// armDefault holds budgets applied to arms that leave them unset.
type armDefault struct {
	// Budgets fills the budgets each arm leaves unset.
	Budgets Budgets `yaml:"budgets"`
}

// PlanError is a bad plan input, naming the file, the line and the field
// path (arms[1].sampling.temperature).
type PlanError struct {
	File, Field, Msg string
	// Line is where the field (or its nearest written parent) is; 0 when
	// unknown.
	Line int
}

func (e *PlanError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// decodeYAML reads a plan or arm file through yamlcheck: unknown fields
// with "did you mean", values of the wrong type, ranges, tabs and broken
// indentation are reported with the field path and the line.
func decodeYAML(file string, v any) (*yamlcheck.Doc, error) {
	doc, err := yamlcheck.DecodeFile(file, v)
	var ye *yamlcheck.Error
	if errors.As(err, &ye) {
		return nil, &PlanError{File: ye.File, Line: ye.Line, Field: ye.Field, Msg: ye.Msg}
	}
	if err != nil {
		return nil, &PlanError{File: file, Msg: err.Error()}
	}
	return doc, nil
}

// LoadPlan reads, validates and resolves a plan file. Every problem is
// reported before anything runs, naming the file and the field.
func LoadPlan(file string) (*Plan, *tasks.Suite, error) {
	var py planYAML
	doc, err := decodeYAML(file, &py)
	if err != nil {
		return nil, nil, err
	}
	bad := func(field, format string, a ...any) error {
		return &PlanError{File: file, Field: field, Line: doc.Line(field), Msg: fmt.Sprintf(format, a...)}
	}
	base := filepath.Dir(file)
	p := &Plan{Name: py.Name, RestSeconds: py.RestSeconds, Concurrency: py.Concurrency, Guards: py.Guards, Order: py.Order}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if py.Suite == "" {
		return nil, nil, bad("suite", "is required (the suite directory)")
	}
	suiteDir := py.Suite
	if !filepath.IsAbs(suiteDir) {
		suiteDir = filepath.Join(base, suiteDir)
	}
	suite, err := tasks.LoadSuite(suiteDir)
	if err != nil {
		return nil, nil, bad("suite", "%v", err)
	}
	p.SuiteDir, p.SuiteFingerprint = suite.Dir, suite.Fingerprint
	if py.SuiteFingerprint != "" && py.SuiteFingerprint != suite.Fingerprint {
		return nil, nil, bad("suite_fingerprint", "the suite's fingerprint is %s, the plan expects %s: the suite changed", suite.Fingerprint, py.SuiteFingerprint)
	}
	switch {
	case py.Cases.Kind == 0 || (py.Cases.Kind == yaml.ScalarNode && py.Cases.Value == "all"):
		for _, c := range suite.Cases {
			p.Cases = append(p.Cases, c.Name)
		}
	case py.Cases.Kind == yaml.SequenceNode:
		var names []string
		if err := py.Cases.Decode(&names); err != nil {
			return nil, nil, bad("cases", "line %d: %v", py.Cases.Line, err)
		}
		seen := map[string]bool{}
		for i, n := range names {
			if suite.Case(n) == nil {
				return nil, nil, bad(fmt.Sprintf("cases[%d]", i), "suite %s has no case %q (line %d)", suite.ID(), n, py.Cases.Line)
			}
			if seen[n] {
				return nil, nil, bad(fmt.Sprintf("cases[%d]", i), "duplicate case %q", n)
			}
			seen[n] = true
			p.Cases = append(p.Cases, n)
		}
	default:
		return nil, nil, bad("cases", "line %d: must be \"all\" or a list of case names", py.Cases.Line)
	}
	p.Repeats = py.Repeats
	if len(py.Arms) == 0 {
		return nil, nil, bad("arms", "lists no arm")
	}
	armRefs, armFields, sweeps, err := expandSweeps(file, base, py.Arms)
	if err != nil {
		return nil, nil, err
	}
	p.Sweeps = sweeps
	if py.Defaults != nil {
		if c := py.Defaults.Budgets.CommandTimeoutSeconds; c != nil && *c < 1 {
			return nil, nil, bad("defaults.budgets.command_timeout_seconds", "%v: a command the agent runs always has a timeout, so 0 cannot mean no limit; give at least 1 second (default 120)", *c)
		}
	}
	for i, ref := range armRefs {
		field := armFields[i]
		arm := ref.Arm
		if ref.File != "" {
			if ref.Arm.Name != "" || !reflect.DeepEqual(ref.Arm.Endpoint, Endpoint{}) {
				return nil, nil, bad(field+".file", "an arm comes either from a file or inline, not both")
			}
			af := ref.File
			if !filepath.IsAbs(af) {
				af = filepath.Join(base, af)
			}
			var fromFile Arm
			if _, err := decodeYAML(af, &fromFile); err != nil {
				return nil, nil, bad(field+".file", "%v", err)
			}
			arm = fromFile
		}
		if arm.Profile != "" {
			if !filepath.IsAbs(arm.Profile) {
				arm.Profile = filepath.Join(base, arm.Profile)
			}
			prof, err := serving.LoadProfile(arm.Profile)
			if err != nil {
				return nil, nil, bad(field+".profile", "%v", err)
			}
			if arm.Endpoint.BaseURL != "" {
				return nil, nil, bad(field+".endpoint.base_url", "an arm with a server profile gets its URL from the started server; leave base_url out")
			}
			arm.ProfileSHA256 = prof.SHA256
			if arm.Endpoint.Device == "" {
				arm.Endpoint.Device = prof.Device
			}
			if _, err := prof.OwnVars(arm.ProfileVars); err != nil {
				return nil, nil, bad(field+".profile_vars", "%v", err)
			}
		} else if len(arm.ProfileVars) > 0 {
			return nil, nil, bad(field+".profile_vars", "set without a server profile")
		}
		if py.Defaults != nil {
			arm.Budgets = fillBudgets(arm.Budgets, py.Defaults.Budgets)
		}
		p.Arms = append(p.Arms, arm)
	}
	if err := checkSandboxHosts(file, "sandbox_hosts", doc.Line, py.SandboxHosts); err != nil {
		return nil, nil, err
	}
	p.SandboxHosts = py.SandboxHosts
	if err := resolve(p, suite, armFields, bad); err != nil {
		return nil, nil, err
	}
	return p, suite, nil
}

// NewPlan resolves a plan built as a Go value against its suite, as
// LoadPlan resolves a plan file: the suite's directory and fingerprint are
// recorded, no cases means all of them, unset budgets, order policy and
// concurrency take their defaults, every field is checked, and the order
// of attempts is realised. Paths in arms (Profile) must be absolute;
// server profiles are not loaded (a plan with profiles comes from a file).
// Errors are *PlanError naming the field.
func NewPlan(p Plan, suite *tasks.Suite) (*Plan, error) {
	bad := func(field, format string, a ...any) error {
		return &PlanError{File: "plan " + p.Name, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if suite == nil {
		return nil, bad("suite", "is required")
	}
	if p.Name == "" {
		return nil, bad("name", "is required")
	}
	if p.SuiteFingerprint != "" && p.SuiteFingerprint != suite.Fingerprint {
		return nil, bad("suite_fingerprint", "the suite's fingerprint is %s, the plan expects %s: the suite changed", suite.Fingerprint, p.SuiteFingerprint)
	}
	if err := checkSandboxHosts("plan "+p.Name, "sandbox_hosts", func(string) int { return 0 }, p.SandboxHosts); err != nil {
		return nil, err
	}
	p.SuiteDir, p.SuiteFingerprint = suite.Dir, suite.Fingerprint
	p.Arms = append([]Arm(nil), p.Arms...)
	p.Repeats = append([]Repeat(nil), p.Repeats...)
	if len(p.Cases) == 0 {
		for _, c := range suite.Cases {
			p.Cases = append(p.Cases, c.Name)
		}
	} else {
		p.Cases = append([]string(nil), p.Cases...)
		seen := map[string]bool{}
		for i, n := range p.Cases {
			if suite.Case(n) == nil {
				return nil, bad(fmt.Sprintf("cases[%d]", i), "suite %s has no case %q", suite.ID(), n)
			}
			if seen[n] {
				return nil, bad(fmt.Sprintf("cases[%d]", i), "duplicate case %q", n)
			}
			seen[n] = true
		}
	}
	if len(p.Arms) == 0 {
		return nil, bad("arms", "lists no arm")
	}
	fields := make([]string, len(p.Arms))
	for i := range p.Arms {
		fields[i] = fmt.Sprintf("arms[%d]", i)
	}
	if err := resolve(&p, suite, fields, bad); err != nil {
		return nil, err
	}
	return &p, nil
}

// resolve checks what a plan file and a plan value share and completes
// the plan: repeats, arms (defaults filled, each checked), order,
// concurrency, guards, and the realised slots. armFields name each arm's
// field path in the user's words.
func resolve(p *Plan, suite *tasks.Suite, armFields []string, bad func(field, format string, a ...any) error) error {
	if len(p.Cases) == 0 {
		return bad("cases", "lists no case")
	}
	if len(p.Repeats) == 0 {
		return bad("repeats", "lists no repeat label")
	}
	labels, seeds := map[string]bool{}, map[int64]string{}
	for i, r := range p.Repeats {
		if r.Label == "" {
			return bad(fmt.Sprintf("repeats[%d].label", i), "is required")
		}
		if labels[r.Label] {
			return bad(fmt.Sprintf("repeats[%d].label", i), "duplicate label %q", r.Label)
		}
		if other, ok := seeds[r.Seed]; ok {
			return bad(fmt.Sprintf("repeats[%d].seed", i), "labels %q and %q share seed %d: paired repeats need distinct seeds", other, r.Label, r.Seed)
		}
		labels[r.Label], seeds[r.Seed] = true, r.Label
	}
	names := map[string]bool{}
	for i := range p.Arms {
		arm := &p.Arms[i]
		field := armFields[i]
		arm.Budgets = fillBudgets(arm.Budgets, DefaultBudgets())
		if err := validateArm(*arm); err != nil {
			return bad(field+"."+err.field, "%s", err.msg)
		}
		if names[arm.Name] {
			return bad(field+".name", "duplicate arm %q", arm.Name)
		}
		names[arm.Name] = true
	}
	if p.Order.Policy == "" {
		p.Order.Policy = "interleaved"
	}
	if p.Order.Policy != "interleaved" && p.Order.Policy != "sequential" {
		return bad("order.policy", "%q is not interleaved or sequential", p.Order.Policy)
	}
	if p.Concurrency == 0 {
		p.Concurrency = 1
	}
	if p.Concurrency < 0 {
		return bad("concurrency", "must be at least 1")
	}
	devices := map[string]bool{}
	for _, a := range p.Arms {
		for _, r := range a.Replicas() {
			devices[r.Device] = true
		}
	}
	for i, a := range p.Arms {
		if a.Profile != "" && p.Concurrency > 1 {
			return bad(fmt.Sprintf("arms[%d].profile", i), "arms that start their own server run one attempt at a time; set concurrency: 1")
		}
		if a.Profile != "" && len(devices) > 1 {
			// evalctl keeps one model server at a time: arms on several
			// devices would stop each other's servers.
			return bad(fmt.Sprintf("arms[%d].profile", i), "arms that start their own server cannot run side by side with other arms: give every arm the same device (or none)")
		}
	}
	if p.RestSeconds < 0 {
		return bad("rest_seconds", "must not be negative")
	}
	if p.Guards.MaxConsecutiveInfraFailures < 0 {
		return bad("guards.max_consecutive_infra_failures", "must not be negative")
	}
	if p.Guards.MaxTemperatureC < 0 {
		return bad("guards.max_temperature_c", "must not be negative")
	}
	p.Slots = realise(p)
	return nil
}

// fillBudgets gives b's unset budgets d's values (copies: plans share no
// pointers).
func fillBudgets(b, d Budgets) Budgets {
	b.WallSeconds = fill(b.WallSeconds, d.WallSeconds)
	b.GeneratedTokens = fill(b.GeneratedTokens, d.GeneratedTokens)
	b.ToolCalls = fill(b.ToolCalls, d.ToolCalls)
	b.CommandTimeoutSeconds = fill(b.CommandTimeoutSeconds, d.CommandTimeoutSeconds)
	return b
}

func fill[T any](v, d *T) *T {
	if v != nil || d == nil {
		return v
	}
	c := *d
	return &c
}

type armErr struct{ field, msg string }

func validateArm(a Arm) *armErr {
	switch {
	case a.Name == "":
		return &armErr{"name", "is required"}
	case strings.ContainsAny(a.Name, " /\\,"):
		return &armErr{"name", fmt.Sprintf("%q: use letters, digits, '-', '_' or '.'", a.Name)}
	case a.Endpoint.BaseURL == "" && a.Profile == "" && len(a.Endpoint.Replicas) == 0:
		return &armErr{"endpoint.base_url", "is required (or name a server profile)"}
	case a.Endpoint.Model == "":
		return &armErr{"endpoint.model", "is required"}
	case a.MaxTokens < 0:
		return &armErr{"max_tokens", "must not be negative"}
	case *a.Budgets.WallSeconds < 0:
		return &armErr{"budgets.wall_seconds", "must not be negative (0: no limit)"}
	case *a.Budgets.GeneratedTokens < 0:
		return &armErr{"budgets.generated_tokens", "must not be negative (0: no limit)"}
	case *a.Budgets.ToolCalls < 0:
		return &armErr{"budgets.tool_calls", "must not be negative (0: no limit)"}
	case *a.Budgets.CommandTimeoutSeconds < 1:
		return &armErr{"budgets.command_timeout_seconds", fmt.Sprintf("%v: a command the agent runs always has a timeout, so 0 cannot mean no limit; give at least 1 second (default 120)", *a.Budgets.CommandTimeoutSeconds)}
	}
	if a.Context != nil {
		if err := a.Context.Validate(); err != nil {
			return &armErr{"context", err.Error()}
		}
	}
	if a.Endpoint.BaseURL != "" && !strings.HasPrefix(a.Endpoint.BaseURL, "http://") && !strings.HasPrefix(a.Endpoint.BaseURL, "https://") {
		return &armErr{"endpoint.base_url", fmt.Sprintf("%q is not an http(s) URL", a.Endpoint.BaseURL)}
	}
	return validateReplicas(a)
}
