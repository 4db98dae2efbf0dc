package agent

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// serverTimed is a response with llama-server timings: n tokens decoded in
// ms milliseconds, after prompt tokens processed in 100 ms.
func serverTimed(n int64, ms float64, prompt int64) *model.Response {
	pms := 100.0
	return &model.Response{FinishReason: "tool_calls", Stream: true, WallSeconds: 9,
		Usage:   &model.Usage{PromptTokens: prompt, CompletionTokens: n},
		Timings: &model.Timings{PredictedN: &n, PredictedMS: &ms, PromptN: &prompt, PromptMS: &pms}}
}

// usageOnly is a streamed response without timings (vLLM, hosted APIs): a
// token count from usage, decode time measured by the client.
func usageOnly(n int64, clientSec float64) *model.Response {
	return &model.Response{FinishReason: "stop", Stream: true, WallSeconds: 9,
		Usage: &model.Usage{PromptTokens: 10, CompletionTokens: n}, ClientDecodeSeconds: &clientSec}
}

// uncounted is a streamed response that reported no token count at all.
func uncounted(clientSec float64) *model.Response {
	return &model.Response{FinishReason: "stop", Stream: true, WallSeconds: 9, ClientDecodeSeconds: &clientSec}
}

// shown is *p, or nil for a null figure, for messages.
func shown[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// tokensAre reports whether the attempt's output token count is known and n.
func tokensAre(m *evalctl.Measurements, n int64) bool {
	return m.NativeOutputTokens != nil && *m.NativeOutputTokens == n
}

// eqPtr reports whether two figures are both null or both the same value.
func eqPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// TestMeterSums: the attempt's sums are the responses' figures added up, and
// a figure one response lacked makes the sum null, never the partial sum of
// the others (which would, for output tokens, understate decode TPS while
// that response's decode seconds still count).
func TestMeterSums(t *testing.T) {
	tests := []struct {
		name       string
		responses  []*model.Response
		tokens     *int64
		decode     *float64
		prompt     *int64
		source     string
		wantFinish map[string]int
	}{
		{name: "no responses: true zeros, no timing source",
			tokens: ptr(int64(0)), decode: ptr(float64(0)), prompt: ptr(int64(0)), source: "none", wantFinish: map[string]int{}},
		{name: "every response server-timed",
			responses: []*model.Response{serverTimed(300, 1500, 1000), serverTimed(100, 250, 2000)},
			tokens:    ptr(int64(400)), decode: ptr(float64(1.75)), prompt: ptr(int64(3000)), source: "server",
			wantFinish: map[string]int{"tool_calls": 2}},
		{name: "counts from usage, client-measured decode",
			responses: []*model.Response{usageOnly(50, 0.5), usageOnly(70, 0.25)},
			tokens:    ptr(int64(120)), decode: ptr(float64(0.75)), source: "client",
			wantFinish: map[string]int{"stop": 2}},
		{name: "server and client timings mixed, every response counted",
			responses: []*model.Response{serverTimed(300, 1500, 1000), usageOnly(70, 0.25)},
			tokens:    ptr(int64(370)), decode: ptr(float64(1.75)), source: "mixed",
			wantFinish: map[string]int{"tool_calls": 1, "stop": 1}},
		{name: "one response without a count: tokens null",
			responses: []*model.Response{serverTimed(300, 1500, 1000), uncounted(0.5), serverTimed(100, 250, 2000)},
			tokens:    nil, decode: ptr(float64(2.25)), source: "mixed",
			wantFinish: map[string]int{"tool_calls": 2, "stop": 1}},
		{name: "the last response without a count: tokens null",
			responses: []*model.Response{usageOnly(50, 0.5), uncounted(0.25)},
			tokens:    nil, decode: ptr(float64(0.75)), source: "client",
			wantFinish: map[string]int{"stop": 2}},
		{name: "no response counted",
			responses: []*model.Response{uncounted(0.5)},
			tokens:    nil, decode: ptr(float64(0.5)), source: "client",
			wantFinish: map[string]int{"stop": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m meter
			m.init()
			for _, r := range tt.responses {
				m.add(r)
			}
			got := m.result()
			if !eqPtr(got.NativeOutputTokens, tt.tokens) {
				t.Errorf("native_output_tokens %v, want %v", shown(got.NativeOutputTokens), shown(tt.tokens))
			}
			if !eqPtr(got.DecodeSeconds, tt.decode) {
				t.Errorf("decode_seconds %v, want %v", shown(got.DecodeSeconds), shown(tt.decode))
			}
			if !eqPtr(got.PromptTokens, tt.prompt) {
				t.Errorf("prompt_tokens %v, want %v", shown(got.PromptTokens), shown(tt.prompt))
			}
			if got.TimingsSource != tt.source {
				t.Errorf("timings_source %q, want %q", got.TimingsSource, tt.source)
			}
			if got.Responses != len(tt.responses) {
				t.Errorf("responses %d, want %d", got.Responses, len(tt.responses))
			}
			if len(got.FinishReasons) != len(tt.wantFinish) {
				t.Errorf("finish reasons %v, want %v", got.FinishReasons, tt.wantFinish)
			}
			for k, v := range tt.wantFinish {
				if got.FinishReasons[k] != v {
					t.Errorf("finish reasons %v, want %v", got.FinishReasons, tt.wantFinish)
				}
			}
		})
	}
}

// TestMeasurementsNullsInJSON: an unknown sum is written as null and read
// back as unknown; a known zero stays a zero. Neither turns into the other.
func TestMeasurementsNullsInJSON(t *testing.T) {
	var m meter
	m.init()
	m.add(serverTimed(300, 1500, 1000))
	m.add(uncounted(0.5))
	unknown := m.result()
	data, err := json.Marshal(unknown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"native_output_tokens":null`, `"prompt_tokens":null`, `"decode_seconds":2`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("JSON %s lacks %s", data, want)
		}
	}
	var back evalctl.Measurements
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.NativeOutputTokens != nil || back.PromptTokens != nil {
		t.Errorf("null read back as %v tokens, %v prompt tokens", shown(back.NativeOutputTokens), shown(back.PromptTokens))
	}
	if back.DecodeSeconds == nil || *back.DecodeSeconds != 2 || back.TimingsSource != "mixed" {
		t.Errorf("decode seconds %v, source %q read back", shown(back.DecodeSeconds), back.TimingsSource)
	}

	// A record with every figure null, written by hand, reads as unknown.
	var hand evalctl.Measurements
	if err := json.Unmarshal([]byte(`{"native_output_tokens":null,"decode_seconds":null,"task_seconds":3}`), &hand); err != nil {
		t.Fatal(err)
	}
	if hand.NativeOutputTokens != nil || hand.DecodeSeconds != nil {
		t.Errorf("null fields read as %v and %v", shown(hand.NativeOutputTokens), shown(hand.DecodeSeconds))
	}
	again, err := json.Marshal(&hand)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"native_output_tokens":null`, `"decode_seconds":null`} {
		if !bytes.Contains(again, []byte(want)) {
			t.Errorf("rewritten JSON %s lacks %s", again, want)
		}
	}

	// No responses: zero tokens in zero seconds, known, written as 0.
	var none meter
	none.init()
	zero, err := json.Marshal(none.result())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"native_output_tokens":0`, `"decode_seconds":0`} {
		if !bytes.Contains(zero, []byte(want)) {
			t.Errorf("JSON %s lacks %s", zero, want)
		}
	}
	var zback evalctl.Measurements
	if err := json.Unmarshal(zero, &zback); err != nil {
		t.Fatal(err)
	}
	if !tokensAre(&zback, 0) || zback.DecodeSeconds == nil || *zback.DecodeSeconds != 0 {
		t.Errorf("known zeros read back as %v and %v", shown(zback.NativeOutputTokens), shown(zback.DecodeSeconds))
	}
}
