package report

import (
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestAgentClaims: an agent's own usage claims are summed per arm beside
// the server's count, the divergence said with the number of attempts;
// an attempt whose agent did not report in every phase is left out, and
// built-in-loop rows make no note.
func TestAgentClaims(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	if got := agentClaim(&evalctl.AgentRecord{Phases: []evalctl.AgentPhase{{ReportedCompletionTokens: n(3)}, {}}}); got != nil {
		t.Errorf("a phase without a claim: %v, want null", *got)
	}
	if got := agentClaim(&evalctl.AgentRecord{Phases: []evalctl.AgentPhase{{ReportedCompletionTokens: n(3)}, {ReportedCompletionTokens: n(4)}}}); got == nil || *got != 7 {
		t.Errorf("claims summed: %v", got)
	}
	rows := []Row{
		{Arm: "honest", Status: Scored, AgentReportedTokens: n(100), NativeOutputTokens: n(100)},
		{Arm: "liar", Status: Scored, AgentReportedTokens: n(30), NativeOutputTokens: n(8500)},
		{Arm: "liar", Status: Scored, AgentReportedTokens: n(270), NativeOutputTokens: n(0)},
		{Arm: "liar", Status: Unscored, AgentReportedTokens: n(1), NativeOutputTokens: n(1)},
		{Arm: "loop", Status: Scored, NativeOutputTokens: n(100)},
	}
	notes := strings.Join(agentNotes(rows), "\n")
	for _, w := range []string{
		"arm honest: the agent claimed 100 generated tokens, the server counted 100 (divergence +0.0%) over 1 attempt(s)",
		"arm liar: the agent claimed 300 generated tokens, the server counted 8500 (divergence -96.5%) over 2 attempt(s)",
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("lacks %q in:\n%s", w, notes)
		}
	}
	if strings.Contains(notes, "loop") {
		t.Errorf("a built-in-loop arm has a note:\n%s", notes)
	}
}
