// Package orchestrator turns plans into runs: it registers a plan of arms x
// cases x repeat labels, runs each attempt (sandbox, agent loop, snapshots,
// grading, record) and stores everything in a run directory so that nothing
// is lost and a killed run resumes where it stopped.
package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/orchestrator/longctx"
	"github.com/evalctl/evalctl/orchestrator/model"
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
	// Seed is sent with every request of the repeat's attempts ('run
	// --check' warns of a repeat that leaves it out).
	Seed int64 `json:"seed" yaml:"seed" default:"0"`
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
	// Budgets bound each attempt (unset ones take the plan's
	// defaults.budgets, else their own defaults).
	Budgets Budgets `json:"budgets" yaml:"budgets"`
	// Stream asks for server-sent events, which gives time to first token
	// and client-measured decode time where servers send no timings.
	Stream *bool `json:"stream,omitempty" yaml:"stream" default:"true"`
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
	// TimeoutSeconds bounds one model request; a request it ends is the
	// server's failure (server_error), scored, its tokens unknown.
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty" yaml:"timeout_seconds" default:"1800"`
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

// Streams reports whether the arm's requests ask for server-sent events
// (its stream field, by default the field's default tag).
func (a *Arm) Streams() bool {
	if a.Stream == nil {
		return defaultStream
	}
	return *a.Stream
}

var defaultStream = yamlcheck.Default[bool](Arm{}, "stream")

// Replicas are where the arm's attempts may go: its pool's replicas, or
// its one endpoint.
func (a *Arm) Replicas() []Replica {
	if len(a.Endpoint.Replicas) > 0 {
		return a.Endpoint.Replicas
	}
	return []Replica{{BaseURL: a.Endpoint.BaseURL, Device: a.Endpoint.Device}}
}

// DefaultRequestTimeoutSeconds bounds a model request when the arm names no
// timeout_seconds: the field's default tag, applied where the request is
// made (filling it into the arm would change the arm's hash).
var DefaultRequestTimeoutSeconds = yamlcheck.Default[float64](Endpoint{}, "timeout_seconds")

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
// the plan's defaults, then its default tag (DefaultBudgets); an explicit
// 0 means no limit where the agent can run without one.
type Budgets struct {
	// WallSeconds bounds an attempt's wall time (0: no limit).
	WallSeconds *float64 `json:"wall_seconds" yaml:"wall_seconds" range:"0," default:"1800"`
	// GeneratedTokens bounds the tokens an attempt generates, as the server
	// counts them (0: no limit).
	GeneratedTokens *int64 `json:"generated_tokens" yaml:"generated_tokens" range:"0," default:"65536"`
	// ToolCalls bounds an attempt's tool calls (0: no limit).
	ToolCalls *int `json:"tool_calls" yaml:"tool_calls" range:"0," default:"120"`
	// CommandTimeoutSeconds is the timeout of one command the agent runs
	// when the model names none (at least 1: a command always has a
	// timeout). The bash tool tells the model this value.
	CommandTimeoutSeconds *float64 `json:"command_timeout_seconds" yaml:"command_timeout_seconds" default:"120"`
}

// Order says how attempts are ordered.
type Order struct {
	// Policy is interleaved (a seeded shuffle of case x repeat blocks,
	// each block running every arm in a shuffled order) or sequential
	// (arm after arm).
	Policy string `json:"policy" yaml:"policy" enum:"interleaved,sequential" default:"interleaved"`
	// Seed fixes the interleaved order, so a plan always runs in the same
	// order.
	Seed int64 `json:"seed" yaml:"seed" default:"0"`
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
	// attempts in a row on one endpoint end as infrastructure failures (0
	// means the default).
	MaxConsecutiveInfraFailures int `json:"max_consecutive_infra_failures,omitempty" yaml:"max_consecutive_infra_failures" range:"0," default:"3"`
}

// DefaultMaxConsecutiveInfraFailures is the circuit breaker's default (the
// field's default tag): that many infrastructure failures in a row on one
// endpoint stop the run.
var DefaultMaxConsecutiveInfraFailures = yamlcheck.Default[int](Guards{}, "max_consecutive_infra_failures")

// Slot is one planned attempt.
type Slot struct {
	Index  int    `json:"index"`
	Arm    string `json:"arm"`
	Case   string `json:"case"`
	Repeat string `json:"repeat"`
	Seed   int64  `json:"seed"`
}

// DefaultBudgets are the per-attempt budgets an arm's unset budgets take:
// the default tags of Budgets.
func DefaultBudgets() Budgets {
	var b Budgets
	if err := yamlcheck.FillDefaults(&b); err != nil {
		panic(err) // a tag that is no value of its field; TestPlanDefaults loads them all
	}
	return b
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
