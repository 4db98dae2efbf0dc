package report

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

// RunInfo identifies one pooled run: what it ran under and which suite
// version its outcomes were looked up under.
type RunInfo struct {
	ID string `json:"id"`
	// Name is the plan's name (empty for runs made before runs had one).
	Name           string           `json:"name,omitempty"`
	Kind           string           `json:"kind"`
	CreatedAt      time.Time        `json:"created_at"`
	PlanSHA256     string           `json:"plan_sha256"`
	Suite          evalctl.SuiteRef `json:"suite"`
	ImageID        string           `json:"image_id"`
	EvalctlVersion string           `json:"evalctl_version"`
	// GradedSuite is the suite id ("name@version") outcomes were read under.
	GradedSuite string `json:"graded_suite"`
	// ArmOrder is the run's arms in plan order (empty for runs registered
	// before it was recorded); the default baseline is the first arm of
	// the first run.
	ArmOrder []string `json:"arm_order,omitempty"`
	// ArmIdentities are the arms' pooling identities (see
	// runstore.ArmIdentity); runs that lack them pool by arm hash.
	ArmIdentities map[string]*runstore.ArmIdentity `json:"arm_identities,omitempty"`
	// Runner says whether a runner was working on the run when it was
	// read: RunnerActive or RunnerNone. It is the one fact of a report not
	// read from the records (an export records it as it was).
	Runner string `json:"runner"`
	// Progress is how far the run got (see RunProgress).
	Progress *RunProgress `json:"progress"`
	// EndpointIdle is the run's endpoint idle share per device (see
	// endpointIdle); absent for runs that did not record when attempts
	// released their endpoint.
	EndpointIdle *EndpointIdle `json:"endpoint_idle,omitempty"`
	// Schedule is the time the run's sessions waited for sandbox places
	// and their longest time without progress (see RunSchedule); absent
	// for runs whose timeline does not carry the sessions' schedule events
	// (exports made before they were read).
	Schedule *RunSchedule `json:"schedule,omitempty"`
}

// Runner states of RunInfo.Runner.
const (
	// RunnerActive: a runner holds the run's lock: it is running.
	RunnerActive = "active"
	// RunnerNone: no runner holds it.
	RunnerNone = "none"
)

// Input is what a report is built from: the runs and one row per attempt
// record, in run order and then slot order. The order matters: pooled sums
// are taken in it, so the same input always gives the same floats.
type Input struct {
	Runs []RunInfo `json:"runs"`
	Rows []Row     `json:"rows"`
	// Sweeps are the sweeps the runs' plans declared.
	Sweeps []evalctl.SweepRecord `json:"sweeps,omitempty"`
	// ArmSetups are the model, endpoint and agent of each arm of the
	// runs' plans (the model x agent table reads them).
	ArmSetups []ArmAgentSetup `json:"arm_setups,omitempty"`
	// Timelines are each run's sessions and rests, by run id (see
	// Timeline); a run without one gets no endpoint idle share.
	Timelines map[string]*Timeline `json:"timelines,omitempty"`
	// Stop is the first run's stop rule (nil: its plan has none).
	Stop *StopInput `json:"stop,omitempty"`
}

// NewRunInfo describes a run whose outcomes are read under suiteVersion
// (see SuiteID).
func NewRunInfo(r *runstore.Run, suiteVersion string) RunInfo {
	return RunInfo{
		ID: r.ID, Name: r.Name, Kind: r.Kind, CreatedAt: r.CreatedAt, PlanSHA256: r.PlanSHA256,
		Suite: r.Suite, ImageID: r.ImageID, EvalctlVersion: r.EvalctlVersion,
		GradedSuite: SuiteID(r, suiteVersion), ArmOrder: r.ArmOrder, ArmIdentities: r.ArmIdentities,
	}
}

// SuiteID is the suite id outcomes of run r are read under: the suite the
// run ran under by default, another graded version of it when version is
// given ("2.0.2"), or exactly version when it names a suite ("dev@2.0.2").
func SuiteID(r *runstore.Run, version string) string {
	switch {
	case version == "":
		return tasks.Label(r.Suite.Name, r.Suite.Version)
	case strings.Contains(version, "@"):
		return version
	default:
		return tasks.Label(r.Suite.Name, version)
	}
}

// Load reads run directories into rows. suiteVersion picks the graded suite
// version (see SuiteID); an attempt without grades under it is ungraded.
func Load(ctx context.Context, dirs []string, suiteVersion string) (*Input, error) {
	in := &Input{Timelines: map[string]*Timeline{}}
	seen := map[string]string{}
	// The same attempt must not be pooled twice through two run
	// directories: an attempt id may occur once, and so may each record's
	// content digest (its run id left out: a copied run under another run
	// id).
	ids := map[string]string{}
	digests := map[string]string{}
	for _, dir := range dirs {
		st, err := runstore.Open(dir)
		if err != nil {
			return nil, err
		}
		run, err := st.ReadRun()
		if err != nil {
			return nil, fmt.Errorf("read run %s: %w", dir, err)
		}
		if prev, ok := seen[run.ID]; ok {
			return nil, fmt.Errorf("run %s given twice (%s and %s): its attempts would count double", run.ID, prev, dir)
		}
		seen[run.ID] = dir
		info := NewRunInfo(run, suiteVersion)
		info.Runner = RunnerNone
		if st.Busy() {
			info.Runner = RunnerActive
		}
		in.Runs = append(in.Runs, info)
		sweeps, err := readPlanSweeps(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		in.Sweeps = append(in.Sweeps, sweeps...)
		setups, err := readArmAgentSetups(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		in.ArmSetups = append(in.ArmSetups, setups...)
		attempts, err := st.Attempts()
		if err != nil {
			return nil, err
		}
		events, err := st.Events()
		if err != nil {
			return nil, fmt.Errorf("run %s: event log: %w", dir, err)
		}
		in.Timelines[run.ID] = NewTimeline(events)
		if err := readStop(in, dir, in.Timelines[run.ID]); err != nil {
			return nil, err
		}
		first := len(in.Rows)
		if err := loadRows(ctx, in, st, info.GradedSuite, attempts, ids, digests); err != nil {
			return nil, err
		}
		applyCounters(attempts, in.Rows[first:])
	}
	return in, nil
}

// loadRows appends a row per attempt record of one run; ids and digests
// hold, across runs, where each attempt id and record digest was met.
func loadRows(ctx context.Context, in *Input, st *runstore.Store, suiteID string, attempts []*evalctl.Attempt, ids, digests map[string]string) error {
	replacedBy := map[string]string{}
	for _, a := range attempts {
		if a.ReplacementOf != "" {
			replacedBy[a.ReplacementOf] = a.ID
		}
	}
	phases := st.Phases()
	for _, a := range attempts {
		if err := ctx.Err(); err != nil {
			return err
		}
		where := st.Dir + " attempt " + a.ID
		if prev, ok := ids[a.ID]; ok {
			return fmt.Errorf("%w: attempt id %s is in both %s and %s: it would be pooled twice (pool each run directory once)", ErrDuplicateAttempt, a.ID, prev, st.Dir)
		}
		ids[a.ID] = st.Dir
		var grades []*evalctl.Grade
		var err error
		if a.State == evalctl.Completed {
			grades, err = st.Grades(a, suiteID)
			if err != nil {
				return fmt.Errorf("run %s attempt %s: grades %s: %w", st.Dir, a.ID, suiteID, err)
			}
		}
		if a.State != evalctl.Planned {
			d, err := attemptDigest(a)
			if err != nil {
				return err
			}
			if prev, ok := digests[d]; ok {
				return fmt.Errorf("%w: %s and %s are the same attempt record (content SHA-256 %s, run id aside): it would be pooled twice", ErrDuplicateAttempt, prev, where, d[:16])
			}
			digests[d] = where
		}
		row := NewRow(a, suiteID, grades)
		if by, ok := replacedBy[a.ID]; ok {
			row.ReplacedBy = &by
		}
		if ph, ok := phases[a.ID]; ok && a.State == evalctl.Running {
			row.Phase = &ph
		}
		in.Rows = append(in.Rows, row)
	}
	return nil
}

// ErrDuplicateAttempt is returned when one attempt is reached through two
// run directories.
var ErrDuplicateAttempt = errors.New("duplicate attempt")

// attemptDigest is the SHA-256 of the attempt record's JSON with its run id
// blanked: the id, start and finish times and measurements make it unique
// to one real attempt.
func attemptDigest(a *evalctl.Attempt) (string, error) {
	c := *a
	c.RunID = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("attempt %s: %w", a.ID, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// NewRow turns an attempt record and its grades under suiteID (one per
// answer snapshot, nil where missing) into a row. A completed attempt with a
// snapshot left ungraded under suiteID is Ungraded: its outcome is unknown,
// not failed.
func NewRow(a *evalctl.Attempt, suiteID string, grades []*evalctl.Grade) Row {
	state := evalctl.StateOf(a)
	r := Row{
		RunID: a.RunID, AttemptID: a.ID, Slot: a.Slot, Arm: a.Arm, ArmHash: a.ArmHash,
		Case: a.Case, Language: a.Language, Repeat: a.Repeat, Seed: a.Seed,
		State: string(state), ImageID: a.ImageID, Suite: suiteID,
		ExpectedTurns: a.ExpectedTurns, Status: statusOf(state), Replica: a.Replica,
		Device: a.Device, StartedAt: utc(a.StartedAt), EndpointReleasedAt: utc(a.EndpointReleasedAt), FinishedAt: utc(a.FinishedAt),
	}
	if a.ReplacementOf != "" {
		s := a.ReplacementOf
		r.ReplacementOf = &s
	}
	if a.State != evalctl.Completed {
		return r
	}
	n := len(a.Turns)
	r.Turns = &n
	if n > 0 {
		t := string(a.Turns[n-1].Termination)
		r.Termination = &t
	}
	r.AgentReportedTokens = agentClaim(a.Agent)
	if m := a.Measurements; m != nil {
		task := m.TaskSeconds
		calls, errs := m.ToolCalls, m.ToolErrors
		src := m.TimingsSource
		// Tokens and decode seconds stay null where the attempt could not
		// sum them (a response without the figure): such a row is left out
		// of the speed pools (see Row.measured), never counted as 0.
		r.NativeOutputTokens, r.DecodeSeconds, r.TaskSeconds = clone(m.NativeOutputTokens), clone(m.DecodeSeconds), &task
		r.ToolCalls, r.ToolErrors = &calls, &errs
		r.PromptTokens, r.PromptSeconds = m.PromptTokens, m.PromptSeconds
		r.MaxSequenceTokens = m.MaxSequenceTokens
		r.DraftTokens, r.DraftAccepted = m.DraftTokens, m.DraftAccepted
		if a.OverlappedAttempts != nil {
			n := len(*a.OverlappedAttempts)
			r.OverlappedAttempts = &n
		}
		if src != "" {
			r.TimingsSource = &src
		}
	}
	r.Evidence = newEvidence(a, grades)
	if in := a.Input; in != nil {
		s, n := in.Strategy, int64(in.InputTokens)
		r.InputStrategy, r.InputTokens = &s, &n
	}
	o, ungraded := evalctl.ScoreGraded(a, grades)
	if ungraded {
		r.Status = Ungraded
		return r
	}
	if o == nil {
		return r
	}
	r.Status = Scored
	f, d := o.Functional, o.Delivered
	r.Functional, r.Delivered = &f, &d
	if len(grades) > 0 {
		// Phases graded under one suite id share its fingerprint; if they
		// do not, keep every value so the mixed-pool check sees them.
		fp := grades[0].SuiteFingerprint
		for _, g := range grades[1:] {
			if g.SuiteFingerprint != grades[0].SuiteFingerprint && !strings.Contains(fp, g.SuiteFingerprint) {
				fp += "+" + g.SuiteFingerprint
			}
		}
		r.SuiteFingerprint = &fp
	}
	return r
}

// utc is a copy of t in UTC (nil stays nil): rows write every time in one
// zone.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// clone copies the value p points to, so that a row shares no memory with
// the record it was made from; nil stays nil.
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
