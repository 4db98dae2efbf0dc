package model

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type connKey struct{}

// perConnServer calls handle with the number of the request on its
// connection (1 for the first).
func perConnServer(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	var total atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		total.Add(1)
		n := r.Context().Value(connKey{}).(*atomic.Int32).Add(1)
		handle(int(n), w, r)
	}))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, new(atomic.Int32))
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &total
}

// hangUp reads the request and closes the connection without a byte of
// response, as llama-server does to a request on a connection it closed
// after a streamed response.
func hangUp(w http.ResponseWriter, r *http.Request) {
	r.Body.Close()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// A request on a reused keep-alive connection that gets EOF before any
// response byte never reached the server: it is retried on a fresh
// connection, and the retry is listed.
func TestKeepAliveEOFIsRetried(t *testing.T) {
	srv, total := perConnServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 2 {
			hangUp(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, okBody)
	})
	c := New(Config{BaseURL: srv.URL, Retry: fastRetry})
	if _, err := c.Chat(context.Background(), Request{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), Request{Model: "m"})
	if err != nil {
		t.Fatalf("second request: %v, want it retried on a fresh connection", err)
	}
	if resp.Tries != 2 || len(resp.Retries) != 1 || resp.Retries[0].Kind != KindConnection || total.Load() != 3 {
		t.Errorf("tries %d retries %+v requests %d; want one connection retry", resp.Tries, resp.Retries, total.Load())
	}
}

// The same EOF on a fresh connection means the server had the request: a
// dropped request, scored as the server's failure, never retried.
func TestFreshConnectionEOFIsNotRetried(t *testing.T) {
	srv, total := perConnServer(t, func(n int, w http.ResponseWriter, r *http.Request) { hangUp(w, r) })
	_, err := New(Config{BaseURL: srv.URL, Retry: fastRetry}).Chat(context.Background(), Request{Model: "m"})
	var me *Error
	if !asError(err, &me) || me.Kind != KindDropped || me.Class() != ClassServerFailed || total.Load() != 1 {
		t.Fatalf("err = %v after %d requests; want one dropped request", err, total.Load())
	}
}

// 429 is retried after the server's Retry-After, within the retry budget.
func TestRetryAfterIsHonoured(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			fmt.Fprint(w, errorBody(429, "rate_limit_error", "slow down"))
			return
		}
		fmt.Fprint(w, okBody)
	}))
	defer srv.Close()
	start := time.Now()
	resp, err := New(Config{BaseURL: srv.URL, Retry: RetryPolicy{MaxRetries: 3, Initial: time.Millisecond, Max: time.Millisecond, MaxWait: 5 * time.Second}}).Chat(context.Background(), Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("retried after %v, before the server's Retry-After of 1 s", el)
	}
	if len(resp.Retries) != 1 || resp.Retries[0].Kind != KindBusy || resp.Retries[0].Status != 429 || resp.Retries[0].WaitSeconds != 1 {
		t.Errorf("retries %+v, want one 429 waited 1 s", resp.Retries)
	}
}

// A Retry-After beyond the retry budget ends the retries at once.
func TestRetryBudgetIsBounded(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(503)
		fmt.Fprint(w, errorBody(503, "unavailable_error", "Loading model"))
	}))
	defer srv.Close()
	start := time.Now()
	_, err := New(Config{BaseURL: srv.URL, Retry: RetryPolicy{MaxRetries: 3, Initial: time.Millisecond, Max: time.Millisecond, MaxWait: time.Second}}).Chat(context.Background(), Request{Model: "m"})
	var me *Error
	if !asError(err, &me) || me.Kind != KindLoading || n.Load() != 1 || !strings.Contains(me.Message, "retry budget") {
		t.Fatalf("err = %v after %d requests, want loading with the budget spent", err, n.Load())
	}
	if time.Since(start) > 500*time.Millisecond {
		t.Errorf("waited %v for a retry it would not make", time.Since(start))
	}
}

// Implausible server figures make the response's measurement unknown, with
// the reason; budgets still see a non-negative count.
func TestImplausibleMeasurements(t *testing.T) {
	body := func(usage, predicted int64, ms string) string {
		return fmt.Sprintf(`{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"x"}}],"usage":{"completion_tokens":%d,"prompt_tokens":5,"total_tokens":7},"timings":{"prompt_n":5,"prompt_ms":1.5,"predicted_n":%d,"predicted_ms":%s}}`, usage, predicted, ms)
	}
	cases := []struct {
		name, body, anomaly string
		spent               int64
	}{
		{"negative decode time", body(250, 250, "-1406.2"), "predicted_ms is negative", 250},
		{"count disagrees with usage", body(10, 12, "100"), "disagrees", 12},
		{"zero decode time with tokens", body(8, 8, "0"), "is 0 with 8 tokens", 8},
		{"negative count", body(-5, -5, "10"), "predicted_n is negative", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := sequence(t, [2]string{"200", tc.body})
			resp, err := New(Config{BaseURL: srv.URL}).Chat(context.Background(), Request{Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Measured() || !strings.Contains(strings.Join(resp.Anomalies, "; "), tc.anomaly) {
				t.Errorf("anomalies %v, want %q", resp.Anomalies, tc.anomaly)
			}
			if _, ok := resp.OutputTokens(); ok {
				t.Errorf("an implausible response still reports a token count")
			}
			if resp.SpentTokens() != tc.spent {
				t.Errorf("spent %d, want %d", resp.SpentTokens(), tc.spent)
			}
		})
	}
	srv, _ := sequence(t, [2]string{"200", okBody})
	resp, _ := New(Config{BaseURL: srv.URL}).Chat(context.Background(), Request{Model: "m"})
	if !resp.Measured() {
		t.Errorf("a plausible response has anomalies %v", resp.Anomalies)
	}
}

// A response past the size cap is cut there: marked, finished by length,
// its count unknown, and no more than the cap (plus one event) kept.
func TestResponseSizeCap(t *testing.T) {
	const limit = 4096
	big := strings.Repeat("y", 100)
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !stream {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"%s"}}]}`, strings.Repeat(big, 1000))
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < 1000; i++ {
					if _, err := fmt.Fprintf(w, `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"%s"}}]}`+"\n\n", big); err != nil {
						return
					}
				}
				fmt.Fprint(w, "data: [DONE]\n\n")
			}))
			defer srv.Close()
			resp, err := New(Config{BaseURL: srv.URL, MaxResponseBytes: limit}).Chat(context.Background(), Request{Model: "m", Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Cut == nil || resp.FinishReason != FinishLength || resp.Cut.Bytes != limit {
				t.Fatalf("cut %+v finish %q, want cut at %d", resp.Cut, resp.FinishReason, limit)
			}
			if len(resp.Content) > limit+len(big) {
				t.Errorf("kept %d bytes of content over a cap of %d", len(resp.Content), limit)
			}
			if _, ok := resp.OutputTokens(); ok {
				t.Errorf("a cut response reports a token count")
			}
		})
	}
}
