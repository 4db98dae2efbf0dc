package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func asError(err error, target **Error) bool { return errors.As(err, target) }

func f64(v float64) *float64 { return &v }

func TestChatBodyFields(t *testing.T) {
	think := false
	seed := int64(7)
	topK := 20
	body, err := ChatBody(Request{
		Model:    "m",
		Messages: []Message{{Role: RoleUser, Content: "hi"}, {Role: RoleAssistant}, {Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a", Name: "bash"}}}},
		Stream:   true,
		Params: Params{
			Temperature: f64(0), TopP: f64(0.95), TopK: &topK, MinP: f64(0.05), RepeatPenalty: f64(1.1),
			Seed: &seed, MaxTokens: 32768, ReasoningEffort: "high", EnableThinking: &think,
			Extra: map[string]any{"top_k": 40, "n_probs": 2},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(body, &m)
	want := map[string]any{
		"temperature": 0.0, "top_p": 0.95, "top_k": 40.0, "min_p": 0.05, "repeat_penalty": 1.1, "seed": 7.0,
		"max_tokens": 32768.0, "reasoning_effort": "high", "n_probs": 2.0, "stream": true,
		"chat_template_kwargs": map[string]any{"enable_thinking": false},
		"stream_options":       map[string]any{"include_usage": true},
	}
	for k, v := range want {
		if fmt.Sprint(m[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	msgs := m["messages"].([]any)
	if c, ok := msgs[1].(map[string]any)["content"]; !ok || c != "" {
		t.Errorf("empty assistant content not sent: %v", msgs[1])
	}
	tc := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if tc["type"] != "function" || tc["function"].(map[string]any)["arguments"] != "{}" {
		t.Errorf("tool call = %v", tc)
	}
	// Unset parameters are not sent: the server default applies.
	body, _ = ChatBody(Request{Model: "m"})
	m = nil
	json.Unmarshal(body, &m)
	for _, k := range []string{"temperature", "top_p", "top_k", "seed", "max_tokens", "chat_template_kwargs", "stream_options", "ignore_eos"} {
		if _, ok := m[k]; ok {
			t.Errorf("unset %s was sent", k)
		}
	}
}

func TestBaseURLForms(t *testing.T) {
	for _, base := range []string{"http://h:1", "http://h:1/", "http://h:1/v1", "http://h:1/v1/"} {
		c := New(Config{BaseURL: base})
		if c.root != "http://h:1" || c.api != "http://h:1/v1" {
			t.Errorf("%s: root %s api %s", base, c.root, c.api)
		}
	}
}

func errorBody(code int, typ, msg string) string {
	return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"type":%q}}`, code, msg, typ)
}

const okBody = `{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"done"}}],"usage":{"completion_tokens":2,"prompt_tokens":5,"total_tokens":7},"timings":{"prompt_n":5,"prompt_ms":1.5,"predicted_n":2,"predicted_ms":4.25}}`

var fastRetry = RetryPolicy{MaxRetries: 3, Initial: time.Millisecond, Max: 4 * time.Millisecond}

// sequence answers each request with the next of steps (status, body).
func sequence(t *testing.T, steps ...[2]string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i >= len(steps) {
			i = len(steps) - 1
		}
		var status int
		fmt.Sscan(steps[i][0], &status)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(steps[i][1]))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRetries(t *testing.T) {
	loading := [2]string{"503", errorBody(503, "unavailable_error", "Loading model")}
	internal := [2]string{"500", errorBody(500, "server_error", "boom")}
	busy := [2]string{"429", errorBody(429, "rate_limit_error", "too many requests")}
	ok := [2]string{"200", okBody}
	cases := []struct {
		name     string
		steps    [][2]string
		kind     Kind // "" = success
		requests int32
	}{
		{"503 then 429 then success", [][2]string{loading, busy, ok}, "", 3},
		{"500 is never retried: the server had the request", [][2]string{internal, ok}, KindServer, 1},
		{"always loading gives up after the retries", [][2]string{loading}, KindLoading, 4},
		{"bad request is not retried", [][2]string{{"400", errorBody(400, "invalid_request_error", "bad")}}, KindRequest, 1},
		{"overflow is not retried", [][2]string{{"400", `{"error":{"code":400,"message":"request (9 tokens) exceeds the available context size (8 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9,"n_ctx":8}}`}}, KindContextOverflow, 1},
		{"vLLM-style overflow", [][2]string{{"400", errorBody(400, "BadRequestError", "This model's maximum context length is 8 tokens")}}, KindContextOverflow, 1},
		{"non-JSON 502 is a server error, not retried", [][2]string{{"502", "<html>bad gateway</html>"}, ok}, KindServer, 1},
		{"always busy gives up after the retries", [][2]string{busy}, KindBusy, 4},
		{"200 with garbage is a bad response", [][2]string{{"200", "nope"}}, KindBadResponse, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := sequence(t, tc.steps...)
			c := New(Config{BaseURL: srv.URL, Retry: fastRetry})
			resp, err := c.Chat(context.Background(), Request{Model: "m"})
			if got := n.Load(); got != tc.requests {
				t.Errorf("requests = %d, want %d", got, tc.requests)
			}
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if resp.Tries != int(tc.requests) || resp.Content != "done" {
					t.Errorf("resp = %+v", resp)
				}
				return
			}
			var me *Error
			if !asError(err, &me) || me.Kind != tc.kind || me.Tries != int(tc.requests) {
				t.Fatalf("err = %#v, want kind %s after %d tries", err, tc.kind, tc.requests)
			}
		})
	}
}

func TestConnectionRefusedIsRetriedThenClassified(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := New(Config{BaseURL: "http://" + addr, Retry: fastRetry})
	_, err = c.Chat(context.Background(), Request{Model: "m"})
	var me *Error
	if !asError(err, &me) || me.Kind != KindConnection || me.Tries != 4 {
		t.Fatalf("err = %v, want a connection error after 4 tries", err)
	}
}

func TestTimeoutIsNotRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, Retry: fastRetry})
	_, err := c.Chat(context.Background(), Request{Model: "m", Params: Params{Timeout: 50 * time.Millisecond}})
	var me *Error
	if !asError(err, &me) || me.Kind != KindTimeout || n.Load() != 1 {
		t.Fatalf("err = %v after %d requests, want one timeout", err, n.Load())
	}
}

func TestCallerCancelIsNotAModelError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the connection is watched once the body is read
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := New(Config{BaseURL: srv.URL}).Chat(ctx, Request{Model: "m", Params: Params{Timeout: time.Minute}})
	var me *Error
	if asError(err, &me) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline, not a model error", err)
	}
}

const chunk = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"ab"}}],"id":"x","object":"chat.completion.chunk"}` + "\n\n"

func streamServer(t *testing.T, write func(w http.ResponseWriter, f http.Flusher)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		write(w, f)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBrokenStreams(t *testing.T) {
	cases := []struct {
		name  string
		write func(w http.ResponseWriter, f http.Flusher)
		kind  Kind
	}{
		{"ends without DONE", func(w http.ResponseWriter, f http.Flusher) {
			fmt.Fprint(w, chunk, chunk)
		}, KindBrokenStream},
		{"connection dropped mid-way", func(w http.ResponseWriter, f http.Flusher) {
			fmt.Fprint(w, chunk)
			f.Flush()
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close()
		}, KindBrokenStream},
		{"error event after tokens", func(w http.ResponseWriter, f http.Flusher) {
			fmt.Fprint(w, chunk, "data: ", errorBody(500, "server_error", "slot died"), "\n\n")
		}, KindBrokenStream},
		{"error event before tokens", func(w http.ResponseWriter, f http.Flusher) {
			fmt.Fprint(w, "data: ", errorBody(400, "exceed_context_size_error", "too long"), "\n\n")
		}, KindContextOverflow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := streamServer(t, func(w http.ResponseWriter, f http.Flusher) { n.Add(1); tc.write(w, f) })
			_, err := New(Config{BaseURL: srv.URL, Retry: fastRetry}).Chat(context.Background(), Request{Model: "m", Stream: true})
			var me *Error
			if !asError(err, &me) || me.Kind != tc.kind {
				t.Fatalf("err = %v, want %s", err, tc.kind)
			}
			if n.Load() != 1 {
				t.Errorf("%d requests: a stream that may have generated tokens was retried", n.Load())
			}
			if tc.kind == KindBrokenStream && (me.Partial == nil || !strings.HasPrefix(me.Partial.Content, "ab")) {
				t.Errorf("partial = %+v, want the content received", me.Partial)
			}
		})
	}
}

// A server without timings (vLLM, hosted APIs): decode time is the client's
// first-to-last-token measurement and says so.
func TestClientMeasuredDecode(t *testing.T) {
	srv := streamServer(t, func(w http.ResponseWriter, f http.Flusher) {
		fmt.Fprint(w, chunk)
		f.Flush()
		time.Sleep(30 * time.Millisecond)
		fmt.Fprint(w, `data: {"choices":[{"finish_reason":"stop","index":0,"delta":{"content":"c"}}]}`+"\n\n")
		fmt.Fprint(w, `data: {"choices":[],"usage":{"completion_tokens":3,"prompt_tokens":4,"total_tokens":7}}`+"\n\ndata: [DONE]\n\n")
	})
	resp, err := New(Config{BaseURL: srv.URL}).Chat(context.Background(), Request{Model: "m", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	sec, server := resp.DecodeSeconds()
	if server || sec < 0.025 || resp.Timings != nil {
		t.Errorf("decode %v server=%v, want >= 30ms client-measured", sec, server)
	}
	if n, ok := resp.OutputTokens(); !ok || n != 3 || resp.Content != "abc" || resp.FinishReason != "stop" {
		t.Errorf("resp = %+v", resp)
	}
	if *resp.TTFTSeconds > resp.WallSeconds || *resp.TTFTSeconds+*resp.ClientDecodeSeconds > resp.WallSeconds {
		t.Errorf("ttft %v + decode %v exceed wall %v", *resp.TTFTSeconds, *resp.ClientDecodeSeconds, resp.WallSeconds)
	}
}

func TestHealthLoading(t *testing.T) {
	srv, _ := sequence(t, [2]string{"503", errorBody(503, "unavailable_error", "Loading model")})
	err := New(Config{BaseURL: srv.URL}).Health(context.Background())
	if !IsKind(err, KindLoading) {
		t.Fatalf("err = %v, want loading", err)
	}
}
