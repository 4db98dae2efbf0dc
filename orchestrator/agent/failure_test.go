package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/orchestrator/transcript"
)

// metricsDelta is what the server's own counter moved during the attempt.
func (a *attempt) metricsDelta(t *testing.T, name string) float64 {
	t.Helper()
	after, err := a.client.Metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return after["llamacpp:"+name] - a.before["llamacpp:"+name]
}

// The server's failures end the turn by the classification rule, each with
// the record the issue asks for; the scripted server reproduces the
// captured llama-server behaviour.
func TestServerFailuresEndTheTurn(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "whole"}[stream], func(t *testing.T) {
			_, client := startServer(t, scripted.Config{Suite: suite})
			sb := newHostSandbox(t, cs.WorkspaceDir)
			a := run(t, client, sb, copyOverlay(sb.root), cs, Config{ModelName: "garble", NoStream: !stream, Params: model.Params{MaxTokens: 4096}})
			turn := a.turns[0]
			wantKind := map[bool]string{true: "broken_stream", false: "server_error"}[stream]
			if len(a.turns) != 1 || turn.Termination != evalctl.TermServerError || turn.ModelErrorKind != wantKind || !strings.Contains(turn.Error, "peg-native") {
				t.Fatalf("turn %+v; want server_error (%s) with the server's text", turn, wantKind)
			}
			m := a.loop.Measurements()
			if m.NativeOutputTokens != nil || m.DecodeSeconds != nil || m.UnknownResponses != 1 {
				t.Errorf("tokens %v decode %v unknown %d; want null, null, 1", shown(m.NativeOutputTokens), shown(m.DecodeSeconds), m.UnknownResponses)
			}
			// The server generated, and was asked exactly once.
			if d := a.metricsDelta(t, "tokens_predicted_total"); d <= 0 {
				t.Errorf("server generated %v tokens, want some", d)
			}
			var reqs, failed int
			for _, e := range a.events(t) {
				switch e.Kind {
				case transcript.EventRequest:
					reqs++
				case transcript.EventModelError:
					failed++
					if e.ErrorClass != string(model.ClassServerFailed) || e.ErrorKind != wantKind {
						t.Errorf("model_error event class %q kind %q", e.ErrorClass, e.ErrorKind)
					}
					if stream && (e.Response == nil || e.Response.Content == "") {
						t.Errorf("the failed stream's content is not recorded")
					}
				}
			}
			if reqs != 1 || failed != 1 {
				t.Errorf("%d requests, %d failures; want one each (never retried)", reqs, failed)
			}
		})
	}
}

// A tool call the output cap cut is never run and never sent back; the
// turn ends as output_truncated with the exact token count, and the
// transcript keeps the raw arguments.
func TestCutToolCallIsNotRun(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "whole"}[stream], func(t *testing.T) {
			_, client := startServer(t, scripted.Config{Suite: suite})
			sb := newHostSandbox(t, cs.WorkspaceDir)
			a := run(t, client, sb, copyOverlay(sb.root), cs, Config{ModelName: "cutcall", NoStream: !stream, Params: model.Params{MaxTokens: 60}})
			turn := a.turns[0]
			if turn.Termination != evalctl.TermOutputTruncated || turn.Responses != 1 || len(turn.ToolCalls) != 0 || !strings.Contains(turn.Error, "inside a tool call") {
				t.Fatalf("turn %+v; want output_truncated without running the call", turn)
			}
			if _, err := os.Stat(filepath.Join(sb.root, "notes.txt")); err == nil {
				t.Errorf("the cut call was executed")
			}
			if m := a.loop.Measurements(); !tokensAre(m, 60) {
				t.Errorf("tokens %v, want 60", shown(m.NativeOutputTokens))
			}
			for _, m := range a.loop.Messages() {
				if len(m.ToolCalls) > 0 {
					t.Errorf("the conversation holds the cut call: %+v", m.ToolCalls)
				}
			}
			raw := ""
			for _, e := range a.events(t) {
				if e.Kind == transcript.EventTool {
					t.Errorf("a tool event for a cut call: %+v", e.Tool)
				}
				if e.Kind == transcript.EventResponse && len(e.Response.ToolCalls) == 1 {
					raw = e.Response.ToolCalls[0].Arguments
				}
			}
			if raw == "" || json.Valid([]byte(raw)) || !strings.HasPrefix(raw, `{"content":"`) {
				t.Errorf("transcript arguments %q, want the raw cut JSON", raw)
			}
			a.checkAccounting(t)
		})
	}
}

// Over a connection llama-server closed after a stream, the next request
// gets EOF before any response byte: it never reached the server and is
// retried at once; the attempt completes with exact accounting and each
// retry in the transcript.
func TestKeepAliveDropsAreRetried(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	_, client := startServer(t, scripted.Config{Suite: suite, DropAfterStream: true})
	sb := newHostSandbox(t, cs.WorkspaceDir)
	a := run(t, client, sb, copyOverlay(sb.root), cs, Config{ModelName: "reference", Params: model.Params{MaxTokens: 4096}})
	for _, turn := range a.turns {
		if turn.Termination != evalctl.TermCompleted {
			t.Fatalf("turn %+v", turn)
		}
	}
	responses, retried := 0, 0
	for _, e := range a.events(t) {
		if e.Kind == transcript.EventResponse {
			responses++
			for _, r := range e.Response.Retries {
				if r.Kind != model.KindConnection || r.WaitSeconds != 0 {
					t.Errorf("retry %+v, want an immediate connection retry", r)
				}
				retried++
			}
		}
	}
	// Which idle connection the transport picks decides how many
	// requests meet a dead one; at least one must have, and recovered.
	if responses < 3 || retried == 0 {
		t.Errorf("%d responses, %d retried; want some requests retried after a dropped keep-alive connection", responses, retried)
	}
	a.checkAccounting(t)
}

// 503 and 429 never reached generation: retried, and the retries are in
// the transcript.
func TestUnavailableIsRetriedAndRecorded(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	_, client := startServer(t, scripted.Config{Suite: suite})
	sb := newHostSandbox(t, cs.WorkspaceDir)
	a := run(t, client, sb, copyOverlay(sb.root), cs, Config{ModelName: "flaky", Params: model.Params{MaxTokens: 4096}})
	if a.turns[0].Termination != evalctl.TermCompleted {
		t.Fatalf("turn %+v", a.turns[0])
	}
	n := 0
	for _, e := range a.events(t) {
		if e.Kind == transcript.EventResponse {
			n++
			var kinds []string
			for _, r := range e.Response.Retries {
				kinds = append(kinds, string(r.Kind))
			}
			if strings.Join(kinds, ",") != "loading,busy" || e.Response.Tries != 3 {
				t.Errorf("response %d: retries %v after %d tries, want loading,busy", n, kinds, e.Response.Tries)
			}
		}
	}
	if n == 0 {
		t.Errorf("no response")
	}
	a.checkAccounting(t)
}

// A response the wall-time budget cut has unknown tokens: the attempt's
// count is null (never 0 or the sum of the others), while the server did
// generate.
func TestWallTimeCutResponseIsUnknown(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	_, client := startServer(t, scripted.Config{Suite: suite, StallDelay: 5 * time.Second})
	sb := newHostSandbox(t, cs.WorkspaceDir)
	a := run(t, client, sb, nil, cs, Config{ModelName: "stall", Budgets: Budgets{WallTime: 300 * time.Millisecond, GeneratedTokens: 65536, ToolCalls: 10}, Params: model.Params{MaxTokens: 4096}})
	turn := a.turns[0]
	if turn.Termination != evalctl.TermWallTimeLimit || !strings.Contains(turn.Error, "unknown") {
		t.Fatalf("turn %+v", turn)
	}
	m := a.loop.Measurements()
	if m.NativeOutputTokens != nil || m.DecodeSeconds != nil || m.UnknownResponses != 1 {
		t.Errorf("tokens %v decode %v unknown %d; want null", shown(m.NativeOutputTokens), shown(m.DecodeSeconds), m.UnknownResponses)
	}
}

// Negative timings (a broken proxy, a server bug) are rejected: the
// attempt's tokens are null with the anomaly recorded, never -250, and the
// budget does not count backwards.
func TestImplausibleTimingsAreRejected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"done"}}],"usage":{"completion_tokens":-250,"prompt_tokens":5,"total_tokens":-245},"timings":{"prompt_n":5,"prompt_ms":1.5,"predicted_n":-250,"predicted_ms":1406.2}}`)
	}))
	defer srv.Close()
	l, err := New(Config{Model: model.New(model.Config{BaseURL: srv.URL}), ModelName: "m", Sandbox: instantSandbox{}, NoStream: true, Budgets: Budgets{GeneratedTokens: 100}})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := l.RunPhase(context.Background(), 1, "hi")
	if err != nil {
		t.Fatal(err)
	}
	m := l.Measurements()
	if turn.Termination != evalctl.TermCompleted || m.NativeOutputTokens != nil || m.DecodeSeconds != nil || len(m.Anomalies) == 0 || m.UnknownResponses != 1 {
		t.Errorf("turn %s, tokens %v decode %v anomalies %v", turn.Termination, shown(m.NativeOutputTokens), shown(m.DecodeSeconds), m.Anomalies)
	}
	if l.meter.spent != 0 {
		t.Errorf("budget counted %d tokens, want 0 (never backwards)", l.meter.spent)
	}
}

// A stalled endpoint: the request timeout ends the response. The server
// had the request, so it is the server's failure: server_error, scored,
// its tokens unknown (not a wall-time stop pooled into task speed, not an
// infrastructure failure).
func TestStalledEndpointIsServerError(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	_, client := startServer(t, scripted.Config{Suite: suite, StallDelay: 5 * time.Second})
	sb := newHostSandbox(t, cs.WorkspaceDir)
	a := run(t, client, sb, nil, cs, Config{ModelName: "stall", Params: model.Params{MaxTokens: 4096, Timeout: 200 * time.Millisecond}})
	turn := a.turns[0]
	if turn.Termination != evalctl.TermServerError || turn.ModelErrorKind != string(model.KindTimeout) {
		t.Fatalf("turn %+v; want server_error (timeout)", turn)
	}
	if m := a.loop.Measurements(); m.NativeOutputTokens != nil || m.DecodeSeconds != nil {
		t.Errorf("tokens %v decode %v; want null", shown(m.NativeOutputTokens), shown(m.DecodeSeconds))
	}
}

// A tool call the context cut (fewer tokens than the output cap) says so:
// the termination names the context, not the cap, with the count.
func TestContextFullIsNamed(t *testing.T) {
	suite := loadTiny(t)
	cs := suite.Case("tiny")
	_, client := startServer(t, scripted.Config{Suite: suite, CtxSize: 4096})
	sb := newHostSandbox(t, cs.WorkspaceDir)
	a := run(t, client, sb, copyOverlay(sb.root), cs, Config{ModelName: "cutcall", Params: model.Params{MaxTokens: 8192}})
	turn := a.turns[0]
	m := a.loop.Measurements()
	if turn.Termination != evalctl.TermOutputTruncated || m.NativeOutputTokens == nil || *m.NativeOutputTokens >= 8192 {
		t.Fatalf("turn %+v tokens %v; want output_truncated below the cap", turn, shown(m.NativeOutputTokens))
	}
	want := fmt.Sprintf("the context filled after %d generated tokens (the output cap of 8192 was not reached) inside a tool call", *m.NativeOutputTokens)
	if !strings.Contains(turn.Error, want) {
		t.Errorf("termination %q, want it to contain %q", turn.Error, want)
	}
}
