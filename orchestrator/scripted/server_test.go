package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/tasks"
)

func start(t *testing.T, cfg scripted.Config) (*scripted.Server, *model.Client) {
	t.Helper()
	s, err := scripted.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, model.New(model.Config{BaseURL: s.URL() + "/v1", Retry: model.RetryPolicy{MaxRetries: 3, Initial: time.Millisecond, Max: 2 * time.Millisecond}})
}

func loadSuite(t *testing.T) *tasks.Suite {
	t.Helper()
	s, err := tasks.LoadSuite("testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var agentTools = []model.Tool{
	{Name: "list_files", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "write_file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)},
	{Name: "bash", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
}

// miniAgent drives the scripted model over an in-memory workspace, enough
// to see what a script does; the real loop is tested in orchestrator/agent.
type miniAgent struct {
	t         *testing.T
	c         *model.Client
	modelName string
	stream    bool
	ws        map[string]string
	msgs      []model.Message
	responses []*model.Response
	commands  []string
}

func (a *miniAgent) phase(prompt string) string {
	a.msgs = append(a.msgs, model.Message{Role: model.RoleUser, Content: prompt})
	for range 30 {
		resp, err := a.c.Chat(context.Background(), model.Request{Model: a.modelName, Messages: a.msgs, Tools: agentTools, Stream: a.stream, Params: model.Params{MaxTokens: 4096}})
		if err != nil {
			a.t.Fatalf("chat: %v", err)
		}
		a.responses = append(a.responses, resp)
		a.msgs = append(a.msgs, resp.Message())
		if len(resp.ToolCalls) == 0 {
			return resp.Content
		}
		for _, tc := range resp.ToolCalls {
			var args map[string]string
			result := ""
			if err := json.Unmarshal([]byte(tc.Arguments), &args); err != nil {
				result = "error: arguments are not JSON"
			}
			switch tc.Name {
			case "list_files":
				var names []string
				for n := range a.ws {
					names = append(names, n)
				}
				sort.Strings(names)
				result = strings.Join(names, "\n")
			case "read_file":
				result = a.ws[args["path"]]
			case "write_file":
				a.ws[args["path"]] = args["content"]
				result = "wrote " + args["path"]
			case "bash":
				a.commands = append(a.commands, args["command"])
				result = "exit code: 0\n"
			}
			a.msgs = append(a.msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: result})
		}
	}
	a.t.Fatal("no hand-over after 30 responses")
	return ""
}

func readDir(t *testing.T, dir string, into map[string]string) {
	t.Helper()
	files, err := tasks.ListFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		into[f] = string(b)
	}
}

// The reference script recognises the case from the listing, reads the
// contract, writes the reference, runs the public tests, hands over; and
// does it again for phase 2. control:<name> writes the control instead.
func TestReferenceAndControlScripts(t *testing.T) {
	suite := loadSuite(t)
	cs := suite.Case("tiny")
	for _, tc := range []struct {
		model  string
		stream bool
		phase1 string // directory whose files phase 1 must have written
	}{
		{"reference", false, cs.Phases[0].ReferenceDir},
		{"reference", true, cs.Phases[0].ReferenceDir},
		{"control:wrong", true, cs.Controls[0].OverlayDir},
	} {
		t.Run(tc.model, func(t *testing.T) {
			_, c := start(t, scripted.Config{Suite: suite})
			a := &miniAgent{t: t, c: c, modelName: tc.model, stream: tc.stream, ws: map[string]string{}}
			readDir(t, cs.WorkspaceDir, a.ws)
			final := a.phase(cs.Phases[0].Prompt)
			want := map[string]string{}
			readDir(t, tc.phase1, want)
			for f, content := range want {
				if a.ws[f] != content {
					t.Errorf("phase 1: %s = %q, want %q", f, a.ws[f], content)
				}
			}
			if !strings.Contains(final, "public tests pass") {
				t.Errorf("final text %q does not report the passing tests", final)
			}
			if len(a.commands) != 1 || a.commands[0] != "python3 -m pytest -q tests" {
				t.Errorf("commands = %q", a.commands)
			}
			readDir(t, cs.Phases[1].OverlayDir, a.ws)
			a.phase(cs.Phases[1].Prompt)
			want = map[string]string{}
			readDir(t, cs.Phases[1].ReferenceDir, want)
			for f, content := range want {
				if a.ws[f] != content {
					t.Errorf("phase 2: %s = %q, want %q", f, a.ws[f], content)
				}
			}
			// list, read contract, write calc.py, test, hand over.
			if len(a.responses) != 10 {
				t.Errorf("%d responses, want 5 per phase", len(a.responses))
			}
			for _, r := range a.responses {
				if r.ReasoningContent == "" {
					t.Errorf("no reasoning_content with thinking on")
				}
			}
		})
	}
}

// Token and time accounting: usage equals timings, and /metrics moves by
// exactly the sum of the timings returned, streamed or not, with drafts.
func TestMetricsMatchTimings(t *testing.T) {
	srv, c := start(t, scripted.Config{Suite: loadSuite(t), DraftAcceptance: 0.6})
	ctx := context.Background()
	before, err := c.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var predicted, promptN, cacheN, draftN, accepted int64
	var decodeS, promptS float64
	add := func(r *model.Response) {
		tm := r.Timings
		if tm == nil || r.Usage == nil || r.Usage.CompletionTokens != *tm.PredictedN || r.Usage.PromptTokens != *tm.PromptN+*tm.CacheN {
			t.Fatalf("usage %+v does not match timings %s", r.Usage, tm.Raw)
		}
		predicted += *tm.PredictedN
		promptN += *tm.PromptN
		cacheN += *tm.CacheN
		draftN += *tm.DraftN
		accepted += *tm.DraftNAccepted
		decodeS += *tm.PredictedMS / 1000
		promptS += *tm.PromptMS / 1000
	}
	for _, stream := range []bool{false, true} {
		a := &miniAgent{t: t, c: c, modelName: "reference", stream: stream, ws: map[string]string{}}
		readDir(t, loadSuite(t).Cases[0].WorkspaceDir, a.ws)
		a.phase("fix it")
		for _, r := range a.responses {
			add(r)
		}
	}
	for _, n := range []int{1, 17, 300} {
		r, err := c.Chat(ctx, model.Request{Model: "noop", Stream: n%2 == 1, Messages: []model.Message{{Role: "user", Content: "go"}}, Params: model.Params{MaxTokens: n, IgnoreEOS: true}})
		if err != nil {
			t.Fatal(err)
		}
		if *r.Timings.PredictedN != int64(n) || r.FinishReason != "length" {
			t.Errorf("ignore_eos max_tokens=%d: predicted %d finish %s", n, *r.Timings.PredictedN, r.FinishReason)
		}
		add(r)
	}
	r, err := c.Complete(ctx, model.CompletionRequest{Prompt: "Once upon a time", NPredict: 64, IgnoreEOS: true, Stream: true})
	if err != nil || *r.Timings.PredictedN != 64 {
		t.Fatalf("completion: %v %+v", err, r)
	}
	predicted += *r.Timings.PredictedN
	promptN += *r.Timings.PromptN
	cacheN += *r.Timings.CacheN
	draftN += *r.Timings.DraftN
	accepted += *r.Timings.DraftNAccepted
	decodeS += *r.Timings.PredictedMS / 1000
	promptS += *r.Timings.PromptMS / 1000

	after, err := c.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := func(k string) float64 { return after["llamacpp:"+k] - before["llamacpp:"+k] }
	for k, want := range map[string]int64{"tokens_predicted_total": predicted, "prompt_tokens_total": promptN, "prompt_tokens_cached_total": cacheN,
		"spec_decode_num_draft_tokens_total": draftN, "spec_decode_num_accepted_tokens_total": accepted} {
		if d(k) != float64(want) {
			t.Errorf("%s moved %v, the responses said %d", k, d(k), want)
		}
	}
	for k, want := range map[string]float64{"tokens_predicted_seconds_total": decodeS, "prompt_seconds_total": promptS} {
		if math.Abs(d(k)-want) > 1e-9 {
			t.Errorf("%s moved %v, the responses said %v", k, d(k), want)
		}
	}
	if cacheN == 0 {
		t.Error("no prompt token was ever reused from the cache")
	}
	if accepted == 0 || accepted >= draftN {
		t.Errorf("draft acceptance %d of %d", accepted, draftN)
	}
	_ = srv
}

func TestFaultScriptsOnTheWire(t *testing.T) {
	_, c := start(t, scripted.Config{CtxSize: 4096})
	ctx := context.Background()
	msgs := []model.Message{{Role: "user", Content: "work"}}
	// truncate: the cap cuts a tool call mid-way; no tool call comes back.
	for _, stream := range []bool{false, true} {
		r, err := c.Chat(ctx, model.Request{Model: "truncate", Stream: stream, Messages: msgs, Tools: agentTools, Params: model.Params{MaxTokens: 100}})
		if err != nil {
			t.Fatal(err)
		}
		if r.FinishReason != "length" || len(r.ToolCalls) != 0 || *r.Timings.PredictedN != 100 || !strings.HasPrefix(r.Content, "<tool_call>") {
			t.Errorf("truncate: finish %s calls %d predicted %d content %.40q", r.FinishReason, len(r.ToolCalls), *r.Timings.PredictedN, r.Content)
		}
	}
	// flaky: 503, 429, then success, all inside the client's retries.
	r, err := c.Chat(ctx, model.Request{Model: "flaky", Messages: msgs, Tools: agentTools})
	if err != nil || r.Tries != 3 || len(r.ToolCalls) != 1 {
		t.Errorf("flaky: %v, tries %v", err, r)
	}
	// overflow: a context error with the server's numbers.
	_, err = c.Chat(ctx, model.Request{Model: "overflow", Messages: msgs})
	var me *model.Error
	if !errors.As(err, &me) || me.Kind != model.KindContextOverflow || *me.NCtx != 4096 || *me.NPromptTokens <= 4096 {
		t.Errorf("overflow: %v", err)
	}
	// A prompt longer than the context overflows whatever the script.
	_, err = c.Chat(ctx, model.Request{Model: "noop", Messages: []model.Message{{Role: "user", Content: strings.Repeat("word ", 5000)}}})
	if !model.IsKind(err, model.KindContextOverflow) {
		t.Errorf("long prompt: %v", err)
	}
	// malformed: broken JSON arguments, then an unknown tool.
	r, err = c.Chat(ctx, model.Request{Model: "malformed", Messages: msgs, Tools: agentTools})
	if err != nil || len(r.ToolCalls) != 1 || json.Valid([]byte(r.ToolCalls[0].Arguments)) {
		t.Errorf("malformed: %v %+v", err, r)
	}
	// runaway: long reasoning that the cap stops.
	r, err = c.Chat(ctx, model.Request{Model: "runaway", Messages: msgs, Tools: agentTools, Params: model.Params{MaxTokens: 1000}})
	if err != nil || *r.Timings.PredictedN != 1000 || r.FinishReason != "length" {
		t.Errorf("runaway: %v %+v", err, r)
	}
	// Unknown model names are refused, not guessed.
	_, err = c.Chat(ctx, model.Request{Model: "gpt-5", Messages: msgs})
	if !errors.As(err, &me) || me.Status != 404 {
		t.Errorf("unknown model: %v", err)
	}
	// Without a suite, reference cannot work and says why.
	_, err = c.Chat(ctx, model.Request{Model: "reference", Messages: msgs, Tools: agentTools})
	if !errors.As(err, &me) || me.Status != 400 || !strings.Contains(me.Message, "suite") {
		t.Errorf("reference without suite: %v", err)
	}
}

func TestThinkingOff(t *testing.T) {
	_, c := start(t, scripted.Config{})
	off := false
	r, err := c.Chat(context.Background(), model.Request{Model: "noop", Messages: []model.Message{{Role: "user", Content: "x"}}, Params: model.Params{EnableThinking: &off}})
	if err != nil || r.ReasoningContent != "" || r.Content == "" {
		t.Errorf("thinking off: %v reasoning %q", err, r.ReasoningContent)
	}
}

func TestStartupDelayAndEndpoints(t *testing.T) {
	srv, c := start(t, scripted.Config{StartupDelay: 150 * time.Millisecond, CtxSize: 8192, Suite: loadSuite(t)})
	ctx := context.Background()
	if err := c.Health(ctx); !model.IsKind(err, model.KindLoading) {
		t.Fatalf("health while loading: %v", err)
	}
	resp, err := http.Get(srv.URL() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 503 || body["error"]["message"] != "Loading model" || body["error"]["type"] != "unavailable_error" {
		t.Errorf("loading health = %d %v", resp.StatusCode, body)
	}
	// Healthy once loaded, and loading until then.
	if !poll.For(10*time.Second, func() bool {
		err = c.Health(ctx)
		return err == nil || !model.IsKind(err, model.KindLoading)
	}) || err != nil {
		t.Fatalf("health after loading: %v", err)
	}
	info, err := c.Endpoint(ctx, "reference")
	if err != nil {
		t.Fatal(err)
	}
	if info.ContextSize == nil || *info.ContextSize != 8192 || *info.ModelPath != scripted.ModelPath || !strings.HasPrefix(*info.BuildInfo, "evalctl-scripted") {
		t.Errorf("endpoint info = %+v", info)
	}
	var ids []string
	for _, m := range info.Models["data"].([]any) {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	if !strings.Contains(strings.Join(ids, " "), "control:wrong") || ids[0] != "reference" {
		t.Errorf("models = %v", ids)
	}
	toks, err := c.Tokenize(ctx, "héllo wörld, 12345678")
	if err != nil || len(toks) != len(scripted.Pieces("héllo wörld, 12345678")) {
		t.Errorf("tokenize: %v %v", toks, err)
	}
}

func TestAllocationFailure(t *testing.T) {
	_, err := scripted.New(scripted.Config{CtxSize: 262144, FailAboveCtx: 225280})
	var ae *scripted.AllocError
	if !errors.As(err, &ae) || len(ae.Log) == 0 || !strings.Contains(strings.Join(ae.Log, "\n"), "failed to allocate") {
		t.Fatalf("err = %v", err)
	}
	if _, err := scripted.New(scripted.Config{CtxSize: 196608, FailAboveCtx: 225280}); err != nil {
		t.Fatalf("below the limit: %v", err)
	}
}

// Real time: a response takes as long as its timings say.
func TestRealtime(t *testing.T) {
	_, c := start(t, scripted.Config{Realtime: true, DecodeTPS: 200, PromptTPS: 100000})
	r, err := c.Chat(context.Background(), model.Request{Model: "noop", Stream: true, Messages: []model.Message{{Role: "user", Content: "x"}}, Params: model.Params{MaxTokens: 40, IgnoreEOS: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r.WallSeconds < 0.19 || *r.ClientDecodeSeconds < 0.15 || *r.Timings.PredictedMS != 200 {
		t.Errorf("wall %v client decode %v predicted_ms %v; want about 0.2 s", r.WallSeconds, *r.ClientDecodeSeconds, *r.Timings.PredictedMS)
	}
}

// TestTimingsAreTrue: whatever the configuration (Realtime or not,
// streamed or not, chat or completion), no response arrives sooner than
// the prompt_ms + predicted_ms it reports: a client never measures more
// decode time than it waited.
func TestTimingsAreTrue(t *testing.T) {
	_, c := start(t, scripted.Config{DecodeTPS: 500, PromptTPS: 50000})
	for _, stream := range []bool{false, true} {
		r, err := c.Chat(context.Background(), model.Request{Model: "noop", Stream: stream, Messages: []model.Message{{Role: "user", Content: "x"}}, Params: model.Params{MaxTokens: 50, IgnoreEOS: true}})
		if err != nil {
			t.Fatal(err)
		}
		reported := (*r.Timings.PromptMS + *r.Timings.PredictedMS) / 1000
		if *r.Timings.PredictedMS != 100 || r.WallSeconds < reported {
			t.Errorf("stream %v: wall %.4f s, reported %.4f s (predicted_ms %v); want the wall time at least what the timings say", stream, r.WallSeconds, reported, *r.Timings.PredictedMS)
		}
	}
	start := time.Now()
	r, err := c.Complete(context.Background(), model.CompletionRequest{Prompt: "Once upon a time", NPredict: 50, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	if wall, reported := time.Since(start).Seconds(), (*r.Timings.PromptMS+*r.Timings.PredictedMS)/1000; wall < reported {
		t.Errorf("completion: wall %.4f s, reported %.4f s", wall, reported)
	}
}

// TestNoJinjaRefusesTools: like llama-server without --jinja, a chat
// request with tools is refused before any generation (HTTP 500), one
// without tools is served.
func TestNoJinjaRefusesTools(t *testing.T) {
	_, c := start(t, scripted.Config{NoJinja: true})
	msgs := []model.Message{{Role: "user", Content: "x"}}
	tools := []model.Tool{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}}
	if _, err := c.Chat(context.Background(), model.Request{Model: "noop", Messages: msgs, Tools: tools}); err == nil || !strings.Contains(err.Error(), "tools param requires --jinja flag") {
		t.Errorf("with tools: %v, want the --jinja refusal", err)
	}
	if _, err := c.Chat(context.Background(), model.Request{Model: "noop", Messages: msgs}); err != nil {
		t.Errorf("without tools: %v", err)
	}
}

func TestPieces(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {"ééé", 2}, {"日本語", 3}, {"a日", 1}, {"ab日", 2}} {
		p := scripted.Pieces(tc.in)
		if len(p) != tc.want || scripted.CountTokens(tc.in) != tc.want || strings.Join(p, "") != tc.in {
			t.Errorf("Pieces(%q) = %q (count %d), want %d tokens", tc.in, p, scripted.CountTokens(tc.in), tc.want)
		}
	}
}

// TestCachePrompt: a repeated prompt reuses the slot's cache unless the
// request says cache_prompt false, in which case every prompt token is
// processed again (throughput screens rely on that), on both endpoints.
func TestCachePrompt(t *testing.T) {
	srv, _ := start(t, scripted.Config{Suite: loadSuite(t)})
	post := func(path, body string) (cacheN, promptN int64) {
		t.Helper()
		resp, err := http.Post(srv.URL()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Timings struct {
				CacheN  *int64 `json:"cache_n"`
				PromptN *int64 `json:"prompt_n"`
			} `json:"timings"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || r.Timings.CacheN == nil || r.Timings.PromptN == nil {
			t.Fatalf("%s: status %d, timings %+v, %v", path, resp.StatusCode, r.Timings, err)
		}
		return *r.Timings.CacheN, *r.Timings.PromptN
	}
	const prompt = "The quick brown fox jumps over the lazy dog, again and again and again."
	const chat = `{"model":"noop","messages":[{"role":"user","content":"` + prompt + `"}],"max_tokens":8,"ignore_eos":true%s}`
	const native = `{"prompt":"` + prompt + `","n_predict":8,"ignore_eos":true%s}`
	for _, tt := range []struct {
		name, path, body, extra string
		reused                  bool
	}{
		{"chat default", "/v1/chat/completions", chat, "", true},
		{"chat cache_prompt true", "/v1/chat/completions", chat, `,"cache_prompt":true`, true},
		{"chat cache_prompt false", "/v1/chat/completions", chat, `,"cache_prompt":false`, false},
		{"native default", "/completion", native, "", true},
		{"native cache_prompt false", "/completion", native, `,"cache_prompt":false`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := fmt.Sprintf(tt.body, tt.extra)
			c1, p1 := post(tt.path, body)
			first := c1 + p1 // the prompt's length in tokens
			cacheN, promptN := post(tt.path, body)
			if tt.reused && (cacheN == 0 || cacheN+promptN != first) {
				t.Errorf("repeated prompt: cache_n %d prompt_n %d, want the %d tokens mostly reused", cacheN, promptN, first)
			}
			if !tt.reused && (cacheN != 0 || promptN != first) {
				t.Errorf("cache_prompt false: cache_n %d prompt_n %d, want 0 and %d", cacheN, promptN, first)
			}
		})
	}
}
