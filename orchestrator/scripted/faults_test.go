package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
)

// Each captured llama-server failure (orchestrator/model/testdata/llama-server/fault_*),
// as the scripted server reproduces it on the wire.
func TestCapturedFaultsOnTheWire(t *testing.T) {
	_, c := start(t, scripted.Config{CtxSize: 8192})
	ctx := context.Background()
	msgs := []model.Message{{Role: "user", Content: "work"}}
	generated := func() float64 {
		m, err := c.Metrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m["llamacpp:tokens_predicted_total"]
	}

	// 500 after generating: no timings; counted in /metrics like a success.
	for _, stream := range []bool{false, true} {
		before := generated()
		_, err := c.Chat(ctx, model.Request{Model: "garble", Stream: stream, Messages: msgs, Params: model.Params{MaxTokens: 4096}})
		var me *model.Error
		want := map[bool]model.Kind{false: model.KindServer, true: model.KindBrokenStream}[stream]
		if !asModelError(err, &me) || me.Kind != want || !strings.Contains(me.Message, "peg-native") || me.Tries != 1 {
			t.Fatalf("garble stream=%v: %v, want %s once", stream, err, want)
		}
		if stream && (me.Partial == nil || me.Partial.Content == "" || me.Partial.Timings != nil) {
			t.Errorf("garble stream: partial %+v, want content without timings", me.Partial)
		}
		if d := generated() - before; d <= 0 {
			t.Errorf("garble stream=%v: /metrics moved %v tokens, want the generated ones", stream, d)
		}
	}

	// A tool call the cap cuts: the call with invalid JSON arguments,
	// finish_reason length, exactly max_tokens generated.
	var cut model.Message
	for _, stream := range []bool{false, true} {
		r, err := c.Chat(ctx, model.Request{Model: "cutcall", Stream: stream, Messages: msgs, Tools: agentTools, Params: model.Params{MaxTokens: 60}})
		if err != nil {
			t.Fatal(err)
		}
		if r.FinishReason != "length" || len(r.ToolCalls) != 1 || json.Valid([]byte(r.ToolCalls[0].Arguments)) || *r.Timings.PredictedN != 60 || r.Content != "" {
			t.Fatalf("cutcall stream=%v: finish %s calls %+v predicted %d content %q", stream, r.FinishReason, r.ToolCalls, *r.Timings.PredictedN, r.Content)
		}
		cut = r.Message()
	}

	// Sending the cut call back: 500 before any generation, as plain JSON
	// even for a stream; nothing counted.
	for _, stream := range []bool{false, true} {
		before := generated()
		conv := append(append([]model.Message(nil), msgs...), cut, model.Message{Role: "tool", ToolCallID: cut.ToolCalls[0].ID, Content: "ok"})
		_, err := c.Chat(ctx, model.Request{Model: "noop", Stream: stream, Messages: conv, Tools: agentTools})
		var me *model.Error
		if !asModelError(err, &me) || me.Status != 500 || me.Kind != model.KindServer || !strings.Contains(me.Message, "Failed to parse tool call arguments as JSON") || me.Tries != 1 {
			t.Fatalf("invalid arguments stream=%v: %v", stream, err)
		}
		if d := generated() - before; d != 0 {
			t.Errorf("invalid arguments: /metrics moved %v tokens", d)
		}
	}

	// llama-server's own rate leaves out the first token: (n-1)/ms.
	r, err := c.Chat(ctx, model.Request{Model: "noop", Messages: msgs, Params: model.Params{MaxTokens: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		PredictedN         float64 `json:"predicted_n"`
		PredictedMS        float64 `json:"predicted_ms"`
		PredictedPerSecond float64 `json:"predicted_per_second"`
	}
	if err := json.Unmarshal(r.Timings.Raw, &raw); err != nil {
		t.Fatal(err)
	}
	if want := (raw.PredictedN - 1) / raw.PredictedMS * 1000; math.Abs(raw.PredictedPerSecond-want) > 1e-6*want {
		t.Errorf("predicted_per_second %v, want (n-1)/ms = %v", raw.PredictedPerSecond, want)
	}
}

func asModelError(err error, me **model.Error) bool { return errors.As(err, me) }
