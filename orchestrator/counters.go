package orchestrator

import (
	"context"
	"math"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// counterReader reads the endpoint's /metrics; *model.Client satisfies it.
type counterReader interface {
	Counters(ctx context.Context) (*model.Counters, error)
	BaseURL() string
}

// attemptCounters brackets an attempt with two /metrics reads. An endpoint
// without /metrics gives none: the attempt records null, nothing else.
type attemptCounters struct {
	c      counterReader
	before *model.Counters
	cost   time.Duration
}

func startCounters(ctx context.Context, c counterReader) *attemptCounters {
	ac := &attemptCounters{c: c}
	start := time.Now()
	ac.before, _ = c.Counters(ctx)
	ac.cost = time.Since(start)
	return ac
}

// stop reads the counters again and returns what moved in between; nil
// when either read failed.
func (ac *attemptCounters) stop(ctx context.Context) *evalctl.CounterDelta {
	if ac.before == nil {
		return nil
	}
	start := time.Now()
	after, err := ac.c.Counters(ctx)
	if err != nil {
		return nil
	}
	return counterDelta(ac.c.BaseURL(), ac.before, after, ac.cost+time.Since(start))
}

// counterDelta is after - before, figure by figure; a figure missing from
// either read (or going backwards: the server restarted) is null.
func counterDelta(endpoint string, before, after *model.Counters, cost time.Duration) *evalctl.CounterDelta {
	d := &evalctl.CounterDelta{Endpoint: endpoint, WindowStart: before.Start.UTC(), WindowEnd: after.End.UTC(), ReadSeconds: cost.Seconds()}
	count := func(b, a *float64) *int64 {
		if b == nil || a == nil || *a < *b {
			return nil
		}
		v := int64(math.Round(*a - *b))
		return &v
	}
	secs := func(b, a *float64) *float64 {
		if b == nil || a == nil || *a < *b {
			return nil
		}
		v := *a - *b
		return &v
	}
	d.GeneratedTokens = count(before.GeneratedTokens, after.GeneratedTokens)
	d.GeneratedSeconds = secs(before.GeneratedSeconds, after.GeneratedSeconds)
	d.PromptTokens = count(before.PromptTokens, after.PromptTokens)
	d.PromptSeconds = secs(before.PromptSeconds, after.PromptSeconds)
	return d
}
