package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
)

// Event kinds of the transcript.
const (
	EventPhaseStart = "phase_start"
	EventRequest    = "request"
	EventResponse   = "response"
	EventModelError = "model_error"
	EventTool       = "tool"
	EventPhaseEnd   = "phase_end"
)

// Event is one line of an attempt's transcript (JSON lines). Every message
// of the conversation appears exactly once: the system prompt in the first
// request, a user prompt in its phase_start, an assistant message in its
// response, a tool result in its tool event. A request refers to the
// conversation by its message count instead of repeating it.
type Event struct {
	Time  time.Time `json:"t"`
	Kind  string    `json:"kind"`
	Phase int       `json:"phase"`
	// Seq numbers the model requests of the attempt from 1.
	Seq int `json:"seq,omitempty"`
	// Message is the user prompt (phase_start).
	Message *model.Message `json:"message,omitempty"`
	// Request fields: the conversation length sent, the output cap asked
	// for, and on the first request what stays fixed for the attempt.
	MessageCount int           `json:"message_count,omitempty"`
	MaxTokens    int           `json:"max_tokens,omitempty"`
	Setup        *RequestSetup `json:"setup,omitempty"`
	// Response is the whole response with timings (response), or what a
	// failed stream delivered before it broke (model_error).
	Response *model.Response `json:"response,omitempty"`
	// Tool is one tool call and its result (tool).
	Tool *ToolEvent `json:"tool,omitempty"`
	// Error describes a failed model call (model_error) or a stop.
	Error     string `json:"error,omitempty"`
	ErrorKind string `json:"error_kind,omitempty"`
	// ErrorClass is the kind's class (model.Class) on a model_error.
	ErrorClass string `json:"error_class,omitempty"`
	// Retries are the failed tries before a model_error (a response
	// lists its own).
	Retries []model.Retry `json:"retries,omitempty"`
	// Turn is the phase's record (phase_end).
	Turn *evalctl.Turn `json:"turn,omitempty"`
}

// RequestSetup is what every request of an attempt shares.
type RequestSetup struct {
	Model        string       `json:"model"`
	Stream       bool         `json:"stream"`
	Params       model.Params `json:"params"`
	Tools        []model.Tool `json:"tools"`
	SystemPrompt string       `json:"system_prompt"`
}

// ToolEvent records one tool call.
type ToolEvent struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Result is exactly what the model was given back.
	Result   string  `json:"result"`
	Error    bool    `json:"error"`
	ExitCode *int    `json:"exit_code,omitempty"`
	TimedOut bool    `json:"timed_out,omitempty"`
	Seconds  float64 `json:"seconds"`
	// Skipped is set when a limit stopped the turn before the call ran.
	Skipped string `json:"skipped,omitempty"`
}

// transcript writes events as JSON lines; the first write error sticks.
// Only the loop's goroutine writes it (a Loop is not for concurrent use).
type transcript struct {
	enc *json.Encoder
	err error
}

func newTranscript(w io.Writer) *transcript {
	if w == nil {
		return &transcript{}
	}
	return &transcript{enc: json.NewEncoder(w)}
}

func (t *transcript) write(e Event) {
	if t.enc == nil {
		return
	}
	if t.err != nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if err := t.enc.Encode(e); err != nil {
		t.err = fmt.Errorf("write transcript: %w", err)
	}
}
