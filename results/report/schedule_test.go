package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
	"github.com/evalctl/evalctl/results/runstore"
)

// readEventLog reads an event log fixture (testdata/schedule/NAME.jsonl).
func readEventLog(t *testing.T, name string) []runstore.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "schedule", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []runstore.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e runstore.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, e)
	}
	return out
}

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

// TestRunScheduleFromEventLogs: a run's schedule figures from its event
// log: summed (waits) and maxed (longest waits, longest time without
// progress) over the sessions when every session wrote its schedule event;
// null, never 0, with the reason, when a session wrote none (killed, or
// a log from before the event existed, or one that cannot be read) or ran
// on one engine (no places counted: the time without progress is still
// known). The notes are golden (testdata/golden/schedule.notes).
func TestRunScheduleFromEventLogs(t *testing.T) {
	tests := []struct {
		log                        string
		sessions, reported         int
		wait, longestWait, stilled *float64
		grants                     *int
		why                        string
	}{
		{log: "pool-two-sessions", sessions: 2, reported: 2, wait: f64(12.5 + 3.1), grants: intp(15), longestWait: f64(7.7), stilled: f64(67)},
		{log: "killed-session", sessions: 2, reported: 1, why: "session(s) 2 of 2 wrote no schedule event"},
		{log: "one-engine", sessions: 1, reported: 1, stilled: f64(0.4), why: "session(s) 1 of 1 ran on one engine, which counts no sandbox places"},
		{log: "before-schedules", sessions: 1, reported: 0, why: "session(s) 1 of 1 wrote no schedule event"},
		{log: "unreadable", sessions: 1, reported: 0, why: "session(s) 1 of 1 wrote no schedule event"},
	}
	eq := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	var notes bytes.Buffer
	for _, tc := range tests {
		t.Run(tc.log, func(t *testing.T) {
			s := runSchedule(NewTimeline(readEventLog(t, tc.log)))
			if s == nil {
				t.Fatal("no schedule figures")
			}
			if s.Sessions != tc.sessions || s.Reported != tc.reported {
				t.Errorf("%d sessions, %d reported; want %d, %d", s.Sessions, s.Reported, tc.sessions, tc.reported)
			}
			if !eq(s.PlaceWaitSeconds, tc.wait) || !eq(s.LongestPlaceWaitSeconds, tc.longestWait) || !eq(s.LongestWithoutProgressSeconds, tc.stilled) {
				t.Errorf("waited %v, longest %v, without progress %v; want %v, %v, %v", s.PlaceWaitSeconds, s.LongestPlaceWaitSeconds, s.LongestWithoutProgressSeconds, tc.wait, tc.longestWait, tc.stilled)
			}
			if (s.PlaceGrants == nil) != (tc.grants == nil) || s.PlaceGrants != nil && *s.PlaceGrants != *tc.grants {
				t.Errorf("grants %v, want %v", s.PlaceGrants, tc.grants)
			}
			if !strings.Contains(s.Why, tc.why) || (tc.why == "") != (s.Why == "") {
				t.Errorf("why %q, want %q", s.Why, tc.why)
			}
			for _, n := range scheduleNotes(&Report{Runs: []RunInfo{{ID: tc.log, Schedule: s}}}) {
				notes.WriteString(n + "\n")
			}
		})
	}
	golden(t, filepath.Join("testdata", "golden", "schedule.notes"), notes.Bytes())
	if runSchedule(nil) != nil || runSchedule(&Timeline{}) != nil {
		t.Error("a run without a timeline, or one without schedule events read, has schedule figures")
	}
}

// scheduleRun writes a small run directory whose event log is the fixture
// log.
func scheduleRun(t *testing.T, log string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, reporttest.Sweep()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "schedule", log+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstore.EventsFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// scheduleExport exports a run with two sessions' schedule events.
func scheduleExport(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export")
	if _, err := Export(context.Background(), []string{scheduleRun(t, "pool-two-sessions")}, out, Options{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScheduleInEveryFormat: the report shows the run's schedule figures
// in text, markdown and HTML (a note), in JSON as the run's schedule; an
// export verifies.
func TestScheduleInEveryFormat(t *testing.T) {
	in, err := Load(context.Background(), []string{scheduleRun(t, "pool-two-sessions")}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	note := "waited for sandbox places 15.6 s over 15 grant(s), longest 7.7 s; longest time without progress 67.0 s (over 2 of 2 session(s))"
	for _, format := range []string{"table", "md", "html"} {
		var buf bytes.Buffer
		if err := Write(&buf, rep, format); err != nil {
			t.Fatal(err)
		}
		got := buf.String()
		if format == "html" {
			got = html.UnescapeString(got)
		}
		if !strings.Contains(got, note) {
			t.Errorf("%s report lacks %q", format, note)
		}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs []struct {
			Schedule map[string]any `json:"schedule"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 1 || back.Runs[0].Schedule["place_grants"] != float64(15) || back.Runs[0].Schedule["longest_without_progress_seconds"] != float64(67) {
		t.Errorf("JSON runs %+v, want the schedule figures", back.Runs)
	}
	if err := Verify(scheduleExport(t)); err != nil {
		t.Errorf("an export with schedule figures does not verify: %v", err)
	}
}
