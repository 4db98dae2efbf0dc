package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/tasks"
)

// The two-phase Python case the scripted server's tests use.
const tinySuite = "../scripted/testdata/suite"

func loadTiny(t testing.TB) *tasks.Suite {
	t.Helper()
	s, err := tasks.LoadSuite(tinySuite)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func startServer(t testing.TB, cfg scripted.Config) (*scripted.Server, *model.Client) {
	t.Helper()
	s, err := scripted.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, model.New(model.Config{BaseURL: s.URL(), Retry: model.RetryPolicy{MaxRetries: 3, Initial: time.Millisecond, Max: 2 * time.Millisecond}})
}

type attempt struct {
	loop       *Loop
	turns      []evalctl.Turn
	transcript bytes.Buffer
	before     map[string]float64
	client     *model.Client
	root       string // the host directory standing for /workspace
}

// run plays every phase of cs (overlays copied in between, as the cohort
// runner does) and stops after a turn that did not complete.
func run(t *testing.T, client *model.Client, sb Sandbox, overlay func(dir string), cs *tasks.Case, cfg Config) *attempt {
	t.Helper()
	a := &attempt{client: client}
	var err error
	if a.before, err = client.Metrics(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.Model, cfg.Sandbox, cfg.Transcript = client, sb, &a.transcript
	if a.loop, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	for _, ph := range cs.Phases {
		if ph.OverlayDir != "" && overlay != nil {
			overlay(ph.OverlayDir)
		}
		turn, err := a.loop.RunPhase(context.Background(), ph.Number, ph.Prompt)
		if err != nil {
			t.Fatalf("phase %d: %v", ph.Number, err)
		}
		a.turns = append(a.turns, turn)
		if turn.Termination != evalctl.TermCompleted {
			break
		}
	}
	return a
}

// checkAccounting: the attempt's sums are exactly what the server reported,
// response by response (from the transcript), and what /metrics counted.
func (a *attempt) checkAccounting(t *testing.T) {
	t.Helper()
	m := a.loop.Measurements()
	var tokens, prompt int64
	var decode float64
	responses := 0
	for _, e := range a.events(t) {
		if e.Kind == EventResponse {
			responses++
			tokens += *e.Response.Timings.PredictedN
			prompt += *e.Response.Timings.PromptN
			decode += *e.Response.Timings.PredictedMS / 1000
			if e.Response.Usage.CompletionTokens != *e.Response.Timings.PredictedN {
				t.Errorf("usage.completion_tokens %d != predicted_n %d", e.Response.Usage.CompletionTokens, *e.Response.Timings.PredictedN)
			}
		}
	}
	wantSource := "server"
	if responses == 0 {
		wantSource = "none"
	}
	if m.NativeOutputTokens == nil || *m.NativeOutputTokens != tokens || m.DecodeSeconds == nil || *m.DecodeSeconds != decode || m.Responses != responses || *m.PromptTokens != prompt || m.TimingsSource != wantSource {
		t.Errorf("measurements %+v; the responses said %d tokens, %v s, %d prompt tokens over %d responses", m, tokens, decode, prompt, responses)
	}
	after, err := a.client.Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d := func(k string) float64 { return after["llamacpp:"+k] - a.before["llamacpp:"+k] }
	if d("tokens_predicted_total") != float64(tokens) || d("prompt_tokens_total") != float64(*m.PromptTokens) {
		t.Errorf("/metrics moved %v predicted and %v prompt tokens; the attempt counted %d and %d", d("tokens_predicted_total"), d("prompt_tokens_total"), tokens, *m.PromptTokens)
	}
	if math.Abs(d("tokens_predicted_seconds_total")-decode) > 1e-9 || math.Abs(d("prompt_seconds_total")-*m.PromptSeconds) > 1e-9 {
		t.Errorf("/metrics moved %v decode and %v prompt seconds; the attempt counted %v and %v", d("tokens_predicted_seconds_total"), d("prompt_seconds_total"), decode, *m.PromptSeconds)
	}
	var sum float64
	for _, turn := range a.turns {
		sum += turn.Seconds
	}
	if m.TaskSeconds != sum {
		t.Errorf("task seconds %v, turns sum to %v", m.TaskSeconds, sum)
	}
}

func (a *attempt) events(t *testing.T) []Event {
	t.Helper()
	var out []Event
	sc := bufio.NewScanner(bytes.NewReader(a.transcript.Bytes()))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("transcript line is not JSON: %v", err)
		}
		out = append(out, e)
	}
	return out
}

// checkComplete: a record that holds whatever ended the turn.
func (a *attempt) checkComplete(t *testing.T) {
	t.Helper()
	events := a.events(t)
	if len(events) == 0 || events[0].Kind != EventPhaseStart || events[len(events)-1].Kind != EventPhaseEnd {
		t.Fatalf("transcript does not run from phase_start to phase_end: %d events", len(events))
	}
	if events[1].Setup == nil || events[1].Setup.SystemPrompt == "" || len(events[1].Setup.Tools) != len(Tools) {
		t.Errorf("first request carries no setup")
	}
	for _, turn := range a.turns {
		if turn.Termination == "" || turn.Seconds <= 0 || turn.Responses != len(turn.FinishReasons) {
			t.Errorf("incomplete turn %+v", turn)
		}
	}
	// Every tool call of the conversation got its answer.
	answered := map[string]bool{}
	for _, m := range a.loop.Messages() {
		if m.Role == model.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	calls := 0
	for _, m := range a.loop.Messages() {
		for _, tc := range m.ToolCalls {
			calls++
			if !answered[tc.ID] {
				t.Errorf("tool call %s (%s) has no answer", tc.ID, tc.Name)
			}
		}
	}
	tools := 0
	for _, e := range events {
		if e.Kind == EventTool {
			tools++
		}
	}
	if tools != calls {
		t.Errorf("%d tool events for %d tool calls", tools, calls)
	}
}

func copyOverlay(root string) func(string) {
	return func(dir string) {
		if err := os.CopyFS(root, os.DirFS(dir)); err != nil {
			panic(err)
		}
	}
}

// The reference script solves both phases of the tiny case through the
// loop's tools: the workspace ends as the references say, and the
// accounting is exact.
func TestReferenceThroughTheLoop(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	for _, noStream := range []bool{false, true} {
		t.Run(map[bool]string{false: "stream", true: "whole"}[noStream], func(t *testing.T) {
			_, client := startServer(t, scripted.Config{Suite: suite, DraftAcceptance: 0.5})
			sb := newHostSandbox(t, cs.WorkspaceDir)
			a := run(t, client, sb, copyOverlay(sb.root), cs, Config{ModelName: "reference", NoStream: noStream, Budgets: DefaultBudgets, Params: model.Params{MaxTokens: 4096}})
			if len(a.turns) != 2 {
				t.Fatalf("turns = %+v", a.turns)
			}
			for i, turn := range a.turns {
				// The host has no pytest: the test run fails, a tool error.
				wantErrors := 1
				if turn.LastTest != nil && turn.LastTest.Passed {
					wantErrors = 0
				}
				if turn.Termination != evalctl.TermCompleted || !turn.AgentFinished || !turn.FinalText || turn.ToolErrors != wantErrors {
					t.Errorf("phase %d: %+v", i+1, turn)
				}
				want := map[string]int{ToolListFiles: 1, ToolReadFile: 1, ToolWriteFile: 1, ToolBash: 1}
				if !equalCounts(turn.ToolCalls, want) {
					t.Errorf("phase %d tool calls %v, want %v", i+1, turn.ToolCalls, want)
				}
				// The host has no pytest: the run is recorded, as failing.
				if turn.LastTest == nil || turn.LastTest.Command != "python3 -m pytest -q tests" || turn.LastTest.Passed != (turn.LastTest.ExitCode == 0) {
					t.Errorf("phase %d last test %+v", i+1, turn.LastTest)
				}
				if turn.LastTypecheck != nil {
					t.Errorf("a Python phase recorded a typecheck: %+v", turn.LastTypecheck)
				}
			}
			got, _ := os.ReadFile(filepath.Join(sb.root, "calc.py"))
			want, _ := os.ReadFile(filepath.Join(cs.Phases[1].ReferenceDir, "calc.py"))
			if !bytes.Equal(got, want) {
				t.Errorf("calc.py = %q, want the phase-2 reference", got)
			}
			a.checkComplete(t)
			a.checkAccounting(t)
			m := a.loop.Measurements()
			if m.DraftTokens == nil || *m.DraftAccepted == 0 || m.CachedTokens == nil || *m.CachedTokens == 0 || *m.MaxSequenceTokens == 0 {
				t.Errorf("measurements %+v", m)
			}
			if m.ToolCalls != 8 || m.FinishReasons["tool_calls"] != 8 || m.FinishReasons["stop"] != 2 {
				t.Errorf("tool calls %d, finish reasons %v", m.ToolCalls, m.FinishReasons)
			}
		})
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Every fault script ends in its termination class with a complete record,
// and the budgets stop within one response or tool call of their limit.
func TestFaultScripts(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	cases := []struct {
		model   string
		budgets Budgets
		maxTok  int
		term    evalctl.Termination
		check   func(t *testing.T, a *attempt)
	}{
		{"noop", DefaultBudgets, 4096, evalctl.TermCompleted, func(t *testing.T, a *attempt) {
			turn := a.turns[0]
			if !turn.AgentFinished || !turn.FinalText || len(turn.ToolCalls) != 0 || turn.LastTest != nil || len(a.turns) != 2 {
				t.Errorf("noop turns %+v", a.turns)
			}
		}},
		{"truncate", DefaultBudgets, 200, evalctl.TermOutputTruncated, func(t *testing.T, a *attempt) {
			if a.turns[0].Responses != 1 || a.turns[0].FinishReasons[0] != "length" || !tokensAre(a.loop.Measurements(), 200) {
				t.Errorf("truncate turn %+v", a.turns[0])
			}
		}},
		{"malformed", DefaultBudgets, 4096, evalctl.TermCompleted, func(t *testing.T, a *attempt) {
			turn := a.turns[0]
			if turn.ToolErrors != 2 || !equalCounts(turn.ToolCalls, map[string]int{ToolWriteFile: 1, "run_tests": 1, ToolListFiles: 1}) || !turn.FinalText {
				t.Errorf("malformed turn %+v", turn)
			}
			if _, err := os.Stat(filepath.Join(a.root, "notes.txt")); err == nil {
				t.Errorf("a call with broken arguments wrote a file")
			}
		}},
		{"flaky", DefaultBudgets, 4096, evalctl.TermCompleted, func(t *testing.T, a *attempt) {
			if a.turns[0].Responses != 2 || a.turns[0].ToolCalls[ToolListFiles] != 1 {
				t.Errorf("flaky turn %+v", a.turns[0])
			}
		}},
		{"overflow", DefaultBudgets, 4096, evalctl.TermModelError, func(t *testing.T, a *attempt) {
			if !strings.Contains(a.turns[0].Error, "context_overflow") || !strings.Contains(a.turns[0].Error, "n_ctx=131072") || a.turns[0].Responses != 0 || a.turns[0].ModelErrorKind != "context_overflow" {
				t.Errorf("overflow turn %+v", a.turns[0])
			}
		}},
		{"runaway", Budgets{WallTime: time.Minute, GeneratedTokens: 20000, ToolCalls: 120}, 32768, evalctl.TermGeneratedTokenLimit, func(t *testing.T, a *attempt) {
			if m := a.loop.Measurements(); !tokensAre(m, 20000) {
				t.Errorf("generated %v tokens under a budget of 20000", shown(m.NativeOutputTokens))
			}
		}},
		{"busy", Budgets{WallTime: time.Minute, GeneratedTokens: 65536, ToolCalls: 5}, 4096, evalctl.TermToolCallLimit, func(t *testing.T, a *attempt) {
			if a.turns[0].ToolCalls[ToolBash] != 5 || a.loop.Measurements().ToolCalls != 5 {
				t.Errorf("busy ran %v tool calls under a budget of 5", a.turns[0].ToolCalls)
			}
		}},
		{"stall", Budgets{WallTime: 1500 * time.Millisecond, GeneratedTokens: 65536, ToolCalls: 120}, 4096, evalctl.TermWallTimeLimit, func(t *testing.T, a *attempt) {
			// Stops at the limit: the command in flight is cut at it.
			if s := a.turns[0].Seconds; s < 1.5 || s > 2.2 {
				t.Errorf("stall stopped after %v s under a 1.5 s budget", s)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			_, client := startServer(t, scripted.Config{Suite: suite, StallDelay: 100 * time.Millisecond})
			sb := newHostSandbox(t, cs.WorkspaceDir)
			a := run(t, client, sb, copyOverlay(sb.root), cs, Config{ModelName: tc.model, Budgets: tc.budgets, Params: model.Params{MaxTokens: tc.maxTok}})
			a.root = sb.root
			last := a.turns[len(a.turns)-1]
			if last.Termination != tc.term {
				t.Fatalf("termination %s (%s), want %s", last.Termination, last.Error, tc.term)
			}
			if tc.term != evalctl.TermCompleted && (last.Error == "" || last.AgentFinished) {
				t.Errorf("a stopped turn without its reason: %+v", last)
			}
			a.checkComplete(t)
			if tc.model != "stall" {
				a.checkAccounting(t)
			}
			tc.check(t, a)
		})
	}
}

func TestSandboxFailureIsASandboxError(t *testing.T) {
	suite := loadTiny(t)
	_, client := startServer(t, scripted.Config{Suite: suite})
	a := run(t, client, brokenSandbox{}, nil, suite.Case("tiny"), Config{ModelName: "reference", Budgets: DefaultBudgets})
	turn := a.turns[0]
	if turn.Termination != evalctl.TermSandboxError || !strings.Contains(turn.Error, "not running") || turn.AgentFinished {
		t.Fatalf("turn %+v", turn)
	}
	a.checkComplete(t)
}

// A model that asks for several tools at once: the tool-call budget stops
// within one call, and the calls not run still get an answer.
type threeCalls struct{ n int }

func (m *threeCalls) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	m.n++
	pn, pms, dn, dms := int64(10), 1.0, int64(30), 50.0
	r := &model.Response{FinishReason: "tool_calls", Usage: &model.Usage{CompletionTokens: 30, PromptTokens: 10},
		Timings: &model.Timings{PromptN: &pn, PromptMS: &pms, PredictedN: &dn, PredictedMS: &dms}}
	for i := range 3 {
		r.ToolCalls = append(r.ToolCalls, model.ToolCall{ID: string(rune('a'+m.n)) + string(rune('0'+i)), Name: ToolListFiles, Arguments: `{}`})
	}
	return r, nil
}

func TestToolCallBudgetMidResponse(t *testing.T) {
	sb := newHostSandbox(t, "")
	l, err := New(Config{Model: &threeCalls{}, ModelName: "x", Sandbox: sb, Budgets: Budgets{ToolCalls: 4}})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := l.RunPhase(context.Background(), 1, "go")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Termination != evalctl.TermToolCallLimit || turn.ToolCalls[ToolListFiles] != 4 || turn.Responses != 2 {
		t.Fatalf("turn %+v", turn)
	}
	notRun := 0
	for _, m := range l.Messages() {
		if m.Role == model.RoleTool && strings.HasPrefix(m.Content, "not run:") {
			notRun++
		}
	}
	if notRun != 2 {
		t.Errorf("%d calls answered as not run, want 2", notRun)
	}
	// A later phase starts with the budget still exhausted.
	turn, _ = l.RunPhase(context.Background(), 2, "more")
	if turn.Termination != evalctl.TermToolCallLimit || turn.Responses != 1 {
		t.Errorf("phase 2 %+v", turn)
	}
}

func TestInterruptReturnsThePartialTurn(t *testing.T) {
	suite := loadTiny(t)
	_, client := startServer(t, scripted.Config{Suite: suite, StallDelay: 50 * time.Millisecond})
	l, err := New(Config{Model: client, ModelName: "stall", Sandbox: newHostSandbox(t, ""), Budgets: DefaultBudgets})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	turn, err := l.RunPhase(ctx, 1, "go")
	if err == nil || ctx.Err() == nil {
		t.Fatalf("err = %v, want the interruption", err)
	}
	if turn.Seconds <= 0 || turn.Responses == 0 {
		t.Errorf("partial turn %+v", turn)
	}
}

func TestClassifyCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd       string
		test, tsc bool
	}{
		{"python3 -m pytest -q tests", true, false},
		{"cd /workspace && pytest -x", true, false},
		{"python -m unittest discover", true, false},
		{"PYTHONPATH=. python3 -B -m pytest tests/test_a.py 2>&1 | tail -5", true, false},
		{"tsc -p . && node --test build/test/", true, true},
		{"npx tsc --noEmit", false, true},
		{"./node_modules/.bin/tsc -p tsconfig.json", false, true},
		{"npm test", true, false},
		{"npm run test -- --watch=false", true, false},
		{"node --test", true, false},
		{"node --experimental-vm-modules --test dist/", true, false},
		{"cat tests/test_cache.py", false, false},
		{"cat tsconfig.json", false, false},
		{"pip install pytest-cov", false, false},
		{"ls", false, false},
		{"grep -rn pytest .", false, false},
		{"echo run pytest later", false, false},
		{"timeout 60 python3 -m pytest -q; echo done", true, false},
		{"(cd sub && CI=1 npx vitest run)", true, false},
		{"npm run typecheck", false, true},
	} {
		test, tsc := classifyCommand(tc.cmd)
		if test != tc.test || tsc != tc.tsc {
			t.Errorf("%q: test %v typecheck %v, want %v %v", tc.cmd, test, tsc, tc.test, tc.tsc)
		}
	}
}

func TestStepOverheadsAreRecorded(t *testing.T) {
	_, client := startServer(t, scripted.Config{})
	l, _ := New(Config{Model: client, ModelName: "busy", Sandbox: instantSandbox{}, Budgets: Budgets{ToolCalls: 20}})
	if _, err := l.RunPhase(context.Background(), 1, "go"); err != nil {
		t.Fatal(err)
	}
	o := l.StepOverheads()
	if len(o) != 20 {
		t.Fatalf("%d overheads for 20 steps that ran their tool", len(o))
	}
	for _, d := range o {
		if d < 0 {
			t.Errorf("negative overhead %v", d)
		}
	}
}

// BenchmarkLoopStep measures one step of the loop (a model response with a
// trivial tool call, then the tool) against the scripted server at zero
// latency, in conversations of 50 steps (a long conversation makes every
// request bigger). It reports the loop's own share of a step (the step less
// model and sandbox time) as median and p95.
func BenchmarkLoopStep(b *testing.B) {
	_, client := startServer(b, scripted.Config{})
	// The transcript is written as in a cohort, to a real file.
	tr, err := os.Create(filepath.Join(b.TempDir(), "transcript.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	var o []time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(50, b.N-done)
		l, _ := New(Config{Model: client, ModelName: "busy", Sandbox: instantSandbox{}, Budgets: Budgets{ToolCalls: n}, Transcript: tr})
		if _, err := l.RunPhase(context.Background(), 1, "go"); err != nil {
			b.Fatal(err)
		}
		o = append(o, l.StepOverheads()...)
		done += n
	}
	b.StopTimer()
	sort.Slice(o, func(i, j int) bool { return o[i] < o[j] })
	if len(o) > 0 {
		b.ReportMetric(float64(o[len(o)/2].Nanoseconds())/1e3, "overhead-median-µs")
		b.ReportMetric(float64(o[len(o)*95/100].Nanoseconds())/1e3, "overhead-p95-µs")
	}
}

// scriptedModel answers with the given responses in turn.
type scriptedModel struct{ out []*model.Response }

func (m *scriptedModel) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	r := m.out[0]
	m.out = m.out[1:]
	return r, nil
}

func TestCallsWithoutIDGetOne(t *testing.T) {
	m := &scriptedModel{out: []*model.Response{
		{FinishReason: "tool_calls", ToolCalls: []model.ToolCall{{Name: ToolListFiles, Arguments: "{}"}, {Name: ToolListFiles}}},
		{FinishReason: "stop", Content: "done"},
	}}
	l, _ := New(Config{Model: m, ModelName: "x", Sandbox: newHostSandbox(t, "")})
	turn, err := l.RunPhase(context.Background(), 1, "go")
	if err != nil || turn.Termination != evalctl.TermCompleted {
		t.Fatalf("%v %+v", err, turn)
	}
	msgs := l.Messages()
	calls := msgs[2].ToolCalls
	if calls[0].ID == "" || calls[0].ID == calls[1].ID || msgs[3].ToolCallID != calls[0].ID || msgs[4].ToolCallID != calls[1].ID {
		t.Errorf("ids %q %q answered by %q %q", calls[0].ID, calls[1].ID, msgs[3].ToolCallID, msgs[4].ToolCallID)
	}
	// No server figures at all: the sums say they are client-side.
	if m := l.Measurements(); m.TimingsSource != "client" || m.PromptTokens != nil || m.MaxSequenceTokens != nil {
		t.Errorf("measurements without timings %+v", m)
	}
}

// recordingModel is a scriptedModel that keeps each request's output cap.
type recordingModel struct {
	scriptedModel
	maxTokens []int
}

func (m *recordingModel) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	m.maxTokens = append(m.maxTokens, req.Params.MaxTokens)
	return m.scriptedModel.Chat(ctx, req)
}

// A response without an output token count makes the attempt's sum unknown,
// but the counts that were reported still use up the token budget.
func TestTokenBudgetCountsKnownTokens(t *testing.T) {
	bash := func(id string) []model.ToolCall {
		return []model.ToolCall{{ID: id, Name: ToolBash, Arguments: `{"command":"python3 -m pytest -q"}`}}
	}
	m := &recordingModel{scriptedModel: scriptedModel{out: []*model.Response{
		{FinishReason: "tool_calls", ToolCalls: bash("a"), Usage: &model.Usage{CompletionTokens: 60}},
		{FinishReason: "tool_calls", ToolCalls: bash("b")},
		{FinishReason: "tool_calls", ToolCalls: bash("c"), Usage: &model.Usage{CompletionTokens: 40}},
	}}}
	l, err := New(Config{Model: m, ModelName: "x", Sandbox: instantSandbox{}, Budgets: Budgets{GeneratedTokens: 100}})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := l.RunPhase(context.Background(), 1, "go")
	if err != nil || turn.Termination != evalctl.TermGeneratedTokenLimit {
		t.Fatalf("%v %+v", err, turn)
	}
	if want := []int{100, 40, 40}; fmt.Sprint(m.maxTokens) != fmt.Sprint(want) {
		t.Errorf("output caps %v, want %v", m.maxTokens, want)
	}
	if got := l.Measurements().NativeOutputTokens; got != nil {
		t.Errorf("output tokens %d, want unknown", *got)
	}
	// The bash calls that ran were self-checks, recorded with their command.
	if turn.LastTest == nil || turn.LastTest.Command != "python3 -m pytest -q" || !turn.LastTest.Passed {
		t.Errorf("last test %+v", turn.LastTest)
	}
}
