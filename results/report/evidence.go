package report

import (
	_ "embed"
	"fmt"
	"strconv"

	"github.com/evalctl/evalctl"
)

// Evidence is what a completed attempt's outcome is computed from, carried
// in the export (attempts.json, each row's "evidence") so that a reader can
// recompute functional and delivered without evalctl and without trusting
// the exported booleans: per phase grade the group results, protected and
// missing counts and the verdict; the arm-unchanged flag; per turn the
// termination, whether the agent finished, final text and its last own
// test and typecheck runs; expected turns are the row's expected_turns;
// for an agent command, whether its configuration stayed unchanged.
// Null for attempts that never completed.
type Evidence struct {
	ArmUnchanged *bool           `json:"arm_unchanged"`
	Phases       []PhaseEvidence `json:"phases"`
	Turns        []TurnEvidence  `json:"turns"`
	// Agent is present for an agent-command attempt: its configuration
	// files count as part of the arm (see evalctl.Score).
	Agent *AgentEvidence `json:"agent,omitempty"`
}

// AgentEvidence is what an agent command's record adds to the outcome:
// whether its configuration files still had their SHA-256 at the end
// (null: unknown, the attempt is not scored).
type AgentEvidence struct {
	ConfigUnchanged *bool `json:"config_unchanged"`
}

// PhaseEvidence is one answer snapshot's grade under the row's suite;
// Graded false (and the rest empty) when it has none.
type PhaseEvidence struct {
	Phase                    int             `json:"phase"`
	Graded                   bool            `json:"graded"`
	ProtectedChangesCount    int             `json:"protected_changes_count"`
	MissingStarterFilesCount int             `json:"missing_starter_files_count"`
	Groups                   []GroupEvidence `json:"groups"`
	Solved                   bool            `json:"solved"`
}

// GroupEvidence is one check group's result: what its success is computed
// from (exit code, time-out, counts, the declared test count). Counts are
// null when the grade records none (one imported from another harness):
// its success is then the recorded verdict, which nothing contradicts.
type GroupEvidence struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Passed   *int   `json:"passed"`
	Failed   *int   `json:"failed"`
	Total    *int   `json:"total"`
	Declared int    `json:"declared"`
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
	Success  bool   `json:"success"`
	// Unrepresentable counts the failed tests the grading boundary could
	// not represent (evalctl.GroupResult.UnrepresentableCount): a phase
	// short of solved only by them leaves the attempt ungraded.
	Unrepresentable int `json:"unrepresentable,omitempty"`
}

// TurnEvidence is one turn's hand-over.
type TurnEvidence struct {
	Phase         int              `json:"phase"`
	Termination   string           `json:"termination"`
	AgentFinished bool             `json:"agent_finished"`
	FinalText     bool             `json:"final_text"`
	LastTest      *SelfCheckResult `json:"last_test"`
	LastTypecheck *SelfCheckResult `json:"last_typecheck"`
}

// SelfCheckResult is the agent's own last test or typecheck run.
type SelfCheckResult struct {
	ExitCode int  `json:"exit_code"`
	Passed   bool `json:"passed"`
}

// newEvidence records what a's outcome under grades is computed from.
func newEvidence(a *evalctl.Attempt, grades []*evalctl.Grade) *Evidence {
	if a.State != evalctl.Completed {
		return nil
	}
	e := &Evidence{ArmUnchanged: clone(a.ArmUnchanged), Phases: []PhaseEvidence{}, Turns: []TurnEvidence{}}
	if a.Agent != nil {
		e.Agent = &AgentEvidence{ConfigUnchanged: clone(a.Agent.ConfigUnchanged)}
	}
	for i, g := range grades {
		p := PhaseEvidence{Phase: i + 1, Groups: []GroupEvidence{}}
		if i < len(a.Snapshots) {
			p.Phase = a.Snapshots[i].Phase
		}
		if g != nil {
			p.Graded, p.Solved = true, g.Solved
			p.ProtectedChangesCount, p.MissingStarterFilesCount = g.ProtectedChangesCount, g.MissingStarterFilesCount
			for _, gr := range g.Groups {
				ge := GroupEvidence{Name: gr.Name, Required: gr.Required, Declared: gr.Declared, ExitCode: gr.ExitCode, TimedOut: gr.TimedOut, Success: gr.Success, Unrepresentable: gr.UnrepresentableCount}
				if !gr.CountsUnknown {
					passed, failed, total := gr.Passed, gr.Failed, gr.Total
					ge.Passed, ge.Failed, ge.Total = &passed, &failed, &total
				}
				p.Groups = append(p.Groups, ge)
			}
		}
		e.Phases = append(e.Phases, p)
	}
	for _, t := range a.Turns {
		te := TurnEvidence{Phase: t.Phase, Termination: string(t.Termination), AgentFinished: t.AgentFinished, FinalText: t.FinalText}
		if t.LastTest != nil {
			te.LastTest = &SelfCheckResult{ExitCode: t.LastTest.ExitCode, Passed: t.LastTest.Passed}
		}
		if t.LastTypecheck != nil {
			te.LastTypecheck = &SelfCheckResult{ExitCode: t.LastTypecheck.ExitCode, Passed: t.LastTypecheck.Passed}
		}
		e.Turns = append(e.Turns, te)
	}
	return e
}

// groupSuccess is the grader's rule: exit status zero, no time-out, at
// least one test, every test passed and, where the case declares a count,
// exactly that many run. ok is false when the counts are unknown: the
// recorded verdict stands.
func groupSuccess(g GroupEvidence) (success, ok bool) {
	if g.Passed == nil || g.Failed == nil || g.Total == nil {
		return false, false
	}
	total := *g.Total
	return g.ExitCode == 0 && !g.TimedOut && total > 0 && *g.Passed == total && (g.Declared == 0 || total == g.Declared), true
}

// checkGroup returns what contradicts itself in a group's evidence: counts
// that do not add up (passed + failed = total, all known or all null), or
// a success its counts do not give.
func checkGroup(g GroupEvidence) (field, want, got string) {
	known := 0
	for _, p := range []*int{g.Passed, g.Failed, g.Total} {
		if p != nil {
			known++
		}
	}
	switch {
	case known != 0 && known != 3:
		return "total", "passed, failed and total all known or all null", "some null"
	case known == 3 && *g.Passed+*g.Failed != *g.Total:
		return "total", strconv.Itoa(*g.Passed+*g.Failed) + " (passed + failed)", strconv.Itoa(*g.Total)
	case known == 3 && (*g.Passed < 0 || *g.Failed < 0):
		return "passed", "counts of 0 or more", fmt.Sprintf("passed %d, failed %d", *g.Passed, *g.Failed)
	}
	if want, ok := groupSuccess(g); ok && want != g.Success {
		return "success", strconv.FormatBool(want), strconv.FormatBool(g.Success)
	}
	return "", "", ""
}

// phaseSolved is the grader's verdict rule: no protected change, no missing
// starter file, every required group succeeded.
func phaseSolved(p PhaseEvidence) bool {
	ok := p.ProtectedChangesCount == 0 && p.MissingStarterFilesCount == 0
	for _, g := range p.Groups {
		if g.Required && !g.Success {
			ok = false
		}
	}
	return ok
}

// checkEvidence recomputes row i's outcome from its evidence with the one
// scoring rule (runstore.ScoreGraded) and returns a *Difference where the
// evidence contradicts itself or the row's status and booleans.
func checkEvidence(i int, r *Row) *Difference {
	field := func(f string) string { return fmt.Sprintf("[%d] (attempt %s).%s", i, r.AttemptID, f) }
	if d := checkRowFacts(r, field); d != nil {
		return d
	}
	if r.State != string(evalctl.Completed) {
		return nil
	}
	e := r.Evidence
	if e == nil {
		return &Difference{AttemptsJSON, field("evidence"), "what the outcome is computed from", "null"}
	}
	if e.Phases == nil || e.Turns == nil {
		return &Difference{AttemptsJSON, field("evidence"), "arrays of phases and turns", "null"}
	}
	for p := range e.Phases {
		if e.Phases[p].Groups == nil {
			return &Difference{AttemptsJSON, field(fmt.Sprintf("evidence.phases[%d].groups", p)), "an array", "null"}
		}
	}
	a := &evalctl.Attempt{State: evalctl.Completed, Language: r.Language, ExpectedTurns: r.ExpectedTurns, ArmUnchanged: e.ArmUnchanged}
	if e.Agent != nil {
		a.Agent = &evalctl.AgentRecord{ConfigUnchanged: e.Agent.ConfigUnchanged}
	}
	for ti, t := range e.Turns {
		// The agent's own run passed only with exit status zero (and no
		// time-out, which the evidence does not keep).
		for _, c := range []struct {
			name string
			sc   *SelfCheckResult
		}{{"last_test", t.LastTest}, {"last_typecheck", t.LastTypecheck}} {
			if c.sc != nil && c.sc.Passed && c.sc.ExitCode != 0 {
				return &Difference{AttemptsJSON, field(fmt.Sprintf("evidence.turns[%d].%s.passed", ti, c.name)), "false (exit status " + strconv.Itoa(c.sc.ExitCode) + ")", "true"}
			}
		}
		turn := evalctl.Turn{Phase: t.Phase, Termination: evalctl.Termination(t.Termination), AgentFinished: t.AgentFinished, FinalText: t.FinalText}
		if t.LastTest != nil {
			turn.LastTest = &evalctl.SelfCheck{ExitCode: t.LastTest.ExitCode, Passed: t.LastTest.Passed}
		}
		if t.LastTypecheck != nil {
			turn.LastTypecheck = &evalctl.SelfCheck{ExitCode: t.LastTypecheck.ExitCode, Passed: t.LastTypecheck.Passed}
		}
		a.Turns = append(a.Turns, turn)
	}
	grades := make([]*evalctl.Grade, len(e.Phases))
	for p, ph := range e.Phases {
		if !ph.Graded {
			continue
		}
		for g, gr := range ph.Groups {
			if f, want, got := checkGroup(gr); f != "" {
				return &Difference{AttemptsJSON, field(fmt.Sprintf("evidence.phases[%d].groups[%d].%s", p, g, f)), want, got}
			}
		}
		if want := phaseSolved(ph); want != ph.Solved {
			return &Difference{AttemptsJSON, field(fmt.Sprintf("evidence.phases[%d].solved", p)), strconv.FormatBool(want), strconv.FormatBool(ph.Solved)}
		}
		grades[p] = phaseGrade(ph)
	}
	o, ungraded := evalctl.ScoreGraded(a, grades)
	status, fun, del := Unscored, "null", "null"
	switch {
	case ungraded:
		status = Ungraded
	case o != nil:
		status, fun, del = Scored, strconv.FormatBool(o.Functional), strconv.FormatBool(o.Delivered)
	}
	if r.Status != status {
		return &Difference{AttemptsJSON, field("status"), string(status) + " (from the evidence)", string(r.Status)}
	}
	if got := boolText(r.Functional); got != fun {
		return &Difference{AttemptsJSON, field("functional"), fun + " (from the evidence)", got}
	}
	if got := boolText(r.Delivered); got != del {
		return &Difference{AttemptsJSON, field("delivered"), del + " (from the evidence)", got}
	}
	return nil
}

// checkRowFacts returns what contradicts itself in a row apart from its
// evidence: an attempt that did not complete has no outcome, no
// measurements and no evidence, and its status follows from its state; a
// phase belongs to a running attempt only; a counter check says whether
// the recorded count equals the server's.
func checkRowFacts(r *Row, field func(string) string) *Difference {
	if r.Phase != nil && r.State != string(evalctl.Running) {
		return &Difference{AttemptsJSON, field("phase"), "null (the attempt is not running)", strconv.Quote(*r.Phase)}
	}
	if r.CounterCheck != nil && *r.CounterCheck != CounterShared {
		if r.NativeOutputTokens == nil || r.ServerGeneratedTokens == nil {
			return &Difference{AttemptsJSON, field("counter_check"), "null (no recorded and server count to compare)", strconv.Quote(*r.CounterCheck)}
		}
		var within int64
		if r.ServerGeneratedTokensWithin != nil {
			within = *r.ServerGeneratedTokensWithin
		}
		if want := crossCheck(*r.NativeOutputTokens, *r.ServerGeneratedTokens, within); *r.CounterCheck != want {
			return &Difference{AttemptsJSON, field("counter_check"), strconv.Quote(want) + " (recorded vs server count)", strconv.Quote(*r.CounterCheck)}
		}
	}
	if r.State == string(evalctl.Completed) {
		return nil
	}
	if r.Evidence != nil {
		return &Difference{AttemptsJSON, field("evidence"), "null (the attempt never completed)", "evidence"}
	}
	if want := statusOf(evalctl.State(r.State)); r.Status != want {
		return &Difference{AttemptsJSON, field("status"), string(want) + " (from the state)", string(r.Status)}
	}
	for _, f := range []struct {
		name string
		null bool
	}{{"turns", r.Turns == nil}, {"termination", r.Termination == nil}, {"native_output_tokens", r.NativeOutputTokens == nil},
		{"decode_seconds", r.DecodeSeconds == nil}, {"task_seconds", r.TaskSeconds == nil}, {"prompt_tokens", r.PromptTokens == nil},
		{"prompt_seconds", r.PromptSeconds == nil}, {"tool_calls", r.ToolCalls == nil}, {"tool_errors", r.ToolErrors == nil},
		{"max_sequence_tokens", r.MaxSequenceTokens == nil}, {"draft_tokens", r.DraftTokens == nil}, {"draft_accepted", r.DraftAccepted == nil},
		{"timings_source", r.TimingsSource == nil}, {"tokens_source", r.TokensSource == nil}, {"server_generated_tokens", r.ServerGeneratedTokens == nil},
		{"counter_check", r.CounterCheck == nil}, {"overlapped_attempts", r.OverlappedAttempts == nil}, {"input_strategy", r.InputStrategy == nil},
		{"input_tokens", r.InputTokens == nil}, {"suite_fingerprint", r.SuiteFingerprint == nil}} {
		if !f.null {
			return &Difference{AttemptsJSON, field(f.name), "null (the attempt did not complete)", "a value"}
		}
	}
	return nil
}

func boolText(b *bool) string {
	if b == nil {
		return "null"
	}
	return strconv.FormatBool(*b)
}

// checkerPy is check.py: a reader's own check of an export, in Python's
// standard library only. It recomputes every outcome from the evidence and
// every pooled figure, median and paired transition from the rows, and
// exits 1 with a FAIL: line on the first difference.
//
//go:embed check.py
var checkerPy []byte

// phaseGrade is what the scoring rule reads of a phase's evidence: its
// verdict and what decides whether only the boundary kept it from solved
// (evalctl.Grade.BlockedByBoundary).
func phaseGrade(ph PhaseEvidence) *evalctl.Grade {
	g := &evalctl.Grade{Solved: ph.Solved, ProtectedChangesCount: ph.ProtectedChangesCount, MissingStarterFilesCount: ph.MissingStarterFilesCount}
	for _, ge := range ph.Groups {
		gr := evalctl.GroupResult{Name: ge.Name, Required: ge.Required, Declared: ge.Declared, ExitCode: ge.ExitCode,
			TimedOut: ge.TimedOut, Success: ge.Success, UnrepresentableCount: ge.Unrepresentable, CountsUnknown: ge.Total == nil}
		if ge.Passed != nil && ge.Failed != nil && ge.Total != nil {
			gr.Passed, gr.Failed, gr.Total = *ge.Passed, *ge.Failed, *ge.Total
		}
		g.Groups = append(g.Groups, gr)
	}
	return g
}
