package runstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl/grader"
)

func TestScoreFollowsTheDesignRules(t *testing.T) {
	yes, no := true, false
	passed := &SelfCheck{Command: "python3 -m pytest -q", Passed: true}
	failed := &SelfCheck{Command: "python3 -m pytest -q", ExitCode: 1}
	turn := func(term Termination, finished, text bool, test, tsc *SelfCheck) Turn {
		return Turn{Termination: term, AgentFinished: finished, FinalText: text, LastTest: test, LastTypecheck: tsc}
	}
	good := turn(TermCompleted, true, true, passed, nil)
	solved := &grader.Grade{Suite: "dev", SuiteVersion: "1.0.0", Solved: true}
	unsolved := &grader.Grade{Suite: "dev", SuiteVersion: "1.0.0"}
	tests := []struct {
		name                  string
		a                     Attempt
		grades                []*grader.Grade
		functional, delivered bool
		unscored              bool
	}{
		{"solved and delivered", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*grader.Grade{solved}, true, true, false},
		{"wall-time stop with a passing patch: functional, not delivered", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermWallTimeLimit, false, false, passed, nil)}, ArmUnchanged: &yes}, []*grader.Grade{solved}, true, false, false},
		{"normal end, passing self-tests, failing acceptance: neither", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*grader.Grade{unsolved}, false, false, false},
		{"last own test failed", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, true, failed, nil)}, ArmUnchanged: &yes}, []*grader.Grade{solved}, true, false, false},
		{"no own test run", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, true, nil, nil)}, ArmUnchanged: &yes}, []*grader.Grade{solved}, true, false, false},
		{"no final text", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, false, passed, nil)}, ArmUnchanged: &yes}, []*grader.Grade{solved}, true, false, false},
		{"typescript needs its own typecheck", Attempt{State: Completed, Language: "typescript", ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*grader.Grade{solved}, true, false, false},
		{"typescript with passing typecheck", Attempt{State: Completed, Language: "typescript", ExpectedTurns: 1, Turns: []Turn{turn(TermCompleted, true, true, passed, passed)}, ArmUnchanged: &yes}, []*grader.Grade{solved}, true, true, false},
		{"arm changed during the attempt", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &no}, []*grader.Grade{solved}, false, false, false},
		{"arm unknown: functional unknown, not false", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}}, []*grader.Grade{solved}, false, false, true},
		{"second phase never reached", Attempt{State: Completed, ExpectedTurns: 2, Turns: []Turn{turn(TermToolCallLimit, false, false, passed, nil)}, ArmUnchanged: &yes}, []*grader.Grade{solved}, false, false, false},
		{"phase one unsolved, final solved", Attempt{State: Completed, ExpectedTurns: 2, Turns: []Turn{good, good}, ArmUnchanged: &yes}, []*grader.Grade{unsolved, solved}, false, false, false},
		{"both phases", Attempt{State: Completed, ExpectedTurns: 2, Turns: []Turn{good, good}, ArmUnchanged: &yes}, []*grader.Grade{solved, solved}, true, true, false},
		{"ungraded phase", Attempt{State: Completed, ExpectedTurns: 1, Turns: []Turn{good}, ArmUnchanged: &yes}, []*grader.Grade{nil}, false, false, false},
		{"infra failure is unscored", Attempt{State: InfraFailed, ExpectedTurns: 1}, nil, false, false, true},
		{"interrupted is unscored", Attempt{State: Interrupted, ExpectedTurns: 1, Turns: []Turn{good}}, []*grader.Grade{solved}, false, false, true},
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

func TestGradesAreAddedNeverReplaced(t *testing.T) {
	s, err := Create(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	s.WriteRun(&Run{ID: "r"})
	a := &Attempt{ID: "a1", State: Completed, Snapshots: []Snapshot{{Phase: 1}}}
	if err := s.WriteAttempt(a); err != nil {
		t.Fatal(err)
	}
	g := &grader.Grade{Suite: "dev", SuiteVersion: "1.0.0", Phase: 1, Solved: true}
	if err := s.WriteGrade("a1", g); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteGrade("a1", &grader.Grade{Suite: "dev", SuiteVersion: "1.0.0", Phase: 1}); !errors.Is(err, os.ErrExist) {
		t.Errorf("second grade under the same version: %v, want ErrExist", err)
	}
	if err := s.WriteGrade("a1", &grader.Grade{Suite: "dev", SuiteVersion: "1.0.1", Phase: 1}); err != nil {
		t.Errorf("grade under a new version: %v", err)
	}
	got, _ := s.Grades(a, "dev@1.0.0")
	if len(got) != 1 || got[0] == nil || !got[0].Solved {
		t.Errorf("the first grade was changed: %+v", got)
	}
	ids, _ := s.SuiteIDs("a1")
	if len(ids) != 2 {
		t.Errorf("suite ids %v", ids)
	}
	// A second runner is kept off the run directory.
	s2, _ := Open(s.Dir)
	if err := s.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Lock(); !errors.Is(err, ErrLocked) {
		t.Errorf("second lock: %v, want ErrLocked", err)
	}
	s.Unlock()
}

func TestWriteFileAtomicLeavesNoTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	for i := 0; i < 3; i++ {
		if err := WriteJSON(p, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	var v map[string]int
	if err := ReadJSON(p, &v); err != nil || v["i"] != 2 {
		t.Errorf("read back %v %v", v, err)
	}
}
