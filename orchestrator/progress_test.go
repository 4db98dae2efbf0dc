package orchestrator

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
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
// clock stamp followed by "start" or the attempt's state, starts and
// completions counted apart (a start says how many slots have started,
// each its own number even when attempts overlap, and how many ended; an
// end how many ended, completed and infra-failed ones, and how many still
// run; both counting from where a resumed run started), arm, case and
// repeat, and on an end the verdict (functional and
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
				"start     [started 1 of 3, 0 ended] base adder repeat-1",
				"completed [ended 1 of 3, 0 running] base adder repeat-1: functional=true delivered=false",
			}},
		{name: "resumed run counts on from what was done", total: 6, done: 4,
			steps: []progressStep{
				{begin: a2},
				{end: ended(a2, evalctl.Completed, "", nil), out: &evalctl.Outcome{Functional: true, Delivered: true}},
			},
			want: []string{
				"start     [started 5 of 6, 4 ended] mtp4 ledger repeat-2",
				"completed [ended 5 of 6, 0 running] mtp4 ledger repeat-2: functional=true delivered=true",
			}},
		{name: "infra failure counts as done and shows its error", total: 2,
			steps: []progressStep{
				{begin: a1},
				{end: ended(a1, evalctl.InfraFailed, "sandbox: container died", nil)},
			},
			want: []string{
				"start     [started 1 of 2, 0 ended] base adder repeat-1",
				"infra_failed [ended 1 of 2, 0 running] base adder repeat-1: unscored (sandbox: container died)",
			}},
		{name: "interrupted does not count as done", total: 2,
			steps: []progressStep{
				{begin: a1},
				{end: ended(a1, evalctl.Interrupted, "interrupted", nil)},
			},
			want: []string{
				"start     [started 1 of 2, 0 ended] base adder repeat-1",
				"interrupted [ended 0 of 2, 0 running] base adder repeat-1: unscored (interrupted)",
			}},
		{name: "overlapping attempts", total: 2,
			steps: []progressStep{
				{begin: a1},
				{begin: a2},
				{end: ended(a2, evalctl.Completed, "", nil), out: &evalctl.Outcome{}},
				{end: ended(a1, evalctl.Completed, "", nil), out: &evalctl.Outcome{Functional: true}},
			},
			want: []string{
				"start     [started 1 of 2, 0 ended] base adder repeat-1",
				"start     [started 2 of 2, 0 ended] mtp4 ledger repeat-2",
				"completed [ended 1 of 2, 1 running] mtp4 ledger repeat-2: functional=false delivered=false",
				"completed [ended 2 of 2, 0 running] base adder repeat-1: functional=true delivered=false",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf lockedBuffer
			p := newProgress(&buf, false, tt.total)
			p.start(tt.done, nil)
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

// TestProgressCountsTheWholeRunAfterResume: after a resume the counts on the
// pooled line and each arm's line cover the whole run, the slots that
// ended before this runner included (the symptom was "4/6 done functional
// 0/1": done counted the whole run, outcomes only what ran since).
func TestProgressCountsTheWholeRunAfterResume(t *testing.T) {
	p := newProgress(io.Discard, false, 6)
	plan := &Plan{Arms: []Arm{{Name: "a"}, {Name: "b"}}}
	for i := 0; i < 6; i++ {
		plan.Slots = append(plan.Slots, Slot{Index: i, Arm: []string{"a", "b"}[i%2]})
	}
	tok, dec := int64(600), 10.0
	m := &evalctl.Measurements{NativeOutputTokens: &tok, DecodeSeconds: &dec}
	before := []earlier{
		{arm: "a", measurements: m, outcome: &evalctl.Outcome{Functional: true, Delivered: true}},
		{arm: "b", measurements: m, outcome: &evalctl.Outcome{Functional: true}},
		{arm: "a", measurements: m, outcome: &evalctl.Outcome{}},
		{arm: "b", measurements: m}, // ungraded: no outcome
	}
	left := []*evalctl.Attempt{{Arm: "a", Slot: 4}, {Arm: "b", Slot: 5}}
	p.setArms(plan, left)
	p.start(4, before)
	a := attemptFor("5", "a", "c", "repeat-3")
	p.begin(a)
	p.end(ended(a, evalctl.Completed, "", m), &evalctl.Outcome{Functional: true})
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.summary(); !strings.Contains(s, "[ended 5 of 6, 0 running]") || !strings.Contains(s, "tokens 3000  decode TPS 60.0  functional 3/4  delivered 1/4") {
		t.Errorf("pooled line %q: want 5 of 6 ended, 3000 tokens and functional 3/4 over the whole run", s)
	}
	if x := p.arms[0]; x.done != 3 || x.scored != 3 || x.funcOK != 2 || x.delivOK != 1 {
		t.Errorf("arm a %+v: want 3 done, 3 scored, 2 functional, 1 delivered", *x)
	}
	if x := p.arms[1]; x.done != 2 || x.scored != 1 || x.funcOK != 1 {
		t.Errorf("arm b %+v: want 2 done, 1 scored, 1 functional", *x)
	}
}

// TestEarlierOutcomesFromTheRunDirectory: what a resumed runner counts as
// done before it is read from the run directory and scored as the report
// scores it: every slot not left to run, completed ones with their grades.
func TestEarlierOutcomesFromTheRunDirectory(t *testing.T) {
	spec := &reporttest.RunSpec{ID: "r", Suite: evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: "fp"}, ImageID: "sha256:i"}
	for i, solved := range []bool{true, true, false} {
		spec.Attempts = append(spec.Attempts, reporttest.AttemptSpec{Arm: "a", Case: "c", Language: "python", Repeat: fmt.Sprintf("repeat-%d", i+1), Slot: i,
			Phases: 1, Terminations: []evalctl.Termination{evalctl.TermCompleted}, Solved: []bool{solved}, Tokens: 100, Decode: 1, Task: 2})
	}
	spec.Attempts = append(spec.Attempts, reporttest.AttemptSpec{Arm: "a", Case: "c", Language: "python", Repeat: "repeat-4", Slot: 3, State: evalctl.Planned, Phases: 1})
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	st, err := runstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := st.Attempts()
	got := earlierOutcomes(st, "dev@1.0.0", all[3:])
	functional := 0
	for _, e := range got {
		if e.outcome != nil && e.outcome.Functional {
			functional++
		}
	}
	if len(got) != 3 || functional != 2 {
		t.Errorf("%d earlier outcomes, %d functional; want 3 and 2", len(got), functional)
	}
}
