package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// BuiltinAgent labels the built-in tool loop as an agent of the model x
// agent table.
const BuiltinAgent = "built-in"

// ArmAgentSetup is what the model x agent table reads of an arm from its plan:
// the model, where it is served and which agent drives it.
type ArmAgentSetup struct {
	Arm      string `json:"arm"`
	Model    string `json:"model"`
	Endpoint string `json:"endpoint"`
	// Agent is BuiltinAgent, or the agent command's program (with " in
	// IMAGE" when the arm names an agent image).
	Agent string `json:"agent"`
	// Command says whether the arm's agent is a command.
	Command bool `json:"command"`
}

// setupOf is an arm's setup.
func setupOf(a *evalctl.Arm) ArmAgentSetup {
	s := ArmAgentSetup{Arm: a.Name, Model: a.Endpoint.Model, Endpoint: a.Endpoint.BaseURL, Agent: BuiltinAgent}
	switch {
	case a.Profile != "":
		s.Endpoint = "profile " + filepath.Base(a.Profile)
	case len(a.Endpoint.Replicas) > 0:
		s.Endpoint = fmt.Sprintf("pool of %d replicas", len(a.Endpoint.Replicas))
	}
	if a.Agent != nil && len(a.Agent.Command) > 0 {
		s.Agent, s.Command = a.Agent.Command[0], true
		if a.Agent.Image != "" {
			s.Agent += " in " + a.Agent.Image
		}
	}
	return s
}

// readArmAgentSetups reads the arms of a run's plan (none for a run kind whose
// plan has no arms).
func readArmAgentSetups(dir string) ([]ArmAgentSetup, error) {
	data, err := os.ReadFile(filepath.Join(dir, runstore.PlanFile))
	if err != nil {
		return nil, fmt.Errorf("read plan of %s: %w", dir, err)
	}
	s, err := planAgentSetups(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, runstore.PlanFile), err)
	}
	return s, nil
}

// planAgentSetups reads the arms' setups of a registered plan (an
// export's protocol holds the plan file, so Verify reads them too).
func planAgentSetups(data []byte) ([]ArmAgentSetup, error) {
	var p evalctl.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	out := make([]ArmAgentSetup, 0, len(p.Arms))
	for i := range p.Arms {
		out = append(out, setupOf(&p.Arms[i]))
	}
	return out, nil
}

// AgentMatrix is the model x agent table: one row per model and endpoint,
// one column per agent, each cell one arm's pooled figures. It is built
// only when the plans' arms include an agent command and cross at least
// two models (or endpoints) with at least two agents.
type AgentMatrix struct {
	Agents []string         `json:"agents"`
	Rows   []AgentMatrixRow `json:"rows"`
}

// AgentMatrixRow is one model on one endpoint; Cells follow Agents, null
// where no arm runs that agent on it.
type AgentMatrixRow struct {
	Model    string       `json:"model"`
	Endpoint string       `json:"endpoint"`
	Cells    []*AgentCell `json:"cells"`
}

// AgentCell is one arm's figures in the model x agent table. Functional
// is over Scored attempts, DecodeTPS (the server's timings) over Measured
// ones. AgentClaimedTokens and ServerCountedTokens are summed over the
// ClaimAttempts attempts whose agent reported its usage (see agentNotes);
// DivergencePercent is the claim's distance from the server's count, null
// without a claim or a count.
type AgentCell struct {
	Arm                 string   `json:"arm"`
	Functional          Rate     `json:"functional"`
	Scored              int      `json:"scored"`
	DecodeTPS           *float64 `json:"decode_tps"`
	Measured            int      `json:"measured"`
	AgentClaimedTokens  *int64   `json:"agent_claimed_tokens"`
	ServerCountedTokens *int64   `json:"server_counted_tokens"`
	ClaimAttempts       int      `json:"claim_attempts"`
	DivergencePercent   *float64 `json:"divergence_percent"`
}

// agentMatrix builds the table from the report's arms; nil when the arms
// do not cross models and agents or none is an agent command. Arms the
// plans do not describe are left out. Two arms of one model, endpoint and
// agent (an agent with other flags) get a column each, labelled with the
// arm's name.
func agentMatrix(r *Report, setups []ArmAgentSetup, rows []Row) *AgentMatrix {
	by := map[string]ArmAgentSetup{}
	for _, s := range setups {
		if _, ok := by[s.Arm]; !ok {
			by[s.Arm] = s
		}
	}
	type key struct{ model, endpoint, agent string }
	var arms []ArmAgentSetup
	count := map[key]int{}
	command := false
	for _, a := range r.Arms {
		s, ok := by[a.Arm]
		if !ok {
			continue
		}
		arms = append(arms, s)
		count[key{s.Model, s.Endpoint, s.Agent}]++
		command = command || s.Command
	}
	type place struct{ model, endpoint string }
	var agents []string
	var places []place
	col, row := map[string]int{}, map[place]int{}
	cells := map[place]map[string]string{}
	for _, s := range arms {
		agent := s.Agent
		if count[key{s.Model, s.Endpoint, s.Agent}] > 1 {
			agent += " [" + s.Arm + "]"
		}
		if _, ok := col[agent]; !ok {
			col[agent] = len(agents)
			agents = append(agents, agent)
		}
		p := place{s.Model, s.Endpoint}
		if _, ok := row[p]; !ok {
			row[p] = len(places)
			places = append(places, p)
			cells[p] = map[string]string{}
		}
		cells[p][agent] = s.Arm
	}
	if !command || len(agents) < 2 || len(places) < 2 {
		return nil
	}
	claims := agentClaimSums(rows)
	m := &AgentMatrix{Agents: agents, Rows: []AgentMatrixRow{}}
	for _, p := range places {
		mr := AgentMatrixRow{Model: p.model, Endpoint: p.endpoint, Cells: make([]*AgentCell, len(agents))}
		for agent, arm := range cells[p] {
			a := r.Arm(arm)
			c := &AgentCell{Arm: arm, Functional: a.Functional, Scored: a.Scored, DecodeTPS: a.DecodeTPS, Measured: a.Measured}
			if s := claims[arm]; s != nil {
				claim, counted := s.claim, s.counted
				c.AgentClaimedTokens, c.ServerCountedTokens, c.ClaimAttempts = &claim, &counted, s.n
				c.DivergencePercent = s.divergence()
			}
			mr.Cells[col[agent]] = c
		}
		m.Rows = append(m.Rows, mr)
	}
	return m
}

// agentMatrixTables is the model x agent table of the text formats.
func agentMatrixTables(r *Report) []table {
	m := r.AgentMatrix
	if m == nil {
		return nil
	}
	t := table{Title: "Model x agent (functional over scored attempts; decode TPS, the server's timings, over measured attempts)",
		Header: append([]string{"model", "endpoint"}, m.Agents...)}
	for _, mr := range m.Rows {
		line := []string{mr.Model, mr.Endpoint}
		for _, c := range mr.Cells {
			line = append(line, fmtAgentCell(c))
		}
		t.Rows = append(t.Rows, line)
	}
	return []table{t}
}

// fmtAgentCell is "arm: functional 3/4, decode 52.10 TPS (n=4)", with the
// agent's claim beside the server's count when it made one.
func fmtAgentCell(c *AgentCell) string {
	if c == nil {
		return dash
	}
	s := fmt.Sprintf("%s: functional %s, decode %s TPS (n=%d)", c.Arm, fmtCount(c.Functional), fmtF(c.DecodeTPS, 2), c.Measured)
	if c.ClaimAttempts > 0 {
		div := "n/a"
		if c.DivergencePercent != nil {
			div = fmt.Sprintf("%+.1f%%", *c.DivergencePercent)
		}
		s += fmt.Sprintf("; agent claimed %d tokens, server counted %d (%s, n=%s)", *c.AgentClaimedTokens, *c.ServerCountedTokens, div, strconv.Itoa(c.ClaimAttempts))
	}
	return s
}
