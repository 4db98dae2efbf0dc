package transcript_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/transcript"
)

// recorded is a transcript a cohort wrote before the types moved here
// (a copy of one in cmd/evalctl/testdata/recorded): every kind but
// model_error, with a setup, tool calls with exit codes and a turn.
const recorded = "testdata/recorded.jsonl"

// TestReadBackByteIdentical: a stored transcript read and written again
// is the same bytes, so no field was lost, renamed or re-encoded by the
// move (a field Read does not know would be dropped and show here).
func TestReadBackByteIdentical(t *testing.T) {
	stored, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	events, torn, err := transcript.Read(bytes.NewReader(stored))
	if err != nil || torn != 0 {
		t.Fatalf("Read: torn %d, err %v", torn, err)
	}
	kinds := map[string]int{}
	for _, e := range events {
		kinds[e.Kind]++
	}
	for _, k := range []string{transcript.EventPhaseStart, transcript.EventRequest, transcript.EventResponse, transcript.EventTool, transcript.EventPhaseEnd} {
		if kinds[k] == 0 {
			t.Errorf("the stored transcript has no %s event; the test would not cover it", k)
		}
	}
	if events[0].Kind != transcript.EventPhaseStart || events[1].Setup == nil || events[len(events)-1].Turn == nil {
		t.Errorf("decoded shape: first %q, setup on the first request %v, turn on the last %v", events[0].Kind, events[1].Setup != nil, events[len(events)-1].Turn != nil)
	}
	var buf bytes.Buffer
	w := transcript.NewWriter(&buf)
	for _, e := range events {
		w.Write(e)
	}
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if got := buf.Bytes(); !bytes.Equal(got, stored) {
		gl, sl := strings.Split(string(got), "\n"), strings.Split(string(stored), "\n")
		for i := range min(len(gl), len(sl)) {
			if gl[i] != sl[i] {
				t.Fatalf("line %d differs:\n got %s\nwant %s", i+1, gl[i], sl[i])
			}
		}
		t.Fatalf("%d lines written, %d stored", len(gl), len(sl))
	}
}

// TestReadSkipsTornLines: a line cut by a crash mid-write is counted, and
// the lines around it are still read.
func TestReadSkipsTornLines(t *testing.T) {
	stored, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(stored), "\n")
	in := lines[0] + `{"t":"2026-07-01T10:00:00Z","kind":"requ` + "\n" + strings.Join(lines[1:], "")
	events, torn, err := transcript.Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	whole, _, _ := transcript.Read(bytes.NewReader(stored))
	if torn != 1 || len(events) != len(whole) {
		t.Errorf("torn %d, %d events; want 1 torn and the %d whole events", torn, len(events), len(whole))
	}
}

// TestWriterNilAndStickyError: a nil writer writes nothing; after a failed
// write the error stays and nothing more is written.
func TestWriterNilAndStickyError(t *testing.T) {
	w := transcript.NewWriter(nil)
	w.Write(transcript.Event{Kind: transcript.EventPhaseStart})
	if w.Err() != nil {
		t.Errorf("nil writer: err %v", w.Err())
	}
	f := &failing{after: 1}
	w = transcript.NewWriter(f)
	w.Write(transcript.Event{Kind: transcript.EventPhaseStart, Phase: 1})
	w.Write(transcript.Event{Kind: transcript.EventRequest, Phase: 1})
	w.Write(transcript.Event{Kind: transcript.EventPhaseEnd, Phase: 1})
	if !errors.Is(w.Err(), errFull) {
		t.Errorf("err %v, want the write error", w.Err())
	}
	if f.calls != 2 {
		t.Errorf("%d writes reached the file, want 2 (none after the failure)", f.calls)
	}
	if !strings.Contains(f.buf.String(), `"kind":"phase_start"`) || !strings.Contains(f.buf.String(), `"t":"`) {
		t.Errorf("first line %q: want the event with its time stamped", f.buf.String())
	}
}

var errFull = errors.New("disk full")

type failing struct {
	after, calls int
	buf          bytes.Buffer
}

func (f *failing) Write(b []byte) (int, error) {
	f.calls++
	if f.calls > f.after {
		return 0, errFull
	}
	return f.buf.Write(b)
}
