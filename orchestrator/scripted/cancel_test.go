package scripted_test

import (
	"context"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
)

// A cut request is noticed late and counted at release
// (orchestrator/model/testdata/llama-server/README.md, "A cancelled request is counted
// late"): right after the client goes away the slot is still busy and
// /metrics has not moved; once /slots says idle, the counters hold more
// tokens than the client received, and not before the delay.
func TestCancelTakesEffectLate(t *testing.T) {
	const delay = 500 * time.Millisecond
	for _, stream := range []bool{true, false} {
		_, c := start(t, scripted.Config{CancelDelay: delay, DecodeTPS: 1000})
		ctx := context.Background()
		before, err := c.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = c.Chat(cctx, model.Request{Model: "runaway", Stream: stream, Messages: []model.Message{{Role: "user", Content: "think"}}})
		cancel()
		cutAt := time.Now()
		if err == nil {
			t.Fatalf("stream=%v: the runaway response finished within 300 ms", stream)
		}
		busy, err := c.Busy(ctx)
		if err != nil || busy != 1 {
			t.Fatalf("stream=%v: right after the cut /slots says %d busy (%v), want 1", stream, busy, err)
		}
		mid, _ := c.Counters(ctx)
		if *mid.GeneratedTokens != *before.GeneratedTokens {
			t.Errorf("stream=%v: counted %v tokens before the slot was released", stream, *mid.GeneratedTokens-*before.GeneratedTokens)
		}
		poll.For(5*time.Second, func() bool {
			busy, _ = c.Busy(ctx)
			return busy == 0
		})
		idleAfter := time.Since(cutAt)
		after, _ := c.Counters(ctx)
		if busy != 0 || idleAfter < delay*9/10 {
			t.Fatalf("stream=%v: idle %v after the cut (busy %d), want about %v", stream, idleAfter, busy, delay)
		}
		// At 1000 tokens/s the 300 ms before the cut and the 500 ms before
		// the server noticed it are some 800 tokens.
		if got := *after.GeneratedTokens - *before.GeneratedTokens; got < 600 {
			t.Errorf("stream=%v: counted %v tokens at release, want the ~800 generated until noticed", stream, got)
		}
	}
}

// Past a million the counters print with six significant digits, as
// llama-server's (metrics_big_counter.txt).
func TestCountersPrintSixDigits(t *testing.T) {
	_, c := start(t, scripted.Config{CountersFrom: 1_033_640})
	m, err := c.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if *m.PromptTokens != 1.03364e6 || m.PromptTokensStep != 10 {
		t.Errorf("prompt tokens %v step %v, want 1.03364e+06 printed with a step of 10", *m.PromptTokens, m.PromptTokensStep)
	}
}
