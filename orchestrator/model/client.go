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
	"strings"
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
}

// RetryPolicy is a bounded exponential backoff with jitter.
type RetryPolicy struct {
	// MaxRetries after the first try; 0 disables retries.
	MaxRetries int
	Initial    time.Duration
	Max        time.Duration
}

// DefaultRetry retries three times: after about 0.5 s, 1 s and 2 s.
var DefaultRetry = RetryPolicy{MaxRetries: 3, Initial: 500 * time.Millisecond, Max: 8 * time.Second}

// Client talks to one endpoint. It is safe for concurrent use.
type Client struct {
	root, api string
	apiKey    string
	http      *http.Client
	retry     RetryPolicy
	info      time.Duration
}

// New returns a client for cfg. A zero Retry means DefaultRetry; set
// MaxRetries to -1 for none.
func New(cfg Config) *Client {
	base := strings.TrimRight(cfg.BaseURL, "/")
	root, api := base, base+"/v1"
	if strings.HasSuffix(base, "/v1") {
		root, api = strings.TrimSuffix(base, "/v1"), base
	}
	c := &Client{root: root, api: api, apiKey: cfg.APIKey, http: cfg.HTTPClient, retry: cfg.Retry, info: cfg.InfoTimeout}
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

// do runs the request with bounded retries.
func (c *Client) do(ctx context.Context, url string, body []byte, stream bool, timeout time.Duration, p parser) (*Response, error) {
	delay := c.retry.Initial
	for try := 1; ; try++ {
		resp, err := c.once(ctx, url, body, stream, timeout, p)
		if err == nil {
			resp.Tries = try
			return resp, nil
		}
		var me *Error
		if !errors.As(err, &me) {
			return nil, err // the caller's context ended
		}
		me.Tries = try
		if !me.retryable() || try > c.retry.MaxRetries {
			return nil, me
		}
		// Full jitter around the exponential step keeps retries of many
		// attempts from arriving together.
		wait := delay/2 + rand.N(delay/2+1)
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

func (c *Client) once(parent context.Context, url string, body []byte, stream bool, timeout time.Duration, p parser) (*Response, error) {
	ctx, cancel := parent, context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeoutCause(parent, timeout, errRequestTimeout)
	}
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
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
		return nil, transportError(parent, ctx, err, nil)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(hresp.Body, 1<<20))
		return nil, statusError(hresp.StatusCode, data)
	}
	mt, _, _ := mime.ParseMediaType(hresp.Header.Get("Content-Type"))
	var resp *Response
	if mt == "text/event-stream" {
		resp, err = p.stream(hresp.Body, start)
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
		data, err := io.ReadAll(hresp.Body)
		if err != nil {
			return nil, transportError(parent, ctx, err, nil)
		}
		resp, err = p.body(data)
		if err != nil {
			return nil, err
		}
	}
	resp.WallSeconds = time.Since(start).Seconds()
	return resp, nil
}

var errRequestTimeout = errors.New("model request timeout")

// transportError maps a transport failure: the caller's context ending is
// returned as is (not a model error), the request timeout as KindTimeout,
// anything else as a connection problem (or a broken stream when part of a
// response had arrived).
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
	return &Error{Kind: KindConnection, Err: err}
}
