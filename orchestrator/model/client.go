// Package model is evalctl's client for OpenAI-compatible model endpoints,
// chiefly llama.cpp's llama-server. It is the only package that imports
// go-openai: it extends go-openai's request with llama-server's fields and
// decodes responses itself, because the measurements evalctl reports (the
// timings object, reasoning_content) are exactly what go-openai's response
// types drop. Every figure is kept as the server reported it; what the
// client measured itself is marked as such.
package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config says how to reach an endpoint.
type Config struct {
	// BaseURL is the server root ("http://127.0.0.1:8080") or its OpenAI
	// base ("http://127.0.0.1:8080/v1"); both work.
	BaseURL string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// HTTPClient defaults to a client without an overall timeout (streams
	// are long); requests are bounded by contexts and Params.Timeout.
	HTTPClient *http.Client
	// Retry bounds retries of requests that cannot have generated tokens.
	Retry RetryPolicy
	// InfoTimeout bounds the small identity calls (/props, /v1/models,
	// /health, /tokenize, /metrics); default 10s.
	InfoTimeout time.Duration
	// HealthPath is what Health asks; default /health.
	HealthPath string
	// AddSpecial makes Tokenize count the special tokens (BOS) that
	// /completion adds to a prompt, as a throughput screen needs to size
	// its prompts; by default they are left out.
	AddSpecial bool
	// MaxResponseBytes caps one response: the body of a whole response,
	// the generated text of a stream (content, reasoning and tool-call
	// arguments together). A response past it is cut there and returned
	// as truncated (finish_reason "length", Cut set, token count unknown),
	// so memory stays bounded by the cap. 0 means DefaultMaxResponseBytes;
	// negative means no cap.
	MaxResponseBytes int64
}

// DefaultMaxResponseBytes is the per-response size cap: far above what a
// 32K-token response can hold (about 4 bytes a token), far below what
// would strain the runner.
const DefaultMaxResponseBytes = 16 << 20

// RetryPolicy is a bounded exponential backoff with jitter, for requests
// that never reached the server (ClassUnavailable). A server's Retry-After
// is honoured: the wait is the longer of it and the backoff step.
type RetryPolicy struct {
	// MaxRetries after the first try; 0 disables retries.
	MaxRetries int
	Initial    time.Duration
	Max        time.Duration
	// MaxWait bounds the time spent waiting between tries, in all; a
	// Retry-After that would pass it ends the retries at once.
	MaxWait time.Duration
}

// DefaultRetry retries three times: after about 0.5 s, 1 s and 2 s (or
// the server's Retry-After), waiting two minutes at most in all.
var DefaultRetry = RetryPolicy{MaxRetries: 3, Initial: 500 * time.Millisecond, Max: 8 * time.Second, MaxWait: 2 * time.Minute}

// Client talks to one endpoint. It is safe for concurrent use.
type Client struct {
	root, api  string
	apiKey     string
	healthPath string
	addSpecial bool
	http       *http.Client
	retry      RetryPolicy
	info       time.Duration
	maxBytes   int64
}

// New returns a client for cfg. A zero Retry means DefaultRetry; set
// MaxRetries to -1 for none.
func New(cfg Config) *Client {
	base := strings.TrimRight(cfg.BaseURL, "/")
	root, api := base, base+"/v1"
	if strings.HasSuffix(base, "/v1") {
		root, api = strings.TrimSuffix(base, "/v1"), base
	}
	c := &Client{root: root, api: api, apiKey: cfg.APIKey, http: cfg.HTTPClient, retry: cfg.Retry, info: cfg.InfoTimeout, maxBytes: cfg.MaxResponseBytes,
		healthPath: cfg.HealthPath, addSpecial: cfg.AddSpecial}
	if c.healthPath == "" {
		c.healthPath = "/health"
	}
	switch {
	case c.maxBytes == 0:
		c.maxBytes = DefaultMaxResponseBytes
	case c.maxBytes < 0:
		c.maxBytes = 0
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.retry == (RetryPolicy{}) {
		c.retry = DefaultRetry
	}
	if c.retry.MaxRetries < 0 {
		c.retry.MaxRetries = 0
	}
	if c.info <= 0 {
		c.info = 10 * time.Second
	}
	return c
}

// BaseURL is the server root the client talks to.
func (c *Client) BaseURL() string { return c.root }

// Chat sends one chat completion request and returns the response with the
// server's timings and the client's own clock readings. Errors are *Error
// (classified), or the context's error when ctx ended.
func (c *Client) Chat(ctx context.Context, req Request) (*Response, error) {
	body, err := ChatBody(req)
	if err != nil {
		return nil, err
	}
	return c.do(ctx, c.api+"/chat/completions", body, req.Stream, req.Params.Timeout, chatParser)
}

// Complete calls llama-server's native /completion endpoint.
func (c *Client) Complete(ctx context.Context, req CompletionRequest) (*Response, error) {
	body, err := completionBody(req)
	if err != nil {
		return nil, err
	}
	return c.do(ctx, c.root+"/completion", body, req.Stream, req.Timeout, nativeParser)
}

// do runs the request, retrying what never reached the server (see Class)
// within the retry policy; every retried try is listed in the result.
func (c *Client) do(ctx context.Context, url string, body []byte, stream bool, timeout time.Duration, p parser) (*Response, error) {
	delay := c.retry.Initial
	var retries []Retry
	var waited time.Duration
	for try := 1; ; try++ {
		resp, err := c.once(ctx, url, body, stream, timeout, p)
		if err == nil {
			resp.Tries, resp.Retries = try, retries
			return resp, nil
		}
		var me *Error
		if !errors.As(err, &me) {
			return nil, err // the caller's context ended
		}
		me.Tries, me.Retries = try, retries
		if !me.retryable() || try > c.retry.MaxRetries {
			return nil, me
		}
		// Full jitter around the exponential step keeps retries of many
		// attempts from arriving together; the server's word comes first.
		wait := delay/2 + rand.N(delay/2+1)
		if me.stale {
			// A keep-alive connection the server had closed says nothing
			// about the server: the next try goes out at once, fresh.
			wait = 0
		}
		wait = max(wait, me.RetryAfter)
		if c.retry.MaxWait > 0 && waited+wait > c.retry.MaxWait {
			me.Message = strings.TrimSpace(me.Message + fmt.Sprintf(" (retry budget of %s spent: %s waited, %s more asked)", c.retry.MaxWait, waited, wait))
			return nil, me
		}
		retries = append(retries, Retry{At: time.Now().UTC(), Kind: me.Kind, Status: me.Status, Message: me.Error(), WaitSeconds: wait.Seconds()})
		waited += wait
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("model request: %w (while retrying after: %v)", ctx.Err(), me)
		case <-t.C:
		}
		delay = min(delay*2, c.retry.Max)
	}
}

// delivery is what the transport saw of one request, to tell a request
// that never reached the server from one that did.
type delivery struct {
	mu                     sync.Mutex
	reused, wrote, gotByte bool
}

func (d *delivery) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			d.mu.Lock()
			d.reused = i.Reused
			d.mu.Unlock()
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			d.mu.Lock()
			d.wrote = d.wrote || i.Err == nil
			d.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			d.mu.Lock()
			d.gotByte = true
			d.mu.Unlock()
		},
	}
}

// undelivered says whether a failed request can not have reached the
// server: it was never written, or it was written on a reused keep-alive
// connection that ended (EOF, reset) before any response byte — the
// server had closed it while idle.
func (d *delivery) undelivered(err error) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.wrote {
		return true
	}
	if d.gotByte || !d.reused {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// stale says whether the request was lost on a reused connection.
func (d *delivery) stale() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reused && d.wrote
}

func (c *Client) once(parent context.Context, url string, body []byte, stream bool, timeout time.Duration, p parser) (*Response, error) {
	ctx, cancel := parent, context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeoutCause(parent, timeout, errRequestTimeout)
	}
	defer cancel()
	var dl delivery
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, dl.trace()), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Kind: KindRequest, Message: "build request", Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	start := time.Now()
	hresp, err := c.http.Do(hreq)
	if err != nil {
		if parent.Err() == nil && dl.undelivered(err) {
			return nil, &Error{Kind: KindConnection, Message: "the request did not reach the server", Err: err, stale: dl.stale()}
		}
		return nil, transportError(parent, ctx, err, nil)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(hresp.Body, 1<<20))
		return nil, statusError(hresp.StatusCode, hresp.Header, data)
	}
	mt, _, _ := mime.ParseMediaType(hresp.Header.Get("Content-Type"))
	var resp *Response
	var wall time.Duration
	if mt == "text/event-stream" {
		resp, err = p.stream(hresp.Body, start, c.maxBytes)
		wall = time.Since(start)
		if err != nil {
			var me *Error
			if errors.As(err, &me) && me.Kind == KindBrokenStream && me.Err != nil {
				// A read failed mid-stream: the caller's context, the
				// request timeout, or the connection.
				return nil, transportError(parent, ctx, me.Err, me.Partial)
			}
			return nil, err
		}
	} else {
		rd := io.Reader(hresp.Body)
		if c.maxBytes > 0 {
			rd = io.LimitReader(hresp.Body, c.maxBytes+1)
		}
		data, err := io.ReadAll(rd)
		if err != nil {
			return nil, transportError(parent, ctx, err, nil)
		}
		// The wall time ends with the body's last byte: decoding it is
		// the client's work, not the exchange's.
		wall = time.Since(start)
		if c.maxBytes > 0 && int64(len(data)) > c.maxBytes {
			// Cut: what came cannot be parsed, and the rest is not read.
			resp = &Response{FinishReason: FinishLength, Cut: &Cut{Bytes: c.maxBytes, Reason: fmt.Sprintf("the response body passed the size cap of %d bytes", c.maxBytes)}}
		} else if resp, err = p.body(data); err != nil {
			return nil, err
		}
	}
	resp.WallSeconds = wall.Seconds()
	resp.checkMeasurement()
	return resp, nil
}

var errRequestTimeout = errors.New("model request timeout")

// transportError maps a transport failure after the request was delivered:
// the caller's context ending is returned as is (not a model error), the
// request timeout as KindTimeout, a stream that had begun as a broken
// stream, anything else as a dropped connection.
func transportError(parent, ctx context.Context, err error, partial *Response) error {
	if parent.Err() != nil {
		return fmt.Errorf("model request: %w", context.Cause(parent))
	}
	if errors.Is(context.Cause(ctx), errRequestTimeout) {
		return &Error{Kind: KindTimeout, Message: "request timeout passed", Partial: partial, Err: err}
	}
	if partial != nil {
		return &Error{Kind: KindBrokenStream, Message: "stream broke off", Partial: partial, Err: err}
	}
	return &Error{Kind: KindDropped, Message: "the connection ended after the request was sent, before any answer", Err: err}
}
