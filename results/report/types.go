package report

import (
	"errors"
	"fmt"
	"strings"
)

// Schema names the version of the report's JSON shape.
const Schema = "evalctl.report/v1"

// SecondsPerWeek turns a decode rate into tokens per week of continuous
// decoding.
const SecondsPerWeek = 604800

// ErrMixed is returned (wrapped in a *MixedError) when runs that should not
// be pooled are given together without AllowMixed.
var ErrMixed = errors.New("runs differ in suite fingerprint, image or arm hash")

// ErrUnknownArm is returned when the baseline names no arm of the input.
var ErrUnknownArm = errors.New("unknown arm")

// MixedError lists what differs between pooled runs.
type MixedError struct{ Problems []string }

var _ error = (*MixedError)(nil)

func (e *MixedError) Error() string {
	return fmt.Sprintf("refusing to pool: %s (pass --allow-mixed to pool anyway; the report will be flagged)", strings.Join(e.Problems, "; "))
}

// Unwrap lets callers test for ErrMixed.
func (e *MixedError) Unwrap() error { return ErrMixed }

// Options are the choices a report is built with. They are recorded in the
// report so that Verify can rebuild it.
type Options struct {
	// Suite is the suite version outcomes are read under ("" = each run's
	// own); see SuiteID.
	Suite string `json:"suite"`
	// Baseline is the arm the others are compared with ("" = the first arm).
	Baseline string `json:"baseline"`
	// AllowMixed pools runs that differ in suite fingerprint, image or arm
	// hash, flagging the report instead of refusing.
	AllowMixed bool `json:"allow_mixed"`
}

// Report is the pooled result of one or more runs. Its JSON field names are
// a stable interface (aggregates.json is this struct).
type Report struct {
	Schema  string    `json:"schema"`
	Options Options   `json:"options"`
	Runs    []RunInfo `json:"runs"`
	// Mixed lists why these runs should not have been pooled; empty unless
	// Options.AllowMixed let them through.
	Mixed       []string     `json:"mixed"`
	Baseline    string       `json:"baseline"`
	Arms        []ArmReport  `json:"arms"`
	Cases       []CaseReport `json:"cases"`
	Comparisons []Comparison `json:"comparisons"`
	// Stop is what a run with a stop rule settled (absent without one).
	Stop  *StopReport `json:"stop,omitempty"`
	Notes []string    `json:"notes"`
	// BaselineWhy says why Baseline was chosen when no --baseline was
	// given; Legend says what each figure means (see Legend).
	BaselineWhy string        `json:"baseline_why,omitempty"`
	Legend      []LegendEntry `json:"legend"`
	// Sweeps are the trends of arms declared once with a sweep, ordered by
	// the swept value (absent when the plans declared none).
	Sweeps []SweepReport `json:"sweeps,omitempty"`
	// LongContext is, per arm, what long-context attempts sent and got
	// (absent without such attempts).
	LongContext []LongContextArm `json:"long_context,omitempty"`
	// AgentMatrix is the model x agent table (absent unless the arms
	// cross models and agents, one of them an agent command).
	AgentMatrix *AgentMatrix `json:"agent_matrix,omitempty"`
}

// Rate is k successes of n scored attempts with its Wilson 95% interval.
// With n = 0 there is no denominator: rate and interval are null.
type Rate struct {
	Count int      `json:"count"`
	Of    int      `json:"of"`
	Rate  *float64 `json:"rate"`
	Low   *float64 `json:"wilson_low"`
	High  *float64 `json:"wilson_high"`
}

func newRate(k, n int) Rate {
	r := Rate{Count: k, Of: n}
	if lo, hi, ok := Wilson(k, n); ok {
		p := float64(k) / float64(n)
		r.Rate, r.Low, r.High = &p, &lo, &hi
	}
	return r
}

// Stats are the pooled figures of a set of attempts (an arm, or one case of
// an arm). Speed figures pool scored attempts with measurements: sums of
// tokens over sums of seconds, never a mean of per-attempt rates. They are
// null when no attempt qualifies.
type Stats struct {
	// Attempts counts planned attempts: plan slots, one per attempt record
	// (the run registers a "planned" record per slot) except those replaced
	// (an infra failure and its rerun are one slot). States counts the
	// slots' attempts by state; Replaced counts the replaced attempts by
	// state, apart: they are not part of the cohort.
	Attempts  int            `json:"attempts"`
	States    map[string]int `json:"states"`
	Replaced  map[string]int `json:"replaced"`
	Completed int            `json:"completed"`
	Scored    int            `json:"scored"`
	Ungraded  int            `json:"ungraded"`
	// Unscored counts the attempts that ended without an outcome
	// (cancelled, interrupted, an infrastructure failure); Pending those
	// that have none yet (planned, running): neither is a failure.
	Unscored int `json:"unscored"`
	Pending  int `json:"pending"`
	// Functional and Delivered are over scored attempts.
	Functional Rate `json:"functional"`
	Delivered  Rate `json:"delivered"`
	// Measured counts the attempts the speed figures pool. Unmeasured counts
	// the scored attempts they leave out because a figure they need is null
	// (an attempt some response of which reported no output token count):
	// unknown, never pooled as 0.
	//
	// NativeOutputTokens, DecodeSeconds and TaskSeconds are the speed
	// pool: sums over the Measured attempts only, the numerator and
	// denominators of the two TPS figures. The totals below and the median
	// are each over every scored attempt that has that figure, whether or
	// not it has the others (a failed attempt's seconds are known when its
	// tokens are not); their *_attempts fields say how many each pools.
	Measured           int      `json:"measured"`
	Unmeasured         int      `json:"unmeasured"`
	NativeOutputTokens *int64   `json:"native_output_tokens"`
	DecodeSeconds      *float64 `json:"decode_seconds"`
	TaskSeconds        *float64 `json:"task_seconds"`
	// TotalOutputTokens is the sum of native_output_tokens over the
	// TotalOutputTokensAttempts scored attempts that have one.
	TotalOutputTokens         *int64 `json:"total_output_tokens"`
	TotalOutputTokensAttempts int    `json:"total_output_tokens_attempts"`
	// TotalTaskSeconds likewise over the scored attempts with task seconds.
	TotalTaskSeconds         *float64 `json:"total_task_seconds"`
	TotalTaskSecondsAttempts int      `json:"total_task_seconds_attempts"`
	DecodeTPS                *float64 `json:"decode_tps"`
	// TimingsSource says where the pooled decode seconds come from:
	// "server" when every measured attempt was timed by the server, "client"
	// when every one was measured by the client (such figures are
	// marked), "mixed" when both were pooled, "unknown" when some attempt
	// did not record it; null without a measured attempt. Attempts without
	// responses ("none") add no decode time and do not change it.
	TimingsSource *string  `json:"timings_source"`
	TaskOutputTPS *float64 `json:"task_output_tps"`
	// MedianAttemptSeconds is over every scored attempt with task seconds
	// (failures included): MedianAttemptSecondsAttempts of them.
	MedianAttemptSeconds         *float64 `json:"median_attempt_seconds"`
	MedianAttemptSecondsAttempts int      `json:"median_attempt_seconds_attempts"`
	// Terminations counts scored attempts by the termination of their last
	// turn.
	Terminations    map[string]int `json:"terminations"`
	DraftTokens     *int64         `json:"draft_tokens"`
	DraftAccepted   *int64         `json:"draft_accepted"`
	DraftAcceptance *float64       `json:"draft_acceptance"`
	// Overlapped counts the measured attempts that had another attempt in
	// flight on the same device while they ran: their decode and task
	// seconds may be contaminated. 0 is the normal case; null when some
	// measured attempt did not record its overlaps (runs from before they
	// were recorded): unknown, never 0.
	Overlapped *int `json:"overlapped"`
}

// ArmReport is one arm's pooled figures and its comparison with the
// baseline's speed (null for the baseline itself).
type ArmReport struct {
	Arm string `json:"arm"`
	// ArmHashes lists the distinct registered arm hashes (one unless mixed).
	ArmHashes []string `json:"arm_hashes"`
	Stats
	DecodeTPSGainPercent     *float64 `json:"decode_tps_gain_percent"`
	TaskOutputTPSGainPercent *float64 `json:"task_output_tps_gain_percent"`
	TokensPerWeek            *float64 `json:"tokens_per_week"`
	// DecodeTPSInterval and TaskOutputTPSInterval are 95% case-resampling
	// bootstrap intervals of the arm's pooled speeds.
	DecodeTPSInterval     *Interval `json:"decode_tps_interval"`
	TaskOutputTPSInterval *Interval `json:"task_output_tps_interval"`
	// Replicas are the arm's decode speeds per endpoint-pool replica;
	// absent for arms without a pool (see addReplicaSpeeds).
	Replicas []ReplicaSpeed `json:"replicas,omitempty"`
	// AgentUsage is what the arm's agent command claimed it generated
	// beside what the server counted; absent for the built-in loop and an
	// agent without a usage adapter.
	AgentUsage *AgentUsage `json:"agent_usage,omitempty"`
}

// AgentUsage sums an arm's agent claims and the server's counts over the
// Attempts (with an outcome) that have both; DivergencePercent is the
// claim's distance from the count, null when the server counted none.
// Only the server's count is a measurement.
type AgentUsage struct {
	Attempts            int      `json:"attempts"`
	AgentClaimedTokens  int64    `json:"agent_claimed_tokens"`
	ServerCountedTokens int64    `json:"server_counted_tokens"`
	DivergencePercent   *float64 `json:"divergence_percent"`
}

// CaseReport is one case across arms.
type CaseReport struct {
	Case string    `json:"case"`
	Arms []CaseArm `json:"arms"`
}

// CaseArm is one case under one arm: pooled like an arm, with each attempt.
type CaseArm struct {
	Arm string `json:"arm"`
	Stats
	Attempts []Cell `json:"attempt_outcomes"`
}

// Cell is one attempt's outcome in the per-case grid.
type Cell struct {
	Repeat     string `json:"repeat"`
	RunID      string `json:"run_id"`
	AttemptID  string `json:"attempt_id"`
	Status     Status `json:"status"`
	Functional *bool  `json:"functional"`
	Delivered  *bool  `json:"delivered"`
}

// Transitions are paired outcomes of two arms over matching (case, repeat)
// attempts. A pair with an unknown side is counted apart as unpaired.
type Transitions struct {
	Pairs              int `json:"pairs"`
	BothPass           int `json:"both_pass"`
	BothFail           int `json:"both_fail"`
	CandidateImproves  int `json:"candidate_improves"`
	CandidateRegresses int `json:"candidate_regresses"`
	Unpaired           int `json:"unpaired"`
	// McNemarP is the exact two-sided McNemar p-value on the discordant
	// pairs; null without pairs.
	McNemarP *float64 `json:"mcnemar_exact_p"`
	Words    string   `json:"words"`
}

// RatioInterval is the candidate's decode TPS over the baseline's, pooled
// over the cases both measured, with a paired bootstrap 95% interval that
// resamples cases (a case's repeats stay together).
type RatioInterval struct {
	Ratio     *float64 `json:"ratio"`
	Low       *float64 `json:"low"`
	High      *float64 `json:"high"`
	Cases     int      `json:"cases"`
	Resamples int      `json:"resamples"`
	Seed      uint64   `json:"seed"`
	Words     string   `json:"words"`
}

// Comparison is one arm against the baseline.
type Comparison struct {
	Baseline       string        `json:"baseline"`
	Candidate      string        `json:"candidate"`
	Functional     Transitions   `json:"functional"`
	Delivered      Transitions   `json:"delivered"`
	DecodeTPSRatio RatioInterval `json:"decode_tps_ratio"`
}

// Arm returns the named arm's report, or nil.
func (r *Report) Arm(name string) *ArmReport {
	for i := range r.Arms {
		if r.Arms[i].Arm == name {
			return &r.Arms[i]
		}
	}
	return nil
}
