package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Kind classifies a failed model call, for the agent loop to branch on.
type Kind string

// Kinds of model errors.
const (
	// KindContextOverflow: the prompt does not fit the server's context
	// (llama-server's exceed_context_size_error); NPromptTokens and NCtx say
	// by how much when the server told.
	KindContextOverflow Kind = "context_overflow"
	// KindLoading: HTTP 503, the server is still loading its model (or
	// otherwise cannot take the request now).
	KindLoading Kind = "loading"
	// KindBusy: HTTP 429, the server refused the request as too many.
	KindBusy Kind = "busy"
	// KindServer: another 5xx status. llama-server answers 500 also after
	// generating (output its parser rejects) and for a conversation it
	// cannot render (invalid tool-call arguments): the request was taken.
	KindServer Kind = "server_error"
	// KindRequest: a 4xx status other than a context overflow: the request
	// itself is wrong (unknown model, bad field).
	KindRequest Kind = "request_error"
	// KindTimeout: the request timeout (Params.Timeout) passed.
	KindTimeout Kind = "timeout"
	// KindConnection: the request never reached the server: the connection
	// was refused or reset before the request was written, or a reused
	// keep-alive connection gave EOF (or a reset) before any response byte
	// (llama-server closes a connection right after every streamed
	// response although it advertised keep-alive).
	KindConnection Kind = "connection"
	// KindDropped: the request was written on a fresh connection and the
	// connection ended before any response byte: the server had it.
	KindDropped Kind = "dropped"
	// KindBrokenStream: a response broke off mid-way (a stream ended without
	// its end marker, or carried an error after generating tokens); tokens
	// were generated that the accounting cannot see.
	KindBrokenStream Kind = "broken_stream"
	// KindBadResponse: a body that is not the JSON the protocol promises.
	KindBadResponse Kind = "bad_response"
)

// Error is a failed model call.
type Error struct {
	Kind Kind
	// Status is the HTTP status; 0 when none was received.
	Status int
	// Type and Message are the server's error.type and error.message.
	Type    string
	Message string
	// NPromptTokens and NCtx come with a context overflow (nil if absent).
	NPromptTokens *int64
	NCtx          *int64
	// Tries counts the HTTP requests made, retries included.
	Tries int
	// Partial is what a broken or timed-out stream delivered before it
	// stopped (no timings: the server never sent them); nil otherwise.
	Partial *Response
	// RetryAfter is the server's Retry-After (429, 503); 0 when absent.
	RetryAfter time.Duration
	// Retries lists the failed tries before this one, oldest first.
	Retries []Retry
	// Err is the underlying transport error, if any.
	Err error
	// stale marks a request lost on a reused keep-alive connection the
	// server had closed: retried at once.
	stale bool
}

// Retry is one failed try that was retried, as the transcript records it.
type Retry struct {
	At          time.Time `json:"at"`
	Kind        Kind      `json:"kind"`
	Status      int       `json:"status,omitempty"`
	Message     string    `json:"message"`
	WaitSeconds float64   `json:"wait_seconds"`
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %s", e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.NPromptTokens != nil && e.NCtx != nil {
		fmt.Fprintf(&b, " [n_prompt_tokens=%d n_ctx=%d]", *e.NPromptTokens, *e.NCtx)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Tries > 1 {
		fmt.Fprintf(&b, " (after %d tries)", e.Tries)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// IsKind reports whether err is a model *Error of kind k.
func IsKind(err error, k Kind) bool {
	var me *Error
	return errors.As(err, &me) && me.Kind == k
}

// Class is what a failed model call means for the attempt: the one
// classification rule of evalctl (docs/failures.md). Every Kind
// has exactly one Class; nothing else decides whether a failure is
// retried, scored or set aside.
type Class string

// Classes of failed model calls.
const (
	// ClassUnavailable: nothing was delivered to the server (refused,
	// reset before the request was sent, EOF on a reused idle connection
	// before any response byte) or the server said it could not take it
	// (429, 503). Retried with backoff, Retry-After honoured, within the
	// retry budget; when that is spent the attempt is an infrastructure
	// failure: unscored and replaceable.
	ClassUnavailable Class = "unavailable"
	// ClassServerFailed: the request was delivered and the response failed
	// (a 5xx after acceptance, a broken or truncated stream, a timeout, a
	// body that is not the protocol). Never retried: the server may have
	// generated, and under a fixed seed it would fail the same way again.
	// The turn ends as server_error, the attempt is scored, and its token
	// count is unknown unless recovered from the server's counters.
	ClassServerFailed Class = "server_failed"
	// ClassArm: the arm's own doing (a context overflow, another 4xx).
	// Deterministic: the turn ends as model_error and the attempt is scored.
	ClassArm Class = "arm"
)

// Class classifies the kind; an unknown kind (an old record) counts as a
// failed server response, the class that never discards an attempt.
func (k Kind) Class() Class {
	switch k {
	case KindConnection, KindLoading, KindBusy:
		return ClassUnavailable
	case KindContextOverflow, KindRequest:
		return ClassArm
	}
	return ClassServerFailed
}

// Class is the class of the error's kind.
func (e *Error) Class() Class { return e.Kind.Class() }

// ClassOf is the class of a model call's error: nil for no error or one
// that is not a model *Error (the caller's context ended).
func ClassOf(err error) Class {
	var me *Error
	if errors.As(err, &me) {
		return me.Class()
	}
	return ""
}

// retryable: only what never reached the server is retried, so that a
// retry can never hide generated tokens from the accounting.
func (e *Error) retryable() bool { return e.Class() == ClassUnavailable }

// wireError is the error body of llama-server and OpenAI-compatible APIs.
type wireError struct {
	Code          any    `json:"code"`
	Message       string `json:"message"`
	Type          string `json:"type"`
	NPromptTokens *int64 `json:"n_prompt_tokens"`
	NCtx          *int64 `json:"n_ctx"`
}

// statusError classifies a non-200 answer from its status, headers and body.
func statusError(status int, header http.Header, body []byte) *Error {
	e := &Error{Status: status, RetryAfter: retryAfter(header.Get("Retry-After"), time.Now())}
	var env struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		e.Type, e.Message = env.Error.Type, env.Error.Message
		e.NPromptTokens, e.NCtx = env.Error.NPromptTokens, env.Error.NCtx
	} else {
		e.Message = strings.TrimSpace(string(truncate(body, 512)))
	}
	e.Kind = classify(status, e.Type, e.Message)
	return e
}

func classify(status int, typ, msg string) Kind {
	lower := strings.ToLower(msg)
	switch {
	case typ == "exceed_context_size_error",
		strings.Contains(lower, "exceeds the available context size"),
		strings.Contains(lower, "maximum context length"),
		strings.Contains(lower, "context length exceeded"):
		return KindContextOverflow
	case status == http.StatusServiceUnavailable:
		return KindLoading
	case status == http.StatusTooManyRequests:
		return KindBusy
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return KindTimeout
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindRequest
	}
	return KindServer
}

// retryAfter reads a Retry-After header: delay seconds or an HTTP date;
// 0 when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(min(n, 86400)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
