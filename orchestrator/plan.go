// Package orchestrator turns plans into runs: it registers a plan of arms x
// cases x repeat labels, runs each attempt (sandbox, agent loop, snapshots,
// grading, record) and stores everything in a run directory so that nothing
// is lost and a killed run resumes where it stopped.
package orchestrator

import (
	"math/rand/v2"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// The plan's records (plan.json) live in the root package, where readers
// of run directories find them without linking the runner; the runner
// keeps its names for them.
type (
	Plan        = evalctl.Plan
	Repeat      = evalctl.Repeat
	Arm         = evalctl.Arm
	Endpoint    = evalctl.Endpoint
	Replica     = evalctl.Replica
	Sampling    = evalctl.Sampling
	Reasoning   = evalctl.Reasoning
	Budgets     = evalctl.Budgets
	Order       = evalctl.Order
	Guards      = evalctl.Guards
	Slot        = evalctl.Slot
	SandboxHost = evalctl.SandboxHost
	SweepRecord = evalctl.SweepRecord
	SweepPoint  = evalctl.SweepPoint
	RerunRecord = evalctl.RerunRecord
	ArmChange   = evalctl.ArmChange
	StopRule    = evalctl.StopRule
)

// Defaults of a plan's unset fields that apply where the value is used (an
// arm's hash covers its fields, so they are not filled in): the fields'
// default tags, which the plan reference prints.
var (
	DefaultRequestTimeoutSeconds       = yamlcheck.Default[float64](Endpoint{}, "timeout_seconds")
	DefaultMaxConsecutiveInfraFailures = yamlcheck.Default[int](Guards{}, "max_consecutive_infra_failures")
	defaultStream                      = yamlcheck.Default[bool](Arm{}, "stream")
)

// DefaultBudgets are the per-attempt budgets an arm's unset budgets take:
// the default tags of Budgets.
func DefaultBudgets() Budgets {
	var b Budgets
	if err := yamlcheck.FillDefaults(&b); err != nil {
		panic(err) // a tag that is no value of its field; TestPlanDefaults loads them all
	}
	return b
}

// streams reports whether the arm's requests ask for server-sent events
// (its stream field, by default the field's default tag).
func streams(a *Arm) bool {
	if a.Stream == nil {
		return defaultStream
	}
	return *a.Stream
}

// realise fixes the order of attempts. Interleaved: the case x repeat
// blocks in a seeded shuffle, each block running every arm in a seeded
// order, so that arms meet the same conditions (time of day, temperature)
// as evenly as possible.
func realise(p *Plan) []Slot {
	type block struct {
		c string
		r Repeat
	}
	var blocks []block
	for _, r := range p.Repeats {
		for _, c := range p.Cases {
			blocks = append(blocks, block{c, r})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(p.Order.Seed), 0x65766c63))
	arms := make([]string, len(p.Arms))
	for i, a := range p.Arms {
		arms[i] = a.Name
	}
	var slots []Slot
	if p.Order.Policy == "sequential" {
		for _, a := range arms {
			for _, b := range blocks {
				slots = append(slots, Slot{Index: len(slots), Arm: a, Case: b.c, Repeat: b.r.Label, Seed: b.r.Seed})
			}
		}
		return slots
	}
	rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	for _, b := range blocks {
		order := append([]string(nil), arms...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, a := range order {
			slots = append(slots, Slot{Index: len(slots), Arm: a, Case: b.c, Repeat: b.r.Label, Seed: b.r.Seed})
		}
	}
	return slots
}

// armParams maps the arm onto the model client's request settings.
func armParams(a *Arm, seed int64) model.Params {
	p := model.Params{
		Temperature: a.Sampling.Temperature, TopP: a.Sampling.TopP, TopK: a.Sampling.TopK,
		MinP: a.Sampling.MinP, RepeatPenalty: a.Sampling.RepeatPenalty, Seed: &seed,
		MaxTokens: a.MaxTokens, ReasoningEffort: a.Reasoning.Effort, EnableThinking: a.Reasoning.Thinking,
		Extra: a.Extra,
	}
	p.Timeout = seconds(DefaultRequestTimeoutSeconds)
	if a.Endpoint.TimeoutSeconds > 0 {
		p.Timeout = seconds(a.Endpoint.TimeoutSeconds)
	}
	return p
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
