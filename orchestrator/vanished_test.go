package orchestrator

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// TestVanishedEndpointIsInfra is the classification of a turn that failed
// after its request was taken: the model's failure (scored) while the
// server answers its health probe, an infrastructure failure naming the
// vanished endpoint and the probe's error when the probe is refused or
// reset; a turn that ended on a finished response is never probed.
func TestVanishedEndpointIsInfra(t *testing.T) {
	alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"status":"ok"}`)) }))
	t.Cleanup(alive.Close)
	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	}))
	t.Cleanup(reset.Close)
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close() // nothing listens there any more
	probed := 0
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { probed++ }))
	t.Cleanup(counting.Close)

	broken := evalctl.Turn{Termination: evalctl.TermServerError, ModelErrorKind: string(model.KindBrokenStream), Error: "model broken_stream: stream broke off"}
	status500 := evalctl.Turn{Termination: evalctl.TermServerError, ModelErrorKind: string(model.KindServer), Error: "model server_error: HTTP 500"}
	for _, tc := range []struct {
		name  string
		url   string
		turn  evalctl.Turn
		infra bool
	}{
		{"broken stream, server alive: the model's", alive.URL, broken, false},
		{"500, server alive: the model's", alive.URL, status500, false},
		{"broken stream, probe refused: vanished", refusedURL, broken, true},
		{"500, probe refused: vanished", refusedURL, status500, true},
		{"broken stream, probe reset: vanished", reset.URL, broken, true},
		{"finished response, probe refused: not probed", refusedURL, evalctl.Turn{Termination: evalctl.TermCompleted}, false},
		{"sandbox error, probe refused: not the endpoint", refusedURL, evalctl.Turn{Termination: evalctl.TermSandboxError}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := vanished(t.Context(), model.New(model.Config{BaseURL: tc.url}), 2, tc.turn)
			if (err != nil) != tc.infra {
				t.Fatalf("vanished: %v, want infra %v", err, tc.infra)
			}
			if err == nil {
				return
			}
			for _, w := range []string{"endpoint vanished in phase 2", tc.turn.Error, "health probe failed"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
	if vanished(t.Context(), model.New(model.Config{BaseURL: counting.URL}), 1, evalctl.Turn{Termination: evalctl.TermToolCallLimit}); probed != 0 {
		t.Errorf("a turn that ended on a finished response probed the server %d time(s)", probed)
	}
}

// TestFailOverOncePerSlot: a pool's infrastructure-failed slot runs again
// in the session only when its replica left the rotation, and at most
// once per slot per session.
func TestFailOverOncePerSlot(t *testing.T) {
	ses := &session{}
	for _, tc := range []struct {
		out  bool
		slot int
		want bool
	}{
		{false, 7, false}, // the replica stayed in rotation
		{true, 7, true},   // it left: the first failure of slot 7 here
		{true, 7, false},  // once per slot per session
		{true, 8, true},
		{false, 9, false},
		{true, 9, true}, // a failure that did not fail over does not use up the slot's once
	} {
		if got := ses.failOver(tc.out, tc.slot); got != tc.want {
			t.Errorf("failOver(replica out %v, slot %d) = %v, want %v", tc.out, tc.slot, got, tc.want)
		}
	}
}
