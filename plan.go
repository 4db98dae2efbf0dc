package evalctl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// This file holds plan.json: the plan as registered, resolved, and what
// it records of sweeps and reruns. The plan decoder (orchestrator) fills
// these types from a plan file and validates them; every reader of a run
// directory reads them from here without linking the runner.

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
	// Stop is the opt-in sequential stop rule (nil: the run runs every
	// slot). It is part of plan.json, so of the plan hash.
	Stop *StopRule `json:"stop,omitempty"`
	// AgentImageAt says, per arm name, where the arm's agent.image was
	// written: its existence is checked against the engine only when the
	// run starts, and that error names the file and line as a plan
	// mistake does. Not part of plan.json.
	AgentImageAt map[string]FieldAt `json:"-"`
}

// FieldAt is where a field of a plan was written: the file, the line (0
// when unknown) and the field path in that file.
type FieldAt struct {
	File  string
	Line  int
	Field string
}

// StopMethod names the interval a stop rule reads: an anytime-valid
// confidence sequence for the mean per-pair log decode-TPS ratio (the
// scale-invariant normal mixture; results/power/sequence.go).
const StopMethod = "t-mixture confidence sequence, 95%"

// StopRule stops a run cleanly once the candidate's decode-TPS ratio over
// the baseline is settled: after every complete pair (a case and repeat
// label measured in both arms), an anytime-valid 95% confidence sequence
// for the ratio is read, and the run stops when it is narrow enough, or
// (by default) when it excludes 1. Outcomes are never settled by this
// rule; a stopped run resumes to the full plan.
type StopRule struct {
	// Baseline names the arm the candidate is compared with (default, in
	// a plan of two arms: the first).
	Baseline string `json:"baseline" yaml:"baseline"`
	// Candidate names the arm compared (default, in a plan of two arms:
	// the second).
	Candidate string `json:"candidate" yaml:"candidate"`
	// HalfWidth is the target: the interval reaches at most this fraction
	// above the estimated ratio (0.03: ±3%) (required).
	HalfWidth float64 `json:"half_width" yaml:"half_width" range:"0,1"`
	// MinPairs is the fewest complete pairs before the rule may stop the
	// run.
	MinPairs int `json:"min_pairs" yaml:"min_pairs" range:"2," default:"4"`
	// ExcludesOne also stops the run when the interval lies wholly above
	// or below a ratio of 1 (the speed difference is settled, if not its
	// size to the target).
	ExcludesOne *bool `json:"excludes_one" yaml:"excludes_one" default:"true"`
	// Mixing is the confidence sequence's mixing scale: the prior variance
	// of the standardised effect it averages over; fixed before the run,
	// as the interval's validity needs.
	Mixing float64 `json:"mixing" yaml:"mixing" range:"0.01,100" default:"2"`
	// Method names the interval (StopMethod); filled in, not written.
	Method string `json:"method" yaml:"-"`
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
	// ReuseServerCache lets an attempt's first request reuse the server's
	// prompt cache from earlier attempts. By default each attempt starts
	// cold (its first request is sent with cache_prompt false, and the
	// record's first_cached_tokens shows 0), so that its prompt time does
	// not depend on what ran before it; reuse from step to step within an
	// attempt stays either way.
	ReuseServerCache bool `json:"reuse_server_cache,omitempty" yaml:"reuse_server_cache"`
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
	Context *ContextStrategy `json:"context,omitempty" yaml:"context"`
	// Agent runs an agent command (an agent CLI in the attempt's sandbox,
	// reaching the model only through evalctl's recording proxy) instead
	// of the built-in tool loop; absent means the built-in loop.
	Agent *AgentCommand `json:"agent,omitempty" yaml:"agent"`
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

// Replicas are where the arm's attempts may go: its pool's replicas, or
// its one endpoint.
func (a *Arm) Replicas() []Replica {
	if len(a.Endpoint.Replicas) > 0 {
		return a.Endpoint.Replicas
	}
	return []Replica{{BaseURL: a.Endpoint.BaseURL, Device: a.Endpoint.Device}}
}

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
// the plan's defaults, then its default tag (the loader applies them); an
// explicit 0 means no limit where the agent can run without one.
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

// Slot is one planned attempt.
type Slot struct {
	Index  int    `json:"index"`
	Arm    string `json:"arm"`
	Case   string `json:"case"`
	Repeat string `json:"repeat"`
	Seed   int64  `json:"seed"`
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

// Encode is the plan's canonical JSON, as written to plan.json.
func (p *Plan) Encode() ([]byte, error) {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// SandboxHost is one Docker Engine that runs sandboxes (agent and grading
// containers), in a plan's sandbox_hosts or a hosts file's hosts.
type SandboxHost struct {
	// Name names the engine in records (attempts' sandbox_engine, grades'
	// engine) and messages; required and unique.
	Name string `json:"name" yaml:"name"`
	// Host is the engine's address: tcp://HOST:2376 (with tls_dir),
	// ssh://USER@HOST (the docker CLI on the remote, a key for ssh), or
	// unix:///PATH; empty means the engine evalctl uses by default
	// (DOCKER_HOST, else the local socket), which also builds the image
	// and sends it to the others.
	Host string `json:"host,omitempty" yaml:"host"`
	// TLSDir holds ca.pem, cert.pem and key.pem for a tcp:// engine that
	// checks client certificates (relative to the file naming it).
	TLSDir string `json:"tls_dir,omitempty" yaml:"tls_dir"`
	// SSHConfig is the ssh_config file an ssh:// engine is reached with
	// instead of the user's (its key, known hosts, port; relative to the
	// file naming it).
	SSHConfig string `json:"ssh_config,omitempty" yaml:"ssh_config"`
	// Capacity is how many containers run on the engine at once.
	Capacity int `json:"capacity" yaml:"capacity" range:"1," default:"1"`
	// Machine is the device label (an endpoint's or replica's device) of
	// the machine the engine runs on: agent containers of attempts on that
	// device go here first.
	Machine string `json:"machine,omitempty" yaml:"machine"`
}

// SweepRecord is one declared arm's expansion as registered in the plan:
// its name, the swept fields and, per expanded arm, the value of each
// field (as JSON), in the order the values were declared.
type SweepRecord struct {
	Name   string       `json:"name"`
	Fields []string     `json:"fields"`
	Arms   []SweepPoint `json:"arms"`
}

// SweepPoint is one expanded arm of a sweep.
type SweepPoint struct {
	Arm    string            `json:"arm"`
	Values []json.RawMessage `json:"values"`
}

// RerunRecord is what a diagnostic rerun's plan records (plan.json
// "rerun"): the original attempt, the settings changed and the label.
type RerunRecord struct {
	OriginalRunID     string `json:"original_run_id"`
	OriginalRunDir    string `json:"original_run_dir"`
	OriginalAttemptID string `json:"original_attempt_id"`
	OriginalArm       string `json:"original_arm"`
	OriginalArmHash   string `json:"original_arm_hash"`
	// Label names the rerun's arm (the original's name when empty).
	Label string `json:"label"`
	// Changes is the arm diff: every setting whose value differs, with
	// its value before and after (null when unset).
	Changes []ArmChange `json:"changes"`
}

// ArmChange is one setting changed by a rerun.
type ArmChange struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// Context strategies: how a long-context case's corpus reaches the model.
const (
	ContextFull      = "full"
	ContextCropped   = "cropped"
	ContextRetrieved = "retrieved"
)

// ContextStrategy is an arm's choice of how the corpus reaches the model.
type ContextStrategy struct {
	// Name is full, cropped or retrieved.
	Name string `json:"strategy" yaml:"strategy" enum:"full,cropped,retrieved"`
	// Tokens is the budget of cropped and retrieved (input tokens of the
	// corpus part of the prompt, as the endpoint counts them).
	Tokens int `json:"tokens,omitempty" yaml:"tokens"`
}

// Validate checks the strategy.
func (s *ContextStrategy) Validate() error {
	switch s.Name {
	case ContextFull:
		if s.Tokens != 0 {
			return errors.New("tokens: full sends the whole corpus; leave tokens out")
		}
	case ContextCropped, ContextRetrieved:
		if s.Tokens <= 0 {
			return fmt.Errorf("tokens: %s needs a positive token budget", s.Name)
		}
	default:
		return fmt.Errorf("strategy: %q is not full, cropped or retrieved", s.Name)
	}
	return nil
}
