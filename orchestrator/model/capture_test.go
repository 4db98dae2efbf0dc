package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

const captures = "testdata/llama-server"

// capture is one recorded exchange with a genuine llama-server.
type capture struct {
	name    string
	request []byte // nil when none was recorded (GET endpoints)
	status  int
	header  http.Header
	body    []byte
}

// bodyOnly names the captures saved without their response headers (the
// capture README says which).
var bodyOnly = map[string]bool{"metrics_big_counter": true}

func loadCapture(t *testing.T, name string) capture {
	t.Helper()
	c := capture{name: name, header: http.Header{}}
	if b, err := os.ReadFile(filepath.Join(captures, "requests", name+".json")); err == nil {
		c.request = b
	}
	matches, _ := filepath.Glob(filepath.Join(captures, "responses", name+".*"))
	if len(matches) != 1 {
		t.Fatalf("capture %s: want one response file, found %v", name, matches)
	}
	body, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	c.body = body
	hf, err := os.Open(filepath.Join(captures, "headers", name+".txt"))
	if errors.Is(err, fs.ErrNotExist) && bodyOnly[name] {
		c.status = http.StatusOK
		return c
	}
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	sc := bufio.NewScanner(hf)
	sc.Scan()
	parts := strings.Fields(sc.Text())
	if c.status, err = strconv.Atoi(parts[1]); err != nil {
		t.Fatalf("capture %s: status line %q", name, sc.Text())
	}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "content-length", "transfer-encoding", "keep-alive", "connection":
			// the replay server sets its own framing
		default:
			c.header.Set(k, strings.TrimSpace(v))
		}
	}
	return c
}

// replay serves captures byte for byte by path; it records request bodies.
type replay struct {
	t      *testing.T
	routes map[string]capture
	got    [][]byte
}

func newReplay(t *testing.T, routes map[string]string) (*replay, *httptest.Server) {
	r := &replay{t: t, routes: map[string]capture{}}
	for path, name := range routes {
		r.routes[path] = loadCapture(t, name)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	c, ok := r.routes[req.URL.Path]
	if !ok {
		http.NotFound(w, req)
		return
	}
	var buf bytes.Buffer
	buf.ReadFrom(req.Body)
	r.got = append(r.got, buf.Bytes())
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.status)
	// Write in small pieces so the stream parser sees chunk boundaries
	// that do not line up with events.
	for b := c.body; len(b) > 0; {
		n := min(len(b), 701)
		w.Write(b[:n])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		b = b[n:]
	}
}

// requestFromCapture rebuilds a Request from a recorded chat request body:
// the fields evalctl models, and the rest through Params.Extra.
func requestFromCapture(t *testing.T, body []byte) Request {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var req Request
	take := func(k string, v any) {
		if raw, ok := m[k]; ok {
			if err := json.Unmarshal(raw, v); err != nil {
				t.Fatalf("field %s: %v", k, err)
			}
			delete(m, k)
		}
	}
	take("model", &req.Model)
	take("messages", &req.Messages)
	take("tool_choice", &req.ToolChoice)
	take("max_tokens", &req.Params.MaxTokens)
	take("seed", &req.Params.Seed)
	take("stream", &req.Stream)
	take("ignore_eos", &req.Params.IgnoreEOS)
	delete(m, "stream_options") // implied by Stream
	var tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	take("tools", &tools)
	for _, tl := range tools {
		req.Tools = append(req.Tools, Tool{Name: tl.Function.Name, Description: tl.Function.Description, Parameters: tl.Function.Parameters})
	}
	if len(m) > 0 {
		req.Params.Extra = map[string]any{}
		for k, raw := range m {
			var v any
			json.Unmarshal(raw, &v)
			req.Params.Extra[k] = v
		}
	}
	return req
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, b)
	}
	return v
}

// golden compares v's JSON with testdata/golden/name.json (-update rewrites).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test -update)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("golden %s differs (run go test -update to accept):\n got: %s\nwant: %s", path, got, want)
	}
}

// TestChatCaptures sends each recorded chat request through the client to a
// replay of the recorded answer: the body the client builds must equal what
// llama-server received, and the parsed response must keep every figure.
func TestChatCaptures(t *testing.T) {
	cases := []struct {
		name      string
		finish    string
		predicted int64
		toolCalls int
	}{
		{"chat_nonstream", "length", 64, 0},
		{"chat_stream", "length", 64, 0},
		{"chat_ignore_eos", "length", 32, 0},
		{"chat_tools_auto", "length", 64, 0},
		{"chat_tools_required", "length", 64, 0},
		{"chat_tools_required_stream", "length", 64, 0},
		{"chat_tools_required_long", "length", 4096, 0},
		{"chat_tools_required_maxlen", "length", 256, 0},
		{"chat_tools_required_maxlen_stream", "length", 256, 0},
		{"chat_tools_required_forced", "tool_calls", 56, 1},
		{"chat_tools_required_forced_stream", "tool_calls", 56, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rp, srv := newReplay(t, map[string]string{"/v1/chat/completions": tc.name})
			capReq := rp.routes["/v1/chat/completions"].request
			req := requestFromCapture(t, capReq)
			c := New(Config{BaseURL: srv.URL + "/v1"})
			resp, err := c.Chat(context.Background(), req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			// The body sent equals the recorded one (go-openai always
			// writes "stream", false included; llama-server ignores it).
			sent := jsonValue(t, rp.got[0]).(map[string]any)
			if s, ok := sent["stream"].(bool); ok && !s {
				delete(sent, "stream")
			}
			if want := jsonValue(t, capReq); !reflect.DeepEqual(sent, want) {
				t.Errorf("request body differs from the capture:\n sent: %s\n want: %s", rp.got[0], capReq)
			}
			if resp.FinishReason != tc.finish {
				t.Errorf("finish_reason = %q, want %q", resp.FinishReason, tc.finish)
			}
			n, ok := resp.OutputTokens()
			if !ok || n != tc.predicted || resp.Usage == nil || resp.Usage.CompletionTokens != n {
				t.Errorf("output tokens = %d (%v), usage %+v; want predicted_n = completion_tokens = %d", n, ok, resp.Usage, tc.predicted)
			}
			if sec, server := resp.DecodeSeconds(); !server || sec != *resp.Timings.PredictedMS/1000 {
				t.Errorf("decode seconds %v server=%v, want timings.predicted_ms/1000", sec, server)
			}
			if len(resp.ToolCalls) != tc.toolCalls {
				t.Errorf("tool calls = %d, want %d", len(resp.ToolCalls), tc.toolCalls)
			}
			if resp.Stream != req.Stream {
				t.Errorf("Stream = %v, want %v", resp.Stream, req.Stream)
			}
			if req.Stream && (resp.TTFTSeconds == nil || resp.ClientDecodeSeconds == nil) {
				t.Errorf("stream without client clock readings: ttft %v decode %v", resp.TTFTSeconds, resp.ClientDecodeSeconds)
			}
			if !req.Stream && (resp.TTFTSeconds != nil || resp.ClientDecodeSeconds != nil) {
				t.Errorf("non-streamed response claims client token timings")
			}
			// Whole timings object kept byte for byte.
			if !bytes.Contains(rp.routes["/v1/chat/completions"].body, resp.Timings.Raw) {
				t.Errorf("timings raw %s not found verbatim in the capture", resp.Timings.Raw)
			}
			resp.WallSeconds, resp.TTFTSeconds, resp.ClientDecodeSeconds = 0, nil, nil
			golden(t, tc.name, resp)
		})
	}
}

// The stream and the whole body of the forced tool call decode to the same
// call: id, name, and the arguments text exactly as generated.
func TestToolCallStreamMatchesBody(t *testing.T) {
	var got []*Response
	for _, name := range []string{"chat_tools_required_forced", "chat_tools_required_forced_stream"} {
		_, srv := newReplay(t, map[string]string{"/v1/chat/completions": name})
		resp, err := New(Config{BaseURL: srv.URL}).Chat(context.Background(), Request{Model: "tiny", Stream: strings.HasSuffix(name, "stream")})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp)
	}
	want := "{\n\n\t\"path\":\n\n\"!<tool_call>\",\"content\":\"/<tool_call></tool_call>\"\n\n }"
	for _, r := range got {
		if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "write_file" || r.ToolCalls[0].Arguments != want || r.ToolCalls[0].ID == "" {
			t.Errorf("tool call = %+v, want write_file with arguments %q", r.ToolCalls, want)
		}
		if r.Content != "" {
			t.Errorf("content = %q, want empty", r.Content)
		}
	}
}

func TestContextOverflowCaptures(t *testing.T) {
	for _, name := range []string{"context_overflow", "context_overflow_stream"} {
		t.Run(name, func(t *testing.T) {
			rp, srv := newReplay(t, map[string]string{"/v1/chat/completions": name})
			req := requestFromCapture(t, rp.routes["/v1/chat/completions"].request)
			_, err := New(Config{BaseURL: srv.URL}).Chat(context.Background(), req)
			var me *Error
			if !asError(err, &me) || me.Kind != KindContextOverflow {
				t.Fatalf("err = %v, want a context overflow", err)
			}
			if me.NPromptTokens == nil || *me.NPromptTokens != 10027 || me.NCtx == nil || *me.NCtx != 8192 || me.Status != 400 {
				t.Errorf("overflow details = %+v", me)
			}
			if me.Tries != 1 || len(rp.got) != 1 {
				t.Errorf("a context overflow was retried: tries %d, requests %d", me.Tries, len(rp.got))
			}
		})
	}
}

func TestCompletionCaptures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		n      int64
	}{{"completion_ignore_eos", false, 32}, {"completion_ignore_eos_stream", true, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			rp, srv := newReplay(t, map[string]string{"/completion": tc.name})
			seed := int64(42)
			resp, err := New(Config{BaseURL: srv.URL}).Complete(context.Background(), CompletionRequest{Prompt: "Once upon a time", NPredict: int(tc.n), IgnoreEOS: true, Seed: &seed, Stream: tc.stream})
			if err != nil {
				t.Fatal(err)
			}
			if want := jsonValue(t, rp.routes["/completion"].request); !reflect.DeepEqual(jsonValue(t, rp.got[0]), want) {
				t.Errorf("request body %s, want %s", rp.got[0], rp.routes["/completion"].request)
			}
			if n, _ := resp.OutputTokens(); n != tc.n || resp.FinishReason != FinishLength || resp.Usage.CompletionTokens != tc.n {
				t.Errorf("tokens %d finish %q usage %+v, want exactly %d ending on the limit", n, resp.FinishReason, resp.Usage, tc.n)
			}
			resp.WallSeconds, resp.TTFTSeconds, resp.ClientDecodeSeconds = 0, nil, nil
			golden(t, tc.name, resp)
		})
	}
}

func TestTextCompletionCapture(t *testing.T) {
	resp, err := ParseChat(loadCapture(t, "v1_completions").body)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := resp.OutputTokens(); n != 16 || !strings.HasPrefix(resp.Content, "★conf Orient") || resp.FinishReason != "length" {
		t.Errorf("parsed %+v", resp)
	}
	golden(t, "v1_completions", resp)
}

// The counters llama-server exported around the first chat request move by
// exactly what that response's timings said.
func TestMetricsCaptures(t *testing.T) {
	var m [3]map[string]float64
	for i, name := range []string{"metrics_before", "metrics_after", "metrics_final"} {
		var err error
		if m[i], err = ParseMetrics(bytes.NewReader(loadCapture(t, name).body)); err != nil {
			t.Fatal(err)
		}
		if len(m[i]) != 15 {
			t.Errorf("%s: %d families, want 15", name, len(m[i]))
		}
	}
	first, err := ParseChat(loadCapture(t, "chat_nonstream").body)
	if err != nil {
		t.Fatal(err)
	}
	if d := m[1]["llamacpp:tokens_predicted_total"] - m[0]["llamacpp:tokens_predicted_total"]; d != float64(*first.Timings.PredictedN) {
		t.Errorf("tokens_predicted_total delta %v, want %d", d, *first.Timings.PredictedN)
	}
	if d := m[1]["llamacpp:tokens_predicted_seconds_total"] - m[0]["llamacpp:tokens_predicted_seconds_total"]; d != *first.Timings.PredictedMS/1000 {
		t.Errorf("tokens_predicted_seconds_total delta %v, want %v", d, *first.Timings.PredictedMS/1000)
	}
	if d := m[1]["llamacpp:prompt_tokens_total"] - m[0]["llamacpp:prompt_tokens_total"]; d != float64(*first.Timings.PromptN) {
		t.Errorf("prompt_tokens_total delta %v, want %d", d, *first.Timings.PromptN)
	}
	if m[2]["llamacpp:tokens_predicted_total"] != 5128 || m[2]["llamacpp:n_tokens_max"] != 4313 {
		t.Errorf("final metrics %v", m[2])
	}
}

func TestEndpointCaptures(t *testing.T) {
	_, srv := newReplay(t, map[string]string{
		"/props": "props", "/v1/models": "v1_models", "/health": "health", "/tokenize": "tokenize",
	})
	c := New(Config{BaseURL: srv.URL + "/v1/"})
	ctx := context.Background()
	info, err := c.Endpoint(ctx, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	if info.BuildInfo == nil || *info.BuildInfo != "b10587-3f545be" || info.ModelPath == nil || *info.ModelPath != "/models/tiny.gguf" ||
		info.ContextSize == nil || *info.ContextSize != 8192 || info.BaseURL != srv.URL || info.Props["total_slots"] != float64(1) {
		t.Errorf("endpoint info = %+v", info)
	}
	if data, _ := info.Models["data"].([]any); len(data) != 1 {
		t.Errorf("models = %v", info.Models)
	}
	if err := c.Health(ctx); err != nil {
		t.Errorf("health: %v", err)
	}
	ids, err := c.Tokenize(ctx, "Hello world! <|im_start|>user\nhi<|im_end|>")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{15496, 995, 0, 220, 50257, 7220, 198, 5303, 50258}; !reflect.DeepEqual(ids, want) {
		t.Errorf("tokens = %v, want %v", ids, want)
	}
}

// Every file in the captures is read by one of the tests above: a new
// capture must come with a test.
func TestEveryCaptureCovered(t *testing.T) {
	covered := map[string]bool{}
	for _, n := range strings.Fields(`chat_nonstream chat_stream chat_ignore_eos chat_tools_auto chat_tools_required
		chat_tools_required_stream chat_tools_required_long chat_tools_required_maxlen chat_tools_required_maxlen_stream
		chat_tools_required_forced chat_tools_required_forced_stream context_overflow context_overflow_stream
		completion_ignore_eos completion_ignore_eos_stream v1_completions metrics_before metrics_after metrics_final
		props v1_models health tokenize apply_template slots_before slots_after slots_final
		fault_500_nonstream fault_500_stream fault_invalid_tool_args fault_invalid_tool_args_stream fault_malformed_json
		fault_missing_messages fault_not_found_post fault_not_found_get fault_toolcall_truncated fault_toolcall_truncated_stream
		fault_unknown_model fault_unknown_model_stream fault_metrics_ok_stream fault_metrics_0_before fault_metrics_1_after_ok_stream
		fault_metrics_2_after_500_nonstream fault_metrics_3_after_500_stream fault_metrics_4_before_invalid_tool_args
		fault_metrics_5_after_invalid_tool_args keepalive_probe keepalive_stream_then_next metrics_big_counter`) {
		covered[n] = true
	}
	entries, err := os.ReadDir(filepath.Join(captures, "responses"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), filepath.Ext(e.Name()))
		if !covered[name] {
			t.Errorf("capture %s is parsed by no test", e.Name())
		}
		if strings.HasPrefix(name, "keepalive_") {
			continue // transcripts of connection probes, no single response
		}
		c := loadCapture(t, name)
		if c.status != 200 && c.status != 400 && !(strings.HasPrefix(name, "fault_") && (c.status == 404 || c.status == 500)) {
			t.Errorf("%s: status %d", name, c.status)
		}
	}
	// The remaining documents are plain JSON the client keeps raw.
	for _, n := range []string{"apply_template", "slots_before", "slots_after", "slots_final"} {
		jsonValue(t, loadCapture(t, n).body)
	}
}

// The copy in testdata is the shared capture set, byte for byte.
func TestCapturesMatchShared(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "wire", "llama-server")
	if _, err := os.Stat(shared); err != nil {
		t.Skip("no shared/ beside the repository")
	}
	filepath.WalkDir(shared, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(shared, p)
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(captures, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("testdata copy of %s differs from shared/ (copy it again)", rel)
		}
		return nil
	})
}

var timeZero time.Time

func absDiff(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return b - a
}

func readCaptureFile(dir, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(captures, dir, name))
}

// A long-running server prints its counters with six significant digits;
// the parser must keep the printed value, not invent precision.
func TestMetricsPastAMillion(t *testing.T) {
	m, err := ParseMetrics(bytes.NewReader(loadCapture(t, "metrics_big_counter").body))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"llamacpp:prompt_tokens_total":        1033640,
		"llamacpp:prompt_tokens_cached_total": 26797,
		"llamacpp:tokens_predicted_total":     2515,
	} {
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
}

// The printed precision of each counter: past a million llama-server's six
// significant digits leave steps of 10 tokens; below, counts are exact.
func TestCounterPrecision(t *testing.T) {
	var c Counters
	c.setSteps(loadCapture(t, "metrics_big_counter").body)
	if c.PromptTokensStep != 10 || c.GeneratedTokensStep > 1 {
		t.Errorf("steps prompt %v generated %v, want 10 and at most 1", c.PromptTokensStep, c.GeneratedTokensStep)
	}
	for text, want := range map[string]float64{
		"1.03364e+06": 10, "1.0336e+06": 10, "1e+06": 10, "2515": 0.01, "1033640": 1,
		"808.995": 0.001, "9.67671": 1e-5, "0.048522": 1e-7, "0": 0,
	} {
		if got := Step(text); math.Abs(got-want) > want*1e-9 {
			t.Errorf("Step(%q) = %v, want %v", text, got, want)
		}
	}
}
