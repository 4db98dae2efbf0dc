// Package orchestrator turns plans into runs: it registers a plan of arms x
// cases x repeat labels, runs each attempt (sandbox, agent loop, snapshots,
// grading, record) and stores everything in a run directory so that nothing
// is lost and a killed run resumes where it stopped.
package orchestrator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

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
	// Concurrency is the number of attempts run at once per endpoint.
	Concurrency int    `json:"concurrency"`
	Guards      Guards `json:"guards"`
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
	Label string `json:"label" yaml:"label"`
	Seed  int64  `json:"seed" yaml:"seed"`
}

// Arm is a named configuration of the agent and its endpoint.
type Arm struct {
	Name      string         `json:"name" yaml:"name"`
	Endpoint  Endpoint       `json:"endpoint" yaml:"endpoint"`
	MaxTokens int            `json:"max_tokens" yaml:"max_tokens"`
	Sampling  Sampling       `json:"sampling" yaml:"sampling"`
	Reasoning Reasoning      `json:"reasoning" yaml:"reasoning"`
	Extra     map[string]any `json:"extra,omitempty" yaml:"extra"`
	Budgets   Budgets        `json:"budgets" yaml:"budgets"`
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
	BaseURL string `json:"base_url" yaml:"base_url"`
	Model   string `json:"model" yaml:"model"`
	// APIKeyEnv names the environment variable holding the API key; the key
	// itself is never written to disk.
	APIKeyEnv string `json:"api_key_env,omitempty" yaml:"api_key_env"`
	// TimeoutSeconds bounds one model request (default
	// DefaultRequestTimeoutSeconds); a request it ends is the server's
	// failure (server_error), scored, its tokens unknown.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty" yaml:"timeout_seconds"`
}

// DefaultRequestTimeoutSeconds bounds a model request when the arm names no
// timeout_seconds.
const DefaultRequestTimeoutSeconds = 1800

// Sampling settings; nil leaves the server's default.
type Sampling struct {
	Temperature   *float64 `json:"temperature,omitempty" yaml:"temperature"`
	TopP          *float64 `json:"top_p,omitempty" yaml:"top_p"`
	TopK          *int     `json:"top_k,omitempty" yaml:"top_k"`
	MinP          *float64 `json:"min_p,omitempty" yaml:"min_p"`
	RepeatPenalty *float64 `json:"repeat_penalty,omitempty" yaml:"repeat_penalty"`
}

// Reasoning settings.
type Reasoning struct {
	Effort   string `json:"effort,omitempty" yaml:"effort"`
	Thinking *bool  `json:"thinking,omitempty" yaml:"thinking"`
}

// Budgets per attempt, and the per-command timeout.
type Budgets struct {
	WallSeconds           float64 `json:"wall_seconds" yaml:"wall_seconds"`
	GeneratedTokens       int64   `json:"generated_tokens" yaml:"generated_tokens"`
	ToolCalls             int     `json:"tool_calls" yaml:"tool_calls"`
	CommandTimeoutSeconds float64 `json:"command_timeout_seconds" yaml:"command_timeout_seconds"`
}

// Order says how attempts are ordered.
type Order struct {
	// Policy is "interleaved" (a seeded shuffle of case x repeat blocks,
	// each block running every arm in a shuffled order) or "sequential".
	Policy string `json:"policy" yaml:"policy"`
	Seed   int64  `json:"seed" yaml:"seed"`
}

// Guards stop a cohort cleanly between attempts; it can be resumed later.
type Guards struct {
	// MaxTemperatureC stops the run when the temperature source reads above
	// it (0 disables the guard).
	MaxTemperatureC float64 `json:"max_temperature_c,omitempty" yaml:"max_temperature_c"`
	// StopFile stops the run when the file exists (relative to the run
	// directory unless absolute).
	StopFile string `json:"stop_file,omitempty" yaml:"stop_file"`
}

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
	Name             string      `yaml:"name"`
	Suite            string      `yaml:"suite"`
	SuiteFingerprint string      `yaml:"suite_fingerprint"`
	Cases            yaml.Node   `yaml:"cases"`
	Repeats          []Repeat    `yaml:"repeats"`
	Arms             []armRef    `yaml:"arms"`
	Order            Order       `yaml:"order"`
	RestSeconds      float64     `yaml:"rest_seconds"`
	Concurrency      int         `yaml:"concurrency"`
	Guards           Guards      `yaml:"guards"`
	Defaults         *armDefault `yaml:"defaults"`
}

// armRef is an inline arm or a reference to an arm file.
type armRef struct {
	File string `yaml:"file"`
	Arm  `yaml:",inline"`
	// Sweep expands the arm into one arm per value (see expandSweeps).
	Sweep sweepAxes `yaml:"sweep"`
}

// armDefault holds budgets applied to arms that leave them unset.
type armDefault struct {
	Budgets Budgets `yaml:"budgets"`
}

// DefaultBudgets are DESIGN.md's per-attempt budgets.
var DefaultBudgets = Budgets{WallSeconds: 1800, GeneratedTokens: 65536, ToolCalls: 120, CommandTimeoutSeconds: 120}

// PlanError is a bad plan input, naming the file and field.
type PlanError struct {
	File, Field, Msg string
}

func (e *PlanError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: field %s: %s", e.File, e.Field, e.Msg)
}

func decodeYAML(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return &PlanError{File: file, Msg: err.Error()}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return &PlanError{File: file, Msg: "empty file"}
		}
		return &PlanError{File: file, Msg: err.Error()}
	}
	return nil
}

// LoadPlan reads, validates and resolves a plan file. Every problem is
// reported before anything runs, naming the file and the field.
func LoadPlan(file string) (*Plan, *tasks.Suite, error) {
	var py planYAML
	if err := decodeYAML(file, &py); err != nil {
		return nil, nil, err
	}
	bad := func(field, format string, a ...any) error {
		return &PlanError{File: file, Field: field, Msg: fmt.Sprintf(format, a...)}
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
	if len(p.Cases) == 0 {
		return nil, nil, bad("cases", "lists no case")
	}
	if len(py.Repeats) == 0 {
		return nil, nil, bad("repeats", "lists no repeat label")
	}
	labels, seeds := map[string]bool{}, map[int64]string{}
	for i, r := range py.Repeats {
		if r.Label == "" {
			return nil, nil, bad(fmt.Sprintf("repeats[%d].label", i), "is required")
		}
		if labels[r.Label] {
			return nil, nil, bad(fmt.Sprintf("repeats[%d].label", i), "duplicate label %q", r.Label)
		}
		if other, ok := seeds[r.Seed]; ok {
			return nil, nil, bad(fmt.Sprintf("repeats[%d].seed", i), "labels %q and %q share seed %d: paired repeats need distinct seeds", other, r.Label, r.Seed)
		}
		labels[r.Label], seeds[r.Seed] = true, r.Label
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
	names := map[string]bool{}
	for i, ref := range armRefs {
		field := armFields[i]
		arm := ref.Arm
		if ref.File != "" {
			if ref.Arm.Name != "" || ref.Arm.Endpoint != (Endpoint{}) {
				return nil, nil, bad(field+".file", "an arm comes either from a file or inline, not both")
			}
			af := ref.File
			if !filepath.IsAbs(af) {
				af = filepath.Join(base, af)
			}
			var fromFile Arm
			if err := decodeYAML(af, &fromFile); err != nil {
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
			if _, err := prof.OwnVars(arm.ProfileVars); err != nil {
				return nil, nil, bad(field+".profile_vars", "%v", err)
			}
		} else if len(arm.ProfileVars) > 0 {
			return nil, nil, bad(field+".profile_vars", "set without a server profile")
		}
		if py.Defaults != nil {
			arm.Budgets = fillBudgets(arm.Budgets, py.Defaults.Budgets)
		}
		arm.Budgets = fillBudgets(arm.Budgets, DefaultBudgets)
		if err := validateArm(arm); err != nil {
			return nil, nil, bad(field+"."+err.field, "%s", err.msg)
		}
		if names[arm.Name] {
			return nil, nil, bad(field+".name", "duplicate arm %q", arm.Name)
		}
		names[arm.Name] = true
		p.Arms = append(p.Arms, arm)
	}
	if p.Order.Policy == "" {
		p.Order.Policy = "interleaved"
	}
	if p.Order.Policy != "interleaved" && p.Order.Policy != "sequential" {
		return nil, nil, bad("order.policy", "%q is not interleaved or sequential", p.Order.Policy)
	}
	if p.Concurrency == 0 {
		p.Concurrency = 1
	}
	if p.Concurrency < 0 {
		return nil, nil, bad("concurrency", "must be at least 1")
	}
	for i, a := range p.Arms {
		if a.Profile != "" && p.Concurrency > 1 {
			return nil, nil, bad(fmt.Sprintf("arms[%d].profile", i), "arms that start their own server run one attempt at a time; set concurrency: 1")
		}
	}
	if p.RestSeconds < 0 {
		return nil, nil, bad("rest_seconds", "must not be negative")
	}
	if p.Guards.MaxTemperatureC < 0 {
		return nil, nil, bad("guards.max_temperature_c", "must not be negative")
	}
	p.Slots = realise(p)
	return p, suite, nil
}

func fillBudgets(b, d Budgets) Budgets {
	if b.WallSeconds == 0 {
		b.WallSeconds = d.WallSeconds
	}
	if b.GeneratedTokens == 0 {
		b.GeneratedTokens = d.GeneratedTokens
	}
	if b.ToolCalls == 0 {
		b.ToolCalls = d.ToolCalls
	}
	if b.CommandTimeoutSeconds == 0 {
		b.CommandTimeoutSeconds = d.CommandTimeoutSeconds
	}
	return b
}

type armErr struct{ field, msg string }

func validateArm(a Arm) *armErr {
	switch {
	case a.Name == "":
		return &armErr{"name", "is required"}
	case strings.ContainsAny(a.Name, " /\\,"):
		return &armErr{"name", fmt.Sprintf("%q: use letters, digits, '-', '_' or '.'", a.Name)}
	case a.Endpoint.BaseURL == "" && a.Profile == "":
		return &armErr{"endpoint.base_url", "is required (or name a server profile)"}
	case a.Endpoint.Model == "":
		return &armErr{"endpoint.model", "is required"}
	case a.MaxTokens < 0:
		return &armErr{"max_tokens", "must not be negative"}
	case a.Budgets.WallSeconds < 0 || a.Budgets.GeneratedTokens < 0 || a.Budgets.ToolCalls < 0:
		return &armErr{"budgets", "must not be negative"}
	}
	if a.Context != nil {
		if err := a.Context.Validate(); err != nil {
			return &armErr{"context", err.Error()}
		}
	}
	if a.Endpoint.BaseURL != "" && !strings.HasPrefix(a.Endpoint.BaseURL, "http://") && !strings.HasPrefix(a.Endpoint.BaseURL, "https://") {
		return &armErr{"endpoint.base_url", fmt.Sprintf("%q is not an http(s) URL", a.Endpoint.BaseURL)}
	}
	return nil
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
