package model

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestFaultCaptures replays each captured failure of a genuine llama-server
// through the client: the classification, whether it was retried (never,
// for a request the server had), and what the response keeps.
func TestFaultCaptures(t *testing.T) {
	cases := []struct {
		name     string
		stream   bool
		kind     Kind // "" = a response
		class    Class
		msg      string
		partial  bool
		check    func(t *testing.T, r *Response)
		requests int
	}{
		{name: "fault_500_nonstream", kind: KindServer, class: ClassServerFailed, msg: "peg-native format", requests: 1},
		{name: "fault_500_stream", stream: true, kind: KindBrokenStream, class: ClassServerFailed, msg: "peg-native format", partial: true, requests: 1},
		{name: "fault_invalid_tool_args", kind: KindServer, class: ClassServerFailed, msg: "Failed to parse tool call arguments", requests: 1},
		{name: "fault_invalid_tool_args_stream", stream: true, kind: KindServer, class: ClassServerFailed, msg: "Failed to parse tool call arguments", requests: 1},
		{name: "fault_malformed_json", kind: KindServer, class: ClassServerFailed, msg: "parse", requests: 1},
		{name: "fault_missing_messages", kind: KindRequest, class: ClassArm, msg: "'messages' is required", requests: 1},
		{name: "fault_not_found_post", kind: KindRequest, class: ClassArm, msg: "File Not Found", requests: 1},
		{name: "fault_not_found_get", kind: KindRequest, class: ClassArm, msg: "File Not Found", requests: 1},
		{name: "fault_toolcall_truncated", requests: 1, check: truncatedCall},
		{name: "fault_toolcall_truncated_stream", stream: true, requests: 1, check: truncatedCall},
		{name: "fault_unknown_model", requests: 1, check: serverModel},
		{name: "fault_unknown_model_stream", stream: true, requests: 1, check: serverModel},
		{name: "fault_metrics_ok_stream", stream: true, requests: 1, check: func(t *testing.T, r *Response) {
			if n, ok := r.OutputTokens(); !ok || n != 64 || !r.Measured() {
				t.Errorf("tokens %d (%v), anomalies %v; want 64", n, ok, r.Anomalies)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rp, srv := newReplay(t, map[string]string{"/v1/chat/completions": tc.name})
			c := New(Config{BaseURL: srv.URL, Retry: fastRetry})
			resp, err := c.Chat(context.Background(), Request{Model: "tiny", Stream: tc.stream})
			if len(rp.got) != tc.requests {
				t.Errorf("%d requests, want %d (a request the server had is never retried)", len(rp.got), tc.requests)
			}
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				tc.check(t, resp)
				return
			}
			var me *Error
			if !asError(err, &me) || me.Kind != tc.kind || me.Class() != tc.class || ClassOf(err) != tc.class {
				t.Fatalf("err = %v, want kind %s class %s", err, tc.kind, tc.class)
			}
			if !strings.Contains(me.Message, tc.msg) {
				t.Errorf("message %q lacks the server's text %q", me.Message, tc.msg)
			}
			if tc.partial != (me.Partial != nil) {
				t.Errorf("partial = %+v, want partial %v", me.Partial, tc.partial)
			}
			if me.Partial != nil {
				if _, ok := me.Partial.OutputTokens(); ok || me.Partial.Content == "" || me.Partial.Timings != nil {
					t.Errorf("partial keeps content %q and claims a count: %+v", me.Partial.Content, me.Partial)
				}
			}
		})
	}
}

// The cap ends the call inside its arguments: finish_reason length, and the
// arguments are the invalid JSON text the server generated (kept raw).
func truncatedCall(t *testing.T, r *Response) {
	t.Helper()
	want := "{\"path\":\"\",\"content\"\n\n\t  :\n\n\")"
	if r.FinishReason != FinishLength || len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != want || r.ToolCalls[0].Name != "write_file" {
		t.Fatalf("finish %q calls %+v; want length and write_file with %q", r.FinishReason, r.ToolCalls, want)
	}
	if json.Valid([]byte(r.ToolCalls[0].Arguments)) {
		t.Errorf("arguments are valid JSON; the capture's are not")
	}
	if n, ok := r.OutputTokens(); !ok || n != 49 {
		t.Errorf("tokens %d (%v), want 49", n, ok)
	}
}

// llama-server ignores the requested model name: the response names its own.
func serverModel(t *testing.T, r *Response) {
	t.Helper()
	if r.Model != "/models/tiny.gguf" || r.FinishReason == "" {
		t.Errorf("model %q finish %q; want the server's own model", r.Model, r.FinishReason)
	}
}

// The counters around each captured request move as the README says: a 500
// after generating is counted like a success (so the client's own sums
// undercount unless it reads the deltas), the invalid-arguments 500 moves
// nothing.
func TestFaultMetricsCaptures(t *testing.T) {
	read := func(name string) Counters {
		m, err := ParseMetrics(bytes.NewReader(loadCapture(t, name).body))
		if err != nil {
			t.Fatal(err)
		}
		c := CountersFrom(m)
		if c.GeneratedTokens == nil || c.GeneratedSeconds == nil || c.PromptTokens == nil || c.PromptSeconds == nil {
			t.Fatalf("%s: counters not all found: %+v", name, c)
		}
		return c
	}
	steps := []struct {
		from, to string
		tokens   float64
	}{
		{"fault_metrics_0_before", "fault_metrics_1_after_ok_stream", 64},
		{"fault_metrics_1_after_ok_stream", "fault_metrics_2_after_500_nonstream", 64},
		{"fault_metrics_2_after_500_nonstream", "fault_metrics_3_after_500_stream", 64},
		{"fault_metrics_4_before_invalid_tool_args", "fault_metrics_5_after_invalid_tool_args", 0},
	}
	for _, s := range steps {
		a, b := read(s.from), read(s.to)
		if d := *b.GeneratedTokens - *a.GeneratedTokens; d != s.tokens {
			t.Errorf("%s -> %s: generated %v, want %v", s.from, s.to, d, s.tokens)
		}
		if d := *b.PromptTokens - *a.PromptTokens; d != min(s.tokens, 1) {
			t.Errorf("%s -> %s: prompt tokens %v", s.from, s.to, d)
		}
		if d := *b.GeneratedSeconds - *a.GeneratedSeconds; (s.tokens > 0) != (d > 0) || d < 0 {
			t.Errorf("%s -> %s: generated seconds %v", s.from, s.to, d)
		}
	}
	// The successful stream's own timings equal its delta.
	ok, err := readStream(bytes.NewReader(loadCapture(t, "fault_metrics_ok_stream").body), timeZero, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := read("fault_metrics_0_before"), read("fault_metrics_1_after_ok_stream")
	if d := *b.GeneratedSeconds - *a.GeneratedSeconds; absDiff(d, *ok.Timings.PredictedMS/1000) > 1e-3 {
		t.Errorf("generated seconds delta %v, stream's predicted_ms %v", d, *ok.Timings.PredictedMS)
	}
}

// Names differ across builds: the namespace separator, and older names.
func TestCountersTolerantNames(t *testing.T) {
	for _, text := range []string{
		"llamacpp:tokens_predicted_total 10\nllamacpp:tokens_predicted_seconds_total 0.5\nllamacpp:prompt_tokens_total 3\nllamacpp:prompt_seconds_total 0.1\nllamacpp:predicted_tokens_seconds 99\n",
		"# TYPE llamacpp_tokens_predicted_total counter\nllamacpp_tokens_predicted_total 10\nllamacpp_tokens_predicted_seconds_total 0.5\nllamacpp_prompt_tokens_total 3\nllamacpp_prompt_seconds_total 0.1\n",
		"n_tokens_predicted_total 10\npredicted_seconds_total 0.5\nn_prompt_tokens_processed_total 3\nprompt_tokens_seconds_total 0.1\n",
	} {
		m, err := ParseMetrics(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		c := CountersFrom(m)
		if c.GeneratedTokens == nil || *c.GeneratedTokens != 10 || c.GeneratedSeconds == nil || *c.GeneratedSeconds != 0.5 ||
			c.PromptTokens == nil || *c.PromptTokens != 3 || c.PromptSeconds == nil || *c.PromptSeconds != 0.1 {
			t.Errorf("%q: %+v", text, c)
		}
	}
}

// The keep-alive probe documents what the scripted server's keep-alive
// fault reproduces: after a streamed response the server closes the
// connection, and a request sent on it gets EOF with no response byte.
func TestKeepAliveCaptureFacts(t *testing.T) {
	for _, name := range []string{"keepalive_probe.txt", "keepalive_stream_then_next.txt"} {
		data, err := readCaptureFile("responses", name)
		if err != nil {
			t.Fatal(err)
		}
		switch name {
		case "keepalive_probe.txt":
			for _, fact := range []string{"after the last chunk -> 0.000 s, EOF", "resp2: EOF, no response (bytes b'')", "request 101: EOF before a response"} {
				if !bytes.Contains(data, []byte(fact)) {
					t.Errorf("%s no longer says %q", name, fact)
				}
			}
		default:
			if !bytes.Contains(data, []byte("Connection died, retrying a fresh connect")) {
				t.Errorf("%s no longer shows the dead reused connection", name)
			}
		}
	}
}
