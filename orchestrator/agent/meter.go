package agent

import (
	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// Meter sums the server's figures of responses exactly as the loop does,
// for model calls the loop does not make itself (the recording proxy of
// agent commands, orchestrator/proxy). It is not safe for concurrent use.
type Meter struct{ m meter }

// NewMeter returns an empty meter.
func NewMeter() *Meter {
	m := &Meter{}
	m.m.init()
	return m
}

// Add counts one response.
func (m *Meter) Add(r *model.Response) { m.m.add(r) }

// Unknown counts a response whose figures are unknown (see the loop's
// modelFailed).
func (m *Meter) Unknown() { m.m.unknown() }

// Spent is what the generated-token budget counts so far.
func (m *Meter) Spent() int64 { return m.m.spent }

// Tool counts one tool call that ran to a result.
func (m *Meter) Tool(failed bool) {
	m.m.toolCalls++
	if failed {
		m.m.toolErrors++
	}
}

// AddTaskSeconds adds a turn's time.
func (m *Meter) AddTaskSeconds(s float64) { m.m.taskSeconds += s }

// Result is the measurements so far.
func (m *Meter) Result() *evalctl.Measurements { return m.m.result() }

// ClassifyCommand reports whether a shell command runs tests and whether
// it type-checks, by the loop's own rule.
func ClassifyCommand(cmd string) (test, typecheck bool) { return classifyCommand(cmd) }
