package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// matrixInput is two models on their endpoints, each under the built-in
// loop and the stand-in agent (the second in an agent image), over two
// cases: the agents' claims fall short of the server's counts on one.
func matrixInput() *Input {
	setups := []ArmAgentSetup{
		{Arm: "q7-loop", Model: "qwen-7b", Endpoint: "http://gpu0:8080", Agent: BuiltinAgent},
		{Arm: "q7-standin", Model: "qwen-7b", Endpoint: "http://gpu0:8080", Agent: "standin-agent", Command: true},
		{Arm: "q14-loop", Model: "qwen-14b", Endpoint: "http://gpu1:8080", Agent: BuiltinAgent},
		{Arm: "q14-standin", Model: "qwen-14b", Endpoint: "http://gpu1:8080", Agent: "standin-agent", Command: true},
	}
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	var rows []Row
	server := "server"
	for ai, s := range setups {
		for ci, c := range []string{"adder", "parser"} {
			fun := ci == 0 || ai%2 == 1
			r := Row{RunID: "r", AttemptID: fmt.Sprintf("a%d%d", ai, ci), Slot: 2*ai + ci, Arm: s.Arm, Case: c, Repeat: "repeat-1", State: "completed", Status: Scored,
				Functional: &fun, Delivered: &fun, NativeOutputTokens: i64(int64(400 + 100*ai)), DecodeSeconds: f64(float64(8 + 2*ai)), TaskSeconds: f64(float64(20 + ai))}
			r.TimingsSource = &server
			if s.Command {
				r.AgentReportedTokens = i64(int64(400 + 100*ai - 50*ci*(ai/2)))
			}
			rows = append(rows, r)
		}
	}
	return &Input{Runs: []RunInfo{{ID: "r", ArmOrder: []string{"q7-loop", "q7-standin", "q14-loop", "q14-standin"}}}, Rows: rows, ArmSetups: setups}
}

// TestAgentMatrix: arms crossing models and agents get the model x agent
// table (rows model and endpoint, columns agent, each cell an arm's
// functional k/n and decode TPS with its n, and the agent's claimed
// tokens beside the server's count) in every format; its text, Markdown
// and JSON are golden.
func TestAgentMatrix(t *testing.T) {
	rep, err := Build(matrixInput(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.AgentMatrix
	if m == nil || strings.Join(m.Agents, ",") != "built-in,standin-agent" || len(m.Rows) != 2 {
		t.Fatalf("matrix %+v", m)
	}
	c := m.Rows[1].Cells[1]
	if m.Rows[1].Model != "qwen-14b" || c.Arm != "q14-standin" || c.Functional.Count != 2 || c.Functional.Of != 2 || c.Measured != 2 ||
		*c.DecodeTPS != float64(700+700)/float64(14+14) || *c.AgentClaimedTokens != 1350 || *c.ServerCountedTokens != 1400 || c.ClaimAttempts != 2 {
		t.Errorf("q14-standin cell %+v", c)
	}
	if c := m.Rows[0].Cells[0]; c.Arm != "q7-loop" || c.Functional.Count != 1 || c.ClaimAttempts != 0 || c.AgentClaimedTokens != nil || c.DivergencePercent != nil {
		t.Errorf("q7-loop cell %+v", c)
	}
	// The per-arm claims, in every report whether or not it crosses.
	if u := rep.Arm("q14-standin").AgentUsage; u == nil || u.Attempts != 2 || u.AgentClaimedTokens != 1350 || u.ServerCountedTokens != 1400 || *u.DivergencePercent != 100*float64(-50)/1400 {
		t.Errorf("q14-standin agent usage %+v", u)
	}
	if u := rep.Arm("q7-loop").AgentUsage; u != nil {
		t.Errorf("the built-in loop has agent usage %+v", u)
	}
	for _, f := range []string{FormatTable, FormatMarkdown} {
		var buf bytes.Buffer
		if err := Write(&buf, rep, f); err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("testdata", "golden", "agentmatrix."+f), buf.Bytes())
	}
	data, err := marshalIndent(rep.AgentMatrix)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "golden", "agentmatrix.json"), data)
	var html bytes.Buffer
	if err := Write(&html, rep, FormatHTML); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Model x agent", "q14-standin: functional 2/2, decode 50.00 TPS (n=2); agent claimed 1350 tokens, server counted 1400 (-3.6%, n=2)"} {
		if !strings.Contains(html.String(), w) {
			t.Errorf("HTML lacks %q", w)
		}
	}
	var js bytes.Buffer
	if err := Write(&js, rep, FormatJSON); err != nil || !strings.Contains(js.String(), `"agent_matrix": {`) {
		t.Errorf("JSON report lacks the matrix (%v)", err)
	}
}

// TestAgentMatrixOnlyWhenCrossed: no table without an agent command, with
// one model or one agent, or for arms the plans do not describe; two arms
// of one model and agent get a column each, named by arm.
func TestAgentMatrixOnlyWhenCrossed(t *testing.T) {
	build := func(edit func(in *Input)) *AgentMatrix {
		in := matrixInput()
		edit(in)
		rep, err := Build(in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return rep.AgentMatrix
	}
	if m := build(func(in *Input) {
		for i := range in.ArmSetups {
			in.ArmSetups[i].Command = false
		}
	}); m != nil {
		t.Errorf("no agent command: %+v", m)
	}
	if m := build(func(in *Input) {
		for i := range in.ArmSetups {
			in.ArmSetups[i].Model, in.ArmSetups[i].Endpoint = "qwen-7b", "http://gpu0:8080"
		}
	}); m != nil {
		t.Errorf("one model: %+v", m)
	}
	if m := build(func(in *Input) {
		for i := range in.ArmSetups {
			in.ArmSetups[i].Agent, in.ArmSetups[i].Command = "standin-agent", true
			in.ArmSetups[i].Model += fmt.Sprint(i)
		}
	}); m != nil {
		t.Errorf("one agent: %+v", m)
	}
	if m := build(func(in *Input) { in.ArmSetups = nil }); m != nil {
		t.Errorf("arms without setups: %+v", m)
	}
	m := build(func(in *Input) {
		in.ArmSetups[0].Agent, in.ArmSetups[0].Command = "standin-agent", true
	})
	if m == nil || strings.Join(m.Agents, ",") != "standin-agent [q7-loop],standin-agent [q7-standin],built-in,standin-agent" {
		t.Errorf("two arms of one agent on one model: %+v", m)
	}
}
