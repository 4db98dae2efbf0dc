package orchestrator

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/evalctl/evalctl"
)

// lockedBuffer is a bytes.Buffer safe for the live display's ticker
// goroutine and the test reading it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func attemptFor(id, arm, cs, repeat string) *evalctl.Attempt {
	return &evalctl.Attempt{ID: id, Arm: arm, Case: cs, Repeat: repeat, State: evalctl.Running}
}

// ended is a copy of a in its final state.
func ended(a *evalctl.Attempt, state evalctl.State, errText string, m *evalctl.Measurements) *evalctl.Attempt {
	c := *a
	c.State, c.Error, c.Measurements = state, errText, m
	return &c
}

// progressStep is one call on a progress display.
type progressStep struct {
	begin *evalctl.Attempt // begin(begin) when set, else end(end, outcome)
	end   *evalctl.Attempt
	out   *evalctl.Outcome
}

func (s progressStep) apply(p *progress) {
	if s.begin != nil {
		p.begin(s.begin)
	} else {
		p.end(s.end, s.out)
	}
}

var stampRE = regexp.MustCompile(`^\d\d:\d\d:\d\d `)

// TestProgressLogLines drives the plain (not live) display. What must hold:
// every begin and every end writes exactly one newline-terminated line, a
// clock stamp followed by "start" or the attempt's state, the [i/total]
// counter (the next slot when starting; attempts done, completed and
// infra-failed ones, after an end, counting from where a resumed run
// started), arm, case and repeat, and on an end the verdict (functional and
// delivered, or unscored) and any error; start and finish write nothing,
// and there are no carriage returns or escape sequences.
func TestProgressLogLines(t *testing.T) {
	a1 := attemptFor("1", "base", "adder", "repeat-1")
	a2 := attemptFor("2", "mtp4", "ledger", "repeat-2")
	tests := []struct {
		name  string
		total int
		done  int // attempts done before the run (resume)
		steps []progressStep
		want  []string // the lines without their clock stamps
	}{
		{name: "completed and scored", total: 3,
			steps: []progressStep{
				{begin: a1},
				{end: ended(a1, evalctl.Completed, "", &evalctl.Measurements{NativeOutputTokens: ptrTo(int64(10)), DecodeSeconds: ptrTo(float64(1))}),
					out: &evalctl.Outcome{Functional: true, Delivered: false}},
			},
			want: []string{
				"start  [1/3] base adder repeat-1",
				"completed [1/3] base adder repeat-1: functional=true delivered=false",
			}},
		{name: "resumed run counts on from what was done", total: 6, done: 4,
			steps: []progressStep{
				{begin: a2},
				{end: ended(a2, evalctl.Completed, "", nil), out: &evalctl.Outcome{Functional: true, Delivered: true}},
			},
			want: []string{
				"start  [5/6] mtp4 ledger repeat-2",
				"completed [5/6] mtp4 ledger repeat-2: functional=true delivered=true",
			}},
		{name: "infra failure counts as done and shows its error", total: 2,
			steps: []progressStep{
				{begin: a1},
				{end: ended(a1, evalctl.InfraFailed, "sandbox: container died", nil)},
			},
			want: []string{
				"start  [1/2] base adder repeat-1",
				"infra_failed [1/2] base adder repeat-1: unscored (sandbox: container died)",
			}},
		{name: "interrupted does not count as done", total: 2,
			steps: []progressStep{
				{begin: a1},
				{end: ended(a1, evalctl.Interrupted, "interrupted", nil)},
			},
			want: []string{
				"start  [1/2] base adder repeat-1",
				"interrupted [0/2] base adder repeat-1: unscored (interrupted)",
			}},
		{name: "overlapping attempts", total: 2,
			steps: []progressStep{
				{begin: a1},
				{begin: a2},
				{end: ended(a2, evalctl.Completed, "", nil), out: &evalctl.Outcome{}},
				{end: ended(a1, evalctl.Completed, "", nil), out: &evalctl.Outcome{Functional: true}},
			},
			want: []string{
				"start  [1/2] base adder repeat-1",
				"start  [1/2] mtp4 ledger repeat-2",
				"completed [1/2] mtp4 ledger repeat-2: functional=false delivered=false",
				"completed [2/2] base adder repeat-1: functional=true delivered=false",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf lockedBuffer
			p := newProgress(&buf, false, tt.total)
			p.start(tt.done)
			if got := buf.String(); got != "" {
				t.Errorf("start wrote %q", got)
			}
			for i, s := range tt.steps {
				before := buf.String()
				s.apply(p)
				line := strings.TrimPrefix(buf.String(), before)
				if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
					t.Fatalf("step %d wrote %q, not one line", i, line)
				}
				if strings.ContainsAny(line, "\r\033") {
					t.Errorf("step %d wrote terminal controls: %q", i, line)
				}
				if !stampRE.MatchString(line) {
					t.Errorf("step %d: %q does not start with a clock stamp", i, line)
				}
				if got := strings.TrimSuffix(stampRE.ReplaceAllString(line, ""), "\n"); got != tt.want[i] {
					t.Errorf("step %d:\n got %q\nwant %q", i, got, tt.want[i])
				}
			}
			before := buf.String()
			p.finish()
			if got := strings.TrimPrefix(buf.String(), before); got != "" {
				t.Errorf("finish wrote %q", got)
			}
		})
	}
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }
