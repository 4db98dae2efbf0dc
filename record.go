package evalctl

import (
	"time"
)

// State is where an attempt stands.
type State string

// Attempt states, as records store them: what happened to the attempt.
// Only completed attempts are scored; every other state has null outcomes
// and null measurements. docs/records.md lists them with the statuses
// readers derive (scored, ungraded, replaced).
const (
	// Planned: registered, not started yet.
	Planned State = "planned"
	// Running: started; its runner has not recorded how it ended (still
	// going, or the runner was killed: a resume records it interrupted).
	Running State = "running"
	// Completed: the agent's part ended and its answers were graded (or
	// are to be graded: see ScoreGraded).
	Completed State = "completed"
	// Interrupted: the runner stopped during it (Ctrl-C, a kill); the
	// slot runs again on resume.
	Interrupted State = "interrupted"
	// InfraFailed: the endpoint or the sandbox failed it before any token
	// of its own could count; unscored, replaceable (--replace-infra).
	InfraFailed State = "infra_failed"
	// CancelledBeforeStart: ended for good ('evalctl run --cancel')
	// before it started.
	CancelledBeforeStart State = "cancelled_before_start"
	// CancelledAfterStart: ended for good after it had started (its runner
	// had stopped during it, or it was interrupted, and the run was then
	// cancelled): whatever it did is not scored.
	CancelledAfterStart State = "cancelled_after_start"
	// ConfigOnly: a run that only checked its configuration ('evalctl run
	// --check': the plan, the suite and every endpoint's one-token
	// preflight); no inference, nothing scored.
	ConfigOnly State = "configuration_only"
	// Cancelled is what records written before the two cancelled states
	// were told apart hold. It is never written any more; StateOf reads it
	// as one of them, by whether the attempt had started.
	Cancelled State = "cancelled"
)

// StateOf is a's state in today's words: the stored state, except that a
// record written before cancelled attempts were told apart ("cancelled")
// reads as cancelled before or after start by whether it has a start time.
// The record itself is left as stored.
func StateOf(a *Attempt) State {
	if a.State == Cancelled {
		if a.StartedAt != nil {
			return CancelledAfterStart
		}
		return CancelledBeforeStart
	}
	return a.State
}

// IsCancelled reports whether s is a cancelled state, old or new.
func (s State) IsCancelled() bool {
	return s == Cancelled || s == CancelledBeforeStart || s == CancelledAfterStart
}

// Ended reports whether an attempt in state s is over for good: its slot
// runs no more (completed, cancelled, an infrastructure failure; an
// infrastructure failure can still be replaced on request). Planned,
// running and interrupted attempts are not: a resume runs their slots.
func (s State) Ended() bool {
	return s == Completed || s == InfraFailed || s.IsCancelled()
}

// Termination says why a turn ended.
type Termination string

// Turn terminations: how a turn can end.
const (
	TermCompleted           Termination = "completed"
	TermWallTimeLimit       Termination = "wall_time_limit"
	TermGeneratedTokenLimit Termination = "generated_token_limit"
	TermToolCallLimit       Termination = "tool_call_limit"
	TermOutputTruncated     Termination = "output_truncated"
	TermModelError          Termination = "model_error"
	TermServerError         Termination = "server_error"
	TermSandboxError        Termination = "sandbox_error"
	// TermAgentExited: an agent command ended without handing over (its
	// last response asked for tools, or it exited with a failure status)
	// and no budget or model failure explains it.
	TermAgentExited Termination = "agent_exited"
)

// SuiteRef names the suite an attempt ran under.
type SuiteRef struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Fingerprint string `json:"fingerprint"`
}

// Attempt is the record of one (arm, case, repeat).
type Attempt struct {
	ID    string `json:"id"`
	RunID string `json:"run_id"`
	// Slot is the attempt's place in the realised order of the plan.
	Slot    int    `json:"slot"`
	Arm     string `json:"arm"`
	ArmHash string `json:"arm_hash"`
	Case    string `json:"case"`
	// Language of the case; TypeScript attempts also need a passing
	// typecheck of their own to count as delivered.
	Language string `json:"language"`
	Repeat   string `json:"repeat"`
	Seed     int64  `json:"seed"`
	State    State  `json:"state"`
	// ReplacementOf is the id of the infra-failed attempt this one replaces.
	ReplacementOf  string        `json:"replacement_of,omitempty"`
	Suite          SuiteRef      `json:"suite"`
	ImageID        string        `json:"image_id"`
	EvalctlVersion string        `json:"evalctl_version"`
	Endpoint       *EndpointInfo `json:"endpoint"`
	// SandboxEngine names the Docker Engine the agent's container ran on
	// (a plan's sandbox_hosts name, or "local"); the image it ran is
	// ImageID on every engine. Empty until the container started.
	SandboxEngine string `json:"sandbox_engine,omitempty"`
	// Server is the identity file (relative to the run directory) of the
	// model server evalctl started for the attempt from the arm's profile:
	// build, model path, flags, weight digests. Empty for arms that name
	// an endpoint evalctl does not run.
	Server     string     `json:"server,omitempty"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// Device is the device label the attempt ran under ("" when the arm
	// names none: every such attempt shares one).
	Device string `json:"device,omitempty"`
	// OverlappedAttempts lists the ids of the attempts that were in flight
	// on the same device label at some time while this one was: their
	// speed figures may be contaminated. An empty list when none; absent
	// for an attempt the runner never ran (and in records from before
	// overlaps were recorded).
	OverlappedAttempts *[]string `json:"overlapped_attempts,omitempty"`
	// EndpointReleasedAt is when the attempt gave its endpoint and device
	// slot back: right after its last model response (or its failure),
	// before grading, which runs off the endpoint's critical path. The
	// attempt held the endpoint over [started_at, endpoint_released_at];
	// overlaps on a device are counted over that interval. For an attempt
	// found running at resume (its runner was killed) it is its
	// transcript's last write: its last model response or command result.
	// Absent for an attempt the runner never ran, one killed before its
	// first response, and records from before it was recorded.
	EndpointReleasedAt *time.Time `json:"endpoint_released_at,omitempty"`
	// Replica is the base URL of the replica of the arm's endpoint pool
	// the attempt ran on; empty for arms without a pool.
	Replica string `json:"replica,omitempty"`
	// ExpectedTurns is the number of phases of the case.
	ExpectedTurns int           `json:"expected_turns"`
	Turns         []Turn        `json:"turns"`
	Snapshots     []Snapshot    `json:"snapshots"`
	Measurements  *Measurements `json:"measurements"`
	// ArmUnchanged is whether the arm the attempt ran under was byte-identical
	// to the registered one; null when unknown (the attempt never started).
	ArmUnchanged *bool `json:"arm_unchanged"`
	// Error explains an infrastructure failure or an interruption.
	Error string `json:"error,omitempty"`
	// Input is what a long-context case's corpus strategy produced (null
	// for a case without a corpus).
	Input *InputRecord `json:"input,omitempty"`
	// ServerCounters are the endpoint's own /metrics counters moved during
	// the attempt; null when the endpoint serves none.
	ServerCounters *CounterDelta `json:"server_counters,omitempty"`
	// Agent is what an agent-command arm's attempt records of the agent
	// (identity, configuration files, exit codes, its own usage claims);
	// absent for the built-in loop.
	Agent *AgentRecord `json:"agent,omitempty"`
}

// InputRecord is the corpus part of a long-context case's first prompt:
// the strategy, its budget and the tokens it produced, as the endpoint's
// tokenizer counted them.
type InputRecord struct {
	Strategy      string `json:"strategy"`
	BudgetTokens  int    `json:"budget_tokens,omitempty"`
	InputTokens   int    `json:"input_tokens"`
	CorpusTokens  int    `json:"corpus_tokens"`
	Passages      int    `json:"passages,omitempty"`
	PassagesTotal int    `json:"passages_total,omitempty"`
}

// CounterDelta is what the server's cumulative counters moved between a
// /metrics read before the attempt's first request and one after its last.
// It covers every request of the window, failed and retried ones too, and
// whatever else the server did meanwhile: it is the attempt's own exactly
// when no other attempt on the same server overlapped the window (the
// report decides that from the windows of all attempts).
type CounterDelta struct {
	// Endpoint is the server root read.
	Endpoint string `json:"endpoint"`
	// WindowStart is when the before-read began, WindowEnd when the
	// after-read ended: the counters moved inside this window.
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// Each figure is null when the server does not export it.
	GeneratedTokens  *int64   `json:"generated_tokens"`
	GeneratedSeconds *float64 `json:"generated_seconds"`
	PromptTokens     *int64   `json:"prompt_tokens"`
	PromptSeconds    *float64 `json:"prompt_seconds"`
	// The figures are exact only to the precision the server printed its
	// counters with (llama-server: six significant digits, so a token
	// counter past 10^6 moves in steps of 10). Each *Within is how far the
	// true delta may be from the figure, from the two reads' printed
	// precision; absent (0) when the figure is exact.
	GeneratedTokensWithin  int64   `json:"generated_tokens_within,omitempty"`
	GeneratedSecondsWithin float64 `json:"generated_seconds_within,omitempty"`
	PromptTokensWithin     int64   `json:"prompt_tokens_within,omitempty"`
	PromptSecondsWithin    float64 `json:"prompt_seconds_within,omitempty"`
	// ReadSeconds is what the two reads cost.
	ReadSeconds float64 `json:"read_seconds"`
	// StartWaitSeconds is how long the runner waited before the first read
	// for the server's slots to be idle (an earlier request still being
	// released); it is outside the attempt's budgets.
	StartWaitSeconds float64 `json:"start_wait_seconds,omitempty"`
	// SettleSeconds is how long the runner waited after the attempt's last
	// request, before the closing read, for the server's slots to be idle:
	// a cut request is counted only once the server has released it.
	SettleSeconds float64 `json:"settle_seconds,omitempty"`
	// Unattributed says why the figures are null although the server
	// exports them: the window holds work that cannot be attributed to
	// this attempt alone (a slot still busy at a read).
	Unattributed string `json:"unattributed,omitempty"`
}

// EndpointInfo is what the model endpoint said about itself.
type EndpointInfo struct {
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	// Props is the server's /props body (llama-server), raw; null elsewhere.
	Props map[string]any `json:"props"`
	// Models is the /v1/models body, raw.
	Models      map[string]any `json:"models"`
	BuildInfo   *string        `json:"build_info"`
	ModelPath   *string        `json:"model_path"`
	ContextSize *int64         `json:"context_size"`
}

// PropsFields reads the build, model path and context size (from
// default_generation_settings.n_ctx) out of a llama-server /props body;
// each is nil when the body does not say.
func PropsFields(props map[string]any) (buildInfo, modelPath *string, contextSize *int64) {
	if s, ok := props["build_info"].(string); ok {
		buildInfo = &s
	}
	if s, ok := props["model_path"].(string); ok {
		modelPath = &s
	}
	if dgs, ok := props["default_generation_settings"].(map[string]any); ok {
		if n, ok := dgs["n_ctx"].(float64); ok {
			v := int64(n)
			contextSize = &v
		}
	}
	return buildInfo, modelPath, contextSize
}

// SetProps records a /props body and the fields PropsFields reads from it.
func (e *EndpointInfo) SetProps(props map[string]any) {
	e.Props = props
	e.BuildInfo, e.ModelPath, e.ContextSize = PropsFields(props)
}

// Turn is one phase of the conversation, from the user's request to the
// agent's hand-over or a limit.
type Turn struct {
	Phase       int            `json:"phase"`
	Termination Termination    `json:"termination"`
	Seconds     float64        `json:"seconds"`
	ToolCalls   map[string]int `json:"tool_calls"`
	ToolErrors  int            `json:"tool_errors"`
	Responses   int            `json:"responses"`
	// FinishReasons lists each response's finish_reason in order.
	FinishReasons []string `json:"finish_reasons"`
	// AgentFinished is true when the model handed over by answering without
	// tool calls (not stopped by a limit or an error).
	AgentFinished bool `json:"agent_finished"`
	// FinalText is true when non-empty text followed the last tool call.
	FinalText bool `json:"final_text"`
	// LastTest is the last test run the agent made in its sandbox; null if
	// it ran none. LastTypecheck likewise for tsc.
	LastTest      *SelfCheck `json:"last_test"`
	LastTypecheck *SelfCheck `json:"last_typecheck"`
	Error         string     `json:"error,omitempty"`
	// ModelErrorKind is the kind of the failed model call that ended a
	// model_error or server_error turn (connection, loading, busy,
	// server_error, broken_stream, dropped, timeout, context_overflow,
	// request_error, ...); its class (model.Kind.Class) is the one rule
	// that decides retried, scored or infrastructure.
	ModelErrorKind string `json:"model_error_kind,omitempty"`
}

// SelfCheck is a test or typecheck command the agent ran itself.
type SelfCheck struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Passed   bool   `json:"passed"`
}

// Snapshot is an answer tarball taken at the end of a phase.
type Snapshot struct {
	Phase  int    `json:"phase"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Measurements are the attempt's sums of what the server reported. Fields a
// server did not report are null, never zero: a sum is null as soon as one
// response of the attempt lacked the figure, never the partial sum of the
// others.
type Measurements struct {
	// NativeOutputTokens is null when some response reported no output
	// token count (neither timings.predicted_n nor usage).
	NativeOutputTokens *int64 `json:"native_output_tokens"`
	// DecodeSeconds is null when some response's decode time is unknown;
	// client-measured time counts as known and is marked by TimingsSource.
	DecodeSeconds *float64 `json:"decode_seconds"`
	PromptTokens  *int64   `json:"prompt_tokens"`
	PromptSeconds *float64 `json:"prompt_seconds"`
	CachedTokens  *int64   `json:"cached_tokens"`
	// FirstCachedTokens is the cache_n of the attempt's first response:
	// the prompt tokens the server reused from before the attempt, 0 when
	// it started cold (the default, see Arm.ReuseServerCache); absent when
	// the server did not say.
	FirstCachedTokens *int64  `json:"first_cached_tokens,omitempty"`
	TaskSeconds       float64 `json:"task_seconds"`
	ToolCalls         int     `json:"tool_calls"`
	ToolErrors        int     `json:"tool_errors"`
	Responses         int     `json:"responses"`
	MaxSequenceTokens *int64  `json:"max_sequence_tokens"`
	// MaxResponseTokens is the most output tokens one response generated
	// (a response its cap cut shows the cap); null when no response
	// reported a count.
	MaxResponseTokens *int64         `json:"max_response_tokens,omitempty"`
	FinishReasons     map[string]int `json:"finish_reasons"`
	DraftTokens       *int64         `json:"draft_tokens"`
	DraftAccepted     *int64         `json:"draft_accepted"`
	// UnknownResponses counts responses whose figures are unknown: failed
	// after delivery, cut by a budget or the size cap, or rejected as
	// implausible. Any of them makes the token and decode sums null.
	UnknownResponses int `json:"unknown_responses,omitempty"`
	// Anomalies say why responses' server figures were rejected.
	Anomalies []string `json:"anomalies,omitempty"`
	// TimingsSource is "server" when every figure came from server timings,
	// "client" when the client measured decode time itself, "mixed" otherwise
	// ("none" for an attempt without responses).
	TimingsSource string `json:"timings_source"`
}

// Outcome is an attempt's score under one suite version.
type Outcome struct {
	Suite        string `json:"suite"`
	SuiteVersion string `json:"suite_version"`
	// PhaseSolved holds each phase grade's solved flag in order.
	PhaseSolved []bool `json:"phase_solved"`
	Functional  bool   `json:"functional"`
	Delivered   bool   `json:"delivered"`
}
