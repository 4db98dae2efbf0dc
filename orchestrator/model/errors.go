package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
)

// Kind classifies a failed model call, for the agent loop to branch on.
type Kind string

// Kinds of model errors.
const (
	// KindContextOverflow: the prompt does not fit the server's context
	// (llama-server's exceed_context_size_error); NPromptTokens and NCtx say
	// by how much when the server told.
	KindContextOverflow Kind = "context_overflow"
	// KindLoading: HTTP 503, the server is still loading its model.
	KindLoading Kind = "loading"
	// KindServer: another 5xx status.
	KindServer Kind = "server_error"
	// KindRequest: a 4xx status other than a context overflow: the request
	// itself is wrong (unknown model, bad field).
	KindRequest Kind = "request_error"
	// KindTimeout: the request timeout (Params.Timeout) passed.
	KindTimeout Kind = "timeout"
	// KindConnection: the server could not be reached (connection refused,
	// unknown host) or dropped the connection before answering.
	KindConnection Kind = "connection"
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
	// Err is the underlying transport error, if any.
	Err error
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

// retryable says whether repeating the request cannot lose generated tokens
// from the accounting: the server never got it (connection refused), was
// still loading (503), or failed with a 5xx before generating (llama-server
// answers 5xx only before a response starts). A timeout, a dropped
// connection or a broken stream may have generated tokens: never retried.
func (e *Error) retryable() bool {
	switch e.Kind {
	case KindLoading, KindServer:
		return true
	case KindConnection:
		return errors.Is(e.Err, syscall.ECONNREFUSED)
	}
	return false
}

// wireError is the error body of llama-server and OpenAI-compatible APIs.
type wireError struct {
	Code          any    `json:"code"`
	Message       string `json:"message"`
	Type          string `json:"type"`
	NPromptTokens *int64 `json:"n_prompt_tokens"`
	NCtx          *int64 `json:"n_ctx"`
}

// statusError classifies a non-200 answer from its status and body.
func statusError(status int, body []byte) *Error {
	e := &Error{Status: status}
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
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return KindTimeout
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindRequest
	}
	return KindServer
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
