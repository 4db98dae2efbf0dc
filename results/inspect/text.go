package inspect

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/transcript"
)

// TextOptions shape the terminal rendering.
type TextOptions struct {
	// Reasoning shows the model's reasoning; folded (its size only) when
	// false.
	Reasoning bool
	// MaxBytes cuts each long text (prompt, tool result, test output) to
	// this many bytes, saying its true size; 0 means 2000, negative never
	// cuts.
	MaxBytes int
}

// WriteText prints an attempt for a terminal: header, the conversation turn
// by turn, the grades per phase and group, and the diff.
func WriteText(w io.Writer, d *Detail, o TextOptions) error {
	if o.MaxBytes == 0 {
		o.MaxBytes = 2000
	}
	p := &printer{w: w, o: o}
	a := d.Attempt
	name := d.Run.Name
	if name == "" {
		name = "-"
	}
	p.f("attempt %s\n", a.ID)
	p.f("  run      %s (%s, %s)\n", name, d.Run.ID, d.RunDir)
	p.f("  arm      %s  (hash %.12s)\n", a.Arm, a.ArmHash)
	p.f("  case     %s (%s), %s, seed %d, slot %d\n", a.Case, a.Language, a.Repeat, a.Seed, a.Slot)
	p.f("  state    %s", a.State)
	if a.ReplacementOf != "" {
		p.f(", replaces %s", a.ReplacementOf)
	}
	p.f("\n")
	if a.Error != "" {
		p.f("  error    %s\n", a.Error)
	}
	if a.StartedAt != nil {
		p.f("  started  %s", a.StartedAt.UTC().Format("2006-01-02 15:04:05Z"))
		if a.FinishedAt != nil {
			p.f(", finished %s (%.1f s)", a.FinishedAt.UTC().Format("15:04:05Z"), a.FinishedAt.Sub(*a.StartedAt).Seconds())
		}
		p.f("\n")
	}
	if e := a.Endpoint; e != nil {
		p.f("  endpoint %s model %s", e.BaseURL, e.Model)
		if e.BuildInfo != nil {
			p.f(", build %s", *e.BuildInfo)
		}
		if e.ContextSize != nil {
			p.f(", context %d", *e.ContextSize)
		}
		p.f("\n")
	}
	if a.Server != "" {
		p.f("  server   %s\n", a.Server)
	}
	if m := a.Measurements; m != nil {
		p.f("  measured %s output tokens, %s decode s (%s tok/s), %.1f task s, %d responses, %d tool calls (%d errors), timings %s\n",
			i64(m.NativeOutputTokens), f64(m.DecodeSeconds, 2), rate(m.NativeOutputTokens, m.DecodeSeconds), m.TaskSeconds,
			m.Responses, m.ToolCalls, m.ToolErrors, m.TimingsSource)
	}
	for _, so := range d.Outcomes {
		switch {
		case so.Outcome != nil:
			p.f("  outcome  under %s: functional %v, delivered %v\n", so.Suite, so.Outcome.Functional, so.Outcome.Delivered)
		case so.Ungraded:
			p.f("  outcome  under %s: ungraded (a phase has no grade)\n", so.Suite)
		default:
			p.f("  outcome  under %s: unscored\n", so.Suite)
		}
	}

	p.conversation(d)
	for _, sg := range d.Grades {
		p.grades(sg)
	}
	p.f("\n== diff of the answer against the starter\n")
	if d.DiffNote != "" {
		p.f("(%s)\n", d.DiffNote)
	} else if len(d.Diff) == 0 {
		p.f("(no change)\n")
	}
	for _, fd := range d.Diff {
		if fd.Binary {
			p.f("%s %s (binary)\n", fd.Status, fd.Path)
			continue
		}
		p.f("%s", fd.Unified)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	o   TextOptions
	err error
}

func (p *printer) f(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

// block prints text indented, cut to MaxBytes with its true size.
func (p *printer) block(indent, text string) {
	text = strings.TrimRight(text, "\n")
	cut := ""
	if p.o.MaxBytes > 0 && len(text) > p.o.MaxBytes {
		n := p.o.MaxBytes
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		cut = fmt.Sprintf("[... cut: %d bytes in all, the first %d shown]", len(text), n)
		text = text[:n]
	}
	for _, l := range strings.Split(text, "\n") {
		p.f("%s%s\n", indent, l)
	}
	if cut != "" {
		p.f("%s%s\n", indent, cut)
	}
}

func (p *printer) conversation(d *Detail) {
	phase := 0
	for _, e := range d.Transcript {
		if e.Phase != phase && e.Phase != 0 {
			phase = e.Phase
			p.f("\n== phase %d\n", phase)
		}
		switch e.Kind {
		case transcript.EventPhaseStart:
			if e.Message != nil {
				p.f("[user]\n")
				p.block("  ", e.Message.Content)
			}
		case transcript.EventRequest:
			p.f("[request %d] %d messages, max_tokens %d", e.Seq, e.MessageCount, e.MaxTokens)
			if s := e.Setup; s != nil {
				p.f(", model %s, stream %v, %d tools", s.Model, s.Stream, len(s.Tools))
			}
			p.f("\n")
		case transcript.EventResponse:
			p.response(e)
		case transcript.EventModelError:
			p.f("[model error %d] %s: %s\n", e.Seq, e.ErrorKind, e.Error)
		case transcript.EventTool:
			t := e.Tool
			if t == nil {
				continue
			}
			p.f("[tool %s] %s", t.ID, t.Name)
			switch {
			case t.Skipped != "":
				p.f(" skipped: %s\n", t.Skipped)
				continue
			case t.TimedOut:
				p.f(" timed out")
			case t.ExitCode != nil:
				p.f(" exit %d", *t.ExitCode)
			}
			if t.Error {
				p.f(" (error)")
			}
			p.f(", %.2f s, result %d bytes\n", t.Seconds, len(t.Result))
			p.block("  ", t.Result)
		case transcript.EventPhaseEnd:
			if t := e.Turn; t != nil {
				p.f("[end of phase %d] %s after %.1f s, %d responses, agent finished %v, final text %v, last test %s",
					t.Phase, t.Termination, t.Seconds, t.Responses, t.AgentFinished, t.FinalText, selfCheck(t.LastTest))
				if t.LastTypecheck != nil {
					p.f(", last typecheck %s", selfCheck(t.LastTypecheck))
				}
				p.f("\n")
				if t.Error != "" {
					p.f("  error: %s\n", t.Error)
				}
			}
		}
	}
	if d.TornLines > 0 {
		p.f("(%d torn transcript line(s) left out)\n", d.TornLines)
	}
	if len(d.Transcript) == 0 {
		p.f("\n(no transcript)\n")
	}
}

func (p *printer) response(e transcript.Event) {
	r := e.Response
	if r == nil {
		return
	}
	p.f("[response %d] finish %s", e.Seq, orDash(r.FinishReason))
	var tokens *int64
	if n, ok := r.OutputTokens(); ok {
		tokens = &n
	}
	var decode *float64
	if t := r.Timings; t != nil && t.PredictedMS != nil {
		s := *t.PredictedMS / 1000
		decode = &s
	}
	p.f(", %s tokens in %s s decode (%s tok/s)", i64(tokens), f64(decode, 3), rate(tokens, decode))
	if t := r.Timings; t != nil && t.PromptN != nil {
		p.f(", prompt %d", *t.PromptN)
		if t.CacheN != nil {
			p.f(" (+%d cached)", *t.CacheN)
		}
		if t.PromptMS != nil {
			p.f(" in %.3f s", *t.PromptMS/1000)
		}
	}
	if t := r.Timings; t != nil && t.DraftN != nil && t.DraftNAccepted != nil {
		p.f(", draft %d/%d accepted", *t.DraftNAccepted, *t.DraftN)
	}
	p.f(", wall %.2f s\n", r.WallSeconds)
	if r.ReasoningContent != "" {
		if p.o.Reasoning {
			p.f("  reasoning:\n")
			p.block("    ", r.ReasoningContent)
		} else {
			p.f("  reasoning: %d bytes folded (--reasoning shows it)\n", len(r.ReasoningContent))
		}
	}
	if r.Content != "" {
		p.block("  ", r.Content)
	}
	for _, c := range r.ToolCalls {
		p.f("  -> %s %s(%s)\n", c.ID, c.Name, cutLine(c.Arguments, 300))
	}
}

func (p *printer) grades(sg SuiteGrades) {
	for i, g := range sg.Phases {
		if g == nil {
			p.f("\n== grade under %s, phase %d: none\n", sg.Suite, i+1)
			continue
		}
		p.f("\n== grade under %s, phase %d: solved %v", sg.Suite, g.Phase, g.Solved)
		p.f(" (protected changes %d, missing starter files %d)\n", g.ProtectedChangesCount, g.MissingStarterFilesCount)
		for _, f := range g.ProtectedChanges {
			p.f("  protected change: %s\n", f)
		}
		for _, f := range g.MissingStarterFiles {
			p.f("  missing starter file: %s\n", f)
		}
		groups := append([]evalctl.GroupResult(nil), g.Groups...)
		sort.SliceStable(groups, func(i, j int) bool { return groups[i].Required && !groups[j].Required })
		for _, gr := range groups {
			verdict := "ok"
			if !gr.Success {
				verdict = "FAILED"
			}
			req := ""
			if !gr.Required {
				req = " (not required)"
			}
			p.f("  %-20s %-6s %d/%d passed, %d failed, exit %d%s", gr.Name, verdict, gr.Passed, gr.Total, gr.Failed, gr.ExitCode, req)
			if gr.TimedOut {
				p.f(", timed out")
			}
			p.f("\n")
			for _, t := range gr.FailedTests {
				p.f("    failed: %s\n", t)
			}
			if !gr.Success && gr.Output != "" {
				p.block("    | ", gr.Output)
			}
		}
	}
}

func selfCheck(c *evalctl.SelfCheck) string {
	if c == nil {
		return "none"
	}
	v := "passed"
	if !c.Passed {
		v = fmt.Sprintf("failed (exit %d)", c.ExitCode)
	}
	return fmt.Sprintf("%q %s", c.Command, v)
}

func cutLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "\\n")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s... [%d bytes]", s[:n], len(s))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func i64(p *int64) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}

func f64(p *float64, prec int) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.*f", prec, *p)
}

func rate(n *int64, s *float64) string {
	if n == nil || s == nil || *s <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f", float64(*n)/(*s))
}
