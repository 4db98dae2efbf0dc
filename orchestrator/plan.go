// Package orchestrator turns plans into runs: it registers a plan of arms x
// cases x repeat labels, runs each attempt (sandbox, agent loop, snapshots,
// grading, record) and stores everything in a run directory so that nothing
// is lost and a killed run resumes where it stopped.
package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/orchestrator/longctx"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/tasks"
)

// Plan is a registered plan of arms x cases x repeat labels, resolved: every
// path absolute, every arm inline, the realised order fixed. Its JSON form
// (plan.json in the run directory) is what the plan hash covers.
type Plan struct {
	Name string `json:"name"`
	// SuiteDir is the absolute suite directory.
	SuiteDir string `json:"suite_dir"`
	// SuiteFingerprint is the fingerprint the suite had when registered.
	SuiteFingerprint string   `json:"suite_fingerprint"`
	Cases            []string `json:"cases"`
	Repeats          []Repeat `json:"repeats"`
	Arms             []Arm    `json:"arms"`
	Order            Order    `json:"order"`
	RestSeconds      float64  `json:"rest_seconds"`
	// Concurrency is the number of attempts in flight at once per device
	// label (see Endpoint.Device). Arms that name no device share one
	// label, so by default (1) the whole run has one attempt in flight,
	// whatever the endpoints: two servers on one GPU never decode together.
	Concurrency int    `json:"concurrency"`
	Guards      Guards `json:"guards"`
	// SandboxHosts are the engines that run sandboxes (empty: the one
	// local engine).
	SandboxHosts []SandboxHost `json:"sandbox_hosts,omitempty"`
	// Slots is the realised order of attempts.
	Slots []Slot `json:"slots"`
	// Sweeps record the arms declared once with a sweep and the value
	// each expanded arm took (see SweepRecord).
	Sweeps []SweepRecord `json:"sweeps,omitempty"`
	// Rerun records, for a diagnostic rerun, the original attempt, the arm
	// diff and the label (see RerunPlan).
	Rerun *RerunRecord `json:"rerun,omitempty"`
}

// Repeat maps a repeat label to its seed: the same label means the same seed
// in every arm, which is what makes attempts paired.
type Repeat struct {
	// Label names the repeat (e.g. repeat-1).
	Label string `json:"label" yaml:"label"`
	// Seed is sent with every request of the repeat's attempts.
	Seed int64 `json:"seed" yaml:"seed"`
}

// Arm is a named configuration of the agent and its endpoint.
type Arm struct {
	// Name names the arm in reports: letters, digits, '-', '_' or '.'
	// (required).
	Name string `json:"name" yaml:"name"`
	// Endpoint is the model server the arm talks to.
	Endpoint Endpoint `json:"endpoint" yaml:"endpoint"`
	// MaxTokens caps each response (max_tokens; 0 leaves the server's
	// default); the attempt's budget is separate.
	MaxTokens int `json:"max_tokens" yaml:"max_tokens" range:"0,"`
	// Sampling settings sent with every request; unset ones keep the
	// server's defaults.
	Sampling Sampling `json:"sampling" yaml:"sampling"`
	// Reasoning settings (effort, thinking on or off).
	Reasoning Reasoning `json:"reasoning" yaml:"reasoning"`
	// Extra fields merged as they are into every request body (e.g.
	// chat_template_kwargs).
	Extra map[string]any `json:"extra,omitempty" yaml:"extra"`
	// Budgets bound each attempt (defaults: 1800 s, 65536 tokens, 120 tool
	// calls, 120 s per command).
	Budgets Budgets `json:"budgets" yaml:"budgets"`
	// Stream asks for server-sent events (default true), which gives time
	// to first token and client-measured decode time where servers send no
	// timings.
	Stream *bool `json:"stream,omitempty" yaml:"stream"`
	// Profile is a server profile file that starts the model server for
	// this arm (its base URL then comes from the started server); its
	// SHA-256 is part of the arm, so editing it changes the arm's hash.
	Profile       string `json:"profile,omitempty" yaml:"profile"`
	ProfileSHA256 string `json:"profile_sha256,omitempty" yaml:"-"`
	// ProfileVars set variables the arm's server profile declares (vars:),
	// e.g. a speculative-draft depth its command passes as a flag.
	ProfileVars map[string]string `json:"profile_vars,omitempty" yaml:"profile_vars"`
	// Context is how a long-context case's corpus reaches the model (full,
	// cropped or retrieved up to N tokens); a case with a corpus gets the
	// whole of it when the arm names no strategy.
	Context *longctx.Strategy `json:"context,omitempty" yaml:"context"`
}

// Endpoint is where an arm's model is served.
type Endpoint struct {
	// BaseURL is the server's http(s) URL (required unless the arm names a
	// profile, which supplies it).
	BaseURL string `json:"base_url" yaml:"base_url"`
	// Model is the model id sent with every request (required).
	Model string `json:"model" yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key; the key
	// itself is never written to disk.
	APIKeyEnv string `json:"api_key_env,omitempty" yaml:"api_key_env"`
	// TimeoutSeconds bounds one model request (default
	// DefaultRequestTimeoutSeconds); a request it ends is the server's
	// failure (server_error), scored, its tokens unknown.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty" yaml:"timeout_seconds"`
	// Device names the hardware the endpoint runs on ("gpu0", "box-b").
	// Arms on different devices may run side by side (concurrency then
	// counts per device); arms without a device share one, the safe
	// default. It says where an arm runs, not how it behaves: it is not
	// part of the pooling identity. An arm with a server profile takes
	// the profile's device unless it names one.
	Device string `json:"device,omitempty" yaml:"device"`
	// Replicas make the endpoint a pool: identical servers of the arm on
	// several machines, each with its own URL and device label. Each
	// attempt goes to a free replica; preflight refuses replicas that
	// differ in build, model, weights or server settings. An arm with
	// replicas names no base_url, device or profile of its own.
	Replicas []Replica `json:"replicas,omitempty" yaml:"replicas"`
}

// Replica is one server of an endpoint pool.
type Replica struct {
	// BaseURL is the replica's http(s) URL (required).
	BaseURL string `json:"base_url" yaml:"base_url"`
	// Device names the hardware the replica runs on (required): at most
	// the plan's concurrency of attempts are in flight on it.
	Device string `json:"device" yaml:"device"`
}

// Replicas are where the arm's attempts may go: its pool's replicas, or
// its one endpoint.
func (a *Arm) Replicas() []Replica {
	if len(a.Endpoint.Replicas) > 0 {
		return a.Endpoint.Replicas
	}
	return []Replica{{BaseURL: a.Endpoint.BaseURL, Device: a.Endpoint.Device}}
}

// DefaultRequestTimeoutSeconds bounds a model request when the arm names no
// timeout_seconds.
const DefaultRequestTimeoutSeconds = 1800

// Sampling settings; nil leaves the server's default.
type Sampling struct {
	// Temperature of sampling.
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature" range:"0,2"`
	// TopP keeps the smallest set of tokens whose probabilities sum to it.
	TopP *float64 `json:"top_p,omitempty" yaml:"top_p" range:"0,1"`
	// TopK keeps the k most likely tokens (0: no limit).
	TopK *int `json:"top_k,omitempty" yaml:"top_k" range:"0,"`
	// MinP drops tokens less likely than this fraction of the most likely.
	MinP *float64 `json:"min_p,omitempty" yaml:"min_p" range:"0,1"`
	// RepeatPenalty penalises repeated tokens (1: none).
	RepeatPenalty *float64 `json:"repeat_penalty,omitempty" yaml:"repeat_penalty" range:"0.1,2"`
}

// Reasoning settings.
type Reasoning struct {
	// Effort is sent as reasoning_effort (e.g. low, medium, high) when set.
	Effort string `json:"effort,omitempty" yaml:"effort"`
	// Thinking turns the chat template's thinking on or off
	// (chat_template_kwargs.enable_thinking) when set.
	Thinking *bool `json:"thinking,omitempty" yaml:"thinking"`
}

// Budgets per attempt, and the per-command timeout. An unset budget takes
// the plan's defaults (then DefaultBudgets); an explicit 0 means no limit
// where the agent can run without one.
type Budgets struct {
	// WallSeconds bounds an attempt's wall time (default 1800; 0: no
	// limit).
	WallSeconds *float64 `json:"wall_seconds" yaml:"wall_seconds" range:"0,"`
	// GeneratedTokens bounds the tokens an attempt generates, as the server
	// counts them (default 65536; 0: no limit).
	GeneratedTokens *int64 `json:"generated_tokens" yaml:"generated_tokens" range:"0,"`
	// ToolCalls bounds an attempt's tool calls (default 120; 0: no limit).
	ToolCalls *int `json:"tool_calls" yaml:"tool_calls" range:"0,"`
	// CommandTimeoutSeconds is the timeout of one command the agent runs
	// when the model names none (default 120; at least 1: a command always
	// has a timeout). The bash tool tells the model this value.
	CommandTimeoutSeconds *float64 `json:"command_timeout_seconds" yaml:"command_timeout_seconds"`
}

// Order says how attempts are ordered.
type Order struct {
	// Policy is "interleaved" (a seeded shuffle of case x repeat blocks,
	// each block running every arm in a shuffled order) or "sequential".
	Policy string `json:"policy" yaml:"policy"`
	// Seed fixes the interleaved order, so a plan always runs in the same
	// order.
	Seed int64 `json:"seed" yaml:"seed"`
}

// Guards stop a cohort cleanly between attempts; it can be resumed later.
type Guards struct {
	// MaxTemperatureC stops the run when the temperature source reads above
	// it (0 disables the guard).
	MaxTemperatureC float64 `json:"max_temperature_c,omitempty" yaml:"max_temperature_c" range:"0,150"`
	// StopFile stops the run when the file exists (relative to the run
	// directory unless absolute).
	StopFile string `json:"stop_file,omitempty" yaml:"stop_file"`
	// MaxConsecutiveInfraFailures stops the run (resumable) when that many
	// attempts in a row on one endpoint end as infrastructure failures
	// (0: the default, DefaultMaxConsecutiveInfraFailures).
	MaxConsecutiveInfraFailures int `json:"max_consecutive_infra_failures,omitempty" yaml:"max_consecutive_infra_failures"`
}

// DefaultMaxConsecutiveInfraFailures is the circuit breaker's default: three
// infrastructure failures in a row on one endpoint stop the run.
const DefaultMaxConsecutiveInfraFailures = 3

// Slot is one planned attempt.
type Slot struct {
	Index  int    `json:"index"`
	Arm    string `json:"arm"`
	Case   string `json:"case"`
	Repeat string `json:"repeat"`
	Seed   int64  `json:"seed"`
}

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

// DefaultBudgets are DESIGN.md's per-attempt budgets, which an arm's unset
// budgets take.
func DefaultBudgets() Budgets {
	wall, tokens, calls, cmd := 1800.0, int64(65536), 120, 120.0
	return Budgets{WallSeconds: &wall, GeneratedTokens: &tokens, ToolCalls: &calls, CommandTimeoutSeconds: &cmd}
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

// realise fixes the order of attempts. Interleaved: the case x repeat
// blocks in a seeded shuffle, each block running every arm in a seeded
// order, so that arms meet the same conditions (time of day, temperature)
// as evenly as possible.
func realise(p *Plan) []Slot {
	type block struct {
		c string
		r Repeat
	}
	var blocks []block
	for _, r := range p.Repeats {
		for _, c := range p.Cases {
			blocks = append(blocks, block{c, r})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(p.Order.Seed), 0x65766c63))
	arms := make([]string, len(p.Arms))
	for i, a := range p.Arms {
		arms[i] = a.Name
	}
	var slots []Slot
	if p.Order.Policy == "sequential" {
		for _, a := range arms {
			for _, b := range blocks {
				slots = append(slots, Slot{Index: len(slots), Arm: a, Case: b.c, Repeat: b.r.Label, Seed: b.r.Seed})
			}
		}
		return slots
	}
	rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	for _, b := range blocks {
		order := append([]string(nil), arms...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, a := range order {
			slots = append(slots, Slot{Index: len(slots), Arm: a, Case: b.c, Repeat: b.r.Label, Seed: b.r.Seed})
		}
	}
	return slots
}

// Arm returns the arm of that name, or nil.
func (p *Plan) Arm(name string) *Arm {
	for i := range p.Arms {
		if p.Arms[i].Name == name {
			return &p.Arms[i]
		}
	}
	return nil
}

// Hash is the SHA-256 of the arm's canonical JSON: two attempts ran under
// the same configuration exactly when their arm hashes are equal.
func (a *Arm) Hash() string {
	data, _ := json.Marshal(a)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Params maps the arm onto the model client's request settings.
func (a *Arm) Params(seed int64) model.Params {
	p := model.Params{
		Temperature: a.Sampling.Temperature, TopP: a.Sampling.TopP, TopK: a.Sampling.TopK,
		MinP: a.Sampling.MinP, RepeatPenalty: a.Sampling.RepeatPenalty, Seed: &seed,
		MaxTokens: a.MaxTokens, ReasoningEffort: a.Reasoning.Effort, EnableThinking: a.Reasoning.Thinking,
		Extra: a.Extra,
	}
	p.Timeout = seconds(DefaultRequestTimeoutSeconds)
	if a.Endpoint.TimeoutSeconds > 0 {
		p.Timeout = seconds(a.Endpoint.TimeoutSeconds)
	}
	return p
}

// Encode is the plan's canonical JSON, as written to plan.json.
func (p *Plan) Encode() ([]byte, error) {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
