// Package agent is the tool-calling loop of one attempt: the model works in
// the attempt's sandbox through a handful of tools, phase after phase of one
// conversation, under the attempt's budgets, while every response's server
// figures are summed exactly as reported. Nothing a model or a command does
// crashes an attempt: a bad tool call is a tool error shown to the model, a
// failing server or sandbox ends the turn with its termination class.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/transcript"
	"github.com/evalctl/evalctl/sandbox"
)

// Sandbox runs commands in the attempt's container; *sandbox.Container
// satisfies it. An error means the sandbox itself failed, not the command.
type Sandbox interface {
	Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error)
}

// Model answers chat requests; *model.Client satisfies it.
type Model interface {
	Chat(ctx context.Context, req model.Request) (*model.Response, error)
}

// Budgets bound one attempt (all its phases together). Zero means no limit.
type Budgets struct {
	// WallTime bounds the time spent in turns (model, tools, the loop),
	// not the caller's work between phases.
	WallTime time.Duration
	// GeneratedTokens bounds the tokens the server reports as generated.
	GeneratedTokens int64
	// ToolCalls bounds the tool calls, malformed ones included.
	ToolCalls int
}

// DefaultSystemPrompt tells the model where it is and how to hand over.
const DefaultSystemPrompt = `You are a careful software engineer working in a sandboxed project directory (the workspace, your current directory). Use the tools to look at the code, change it, and run its tests. The machine has no network access. Do not change the project's tests, contracts or configuration unless you are asked to. When the work is done, answer without calling a tool: that answer is your hand-over, so summarise what you changed and how you checked it.`

// Config sets up a loop.
type Config struct {
	Model     Model
	ModelName string
	// Params are the arm's generation settings; Params.MaxTokens is the
	// per-response output cap.
	Params model.Params
	// NoStream asks for whole responses instead of server-sent events
	// (then there is no time to first token).
	NoStream bool
	Sandbox  Sandbox
	// Workdir is where commands run (default /workspace).
	Workdir string
	Budgets Budgets
	// CommandTimeout is a bash command's default timeout (120 s).
	CommandTimeout time.Duration
	// MaxToolOutput caps one tool result given to the model (32 KiB).
	MaxToolOutput int
	SystemPrompt  string
	// Transcript receives the JSON-lines transcript; nil writes none.
	Transcript io.Writer
	// ColdStart sends the loop's first request with cache_prompt false:
	// the server reuses nothing of earlier attempts' prompts.
	ColdStart bool
}

// Loop is one attempt's conversation. It is not safe for concurrent use.
type Loop struct {
	cfg   Config
	msgs  []model.Message
	tr    *transcript.Writer
	seq   int
	setup bool

	// The wall-time and generated-token budgets are read from the meter
	// (taskSeconds, spent); tool calls are counted here because
	// the meter counts only those that ran to a result.
	usedCalls int
	meter     meter
	lastCheck [2]*evalctl.SelfCheck // last test, last typecheck of the turn
	// tools are the definitions sent, stating the real command timeouts.
	tools []model.Tool
}

// New checks cfg and starts a conversation with the system prompt.
func New(cfg Config) (*Loop, error) {
	if cfg.Model == nil || cfg.Sandbox == nil {
		return nil, errors.New("agent: a model and a sandbox are required")
	}
	if cfg.ModelName == "" {
		return nil, errors.New("agent: the model name is required")
	}
	if cfg.Workdir == "" {
		cfg.Workdir = "/workspace"
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = DefaultCommandTimeout
	}
	if cfg.MaxToolOutput <= 0 {
		cfg.MaxToolOutput = DefaultToolOutput
	}
	if cfg.SystemPrompt == "" {
		cfg.SystemPrompt = DefaultSystemPrompt
	}
	l := &Loop{cfg: cfg, tr: transcript.NewWriter(cfg.Transcript), tools: Tools(cfg.CommandTimeout)}
	l.msgs = []model.Message{{Role: model.RoleSystem, Content: cfg.SystemPrompt}}
	l.meter.init()
	return l, nil
}

// Messages is the conversation so far (shared; do not modify).
func (l *Loop) Messages() []model.Message { return l.msgs }

// Measurements are the attempt's sums so far.
func (l *Loop) Measurements() *evalctl.Measurements { return l.meter.result() }

var errWallTime = errors.New("attempt wall-time budget exhausted")

// RunPhase sends prompt as the next user message and runs the loop until the
// model hands over (answers without tool calls) or something stops the
// turn. The returned Turn is complete in every case. The error is non-nil
// only when the attempt itself cannot go on: ctx ended (the attempt is
// interrupted; the Turn is partial) or the transcript could not be written.
func (l *Loop) RunPhase(ctx context.Context, phase int, prompt string) (evalctl.Turn, error) {
	start := time.Now()
	turn := evalctl.Turn{Phase: phase, ToolCalls: map[string]int{}, FinishReasons: []string{}}
	wctx := ctx
	if l.cfg.Budgets.WallTime > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadlineCause(ctx, start.Add(l.cfg.Budgets.WallTime-l.meter.usedWall()), errWallTime)
		defer cancel()
	}
	user := model.Message{Role: model.RoleUser, Content: prompt}
	l.msgs = append(l.msgs, user)
	l.tr.Write(transcript.Event{Kind: transcript.EventPhaseStart, Phase: phase, Message: &user})

	err := l.turn(ctx, wctx, &turn)

	// Self-checks are per turn: each hand-over is judged by the checks the
	// agent ran in that phase (a phase that ran none has null).
	turn.LastTest, turn.LastTypecheck = l.lastCheck[0], l.lastCheck[1]
	l.lastCheck = [2]*evalctl.SelfCheck{}
	elapsed := time.Since(start)
	turn.Seconds = elapsed.Seconds()
	l.meter.taskSeconds += turn.Seconds
	l.tr.Write(transcript.Event{Kind: transcript.EventPhaseEnd, Phase: phase, Turn: &turn})
	if err == nil {
		err = l.tr.Err()
	}
	return turn, err
}

// stop ends a turn with a termination class.
func stop(turn *evalctl.Turn, t evalctl.Termination, format string, a ...any) {
	turn.Termination = t
	if format != "" {
		turn.Error = fmt.Sprintf(format, a...)
	}
}

// turn runs one phase's conversation: request, response, the calls it
// asks for, until the model ends the turn or a budget or the context does.
func (l *Loop) turn(ctx, wctx context.Context, turn *evalctl.Turn) error {
	b := l.cfg.Budgets
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		params, ok := l.nextParams(wctx, turn)
		if !ok {
			return nil
		}
		resp, ok := l.respond(ctx, wctx, turn, params)
		if !ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil
		}
		budgetHit := b.GeneratedTokens > 0 && l.meter.spent >= b.GeneratedTokens
		// A response its cap ended inside a tool call holds no usable
		// step: the call is cut (its arguments are invalid JSON, or
		// complete only by chance) and is never executed, nor sent back
		// (llama-server would reject every later request). The transcript
		// keeps it as it came.
		cutCall := resp.FinishReason == model.FinishLength && len(resp.ToolCalls) > 0
		msg := conversationMessage(resp, cutCall)
		l.msgs = append(l.msgs, msg)
		l.tr.Write(transcript.Event{Kind: transcript.EventResponse, Phase: turn.Phase, Seq: l.seq, Response: resp})

		if len(resp.ToolCalls) == 0 || cutCall {
			l.endTurn(turn, resp, params, cutCall, budgetHit)
			return nil
		}
		turn.FinalText = false
		for i, tc := range resp.ToolCalls {
			l.call(ctx, wctx, turn, i, tc, budgetHit)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if turn.Termination != "" {
			return nil
		}
	}
}

// nextParams returns the settings of the next request, its token cap
// lowered to what the generated-token budget has left; false (the turn
// stopped) when the wall time or that budget is spent.
func (l *Loop) nextParams(wctx context.Context, turn *evalctl.Turn) (model.Params, bool) {
	b := l.cfg.Budgets
	params := l.cfg.Params
	if wctx.Err() != nil {
		stop(turn, evalctl.TermWallTimeLimit, "wall-time budget of %s exhausted", b.WallTime)
		return params, false
	}
	if b.GeneratedTokens > 0 {
		left := b.GeneratedTokens - l.meter.spent
		if left <= 0 {
			stop(turn, evalctl.TermGeneratedTokenLimit, "generated-token budget of %d exhausted", b.GeneratedTokens)
			return params, false
		}
		// The last response may only generate what the budget has
		// left, so the budget stops within one response.
		if params.MaxTokens <= 0 || int64(params.MaxTokens) > left {
			params.MaxTokens = int(left)
		}
	}
	return params, true
}

// respond records the request (its setup the first time) and sends it;
// the response is counted and metered and each of its calls has an id.
// False when the model call failed (the turn is then classified by
// modelFailed).
func (l *Loop) respond(ctx, wctx context.Context, turn *evalctl.Turn, params model.Params) (*model.Response, bool) {
	l.seq++
	ev := transcript.Event{Kind: transcript.EventRequest, Phase: turn.Phase, Seq: l.seq, MessageCount: len(l.msgs), MaxTokens: params.MaxTokens}
	if !l.setup {
		l.setup = true
		ev.Setup = &transcript.RequestSetup{Model: l.cfg.ModelName, Stream: !l.cfg.NoStream, Params: l.cfg.Params, Tools: l.tools, SystemPrompt: l.cfg.SystemPrompt}
	}
	l.tr.Write(ev)
	req := model.Request{Model: l.cfg.ModelName, Messages: l.msgs, Tools: l.tools, ToolChoice: "auto", Params: params, Stream: !l.cfg.NoStream}
	if l.cfg.ColdStart && l.seq == 1 {
		cold := false
		req.CachePrompt = &cold
	}
	resp, err := l.cfg.Model.Chat(wctx, req)
	if err != nil {
		l.modelFailed(ctx, wctx, turn, err)
		return nil, false
	}
	turn.Responses++
	turn.FinishReasons = append(turn.FinishReasons, resp.FinishReason)
	// The meter sums every reported output token count; the budget
	// also counts what some response reported implausibly (its total
	// is then unknown, but what is known still counts against the
	// budget).
	l.meter.add(resp)
	// A call without an id (some servers omit it) gets one, so that its
	// answer can refer to it.
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].ID == "" {
			resp.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", l.seq, i)
		}
	}
	return resp, true
}

// endTurn classifies a response with no call to run: the model finished,
// or the response was cut (by the token budget, the size cap or its
// output cap) without a usable step.
func (l *Loop) endTurn(turn *evalctl.Turn, resp *model.Response, params model.Params, cutCall, budgetHit bool) {
	b := l.cfg.Budgets
	switch {
	case resp.FinishReason == model.FinishLength && budgetHit:
		stop(turn, evalctl.TermGeneratedTokenLimit, "generated-token budget of %d exhausted", b.GeneratedTokens)
	case resp.Cut != nil:
		stop(turn, evalctl.TermOutputTruncated, "a response was cut at the size cap: %s", resp.Cut.Reason)
	case cutCall:
		stop(turn, evalctl.TermOutputTruncated, "%s inside a tool call (%s); the call was not run", lengthCause(resp, params.MaxTokens), resp.ToolCalls[len(resp.ToolCalls)-1].Name)
	case resp.FinishReason == model.FinishLength:
		stop(turn, evalctl.TermOutputTruncated, "%s without a usable step", lengthCause(resp, params.MaxTokens))
	default:
		turn.Termination = evalctl.TermCompleted
		turn.AgentFinished = true
		turn.FinalText = strings.TrimSpace(resp.Content) != ""
	}
}

// skipReason says why call tc is not run ("" to run it), stopping the
// turn when the reason is a budget spent.
func (l *Loop) skipReason(ctx, wctx context.Context, turn *evalctl.Turn, budgetHit bool) string {
	b := l.cfg.Budgets
	switch {
	case ctx.Err() != nil:
		return "the attempt was interrupted"
	case budgetHit:
		stop(turn, evalctl.TermGeneratedTokenLimit, "generated-token budget of %d exhausted", b.GeneratedTokens)
		return "the generated-token budget is exhausted"
	case wctx.Err() != nil:
		stop(turn, evalctl.TermWallTimeLimit, "wall-time budget of %s exhausted", b.WallTime)
		return "the wall-time budget is exhausted"
	case b.ToolCalls > 0 && l.usedCalls >= b.ToolCalls:
		stop(turn, evalctl.TermToolCallLimit, "tool-call budget of %d exhausted", b.ToolCalls)
		return "the tool-call budget is exhausted"
	case turn.Termination != "":
		return "the turn was stopped"
	}
	return ""
}

// call runs the i-th call tc of a response (or says why not) and
// answers it: every call gets an answer, so the conversation stays valid
// for a later phase. A sandbox failure or the wall time running out
// inside the command stops the turn.
func (l *Loop) call(ctx, wctx context.Context, turn *evalctl.Turn, i int, tc model.ToolCall, budgetHit bool) {
	b := l.cfg.Budgets
	if skip := l.skipReason(ctx, wctx, turn, budgetHit); skip != "" {
		l.answer(turn, tc, &toolResult{content: "not run: " + skip}, skip)
		return
	}
	l.usedCalls++
	turn.ToolCalls[tc.Name]++
	res, err := l.runTool(wctx, tc)
	if err != nil {
		var se *errSandbox
		switch {
		case ctx.Err() != nil:
			l.answer(turn, tc, &toolResult{content: "not run: the attempt was interrupted"}, "interrupted")
		case errors.As(err, &se):
			stop(turn, evalctl.TermSandboxError, "tool %s (call %d of the response): %v", tc.Name, i+1, err)
			l.answer(turn, tc, &toolResult{content: "error: the sandbox failed: " + se.err.Error(), failed: true}, "")
		default: // the wall time ran out inside the command
			stop(turn, evalctl.TermWallTimeLimit, "wall-time budget of %s ran out during tool %s", b.WallTime, tc.Name)
			l.answer(turn, tc, &toolResult{content: "error: stopped: the wall-time budget is exhausted", failed: true}, "")
		}
		return
	}
	if res.failed {
		turn.ToolErrors++
		l.meter.toolErrors++
	}
	l.meter.toolCalls++
	if tc.Name == ToolBash && res.exec != nil {
		l.selfCheck(res)
	}
	l.answer(turn, tc, res, "")
}

// modelFailed ends the turn on a failed model call by the one
// classification rule (model.Class): what never reached the server ends as
// model_error of an unavailable kind (the runner sets the attempt aside as
// an infrastructure failure); a response the server failed after taking
// the request ends as server_error, scored, its tokens unknown; the arm's
// own doing ends as model_error, scored. A response the wall-time budget
// cut has unknown tokens too.
func (l *Loop) modelFailed(ctx, wctx context.Context, turn *evalctl.Turn, err error) {
	b := l.cfg.Budgets
	ev := transcript.Event{Kind: transcript.EventModelError, Phase: turn.Phase, Seq: l.seq, Error: err.Error()}
	var me *model.Error
	if errors.As(err, &me) {
		ev.ErrorKind, ev.ErrorClass = string(me.Kind), string(me.Class())
		ev.Retries, ev.Response = me.Retries, me.Partial
	}
	l.tr.Write(ev)
	switch {
	case ctx.Err() != nil:
	case errors.Is(context.Cause(wctx), errWallTime):
		l.meter.unknown()
		stop(turn, evalctl.TermWallTimeLimit, "wall-time budget of %s ran out during a model response (its tokens are unknown)", b.WallTime)
	case me == nil:
		// Not a model error and not a context: cannot happen with
		// model.Client; treat it as the server's failure.
		l.meter.unknown()
		stop(turn, evalctl.TermServerError, "%v", err)
	case me.Class() == model.ClassServerFailed:
		l.meter.unknown()
		stop(turn, evalctl.TermServerError, "%v", err)
		turn.ModelErrorKind = string(me.Kind)
	default: // ClassUnavailable, ClassArm
		stop(turn, evalctl.TermModelError, "%v", err)
		turn.ModelErrorKind = string(me.Kind)
	}
}

// conversationMessage is the assistant message as the conversation sent to
// the server carries it: without the calls of a cut response, and with
// arguments that are not valid JSON replaced by {} (the call still gets
// its tool error; llama-server rejects a conversation holding invalid
// tool-call JSON with a 500 on every later request).
func conversationMessage(resp *model.Response, dropCalls bool) model.Message {
	msg := resp.Message()
	if dropCalls {
		msg.ToolCalls = nil
		return msg
	}
	calls := make([]model.ToolCall, len(msg.ToolCalls))
	copy(calls, msg.ToolCalls)
	for i := range calls {
		if a := calls[i].Arguments; a != "" && !json.Valid([]byte(a)) {
			calls[i].Arguments = "{}"
		}
	}
	msg.ToolCalls = calls
	return msg
}

// answer appends the tool message for a call and records it.
func (l *Loop) answer(turn *evalctl.Turn, tc model.ToolCall, res *toolResult, skipped string) {
	content := res.content
	if content == "" {
		content = "(no output)"
	}
	l.msgs = append(l.msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: content})
	te := &transcript.ToolEvent{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Result: content, Error: res.failed, Seconds: res.execTime.Seconds(), Skipped: skipped}
	if res.exec != nil {
		code := res.exec.ExitCode
		te.ExitCode, te.TimedOut = &code, res.exec.TimedOut
	}
	l.tr.Write(transcript.Event{Kind: transcript.EventTool, Phase: turn.Phase, Seq: l.seq, Tool: te})
}

// selfCheck records a bash command that ran tests or a type check.
func (l *Loop) selfCheck(res *toolResult) {
	test, tsc := classifyCommand(res.command)
	sc := &evalctl.SelfCheck{Command: res.command, ExitCode: res.exec.ExitCode, Passed: res.exec.ExitCode == 0 && !res.exec.TimedOut}
	if test {
		l.lastCheck[0] = sc
	}
	if tsc {
		l.lastCheck[1] = sc
	}
}

// lengthCause names why a response ended with finish_reason length: its
// output cap, or, when it generated fewer tokens than the cap (or there
// was none), the context filling up.
func lengthCause(resp *model.Response, maxTokens int) string {
	n, ok := resp.OutputTokens()
	switch {
	case !ok && maxTokens > 0:
		return fmt.Sprintf("a response stopped at its length limit (output cap %d tokens or the context, the server did not say how many it generated)", maxTokens)
	case !ok:
		return "a response stopped at its length limit (the context full, or the server's default cap)"
	case maxTokens > 0 && n >= int64(maxTokens):
		return fmt.Sprintf("a response hit its output cap of %d tokens", maxTokens)
	case maxTokens > 0:
		return fmt.Sprintf("the context filled after %d generated tokens (the output cap of %d was not reached)", n, maxTokens)
	}
	return fmt.Sprintf("the context filled after %d generated tokens (no output cap set)", n)
}
