package orchestrator

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// counterReader reads the endpoint's /metrics and whether its slots are
// busy; *model.Client satisfies it.
type counterReader interface {
	Counters(ctx context.Context) (*model.Counters, error)
	Busy(ctx context.Context) (int, error)
	BaseURL() string
}

// settleBound is the longest the runner waits for a server's slots to be
// idle; llama-server notices a cut request 0.4 to 1 s late
// (docs/llama-server.md, "Counters").
const settleBound = 5 * time.Second

// settle waits, bounded, until none of the server's slots is processing.
// It returns the time waited and "" once idle, or why the server could
// not be seen idle.
func settle(ctx context.Context, c counterReader, bound time.Duration) (time.Duration, string) {
	start := time.Now()
	for {
		busy, err := c.Busy(ctx)
		switch {
		case err != nil:
			return time.Since(start), fmt.Sprintf("whether the server was busy is unknown (%v)", err)
		case busy == 0:
			return time.Since(start), ""
		case time.Since(start) >= bound:
			return time.Since(start), fmt.Sprintf("the server was still processing a request %s after the attempt's last one", bound)
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Since(start), "interrupted"
		case <-t.C:
		}
	}
}

// attemptCounters brackets an attempt with two /metrics reads. An endpoint
// without /metrics gives none: the attempt records null, nothing else.
type attemptCounters struct {
	c         counterReader
	before    *model.Counters
	cost      time.Duration
	startWait time.Duration
	// bound is the longest wait for the server to settle (settleBound).
	bound time.Duration
	// unattributed is why the window is not the attempt's alone.
	unattributed string
}

// startCounters takes the first read. alone says no other attempt is in
// flight on the device: then a busy server is an earlier request still
// being released, waited for (bounded) before the read and before the
// attempt's budgets start.
func startCounters(ctx context.Context, c counterReader, alone bool) *attemptCounters {
	ac := &attemptCounters{c: c, bound: settleBound}
	if alone {
		if busy, err := c.Busy(ctx); err == nil && busy > 0 {
			var why string
			ac.startWait, why = settle(ctx, c, ac.bound)
			if why != "" {
				ac.unattributed = "at the attempt's start " + why
			}
		}
	}
	start := time.Now()
	ac.before, _ = c.Counters(ctx)
	ac.cost = time.Since(start)
	return ac
}

// stop reads the counters again and returns what moved in between; nil
// when either read failed. cut says the attempt's last request may still
// be in the server (a cut or failed response): then, when the attempt is
// alone on its device, the read waits until the server is settled, and a
// server that does not settle leaves the figures null with the reason.
func (ac *attemptCounters) stop(ctx context.Context, cut, alone bool) *evalctl.CounterDelta {
	if ac.before == nil {
		return nil
	}
	var waited time.Duration
	why := ac.unattributed
	if cut && alone {
		var w string
		waited, w = settle(ctx, ac.c, ac.bound)
		if w != "" && why == "" {
			why = "after a cut request " + w
		}
	}
	start := time.Now()
	after, err := ac.c.Counters(ctx)
	if err != nil {
		return nil
	}
	d := counterDelta(ac.c.BaseURL(), ac.before, after, ac.cost+time.Since(start))
	d.StartWaitSeconds, d.SettleSeconds = ac.startWait.Seconds(), waited.Seconds()
	if why != "" {
		d.Unattributed = why
		d.GeneratedTokens, d.GeneratedSeconds, d.PromptTokens, d.PromptSeconds = nil, nil, nil, nil
		d.GeneratedTokensWithin, d.GeneratedSecondsWithin, d.PromptTokensWithin, d.PromptSecondsWithin = 0, 0, 0, 0
	}
	return d
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
	d.GeneratedTokensWithin = tokensWithin(before.GeneratedTokensStep, after.GeneratedTokensStep)
	d.PromptTokensWithin = tokensWithin(before.PromptTokensStep, after.PromptTokensStep)
	d.GeneratedSecondsWithin = (before.GeneratedSecondsStep + after.GeneratedSecondsStep) / 2
	d.PromptSecondsWithin = (before.PromptSecondsStep + after.PromptSecondsStep) / 2
	if d.GeneratedTokens == nil {
		d.GeneratedTokensWithin = 0
	}
	if d.PromptTokens == nil {
		d.PromptTokensWithin = 0
	}
	if d.GeneratedSeconds == nil {
		d.GeneratedSecondsWithin = 0
	}
	if d.PromptSeconds == nil {
		d.PromptSecondsWithin = 0
	}
	return d
}

// tokensWithin is how far a token delta may be off when the two reads
// were printed with steps a and b: each reading is the true count rounded
// to its step, off by at most half of it; counts are whole, so a step of
// one or less is exact.
func tokensWithin(a, b float64) int64 {
	half := func(s float64) float64 {
		if s <= 1 {
			return 0
		}
		return s / 2
	}
	return int64(math.Floor(half(a) + half(b)))
}
