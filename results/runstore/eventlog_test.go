package runstore

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestLogCountsEventsItCannotWrite: an event Log cannot write is not
// dropped silently: EventLogErr says how many were lost and why the first
// was, and events written before and after the failure stay in the log.
func TestLogCountsEventsItCannotWrite(t *testing.T) {
	st, err := Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st.Log(Event{Kind: evalctl.EventRegistered})
	if err := st.EventLogErr(); err != nil {
		t.Fatalf("nothing lost yet: %v", err)
	}
	// The log becomes unwritable: a directory where the file was.
	log := st.Path(EventsFile)
	if err := os.Rename(log, log+".kept"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(log, 0o755); err != nil {
		t.Fatal(err)
	}
	st.Log(Event{Kind: evalctl.EventStart, Attempt: "a1"})
	st.Log(Event{Kind: evalctl.EventCompleted, Attempt: "a1"})
	err = st.EventLogErr()
	var le *EventLogError
	if !errors.As(err, &le) || !errors.Is(err, ErrEventLog) || le.Lost != 2 || le.First == nil {
		t.Fatalf("EventLogErr = %v, want 2 events lost and the first error", err)
	}
	if !strings.Contains(err.Error(), "2 event(s) could not be written") || !strings.Contains(err.Error(), EventsFile) {
		t.Errorf("error %q does not say how many were lost and where", err)
	}
	// Repaired, the log takes events again; the count of lost ones stays.
	os.Remove(log)
	if err := os.Rename(log+".kept", log); err != nil {
		t.Fatal(err)
	}
	st.Log(Event{Kind: evalctl.EventResumed})
	evs, err := st.Events()
	if err != nil || len(evs) != 2 || evs[0].Kind != evalctl.EventRegistered || evs[1].Kind != evalctl.EventResumed {
		t.Fatalf("events %v (%v), want registered then resumed", evs, err)
	}
	if errors.As(st.EventLogErr(), &le); le.Lost != 2 {
		t.Errorf("lost %d after the repair, want the 2 still counted", le.Lost)
	}
}
