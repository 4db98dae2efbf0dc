package proxy

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/orchestrator/transcript"
	"github.com/evalctl/evalctl/tasks"
)

const (
	tinySuite = "../scripted/testdata/suite"
	standin   = "../../sandbox/recipe/standin-agent"
)

type harness struct {
	proxy  *Proxy
	url    string
	server *scripted.Server
	client *model.Client
	tr     bytes.Buffer
	dir    string
	cs     *tasks.Case
}

// start serves a proxy for the scripted server's model name in front of
// a real scripted server, with the tiny case's workspace in a directory
// of its own standing for /workspace.
func start(t *testing.T, name string, b agent.Budgets) *harness {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 runs the stand-in agent; not on this machine")
	}
	suite, err := tasks.LoadSuite(tinySuite)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scripted.New(scripted.Config{Suite: suite})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := &harness{server: s, client: model.New(model.Config{BaseURL: s.URL()}), dir: t.TempDir(), cs: suite.Cases[0]}
	h.proxy, err = New(Config{Model: h.client, ModelName: name, Budgets: b, Transcript: &h.tr})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h.proxy)
	t.Cleanup(hs.Close)
	h.url = hs.URL + "/v1"
	if err := os.CopyFS(h.dir, os.DirFS(h.cs.WorkspaceDir)); err != nil {
		t.Fatal(err)
	}
	return h
}

// phase runs the stand-in agent for one phase and closes it.
func (h *harness) phase(t *testing.T, n int, args ...string) (evalctl.Turn, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stopped := h.proxy.Begin(ctx, n, h.cs.Phase(n).Prompt)
	std, _ := filepath.Abs(standin)
	cmd := exec.CommandContext(ctx, "python3", append([]string{std, "--base-url", h.url, "--model", "m", "--prompt", h.cs.Phase(n).Prompt}, args...)...)
	cmd.Dir = h.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var x Exit
	select {
	case <-done:
	case <-stopped:
		cmd.Process.Kill()
		<-done
	}
	if cmd.ProcessState.Exited() {
		code := cmd.ProcessState.ExitCode()
		x.Code = &code
	}
	turn, err := h.proxy.End(x)
	if err != nil {
		t.Fatal(err)
	}
	return turn, out.String()
}

// TestStandinSolvesThroughTheProxy: the stand-in agent, talking to the
// reference script through the proxy, solves both phases of the tiny case
// as the built-in loop does; the turn, the self-check and the server's
// figures are recorded as the loop records them, the transcript reads
// back, and the agent's own usage claim matches the server's count unless
// it misreports.
func TestStandinSolvesThroughTheProxy(t *testing.T) {
	h := start(t, "reference", agent.Budgets{})
	before, err := h.client.Counters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	turn, out := h.phase(t, 1)
	if turn.Termination != evalctl.TermCompleted || !turn.AgentFinished || !turn.FinalText || turn.LastTest == nil {
		t.Fatalf("turn %+v\nagent output:\n%s", turn, out)
	}
	// The phase's solution is in the workspace the agent edited.
	want, _ := os.ReadFile(filepath.Join(h.cs.Phase(1).ReferenceDir, "calc.py"))
	if got, err := os.ReadFile(filepath.Join(h.dir, "calc.py")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("calc.py not the reference: %v", err)
	}
	m := h.proxy.Measurements()
	after, _ := h.client.Counters(context.Background())
	if m.NativeOutputTokens == nil || before.GeneratedTokens == nil || *m.NativeOutputTokens != int64(*after.GeneratedTokens-*before.GeneratedTokens) {
		t.Errorf("output tokens %v, the server's /metrics moved %v -> %v", m.NativeOutputTokens, *before.GeneratedTokens, *after.GeneratedTokens)
	}
	if m.Responses != turn.Responses || len(turn.FinishReasons) != turn.Responses || m.TimingsSource != "server" {
		t.Errorf("measurements %+v turn %+v", m, turn)
	}
	reported := usageLine(t, out)
	if reported != *m.NativeOutputTokens {
		t.Errorf("the stand-in reported %d completion tokens, the server counted %d", reported, *m.NativeOutputTokens)
	}
	// The transcript reads back: one request and one response per call,
	// a tool event per answered call.
	kinds := map[string]int{}
	events, torn, err := transcript.Read(bytes.NewReader(h.tr.Bytes()))
	if err != nil || torn != 0 {
		t.Fatalf("transcript: %v (%d torn)", err, torn)
	}
	for _, ev := range events {
		kinds[ev.Kind]++
	}
	if kinds[transcript.EventRequest] != turn.Responses || kinds[transcript.EventResponse] != turn.Responses || kinds[transcript.EventTool] != m.ToolCalls || kinds[transcript.EventPhaseEnd] != 1 {
		t.Errorf("transcript events %v for %d responses, %d tool calls", kinds, turn.Responses, m.ToolCalls)
	}
	// Misreporting: the claim falls short of the server's count.
	_, out = h.phase(t, 2, "--misreport")
	m2 := h.proxy.Measurements()
	if got := usageLine(t, out); got >= *m2.NativeOutputTokens-*m.NativeOutputTokens {
		t.Errorf("misreport claimed %d of %d", got, *m2.NativeOutputTokens-*m.NativeOutputTokens)
	}
}

func usageLine(t *testing.T, out string) int64 {
	t.Helper()
	m := regexp.MustCompile(`usage: prompt_tokens=\d+ completion_tokens=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no usage line in:\n%s", out)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestProxyBudgets: the proxy enforces the budgets as the loop does; the
// agent is stopped with the loop's termination, and the output cap sent
// never exceeds what the token budget has left.
func TestProxyBudgets(t *testing.T) {
	tests := []struct {
		name   string
		model  string
		b      agent.Budgets
		want   evalctl.Termination
		checks func(t *testing.T, h *harness, turn evalctl.Turn)
	}{
		{"tool calls", "busy", agent.Budgets{ToolCalls: 3}, evalctl.TermToolCallLimit, func(t *testing.T, h *harness, turn evalctl.Turn) {
			if turn.ToolCalls["bash"] != 3 {
				t.Errorf("tool calls %v, want 3 bash", turn.ToolCalls)
			}
		}},
		{"generated tokens", "runaway", agent.Budgets{GeneratedTokens: 300}, evalctl.TermGeneratedTokenLimit, func(t *testing.T, h *harness, turn evalctl.Turn) {
			if n := h.proxy.Measurements().NativeOutputTokens; n == nil || *n > 300 {
				t.Errorf("generated %v tokens under a budget of 300", n)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, tt.model, tt.b)
			turn, out := h.phase(t, 1)
			if turn.Termination != tt.want {
				t.Fatalf("termination %s (%s), want %s\n%s", turn.Termination, turn.Error, tt.want, out)
			}
			tt.checks(t, h, turn)
		})
	}
}
