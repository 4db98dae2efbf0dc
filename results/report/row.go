// Package report pools the attempts of one or more run directories per arm
// (sums of tokens over sums of seconds, never an average of per-attempt
// rates), says how sure the numbers are (Wilson
// intervals, a paired bootstrap over cases, an exact McNemar test) and
// writes them as text, Markdown, JSON, CSV or one self-contained HTML page.
// Export and Verify turn a report into files anyone can check: the rows the
// aggregates come from, the aggregates, the protocol and their checksums.
//
// Everything is computed from Rows, one per attempt record, so that a report
// made from run directories and one recomputed from an export's
// attempts.json go through the same code and agree to the last bit.
package report

import (
	"time"

	"github.com/evalctl/evalctl"
)

// Status says whether an attempt has an outcome under the chosen suite
// version. Only scored attempts count; the others are unknown, never
// failures. The row's State says what happened (docs/records.md).
type Status string

// Attempt statuses.
const (
	// Scored: completed and graded under the chosen suite version.
	Scored Status = "scored"
	// Ungraded: completed, but its grade cannot be computed from the
	// stored records: some answer snapshot has no grade under the chosen
	// suite version (e.g. a regrade that did not cover this run), or the
	// records do not match up (a turn without a snapshot record).
	Ungraded Status = "ungraded"
	// Unscored: ended without an outcome (cancelled before or after
	// start, interrupted, infrastructure failure).
	Unscored Status = "unscored"
	// Pending: no outcome yet: planned, or running.
	Pending Status = "pending"
)

// statusOf is the status of an attempt that has no outcome, by its state.
func statusOf(state evalctl.State) Status {
	if state == evalctl.Planned || state == evalctl.Running {
		return Pending
	}
	return Unscored
}

// Row is one attempt record as the report sees it: identity, outcome under
// the chosen suite version and the measurements it pools. Row is what
// attempts.json and attempts.csv hold, so its JSON names are a stable
// interface. Null (nil) means unknown and is never counted.
type Row struct {
	RunID     string `json:"run_id"`
	AttemptID string `json:"attempt_id"`
	Slot      int    `json:"slot"`
	Arm       string `json:"arm"`
	ArmHash   string `json:"arm_hash"`
	Case      string `json:"case"`
	Language  string `json:"language"`
	Repeat    string `json:"repeat"`
	Seed      int64  `json:"seed"`
	// State is what happened to the attempt (evalctl.StateOf: records
	// from before cancelled attempts were told apart read as cancelled
	// before or after start).
	State string `json:"state"`
	// Phase is what a running attempt was doing when the run was read
	// ("turn 1, agent step 4, 812 tokens", "grading phase 1"); null for
	// an attempt not running, or one whose runner recorded none.
	Phase *string `json:"phase"`
	// Device is the device label the attempt ran under; StartedAt,
	// EndpointReleasedAt and FinishedAt when it started, gave its endpoint
	// back and ended (null when not recorded). The endpoint idle share is
	// computed from them.
	Device             string     `json:"device"`
	StartedAt          *time.Time `json:"started_at"`
	EndpointReleasedAt *time.Time `json:"endpoint_released_at"`
	FinishedAt         *time.Time `json:"finished_at"`
	// ReplacementOf is the infra-failed attempt this one replaces;
	// ReplacedBy the attempt that replaced this one. A replaced attempt
	// keeps its record but does not occupy a plan slot.
	ReplacementOf *string `json:"replacement_of"`
	ReplacedBy    *string `json:"replaced_by"`
	ImageID       string  `json:"image_id"`
	// Suite is the suite id ("name@version") the outcome was looked up
	// under; SuiteFingerprint is the fingerprint recorded in those grades
	// (null unless scored).
	Suite            string  `json:"suite"`
	SuiteFingerprint *string `json:"suite_fingerprint"`
	Status           Status  `json:"status"`
	Functional       *bool   `json:"functional"`
	Delivered        *bool   `json:"delivered"`
	ExpectedTurns    int     `json:"expected_turns"`
	Turns            *int    `json:"turns"`
	// Termination is the last turn's termination: the one that ended the
	// attempt.
	Termination        *string  `json:"termination"`
	NativeOutputTokens *int64   `json:"native_output_tokens"`
	DecodeSeconds      *float64 `json:"decode_seconds"`
	TaskSeconds        *float64 `json:"task_seconds"`
	PromptTokens       *int64   `json:"prompt_tokens"`
	PromptSeconds      *float64 `json:"prompt_seconds"`
	ToolCalls          *int     `json:"tool_calls"`
	ToolErrors         *int     `json:"tool_errors"`
	MaxSequenceTokens  *int64   `json:"max_sequence_tokens"`
	DraftTokens        *int64   `json:"draft_tokens"`
	DraftAccepted      *int64   `json:"draft_accepted"`
	TimingsSource      *string  `json:"timings_source"`
	// TokensSource says where NativeOutputTokens (and DecodeSeconds) come
	// from: "responses", or "server_counters" when recovered from the
	// server's /metrics delta (see applyCounters); absent when unknown.
	TokensSource *string `json:"tokens_source,omitempty"`
	// ServerGeneratedTokens is the server's generated-token counter delta
	// around the attempt; CounterCheck says whether the recorded sum
	// matched it ("match", "mismatch") or the window was shared.
	ServerGeneratedTokens *int64 `json:"server_generated_tokens,omitempty"`
	// ServerGeneratedTokensWithin is how far the delta may be from the
	// true count: the counters' printed precision (absent: exact). Past
	// it the check is "plausible" at best, and nothing is recovered.
	ServerGeneratedTokensWithin *int64  `json:"server_generated_tokens_within,omitempty"`
	CounterCheck                *string `json:"counter_check,omitempty"`
	// AgentReportedTokens is what an agent command claimed it generated
	// (its own usage report, summed over phases); absent for the built-in
	// loop and for an agent that did not report in every phase. Only the
	// server's count is a measurement: this is shown beside it.
	AgentReportedTokens *int64 `json:"agent_reported_tokens,omitempty"`
	// OverlappedAttempts counts the attempts that were in flight on the
	// same device while this one ran (its speed figures may be
	// contaminated when it is not 0); null when the record does not say
	// (runs from before overlaps were recorded).
	OverlappedAttempts *int `json:"overlapped_attempts"`
	// InputStrategy and InputTokens are what a long-context case's corpus
	// strategy produced (absent for cases without a corpus).
	InputStrategy *string `json:"input_strategy,omitempty"`
	InputTokens   *int64  `json:"input_tokens,omitempty"`
	// Evidence is what the outcome is computed from (see Evidence); null
	// unless the attempt completed.
	Evidence *Evidence `json:"evidence"`
	// Replica is the base URL of the endpoint-pool replica the attempt ran
	// on; absent for arms without a pool.
	Replica string `json:"replica,omitempty"`
}

// measured reports whether the row enters the pooled speed figures: scored
// and with measurements.
func (r *Row) measured() bool {
	return r.Status == Scored && r.NativeOutputTokens != nil && r.DecodeSeconds != nil && r.TaskSeconds != nil
}

// inPlan reports whether the row occupies a plan slot (it was not replaced).
func (r *Row) inPlan() bool { return r.ReplacedBy == nil }
