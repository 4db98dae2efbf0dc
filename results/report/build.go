package report

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/evalctl/evalctl/results/runstore"
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
	Notes       []string     `json:"notes"`
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
	// (an infra failure and its rerun are one slot). States counts every
	// record by state, replaced ones too.
	Attempts  int            `json:"attempts"`
	States    map[string]int `json:"states"`
	Completed int            `json:"completed"`
	Scored    int            `json:"scored"`
	Ungraded  int            `json:"ungraded"`
	Unscored  int            `json:"unscored"`
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
	// when every one was measured by the client (DESIGN.md: such figures are
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

// Build pools the input. Rows are taken in input order; arms appear in the
// order they are first met and cases sorted by name.
func Build(in *Input, opts Options) (*Report, error) {
	if err := validateRows(in.Rows); err != nil {
		return nil, err
	}
	rep := &Report{
		Schema: Schema, Options: opts, Runs: in.Runs,
		Mixed: mixedProblems(in), Arms: []ArmReport{}, Cases: []CaseReport{},
		Comparisons: []Comparison{}, Notes: []string{}, Legend: Legend(),
	}
	if rep.Runs == nil {
		rep.Runs = []RunInfo{}
	}
	if len(rep.Mixed) > 0 && !opts.AllowMixed {
		return nil, &MixedError{Problems: rep.Mixed}
	}
	var armNames []string
	byArm := map[string][]*Row{}
	byCaseArm := map[[2]string][]*Row{}
	caseSet := map[string]bool{}
	for i := range in.Rows {
		r := &in.Rows[i]
		if _, ok := byArm[r.Arm]; !ok {
			armNames = append(armNames, r.Arm)
		}
		byArm[r.Arm] = append(byArm[r.Arm], r)
		byCaseArm[[2]string{r.Case, r.Arm}] = append(byCaseArm[[2]string{r.Case, r.Arm}], r)
		caseSet[r.Case] = true
	}
	if len(armNames) == 0 {
		return rep, nil
	}
	rep.Baseline = opts.Baseline
	if rep.Baseline == "" {
		rep.Baseline, rep.BaselineWhy = defaultBaseline(in, armNames, byArm)
	} else if _, ok := byArm[rep.Baseline]; !ok {
		return nil, fmt.Errorf("baseline %q: %w (arms: %s)", rep.Baseline, ErrUnknownArm, strings.Join(armNames, ", "))
	}
	// Swept arms stand in order of their value (the default baseline
	// stays the first arm met).
	armNames = orderSweeps(armNames, in.Sweeps)
	for _, name := range armNames {
		ar := ArmReport{Arm: name, ArmHashes: distinct(byArm[name], func(r *Row) string { return r.ArmHash }), Stats: pool(byArm[name])}
		if ar.DecodeTPS != nil {
			w := *ar.DecodeTPS * SecondsPerWeek
			ar.TokensPerWeek = &w
		}
		rep.Arms = append(rep.Arms, ar)
	}
	base := *rep.Arm(rep.Baseline)
	for i := range rep.Arms {
		a := &rep.Arms[i]
		if a.Arm == rep.Baseline {
			continue
		}
		a.DecodeTPSGainPercent = gain(a.DecodeTPS, base.DecodeTPS)
		a.TaskOutputTPSGainPercent = gain(a.TaskOutputTPS, base.TaskOutputTPS)
	}
	cases := make([]string, 0, len(caseSet))
	for c := range caseSet {
		cases = append(cases, c)
	}
	sort.Strings(cases)
	for _, c := range cases {
		cr := CaseReport{Case: c}
		for _, name := range armNames {
			rows := byCaseArm[[2]string{c, name}]
			ca := CaseArm{Arm: name, Stats: pool(rows), Attempts: []Cell{}}
			for _, r := range rows {
				if !r.inPlan() {
					continue
				}
				ca.Attempts = append(ca.Attempts, Cell{Repeat: r.Repeat, RunID: r.RunID, AttemptID: r.AttemptID, Status: r.Status, Functional: r.Functional, Delivered: r.Delivered})
			}
			sort.SliceStable(ca.Attempts, func(i, j int) bool { return repeatLess(ca.Attempts[i].Repeat, ca.Attempts[j].Repeat) })
			cr.Arms = append(cr.Arms, ca)
		}
		rep.Cases = append(rep.Cases, cr)
	}
	for _, name := range armNames {
		if name == rep.Baseline {
			continue
		}
		cmp := compare(rep.Baseline, name, byArm[rep.Baseline], byArm[name], cases)
		rep.Comparisons = append(rep.Comparisons, cmp)
		rep.Notes = append(rep.Notes, cmp.Functional.Words, cmp.Delivered.Words, cmp.DecodeTPSRatio.Words)
	}
	addSpeedIntervals(rep, byArm, cases)
	if len(in.Sweeps) > 0 {
		rep.Sweeps = sweepReports(rep, in.Sweeps)
	}
	rep.LongContext = longContext(armNames, byArm)
	rep.Notes = append(rep.Notes, addReplicaSpeeds(rep, byArm, cases)...)
	rep.Notes = append(rep.Notes, countNotes(in)...)
	rep.Notes = append(rep.Notes, counterNotes(in)...)
	rep.Notes = append(rep.Notes, timingNotes(rep)...)
	rep.Notes = append(rep.Notes, overlapNotes(rep)...)
	rep.Notes = append(rep.Notes, idleNotes(in)...)
	return rep, nil
}

// defaultBaseline is the arm compared with when none is asked for: the
// first arm of the first run's plan that has attempts here, so that every
// report of the same runs (and the demo's own) names the same one. Runs
// that did not record their plan order fall back to the first arm met in
// the rows. why says which rule chose it.
func defaultBaseline(in *Input, armNames []string, byArm map[string][]*Row) (name, why string) {
	for _, ri := range in.Runs {
		for i, a := range ri.ArmOrder {
			if _, ok := byArm[a]; ok {
				if i == 0 {
					return a, fmt.Sprintf("the first arm of run %s's plan (choose another with --baseline)", ri.ID)
				}
				return a, fmt.Sprintf("the first arm of run %s's plan that has attempts here (choose another with --baseline)", ri.ID)
			}
		}
		if len(ri.ArmOrder) > 0 {
			break
		}
	}
	return armNames[0], "the arm of the first attempt record; the run did not record its plan's arm order (choose another with --baseline)"
}

// overlapNotes warns, per arm, of measured attempts that had another in
// flight on the same device: their speed figures are not clean.
func overlapNotes(r *Report) []string {
	var out []string
	for _, a := range r.Arms {
		if a.Overlapped != nil && *a.Overlapped > 0 {
			out = append(out, fmt.Sprintf("WARNING: arm %s: %d of %d measured attempts overlapped another attempt on the same device; their decode and task seconds may be contaminated, and so are the arm's speed figures", a.Arm, *a.Overlapped, a.Measured))
		}
	}
	return out
}

// ErrBadRow is returned for a row whose fields contradict each other (e.g.
// an attempts.json edited by hand).
var ErrBadRow = errors.New("inconsistent attempt row")

func validateRows(rows []Row) error {
	for i := range rows {
		r := &rows[i]
		bad := func(why string) error {
			return fmt.Errorf("row %d (attempt %s): %s: %w", i, r.AttemptID, why, ErrBadRow)
		}
		switch r.Status {
		case Scored:
			if r.Functional == nil || r.Delivered == nil {
				return bad("scored but functional or delivered is null")
			}
			if *r.Delivered && !*r.Functional {
				return bad("delivered but not functional")
			}
		case Ungraded, Unscored:
			if r.Functional != nil || r.Delivered != nil {
				return bad(string(r.Status) + " but has an outcome")
			}
		default:
			return bad(fmt.Sprintf("unknown status %q", r.Status))
		}
		if r.Arm == "" || r.Case == "" {
			return bad("no arm or case")
		}
	}
	return nil
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

func gain(v, base *float64) *float64 {
	if v == nil || base == nil || *base == 0 {
		return nil
	}
	g := (*v / *base - 1) * 100
	return &g
}

// pool computes Stats over rows, summing in the given order.
func pool(rows []*Row) Stats {
	s := Stats{States: map[string]int{}, Terminations: map[string]int{}}
	var fun, del int
	var tok, draftTok, draftAcc int64
	var dec, task float64
	var allTok int64
	var allTask float64
	var draftSeen, overlapUnknown bool
	var overlapped int
	var secs []float64
	var src timingSources
	for _, r := range rows {
		s.States[r.State]++
		if !r.inPlan() {
			continue
		}
		s.Attempts++
		if r.State == "completed" {
			s.Completed++
		}
		switch r.Status {
		case Scored:
			s.Scored++
		case Ungraded:
			s.Ungraded++
			continue
		default:
			s.Unscored++
			continue
		}
		if *r.Functional {
			fun++
		}
		if *r.Delivered {
			del++
		}
		if r.Termination != nil {
			s.Terminations[*r.Termination]++
		}
		if r.NativeOutputTokens != nil {
			allTok += *r.NativeOutputTokens
			s.TotalOutputTokensAttempts++
		}
		if r.TaskSeconds != nil {
			allTask += *r.TaskSeconds
			s.TotalTaskSecondsAttempts++
			secs = append(secs, *r.TaskSeconds)
		}
		if !r.measured() {
			s.Unmeasured++
			continue
		}
		s.Measured++
		switch {
		case r.OverlappedAttempts == nil:
			overlapUnknown = true
		case *r.OverlappedAttempts > 0:
			overlapped++
		}
		src.add(r.TimingsSource)
		tok += *r.NativeOutputTokens
		dec += *r.DecodeSeconds
		task += *r.TaskSeconds
		if r.DraftTokens != nil && r.DraftAccepted != nil {
			draftSeen = true
			draftTok += *r.DraftTokens
			draftAcc += *r.DraftAccepted
		}
	}
	s.Functional = newRate(fun, s.Scored)
	s.Delivered = newRate(del, s.Scored)
	if s.Measured > 0 {
		s.NativeOutputTokens, s.DecodeSeconds, s.TaskSeconds = &tok, &dec, &task
		if dec > 0 {
			v := float64(tok) / dec
			s.DecodeTPS = &v
		}
		if task > 0 {
			v := float64(tok) / task
			s.TaskOutputTPS = &v
		}
		s.TimingsSource = src.result()
		if !overlapUnknown {
			s.Overlapped = &overlapped
		}
	}
	if s.TotalOutputTokensAttempts > 0 {
		s.TotalOutputTokens = &allTok
	}
	if s.TotalTaskSecondsAttempts > 0 {
		s.TotalTaskSeconds = &allTask
	}
	if m, ok := median(secs); ok {
		s.MedianAttemptSeconds = &m
		s.MedianAttemptSecondsAttempts = len(secs)
	}
	if draftSeen {
		s.DraftTokens, s.DraftAccepted = &draftTok, &draftAcc
		if draftTok > 0 {
			v := float64(draftAcc) / float64(draftTok)
			s.DraftAcceptance = &v
		}
	}
	return s
}

// Timing sources of an attempt's or a pool's decode seconds.
const (
	TimingsServer  = "server"
	TimingsClient  = "client"
	TimingsMixed   = "mixed"
	TimingsUnknown = "unknown"
	// TimingsNone is an attempt without responses: no decode time at all.
	TimingsNone = "none"
)

// timingSources collects the timings_source of pooled attempts.
type timingSources struct {
	server, client, mixed, unknown bool
}

func (t *timingSources) add(src *string) {
	switch {
	case src == nil:
		t.unknown = true
	case *src == TimingsServer:
		t.server = true
	case *src == TimingsClient:
		t.client = true
	case *src == TimingsMixed:
		t.mixed = true
	case *src == TimingsNone:
	default:
		t.unknown = true
	}
}

// result is the pool's source: one kind alone names itself, client and
// server together are mixed, and any attempt of unknown source makes the
// whole unknown rather than claim a kind; null when no attempt added time.
func (t *timingSources) result() *string {
	var v string
	switch {
	case t.unknown:
		v = TimingsUnknown
	case t.mixed || (t.server && t.client):
		v = TimingsMixed
	case t.client:
		v = TimingsClient
	case t.server:
		v = TimingsServer
	default:
		return nil
	}
	return &v
}

// pairKey matches attempts across arms: same case, same repeat label (same
// seed) and, when several runs hold the same pair, the same occurrence.
type pairKey struct {
	Case, Repeat string
	N            int
}

func pairIndex(rows []*Row) map[pairKey]*Row {
	out := map[pairKey]*Row{}
	seen := map[[2]string]int{}
	for _, r := range rows {
		if !r.inPlan() {
			continue
		}
		k := [2]string{r.Case, r.Repeat}
		out[pairKey{r.Case, r.Repeat, seen[k]}] = r
		seen[k]++
	}
	return out
}

func compare(baseName, candName string, baseRows, candRows []*Row, cases []string) Comparison {
	c := Comparison{Baseline: baseName, Candidate: candName}
	bi, ci := pairIndex(baseRows), pairIndex(candRows)
	keys := map[pairKey]bool{}
	for k := range bi {
		keys[k] = true
	}
	for k := range ci {
		keys[k] = true
	}
	for k := range keys {
		b, cand := bi[k], ci[k]
		if b == nil || cand == nil || b.Status != Scored || cand.Status != Scored {
			c.Functional.Unpaired++
			c.Delivered.Unpaired++
			continue
		}
		c.Functional.add(*b.Functional, *cand.Functional)
		c.Delivered.add(*b.Delivered, *cand.Delivered)
	}
	c.Functional.finish("functional", baseName, candName)
	c.Delivered.finish("delivered", baseName, candName)
	c.DecodeTPSRatio = ratioInterval(baseName, candName, baseRows, candRows, cases)
	return c
}

func (t *Transitions) add(base, cand bool) {
	t.Pairs++
	switch {
	case base && cand:
		t.BothPass++
	case !base && !cand:
		t.BothFail++
	case cand:
		t.CandidateImproves++
	default:
		t.CandidateRegresses++
	}
}

func (t *Transitions) finish(what, base, cand string) {
	if t.Pairs == 0 {
		t.Words = fmt.Sprintf("%s vs %s: no paired scored attempts, so %s cannot be compared", cand, base, what)
		return
	}
	p := McNemarExact(t.CandidateImproves, t.CandidateRegresses)
	t.McNemarP = &p
	candPass := t.BothPass + t.CandidateImproves
	basePass := t.BothPass + t.CandidateRegresses
	counts := fmt.Sprintf("%d/%d vs %d/%d", candPass, t.Pairs, basePass, t.Pairs)
	switch {
	case t.CandidateImproves+t.CandidateRegresses == 0:
		t.Words = fmt.Sprintf("%s vs %s: %s (%s) agrees on every one of %d pairs; no difference to test", cand, base, what, counts, t.Pairs)
	case p >= 0.05:
		t.Words = fmt.Sprintf("%s vs %s: the difference in %s (%s; %s improves on %d, regresses on %d) is inside the noise (McNemar exact p = %s)",
			cand, base, what, counts, cand, t.CandidateImproves, t.CandidateRegresses, formatP(p))
	default:
		t.Words = fmt.Sprintf("%s vs %s: the difference in %s (%s; %s improves on %d, regresses on %d) is unlikely to be noise (McNemar exact p = %s)",
			cand, base, what, counts, cand, t.CandidateImproves, t.CandidateRegresses, formatP(p))
	}
	if t.Unpaired > 0 {
		t.Words += fmt.Sprintf("; %d unpaired not counted", t.Unpaired)
	}
}

func formatP(p float64) string {
	if p >= 0.1 {
		return strconv.FormatFloat(p, 'f', 2, 64)
	}
	if p < 0.0001 {
		return "< 0.0001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

func ratioInterval(baseName, candName string, baseRows, candRows []*Row, cases []string) RatioInterval {
	ri := RatioInterval{Resamples: BootstrapResamples, Seed: BootstrapSeed}
	sums := map[string]*caseSums{}
	get := func(c string) *caseSums {
		if sums[c] == nil {
			sums[c] = &caseSums{}
		}
		return sums[c]
	}
	for _, r := range baseRows {
		if r.inPlan() && r.measured() {
			s := get(r.Case)
			s.baseTok += float64(*r.NativeOutputTokens)
			s.baseSec += *r.DecodeSeconds
		}
	}
	for _, r := range candRows {
		if r.inPlan() && r.measured() {
			s := get(r.Case)
			s.candTok += float64(*r.NativeOutputTokens)
			s.candSec += *r.DecodeSeconds
		}
	}
	var cs []caseSums
	for _, c := range cases {
		if s := sums[c]; s != nil && s.baseSec > 0 && s.candSec > 0 && s.baseTok > 0 {
			cs = append(cs, *s)
		}
	}
	ri.Cases = len(cs)
	head := fmt.Sprintf("%s vs %s: decode TPS ratio", candName, baseName)
	r, ok := ratioOf(cs, nil)
	if !ok {
		ri.Words = head + ": no case with measured attempts in both arms"
		return ri
	}
	ri.Ratio = &r
	lo, hi, ok := bootstrapRatio(cs, ri.Resamples, ri.Seed)
	if !ok {
		ri.Words = fmt.Sprintf("%s %.3f over %d case; too few cases for an interval", head, r, ri.Cases)
		return ri
	}
	ri.Low, ri.High = &lo, &hi
	verdict := "excludes 1: the speed difference is outside the noise"
	if lo <= 1 && hi >= 1 {
		verdict = "includes 1: the speed difference is inside the noise"
	}
	ri.Words = fmt.Sprintf("%s %.3f (95%% paired bootstrap interval %.3f to %.3f over %d cases, %d resamples) %s",
		head, r, lo, hi, ri.Cases, ri.Resamples, verdict)
	return ri
}

// mixedProblems says what differs between rows that are about to be
// pooled: the fingerprint of the suite that graded them, the sandbox image,
// and the registered hash of an arm with the same name.
func mixedProblems(in *Input) []string {
	var out []string
	fps := orderedSet{}
	for i := range in.Rows {
		if fp := in.Rows[i].SuiteFingerprint; fp != nil && *fp != "" {
			fps.add(*fp, in.Rows[i].RunID)
		}
	}
	if len(fps.keys) > 1 {
		out = append(out, "suite fingerprints differ: "+fps.describe())
	}
	imgs := orderedSet{}
	for _, r := range in.Runs {
		if r.ImageID != "" {
			imgs.add(r.ImageID, r.ID)
		}
	}
	for i := range in.Rows {
		if img := in.Rows[i].ImageID; img != "" {
			imgs.add(img, in.Rows[i].RunID)
		}
	}
	if len(imgs.keys) > 1 {
		out = append(out, "image IDs differ: "+imgs.describe())
	}
	idOut, byIdentity := identityProblems(in)
	out = append(out, idOut...)
	arms := map[string]*orderedSet{}
	var armOrder []string
	for i := range in.Rows {
		r := &in.Rows[i]
		if r.ArmHash == "" || byIdentity[r.Arm] {
			continue
		}
		if arms[r.Arm] == nil {
			arms[r.Arm] = &orderedSet{}
			armOrder = append(armOrder, r.Arm)
		}
		arms[r.Arm].add(r.ArmHash, r.RunID)
	}
	for _, a := range armOrder {
		if len(arms[a].keys) > 1 {
			out = append(out, fmt.Sprintf("arm %s has different hashes: %s", a, arms[a].describe()))
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// identityProblems compares the pooling identities of each arm across the
// runs that recorded one (see runstore.ArmIdentity: what changes behaviour,
// not where the server listened). It returns, per arm whose identities
// differ, the fields that differ run by run, and the arms it decided (every
// run holding the arm recorded its identity); the others are compared by
// arm hash.
func identityProblems(in *Input) ([]string, map[string]bool) {
	type seen struct {
		run string
		id  *runstore.ArmIdentity
	}
	per := map[string][]seen{}
	var order []string
	missing := map[string]bool{}
	armsOf := map[string]map[string]bool{}
	for i := range in.Rows {
		r := &in.Rows[i]
		if armsOf[r.RunID] == nil {
			armsOf[r.RunID] = map[string]bool{}
		}
		armsOf[r.RunID][r.Arm] = true
	}
	for _, ri := range in.Runs {
		for arm := range armsOf[ri.ID] {
			id := ri.ArmIdentities[arm]
			if id == nil {
				missing[arm] = true
				continue
			}
			if _, ok := per[arm]; !ok {
				order = append(order, arm)
			}
			per[arm] = append(per[arm], seen{ri.ID, id})
		}
	}
	sort.Strings(order)
	decided := map[string]bool{}
	var out []string
	for _, arm := range order {
		if missing[arm] {
			continue
		}
		decided[arm] = true
		first := per[arm][0]
		for _, other := range per[arm][1:] {
			if other.id.SHA256 == first.id.SHA256 {
				continue
			}
			out = append(out, fmt.Sprintf("arm %s differs between run %s and run %s in %s", arm, first.run, other.run,
				strings.Join(DiffFields(first.id.Fields, other.id.Fields), "; ")))
		}
	}
	return out, decided
}

// DiffFields lists, as "field a vs b", the fields in which two arm
// identities differ ("unset" where one lacks the field), sorted by field.
func DiffFields(a, b map[string]string) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "unset"
		}
		if !okb {
			vb = "unset"
		}
		out = append(out, k+" "+va+" vs "+vb)
	}
	sort.Strings(out)
	if len(out) == 0 {
		out = []string{"their identity digests (no field differs: the digests were computed differently)"}
	}
	return out
}

// orderedSet keeps distinct values in first-seen order with the runs that
// hold each.
type orderedSet struct {
	keys []string
	runs map[string][]string
}

func (s *orderedSet) add(v, run string) {
	if s.runs == nil {
		s.runs = map[string][]string{}
	}
	rs, ok := s.runs[v]
	if !ok {
		s.keys = append(s.keys, v)
	}
	for _, r := range rs {
		if r == run {
			return
		}
	}
	s.runs[v] = append(rs, run)
}

func (s *orderedSet) describe() string {
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = fmt.Sprintf("%s in run %s", short(k), strings.Join(s.runs[k], ", "))
	}
	return strings.Join(parts, " vs ")
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}

func distinct(rows []*Row, f func(*Row) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		v := f(r)
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// countNotes says, in words, what was left out of the counts.
func countNotes(in *Input) []string {
	var ungraded, unscored, replaced, unmeasured int
	suites := orderedSet{}
	for i := range in.Rows {
		r := &in.Rows[i]
		if !r.inPlan() {
			replaced++
			continue
		}
		switch r.Status {
		case Ungraded:
			ungraded++
			suites.add(r.Suite, r.RunID)
		case Unscored:
			unscored++
		case Scored:
			if !r.measured() {
				unmeasured++
			}
		}
	}
	var out []string
	if unmeasured > 0 {
		out = append(out, fmt.Sprintf("%d scored attempt(s) have no native output token count or no decode seconds (some response reported none): null, left out of decode TPS and task TPS, not counted as 0", unmeasured))
	}
	if ungraded > 0 {
		out = append(out, fmt.Sprintf("%d completed attempt(s) have no grade under %s: shown as ungraded (-), not counted as failures", ungraded, strings.Join(suites.keys, ", ")))
	}
	if unscored > 0 {
		out = append(out, fmt.Sprintf("%d attempt(s) never completed (cancelled, interrupted, infrastructure failure or not run): null, not counted", unscored))
	}
	if replaced > 0 {
		out = append(out, fmt.Sprintf("%d infrastructure-failed attempt(s) were replaced by a rerun of the same slot", replaced))
	}
	return out
}

// timingMark is what the text formats append to a decode TPS that is not
// purely server-timed; "" for server timings or no figure.
func timingMark(src *string) string {
	if src == nil {
		return ""
	}
	switch *src {
	case TimingsServer:
		return ""
	case TimingsClient:
		return "client-measured"
	case TimingsMixed:
		return "mixed timing sources"
	default:
		return "timing source unknown"
	}
}

// timingNotes say, in words, which arms' decode TPS is not purely
// server-timed (DESIGN.md: client-measured figures are marked).
func timingNotes(r *Report) []string {
	var out []string
	for _, a := range r.Arms {
		if a.DecodeTPS == nil || a.TimingsSource == nil || *a.TimingsSource == TimingsServer {
			continue
		}
		var what string
		switch *a.TimingsSource {
		case TimingsClient:
			what = "is client-measured (first to last streamed token, or the wall time of a response), not server timings"
		case TimingsMixed:
			what = "pools server timings with client-measured decode time (mixed timing sources)"
		default:
			what = "rests on attempts whose timing source is unknown"
		}
		out = append(out, fmt.Sprintf("%s: decode TPS %s %s: not comparable with server-timed figures, and the decode gains, tokens/week and decode TPS ratios computed from it inherit that",
			a.Arm, fmtF(a.DecodeTPS, 2), what))
	}
	return out
}

// repeatLess orders repeat labels by their number ("repeat-2" before
// "repeat-10"), falling back to text.
func repeatLess(a, b string) bool {
	na, oka := repeatNumber(a)
	nb, okb := repeatNumber(b)
	if oka && okb && na != nb {
		return na < nb
	}
	return a < b
}

func repeatNumber(s string) (int, bool) {
	i := strings.LastIndexByte(s, '-')
	n, err := strconv.Atoi(s[i+1:])
	return n, err == nil
}
