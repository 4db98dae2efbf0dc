package orchestrator

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalctl/evalctl/internal/poll"

	"github.com/creack/pty"
	"github.com/vbauerster/mpb/v8"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// recordedRun is a real run (the grader's fixture suite, arms reference and
// flawed, the scripted model server, graded in the sandbox).
const recordedRun = "../cmd/evalctl/testdata/recorded/fixture-ab-01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"

// clock is a settable clock safe for the display's goroutine.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time              { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) add(d time.Duration)         { c.ns.Add(int64(d)) }
func newClock(t time.Time) *clock            { c := &clock{}; c.ns.Store(t.UnixNano()); return c }
func goldenPath(name string) string          { return filepath.Join("testdata", name) }
func readGolden(name string) ([]byte, error) { return os.ReadFile(goldenPath(name)) }

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	if *updateRef {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(goldenPath(name), []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := readGolden(name)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// replay drives a display with the recorded run's attempts in slot order,
// as the runner would: begin, the agent's transcript through the tap,
// grading, end; a minute of clock per attempt.
func replay(t *testing.T, p *progress, c *clock, grading func(i int)) {
	t.Helper()
	st, err := runstore.Open(recordedRun)
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.Attempts()
	if err != nil {
		t.Fatal(err)
	}
	var plan Plan
	if err := runstore.ReadJSON(st.Path(runstore.PlanFile), &plan); err != nil {
		t.Fatal(err)
	}
	run, _ := st.ReadRun()
	todo := make([]*evalctl.Attempt, len(all))
	for i, a := range all {
		c := *a
		todo[i] = &c
	}
	p.setArms(&plan, todo)
	p.start(0, nil)
	for i, a := range all {
		running := *a
		running.State = evalctl.Running
		p.begin(&running)
		if i == 0 {
			// What else writes on the progress output (servers.go).
			io.WriteString(p, "08:00:00 starting model server q4 for arm reference (log servers/001-q4.log)\n")
		}
		transcript, err := os.ReadFile(filepath.Join(st.AttemptDir(a.ID), runstore.TranscriptFile))
		if err != nil {
			t.Fatal(err)
		}
		tap := p.transcriptTap(&running)
		// In pieces, as an encoder may write them.
		for len(transcript) > 0 {
			n := min(len(transcript), 700)
			tap.Write(transcript[:n])
			transcript = transcript[n:]
		}
		p.phase(&running, "grading phase 1")
		if grading != nil {
			grading(i)
		}
		c.add(time.Minute)
		grades, err := st.Grades(a, run.Suite.Name+"@"+run.Suite.Version)
		if err != nil {
			t.Fatal(err)
		}
		p.end(a, evalctl.Score(a, grades))
	}
	p.finish()
}

// screen plays terminal output (text, CR, LF, cursor up, erase below) and
// returns the lines left on the screen, the scrolled ones included.
func screen(out string) string {
	var lines [][]rune
	row, col := 0, 0
	put := func(r rune) {
		for len(lines) <= row {
			lines = append(lines, nil)
		}
		for len(lines[row]) < col {
			lines[row] = append(lines[row], ' ')
		}
		if col < len(lines[row]) {
			lines[row][col] = r
		} else {
			lines[row] = append(lines[row], r)
		}
		col++
	}
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '\r':
			col = 0
		case '\n':
			row++
			col = 0
		case 0x1b:
			j := i + 2
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ';') {
				j++
			}
			if j >= len(rs) {
				i = j
				continue
			}
			n, _ := strconv.Atoi(string(rs[i+2 : j]))
			switch rs[j] {
			case 'A':
				row = max(0, row-max(n, 1))
			case 'J':
				if row < len(lines) {
					if col < len(lines[row]) {
						lines[row] = lines[row][:col]
					}
					lines = lines[:row+1]
				}
			case 'K':
				if row < len(lines) && col < len(lines[row]) {
					lines[row] = lines[row][:col]
				}
			}
			i = j
		default:
			put(r)
		}
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(string(l), " ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// wholePooledLine matches the pooled line of the frame the live test waits
// for, drawn to its end.
var wholePooledLine = regexp.MustCompile(`\[ended 1 of 4, 1 running\]  elapsed 1m0s  ETA 3m0s  tokens \S+  decode TPS \S+  functional 1/1  delivered 1/1\n`)

// TestProgressLiveTerminal drives the live display on a pseudo-terminal
// with the recorded run: a line per arm with done/planned and its own
// functional and delivered counts, the running attempt's phase, elapsed
// time and ETA, finished attempts scrolled above; the screen it leaves is
// the golden file.
func TestProgressLiveTerminal(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	if err := pty.Setsize(master, &pty.Winsize{Rows: 40, Cols: 140}); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, master)
		close(copied)
	}()
	// Refresh only when the test says: the frames are then the same on
	// every machine, however loaded.
	refresh := make(chan any)
	liveOptions = []mpb.ContainerOption{mpb.WithManualRefresh(refresh)}
	defer func() { liveOptions = nil }()
	c := newClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	p := newProgress(slave, true, 4)
	p.now = c.now
	// While the second attempt is graded, the screen shows a line per arm,
	// the attempt's phase and the pooled line with an ETA from the first.
	mid := ""
	replay(t, p, c, func(i int) {
		if i != 1 {
			return
		}
		poll.For(10*time.Second, func() bool {
			select {
			case refresh <- time.Now():
			case <-time.After(100 * time.Millisecond):
			}
			// The whole frame: the pooled line is drawn last, and a
			// loaded machine may be caught halfway through it.
			if scr := screen(out.String()); strings.Contains(scr, "now: reference/tsadd/repeat-1: grading phase 1") && wholePooledLine.MatchString(scr) {
				mid = scr
			}
			return mid != ""
		})
	})
	slave.Close()
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal output did not end")
	}
	got := screen(out.String())
	checkGolden(t, "progress-live.golden", got)
	for _, want := range []string{"reference  [", "1/2 done  functional 1/1  delivered 1/1", "flawed     [", "0/2 done  functional 0/0  delivered 0/0",
		"now: reference/tsadd/repeat-1: grading phase 1", "[ended 1 of 4, 1 running]  elapsed 1m0s  ETA 3m0s"} {
		if !strings.Contains(mid, want) {
			t.Errorf("mid-run screen lacks %q:\n%s", want, mid)
		}
	}
	for _, want := range []string{
		"completed [ended 1 of 4, 0 running] reference adder repeat-1: functional=true delivered=true",
		"08:00:00 starting model server q4 for arm reference",
		"reference", "2/2 done  functional 2/2  delivered 2/2",
		"flawed", "2/2 done  functional 1/2  delivered 1/2",
		"[ended 4 of 4, 0 running]  elapsed 4m0s  ETA 0s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
}

// TestProgressLivePhasesAndETA: while attempts run, the display names each
// one's phase (agent step and tokens from the transcript, grading, server
// start) and the ETA comes from the attempts this runner finished.
func TestProgressLivePhasesAndETA(t *testing.T) {
	c := newClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	p := newProgress(io.Discard, false, 5)
	p.now = c.now
	p.start(1, nil)
	a := attemptFor("1", "base", "adder", "repeat-1")
	p.begin(a)
	tap := p.transcriptTap(a)
	tap.Write([]byte(`{"kind":"request","phase":1,"seq":3}` + "\n" + `{"kind":"response","phase":1,"seq":3,"response":{"timings":{"predicted_n":120}}}` + "\n"))
	p.mu.Lock()
	f := p.frame()
	p.mu.Unlock()
	if len(f.running) != 1 || f.running[0] != "base/adder/repeat-1: turn 1, agent step 3, 120 tokens" {
		t.Errorf("running %q", f.running)
	}
	p.phase(a, "grading phase 1")
	c.add(90 * time.Second)
	p.mu.Lock()
	if f := p.frame(); f.running[0] != "base/adder/repeat-1: grading phase 1" || f.eta(c.now()) != "-" {
		t.Errorf("running %q, ETA %s (want - before any attempt ended here)", f.running, f.eta(c.now()))
	}
	p.mu.Unlock()
	p.end(ended(a, evalctl.Completed, "", nil), &evalctl.Outcome{})
	p.mu.Lock()
	defer p.mu.Unlock()
	// One attempt in 90 s here, three left: 4m30s. The one done before
	// this runner started does not make the pace look faster.
	if got := p.frame().eta(c.now()); got != "4m30s" {
		t.Errorf("ETA %s, want 4m30s", got)
	}
	if s := p.summary(); !strings.Contains(s, "[ended 2 of 5, 0 running]  elapsed 1m30s  ETA 4m30s") {
		t.Errorf("summary %q", s)
	}
}

// TestProgressPlainRecorded: not on a terminal, the recorded run gives
// plain timestamped lines (the golden file).
func TestProgressPlainRecorded(t *testing.T) {
	var buf bytes.Buffer
	c := newClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
	p := newProgress(&buf, false, 4)
	p.now = c.now
	replay(t, p, c, nil)
	checkGolden(t, "progress-plain.golden", buf.String())
}
