package report

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/evalctl/evalctl"
)

// agentClaim sums an agent command's own completion-token claims over its
// phases; nil when it is no agent command or some phase reported none.
func agentClaim(rec *evalctl.AgentRecord) *int64 {
	if rec == nil || len(rec.Phases) == 0 {
		return nil
	}
	var n int64
	for _, p := range rec.Phases {
		if p.ReportedCompletionTokens == nil {
			return nil
		}
		n += *p.ReportedCompletionTokens
	}
	return &n
}

// claimSums are an arm's agent claims and the server's counts over the
// n attempts that have both.
type claimSums struct {
	n              int
	claim, counted int64
}

// divergence is the claim's distance from the count in percent; nil when
// the server counted none.
func (s *claimSums) divergence() *float64 {
	if s.counted <= 0 {
		return nil
	}
	d := 100 * float64(s.claim-s.counted) / float64(s.counted)
	return &d
}

// agentClaimSums sums, per arm, what agent commands claimed they
// generated beside what the server counted, over the attempts with an
// outcome that have both.
func agentClaimSums(rows []Row) map[string]*claimSums {
	by := map[string]*claimSums{}
	for i := range rows {
		r := &rows[i]
		if r.Status == Unscored || r.AgentReportedTokens == nil || r.NativeOutputTokens == nil {
			continue
		}
		s := by[r.Arm]
		if s == nil {
			s = &claimSums{}
			by[r.Arm] = s
		}
		s.n++
		s.claim += *r.AgentReportedTokens
		s.counted += *r.NativeOutputTokens
	}
	return by
}

// agentNotes set, per arm, what agent commands claimed they generated
// beside what the server counted, over the attempts that have both: the
// divergence is the agent's error, never a correction of the figures.
func agentNotes(rows []Row) []string {
	by := agentClaimSums(rows)
	arms := make([]string, 0, len(by))
	for a := range by {
		arms = append(arms, a)
	}
	sort.Strings(arms)
	var out []string
	for _, a := range arms {
		s := by[a]
		div := "n/a: the server counted none"
		if d := s.divergence(); d != nil {
			div = fmt.Sprintf("%+.1f%%", *d)
		}
		out = append(out, fmt.Sprintf("agent-reported usage, arm %s: the agent claimed %d generated tokens, the server counted %d (divergence %s) over %d attempt(s); every figure of the report is the server's", a, s.claim, s.counted, div, s.n))
	}
	return out
}

// addAgentUsage gives each arm whose agent reported its usage the sums.
func addAgentUsage(rep *Report, rows []Row) {
	by := agentClaimSums(rows)
	for i := range rep.Arms {
		if s := by[rep.Arms[i].Arm]; s != nil {
			rep.Arms[i].AgentUsage = &AgentUsage{Attempts: s.n, AgentClaimedTokens: s.claim, ServerCountedTokens: s.counted, DivergencePercent: s.divergence()}
		}
	}
}

// agentUsageTables is the per-arm table of agents' claims of the text
// formats (none when no agent reported).
func agentUsageTables(r *Report) []table {
	t := table{Title: "Agent-reported usage (the agent's own claim beside the server's count; every other figure is the server's)",
		Header: []string{"arm", "attempts", "agent claimed", "server counted", "divergence"}}
	for _, a := range r.Arms {
		u := a.AgentUsage
		if u == nil {
			continue
		}
		div := dash
		if u.DivergencePercent != nil {
			div = fmt.Sprintf("%+.1f%%", *u.DivergencePercent)
		}
		t.Rows = append(t.Rows, []string{a.Arm, strconv.Itoa(u.Attempts), strconv.FormatInt(u.AgentClaimedTokens, 10), strconv.FormatInt(u.ServerCountedTokens, 10), div})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return []table{t}
}
