package orchestrator

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/runstore"
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

func attemptFor(id, arm, cs, repeat string) *runstore.Attempt {
	return &runstore.Attempt{ID: id, Arm: arm, Case: cs, Repeat: repeat, State: runstore.Running}
}

// ended is a copy of a in its final state.
func ended(a *runstore.Attempt, state runstore.State, errText string, m *runstore.Measurements) *runstore.Attempt {
	c := *a
	c.State, c.Error, c.Measurements = state, errText, m
	return &c
}

// progressStep is one call on a progress display.
type progressStep struct {
	begin *runstore.Attempt // begin(begin) when set, else end(end, outcome)
	end   *runstore.Attempt
	out   *runstore.Outcome
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
				{end: ended(a1, runstore.Completed, "", &runstore.Measurements{NativeOutputTokens: ptrTo(int64(10)), DecodeSeconds: ptrTo(float64(1))}),
					out: &runstore.Outcome{Functional: true, Delivered: false}},
			},
			want: []string{
				"start  [1/3] base adder repeat-1",
				"completed [1/3] base adder repeat-1: functional=true delivered=false",
			}},
		{name: "resumed run counts on from what was done", total: 6, done: 4,
			steps: []progressStep{
				{begin: a2},
				{end: ended(a2, runstore.Completed, "", nil), out: &runstore.Outcome{Functional: true, Delivered: true}},
			},
			want: []string{
				"start  [5/6] mtp4 ledger repeat-2",
				"completed [5/6] mtp4 ledger repeat-2: functional=true delivered=true",
			}},
		{name: "infra failure counts as done and shows its error", total: 2,
			steps: []progressStep{
				{begin: a1},
				{end: ended(a1, runstore.InfraFailed, "sandbox: container died", nil)},
			},
			want: []string{
				"start  [1/2] base adder repeat-1",
				"infra_failed [1/2] base adder repeat-1: unscored (sandbox: container died)",
			}},
		{name: "interrupted does not count as done", total: 2,
			steps: []progressStep{
				{begin: a1},
				{end: ended(a1, runstore.Interrupted, "interrupted", nil)},
			},
			want: []string{
				"start  [1/2] base adder repeat-1",
				"interrupted [0/2] base adder repeat-1: unscored (interrupted)",
			}},
		{name: "overlapping attempts", total: 2,
			steps: []progressStep{
				{begin: a1},
				{begin: a2},
				{end: ended(a2, runstore.Completed, "", nil), out: &runstore.Outcome{}},
				{end: ended(a1, runstore.Completed, "", nil), out: &runstore.Outcome{Functional: true}},
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

// TestProgressLiveLine drives the live display. What must hold: every
// begin and end redraws the one status line in place (a carriage return and
// an erase-line sequence, then the line, and no newline) showing done/total,
// the attempts running as arm/case/repeat, the elapsed time, the tokens and
// decode rate of completed attempts, and functional and delivered counts
// over scored attempts; finish draws the line once more and ends it with a
// newline, so that the output ends on a fresh line.
func TestProgressLiveLine(t *testing.T) {
	a1 := attemptFor("1", "base", "adder", "repeat-1")
	a2 := attemptFor("2", "mtp4", "ledger", "repeat-2")
	a3 := attemptFor("3", "base", "ledger", "repeat-1")
	const tail = "  elapsed 1m15s  "
	tests := []struct {
		name string
		step progressStep
		// want holds the acceptable lines (two attempts may be listed in
		// either order).
		want []string
	}{
		{name: "begin shows the attempt",
			step: progressStep{begin: a1},
			want: []string{"[1/4] base/adder/repeat-1" + tail + "tokens 0  decode TPS -  functional 0/0  delivered 0/0"}},
		{name: "a second attempt runs alongside",
			step: progressStep{begin: a2},
			want: []string{
				"[1/4] base/adder/repeat-1,mtp4/ledger/repeat-2" + tail + "tokens 0  decode TPS -  functional 0/0  delivered 0/0",
				"[1/4] mtp4/ledger/repeat-2,base/adder/repeat-1" + tail + "tokens 0  decode TPS -  functional 0/0  delivered 0/0",
			}},
		{name: "a completed attempt adds tokens, rate and verdict",
			step: progressStep{
				end: ended(a1, runstore.Completed, "", &runstore.Measurements{NativeOutputTokens: ptrTo(int64(300)), DecodeSeconds: ptrTo(float64(2))}),
				out: &runstore.Outcome{Functional: true}},
			want: []string{"[2/4] mtp4/ledger/repeat-2" + tail + "tokens 300  decode TPS 150.0  functional 1/1  delivered 0/1"}},
		{name: "an infra failure counts as done but adds no tokens or verdict",
			step: progressStep{end: ended(a2, runstore.InfraFailed, "boom", &runstore.Measurements{NativeOutputTokens: ptrTo(int64(999)), DecodeSeconds: ptrTo(float64(1))})},
			want: []string{"[3/4] " + tail + "tokens 300  decode TPS 150.0  functional 1/1  delivered 0/1"}},
		{name: "begin after the others ended",
			step: progressStep{begin: a3},
			want: []string{"[3/4] base/ledger/repeat-1" + tail + "tokens 300  decode TPS 150.0  functional 1/1  delivered 0/1"}},
		{name: "a second completion pools tokens and rate",
			step: progressStep{
				end: ended(a3, runstore.Completed, "", &runstore.Measurements{NativeOutputTokens: ptrTo(int64(100)), DecodeSeconds: ptrTo(float64(3))}),
				out: &runstore.Outcome{Functional: true, Delivered: true}},
			want: []string{"[4/4] " + tail + "tokens 400  decode TPS 80.0  functional 2/2  delivered 1/2"}},
	}

	var buf lockedBuffer
	p := newProgress(&buf, true, 4)
	p.start(1)
	// A fixed elapsed time, so that the line is known exactly. (The test
	// takes well under the ticker's second, so only the steps draw.)
	p.mu.Lock()
	p.began = time.Now().Add(-75 * time.Second)
	p.mu.Unlock()
	if got := buf.String(); got != "" {
		t.Errorf("start wrote %q", got)
	}
	var last string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := buf.String()
			tt.step.apply(p)
			got := strings.TrimPrefix(buf.String(), before)
			line, ok := strings.CutPrefix(got, "\r\033[K")
			if !ok {
				t.Fatalf("update %q does not start with a carriage return and erase-line", got)
			}
			if strings.ContainsAny(line, "\r\n\033") {
				t.Errorf("update %q holds more than one line or a newline", got)
			}
			found := false
			for _, w := range tt.want {
				found = found || line == w
			}
			if !found {
				t.Errorf("line\n %q\nwant one of\n %q", line, tt.want)
			}
			last = line
		})
	}
	before := buf.String()
	p.finish()
	if got, want := strings.TrimPrefix(buf.String(), before), "\r\033[K"+last+"\n"; got != want {
		t.Errorf("finish wrote %q, want %q", got, want)
	}
	all := buf.String()
	if n := strings.Count(all, "\n"); n != 1 || !strings.HasSuffix(all, "\n") {
		t.Errorf("live output has %d newlines, want exactly one at the end: %q", n, all)
	}
	if n := strings.Count(all, "\r\033[K"); n != len(tests)+1 {
		t.Errorf("%d redraws for %d updates and finish", n, len(tests))
	}
}

// TestProgressLiveTicks checks that the live line keeps time by itself.
// What must hold: with no attempt beginning or ending, the line is still
// redrawn in place about once a second with the elapsed time, without a
// newline, and nothing more is written once finish has ended the line.
func TestProgressLiveTicks(t *testing.T) {
	tick := regexp.MustCompile(`^\r\033\[K\[2/5\] +elapsed [1-9]\d*s  tokens 0  decode TPS -  functional 0/0  delivered 0/0$`)
	var buf lockedBuffer
	p := newProgress(&buf, true, 5)
	p.start(2)
	deadline := time.Now().Add(5 * time.Second)
	for buf.String() == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	drawn := buf.String()
	if !tick.MatchString(drawn) {
		t.Fatalf("after a second the output is %q, want one redrawn status line", drawn)
	}
	p.finish()
	final := buf.String()
	if !strings.HasSuffix(final, "\n") || strings.Count(final, "\n") != 1 {
		t.Fatalf("after finish the output is %q, want it to end on a new line", final)
	}
	time.Sleep(1200 * time.Millisecond)
	if got := buf.String(); got != final {
		t.Errorf("the display wrote %q after finish", strings.TrimPrefix(got, final))
	}
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }
