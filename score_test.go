package evalctl

import (
	"testing"
	"time"
)

func TestScoreFollowsTheDesignRules(t *testing.T) {
	yes, no := true, false
	passed := &SelfCheck{Command: "python3 -m pytest -q", Passed: true}
	failed := &SelfCheck{Command: "python3 -m pytest -q", ExitCode: 1}
	turn := func(term Termination, finished, text bool, test, tsc *SelfCheck) Turn {
		return Turn{Termination: term, AgentFinished: finished, FinalText: text, LastTest: test, LastTypecheck: tsc}
	}
	good := turn(TermCompleted, true, true, passed, nil)
	solved := &Grade{Suite: "dev", SuiteVersion: "1.0.0", Solved: true}
	unsolved := &Grade{Suite: "dev", SuiteVersion: "1.0.0"}
	tests := []struct {
		name                  string
		a                     Attempt
		grades                []*Grade
		functional, delivered bool
		unscored              bool
	}{
		{"solved and delivered", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*Grade{solved}, true, true, false},
		{"wall-time stop with a passing patch: functional, not delivered", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermWallTimeLimit, false, false, passed, nil)}, ArmUnchanged: &yes}, []*Grade{solved}, true, false, false},
		{"normal end, passing self-tests, failing acceptance: neither", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*Grade{unsolved}, false, false, false},
		{"last own test failed", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, true, failed, nil)}, ArmUnchanged: &yes}, []*Grade{solved}, true, false, false},
		{"no own test run", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, true, nil, nil)}, ArmUnchanged: &yes}, []*Grade{solved}, true, false, false},
		{"no final text", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, false, passed, nil)}, ArmUnchanged: &yes}, []*Grade{solved}, true, false, false},
		{"typescript needs its own typecheck", Attempt{State: Completed, Language: "typescript", ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*Grade{solved}, true, false, false},
		{"typescript with passing typecheck", Attempt{State: Completed, Language: "typescript", ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, true, passed, passed)}, ArmUnchanged: &yes}, []*Grade{solved}, true, true, false},
		{"arm changed during the attempt", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &no}, []*Grade{solved}, false, false, false},
		{"agent configuration changed: not functional", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes, Agent: &AgentRecord{ConfigUnchanged: &no}}, []*Grade{solved}, false, false, false},
		{"agent configuration unchanged", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes, Agent: &AgentRecord{ConfigUnchanged: &yes}}, []*Grade{solved}, true, true, false},
		{"agent configuration unknown: unscored", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes, Agent: &AgentRecord{}}, []*Grade{solved}, false, false, true},
		{"arm unknown: functional unknown, not false", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}}, []*Grade{solved}, false, false, true},
		{"second phase never reached", Attempt{State: Completed, ExpectedTurns: 2, Turns: []Turn{turn(TermToolCallLimit, false, false, passed, nil)}, ArmUnchanged: &yes}, []*Grade{solved}, false, false, false},
		{"phase one unsolved, final solved", Attempt{State: Completed, ExpectedTurns: 2, Turns: []Turn{good, good}, ArmUnchanged: &yes}, []*Grade{unsolved, solved}, false, false, false},
		{"both phases", Attempt{State: Completed, ExpectedTurns: 2, Turns: []Turn{good, good}, ArmUnchanged: &yes}, []*Grade{solved, solved}, true, true, false},
		{"ungraded phase", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*Grade{nil}, false, false, false},
		{"infra failure is unscored", Attempt{State: InfraFailed, ExpectedTurns: 1}, nil, false, false, true},
		{"interrupted is unscored", Attempt{State: Interrupted, ExpectedTurns: 1, Turns: []Turn{good}}, []*Grade{solved}, false, false, true},
		{"cancelled is unscored", Attempt{State: Cancelled, ExpectedTurns: 1}, nil, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Score(&tt.a, tt.grades)
			if tt.unscored {
				if o != nil {
					t.Fatalf("got %+v, want null (unscored)", o)
				}
				return
			}
			if o == nil || o.Functional != tt.functional || o.Delivered != tt.delivered {
				t.Fatalf("got %+v, want functional=%v delivered=%v", o, tt.functional, tt.delivered)
			}
			if o.Delivered && !o.Functional {
				t.Fatal("delivered without functional")
			}
		})
	}
}

// TestScoreGradedUngradedWhenRecordsDoNotMatchUp: a completed attempt whose
// grade cannot be computed from its records is ungraded, never a failure:
// no snapshot record for a turn (a grade file beside it or not), or a
// grade the snapshots do not account for (runstore's trailing nil).
func TestScoreGradedUngradedWhenRecordsDoNotMatchUp(t *testing.T) {
	yes := true
	good := Turn{Termination: TermCompleted, AgentFinished: true, FinalText: true, LastTest: &SelfCheck{Passed: true}}
	solved := &Grade{Solved: true}
	for _, tt := range []struct {
		name   string
		turns  []Turn
		grades []*Grade
		want   string
	}{
		{"graded in full", []Turn{good}, []*Grade{solved}, "scored"},
		{"a turn without a snapshot record", []Turn{good}, nil, "ungraded"},
		{"two turns, one snapshot", []Turn{good, good}, []*Grade{solved}, "ungraded"},
		{"a stray grade file", []Turn{good}, []*Grade{solved, nil}, "ungraded"},
	} {
		a := &Attempt{State: Completed, ExpectedTurns: len(tt.turns), Turns: tt.turns, ArmUnchanged: &yes}
		o, ungraded := ScoreGraded(a, tt.grades)
		got := "unscored"
		switch {
		case ungraded:
			got = "ungraded"
		case o != nil:
			got = "scored"
		}
		if got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestStateOfOldCancelled: records written before the two cancelled states
// were told apart read as one of them by whether the attempt started.
func TestStateOfOldCancelled(t *testing.T) {
	now := time.Now()
	if s := StateOf(&Attempt{State: Cancelled}); s != CancelledBeforeStart {
		t.Errorf("never started: %s", s)
	}
	if s := StateOf(&Attempt{State: Cancelled, StartedAt: &now}); s != CancelledAfterStart {
		t.Errorf("started: %s", s)
	}
	for _, s := range []State{Cancelled, CancelledBeforeStart, CancelledAfterStart, Completed, InfraFailed} {
		if !s.Ended() {
			t.Errorf("%s is not ended", s)
		}
	}
	for _, s := range []State{Planned, Running, Interrupted} {
		if s.Ended() {
			t.Errorf("%s is ended", s)
		}
	}
}

// TestBoundaryBlockedIsUngraded: a grade short of solved only by tests the
// grading boundary cannot represent leaves the attempt ungraded (null
// functional), never failed; any other failure beside them keeps it not
// functional, and a group whose failures are not all such tests is a
// failure.
func TestBoundaryBlockedIsUngraded(t *testing.T) {
	yes, no := true, false
	good := Turn{Termination: TermCompleted, AgentFinished: true, FinalText: true, LastTest: &SelfCheck{Passed: true}}
	unrep := []UnrepresentableTest{{Test: "t.test_m", Construct: "a module of the tests' side handed to the answer"}}
	acc := func(failed, unrepresentable int, mod func(*GroupResult)) GroupResult {
		g := GroupResult{Name: "acceptance", Required: true, Total: 5, Passed: 5 - failed, Failed: failed, Declared: 5,
			ExitCode: ExitTestsFailed, Unrepresentable: unrep[:min(unrepresentable, 1)], UnrepresentableCount: unrepresentable}
		if mod != nil {
			mod(&g)
		}
		return g
	}
	grade := func(gs ...GroupResult) *Grade { return &Grade{Groups: gs} }
	syntax := GroupResult{Name: "syntax", Required: true, Total: 1, Passed: 1, Success: true}
	solved := &Grade{Solved: true}
	tests := []struct {
		name     string
		a        Attempt
		grades   []*Grade
		blocked  bool // ungraded by the boundary
		scored   bool // else: Score's outcome, not functional
		function bool
	}{
		{"one test unrepresentable, the rest pass", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{grade(acc(1, 1, nil), syntax)}, true, false, false},
		{"an ordinary failure beside it", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{grade(acc(2, 1, nil), syntax)}, false, true, false},
		{"another required group fails", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{grade(acc(1, 1, nil), GroupResult{Name: "syntax", Required: true, ExitCode: 1})}, false, true, false},
		{"the run timed out", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{grade(acc(1, 1, func(g *GroupResult) { g.TimedOut = true }))}, false, true, false},
		{"the run ended otherwise (cut short)", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{grade(acc(1, 1, func(g *GroupResult) { g.ExitCode = 3 }))}, false, true, false},
		{"fewer tests than declared", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{grade(acc(1, 1, func(g *GroupResult) { g.Total, g.Passed = 4, 3 }))}, false, true, false},
		{"a protected change", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{{Groups: []GroupResult{acc(1, 1, nil)}, ProtectedChangesCount: 1}}, false, true, false},
		{"arm changed", Attempt{ExpectedTurns: 1, ArmUnchanged: &no}, []*Grade{grade(acc(1, 1, nil))}, false, true, false},
		{"first phase blocked, final solved", Attempt{ExpectedTurns: 2, ArmUnchanged: &yes}, []*Grade{grade(acc(1, 1, nil)), solved}, true, false, false},
		{"first phase failed, final blocked", Attempt{ExpectedTurns: 2, ArmUnchanged: &yes}, []*Grade{grade(acc(2, 1, nil)), grade(acc(1, 1, nil))}, false, true, false},
		{"a phase never reached", Attempt{ExpectedTurns: 2, ArmUnchanged: &yes}, []*Grade{grade(acc(1, 1, nil))}, false, true, false},
		{"solved is scored as ever", Attempt{ExpectedTurns: 1, ArmUnchanged: &yes}, []*Grade{solved}, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.a.State = Completed
			for range tt.grades {
				tt.a.Turns = append(tt.a.Turns, good)
			}
			if got := BlockedByBoundary(&tt.a, tt.grades); got != tt.blocked {
				t.Fatalf("BlockedByBoundary %v, want %v", got, tt.blocked)
			}
			o := Score(&tt.a, tt.grades)
			og, ungraded := ScoreGraded(&tt.a, tt.grades)
			switch {
			case tt.blocked && (o != nil || og != nil || !ungraded):
				t.Fatalf("Score %+v, ScoreGraded %+v ungraded %v: want null, ungraded", o, og, ungraded)
			case tt.scored && (o == nil || o.Functional != tt.function):
				t.Fatalf("Score %+v, want functional %v", o, tt.function)
			}
		})
	}
}
