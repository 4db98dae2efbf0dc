package orchestrator

import (
	"errors"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
)

// TestResumeHoldsAgentToEarlierSessions: a resumed run compares an arm's
// agent program with the one the run's first attempt of that arm ran (in
// an earlier session), not only with its own first attempt; a changed
// program then stops it with ErrAgentChanged.
func TestResumeHoldsAgentToEarlierSessions(t *testing.T) {
	at := func(s int) *time.Time { v := time.Unix(int64(1_800_000_000+s), 0).UTC(); return &v }
	rec := func(sha, version string) *evalctl.AgentRecord {
		return &evalctl.AgentRecord{BinarySHA256: sha, Version: version, ImageID: "sha256:img"}
	}
	stored := []*evalctl.Attempt{
		{ID: "later", Arm: "standin", StartedAt: at(20), Agent: rec("bbb", "standin 2")},
		{ID: "first", Arm: "standin", StartedAt: at(10), Agent: rec("aaa", "standin 1")},
		{ID: "loop", Arm: "builtin", StartedAt: at(5)},                                    // the built-in loop: no agent
		{ID: "never-started", Arm: "other", Agent: rec("ccc", "x")},                       // no start: nothing ran
		{ID: "no-program", Arm: "empty", StartedAt: at(1), Agent: &evalctl.AgentRecord{}}, // failed before the program was found
	}
	ids := agentIDsOf(stored)
	if len(ids) != 1 || ids["standin"] != agentID(rec("aaa", "standin 1")) {
		t.Fatalf("agent ids %q: want only standin's first attempt's program", ids)
	}
	r := &runner{agentIDs: ids}
	arm := &Arm{Name: "standin"}
	if err := r.agentIdentity(arm, rec("aaa", "standin 1")); err != nil {
		t.Errorf("the same program after a resume: %v", err)
	}
	err := r.agentIdentity(arm, rec("ddd", "standin 1"))
	if !errors.Is(err, ErrAgentChanged) {
		t.Errorf("a program other than the earlier session's: %v, want ErrAgentChanged", err)
	}
	if err := r.agentIdentity(&Arm{Name: "fresh"}, rec("eee", "v")); err != nil {
		t.Errorf("an arm's first attempt in the run: %v", err)
	}
}
