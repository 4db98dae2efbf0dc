package evalctl

import (
	"testing"
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
