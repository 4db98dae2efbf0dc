package report

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Build pools the input. Rows are taken in input order; arms appear in the
// order they are first met and cases sorted by name.
func Build(in *Input, opts Options) (*Report, error) {
	if err := validateRows(in.Rows); err != nil {
		return nil, err
	}
	rep := &Report{
		Schema: Schema, Options: opts, Runs: runInfos(in),
		Mixed: mixedProblems(in), Arms: []ArmReport{}, Cases: []CaseReport{},
		Comparisons: []Comparison{}, Notes: []string{}, Legend: Legend(),
	}
	if len(rep.Mixed) > 0 && !opts.AllowMixed {
		return nil, &MixedError{Problems: rep.Mixed}
	}
	g := groupRows(in.Rows)
	armNames, byArm := g.armNames, g.byArm
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
	addArms(rep, armNames, byArm)
	cases := g.cases()
	for _, c := range cases {
		rep.Cases = append(rep.Cases, caseReport(c, armNames, g.byCaseArm))
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
	addAgentUsage(rep, in.Rows)
	rep.AgentMatrix = agentMatrix(rep, in.ArmSetups, in.Rows)
	rep.Notes = append(rep.Notes, addReplicaSpeeds(rep, byArm, cases)...)
	rep.Notes = append(rep.Notes, progressNotes(rep)...)
	rep.Notes = append(rep.Notes, countNotes(in)...)
	rep.Notes = append(rep.Notes, counterNotes(in)...)
	rep.Notes = append(rep.Notes, agentNotes(in.Rows)...)
	rep.Notes = append(rep.Notes, timingNotes(rep)...)
	rep.Notes = append(rep.Notes, overlapNotes(rep)...)
	rep.Notes = append(rep.Notes, idleNotes(rep)...)
	rep.Notes = append(rep.Notes, scheduleNotes(rep)...)
	return rep, nil
}

// TokensPerWeek is the one definition of tokens per week of continuous
// decoding: the pooled tokens x 604800 / the pooled decode seconds (decode
// TPS x one week, computed from the sums so that no rounded rate enters
// it); null without both sums or with no decode time.
func TokensPerWeek(tokens *int64, decodeSeconds *float64) *float64 {
	if tokens == nil || decodeSeconds == nil || *decodeSeconds <= 0 {
		return nil
	}
	w := float64(*tokens) * SecondsPerWeek / *decodeSeconds
	return &w
}

// runInfos are the report's runs: in.Runs (copied, so that the input is
// left as it is) with each run's progress and endpoint idle share computed
// from its rows.
func runInfos(in *Input) []RunInfo {
	out := make([]RunInfo, len(in.Runs))
	copy(out, in.Runs)
	byRun := map[string][]*Row{}
	for i := range in.Rows {
		r := &in.Rows[i]
		byRun[r.RunID] = append(byRun[r.RunID], r)
	}
	for i := range out {
		ri := &out[i]
		rows := byRun[ri.ID]
		ri.Progress = runProgress(ri, rows)
		ri.EndpointIdle = endpointIdle(rows, in.Timelines[ri.ID], ri.Runner == RunnerActive)
		ri.Schedule = runSchedule(in.Timelines[ri.ID])
	}
	return out
}

// grouped are the rows by arm (arms in first-met order) and by case and
// arm.
type grouped struct {
	armNames  []string
	byArm     map[string][]*Row
	byCaseArm map[[2]string][]*Row
	caseSet   map[string]bool
}

func groupRows(rows []Row) *grouped {
	g := &grouped{byArm: map[string][]*Row{}, byCaseArm: map[[2]string][]*Row{}, caseSet: map[string]bool{}}
	for i := range rows {
		r := &rows[i]
		if _, ok := g.byArm[r.Arm]; !ok {
			g.armNames = append(g.armNames, r.Arm)
		}
		g.byArm[r.Arm] = append(g.byArm[r.Arm], r)
		g.byCaseArm[[2]string{r.Case, r.Arm}] = append(g.byCaseArm[[2]string{r.Case, r.Arm}], r)
		g.caseSet[r.Case] = true
	}
	return g
}

// cases are the cases met, sorted.
func (g *grouped) cases() []string {
	cases := make([]string, 0, len(g.caseSet))
	for c := range g.caseSet {
		cases = append(cases, c)
	}
	sort.Strings(cases)
	return cases
}

// addArms pools each arm and sets its gains over the baseline.
func addArms(rep *Report, armNames []string, byArm map[string][]*Row) {
	for _, name := range armNames {
		ar := ArmReport{Arm: name, ArmHashes: distinct(byArm[name], func(r *Row) string { return r.ArmHash }), Stats: pool(byArm[name])}
		ar.TokensPerWeek = TokensPerWeek(ar.NativeOutputTokens, ar.DecodeSeconds)
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
}

// caseReport pools case c per arm and lists its planned attempts by
// repeat.
func caseReport(c string, armNames []string, byCaseArm map[[2]string][]*Row) CaseReport {
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
	return cr
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

// ErrBadRow is returned for a row whose fields contradict each other (e.g.
// an attempts.json edited by hand).
var ErrBadRow = errors.New("inconsistent attempt row")

func validateRows(rows []Row) error {
	ids := map[string]int{}
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
		case Ungraded, Unscored, Pending:
			if r.Functional != nil || r.Delivered != nil {
				return bad(string(r.Status) + " but has an outcome")
			}
		default:
			return bad(fmt.Sprintf("unknown status %q", r.Status))
		}
		if r.Arm == "" || r.Case == "" {
			return bad("no arm or case")
		}
		if prev, ok := ids[r.AttemptID]; ok {
			return bad(fmt.Sprintf("attempt id also in row %d: it would be pooled twice", prev))
		}
		ids[r.AttemptID] = i
	}
	return nil
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
