package runstore

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// Layout of a run directory:
//
//	RUNDIR/run.json                                  Run: identity, plan hash
//	RUNDIR/plan.json                                 the resolved plan as registered
//	RUNDIR/events.jsonl                              append-only event log
//	RUNDIR/.lock                                     held by the one runner
//	RUNDIR/attempts/ID/attempt.json                  Attempt record
//	RUNDIR/attempts/ID/transcript.jsonl              every request, response, tool call
//	RUNDIR/attempts/ID/phase-N.tar                   answer snapshot of phase N
//	RUNDIR/attempts/ID/grades/SUITE@VERSION/phase-N.json   evalctl.Grade
const (
	RunFile        = "run.json"
	PlanFile       = "plan.json"
	EventsFile     = "events.jsonl"
	AttemptsDir    = "attempts"
	AttemptFile    = "attempt.json"
	TranscriptFile = "transcript.jsonl"
	GradesDir      = "grades"
	// RegradesDir holds one record per regrade of the run: a new file each
	// time, so that a regrade adds files and changes none.
	RegradesDir = "regrades"
	lockFile    = ".lock"
)

// ErrLocked is returned when another process holds the run directory.
var ErrLocked = errors.New("run directory is in use by another evalctl process")

// The records of run.json and the event log live in the root package;
// these are runstore's names for them.
type (
	Run           = evalctl.Run
	ArmIdentity   = evalctl.ArmIdentity
	EndpointCheck = evalctl.EndpointCheck
	Event         = evalctl.Event
)

// Store is an open run directory.
type Store struct {
	Dir  string
	mu   sync.Mutex
	lock *flock.Flock
	// lost counts the events Log could not write; logErr is the first
	// such failure.
	lost   int
	logErr error
}

// Open opens an existing run directory without locking it (readers: report,
// export, regrade).
func Open(dir string) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, RunFile)); err != nil {
		if _, perr := os.Stat(filepath.Join(dir, PlanFile)); perr == nil {
			// run.json is written last at registration: a runner that died
			// before it ran nothing.
			return nil, fmt.Errorf("open run %s: its registration did not finish (%s but no %s), so no attempt ran; start a new run with 'evalctl run --plan': %w", dir, PlanFile, RunFile, err)
		}
		return nil, fmt.Errorf("open run %s: not a run directory (no %s): %w", dir, RunFile, err)
	}
	return &Store{Dir: dir}, nil
}

// Create makes a new run directory (which must not exist or be empty).
func Create(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, AttemptsDir), 0o755); err != nil {
		return nil, fmt.Errorf("create run %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, RunFile)); err == nil {
		return nil, fmt.Errorf("create run %s: already holds a run", dir)
	}
	return &Store{Dir: dir}, nil
}

// Lock takes the run directory's exclusive lock so two runners never write
// one run. It fails at once with ErrLocked when another process holds it.
func (s *Store) Lock() error {
	l := flock.New(filepath.Join(s.Dir, lockFile))
	ok, err := l.TryLock()
	if err != nil {
		return fmt.Errorf("lock %s: %w", s.Dir, err)
	}
	if !ok {
		return fmt.Errorf("lock %s: %w", s.Dir, ErrLocked)
	}
	s.lock = l
	return nil
}

// Unlock releases the lock taken by Lock.
func (s *Store) Unlock() error {
	if s.lock == nil {
		return nil
	}
	return s.lock.Unlock()
}

// Path joins elements under the run directory.
func (s *Store) Path(elem ...string) string {
	return filepath.Join(append([]string{s.Dir}, elem...)...)
}

// WriteRun writes run.json.
func (s *Store) WriteRun(r *Run) error { return WriteJSON(s.Path(RunFile), r) }

// ReadRun reads run.json.
func (s *Store) ReadRun() (*Run, error) {
	var r Run
	if err := ReadJSON(s.Path(RunFile), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// AttemptDir is the directory of one attempt.
func (s *Store) AttemptDir(id string) string { return s.Path(AttemptsDir, id) }

// WriteAttempt writes an attempt record atomically.
func (s *Store) WriteAttempt(a *evalctl.Attempt) error {
	if err := os.MkdirAll(s.AttemptDir(a.ID), 0o755); err != nil {
		return err
	}
	return WriteJSON(filepath.Join(s.AttemptDir(a.ID), AttemptFile), a)
}

// Attempts reads every attempt record, ordered by slot and then by start
// time (a replacement after its predecessor).
func (s *Store) Attempts() ([]*evalctl.Attempt, error) {
	entries, err := os.ReadDir(s.Path(AttemptsDir))
	if err != nil {
		return nil, fmt.Errorf("read attempts of %s: %w", s.Dir, err)
	}
	var out []*evalctl.Attempt
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		var a evalctl.Attempt
		if err := ReadJSON(filepath.Join(s.AttemptDir(e.Name()), AttemptFile), &a); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // created, never recorded: nothing to lose
			}
			return nil, err
		}
		out = append(out, &a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Slot != out[j].Slot {
			return out[i].Slot < out[j].Slot
		}
		return out[i].ID < out[j].ID // UUIDv7: creation order
	})
	return out, nil
}

// SnapshotPath is where phase n's answer tarball of an attempt lives.
func (s *Store) SnapshotPath(attemptID string, phase int) string {
	return filepath.Join(s.AttemptDir(attemptID), fmt.Sprintf("phase-%d.tar", phase))
}

// GradePath is where a grade of one phase under one suite id lives.
func (s *Store) GradePath(attemptID, suiteID string, phase int) string {
	return filepath.Join(s.AttemptDir(attemptID), GradesDir, suiteID, fmt.Sprintf("phase-%d.json", phase))
}

// WriteGrade stores a grade. It refuses to replace an existing one: grades
// are added beside each other, never rewritten.
func (s *Store) WriteGrade(attemptID string, g *evalctl.Grade) error {
	p := s.GradePath(attemptID, tasks.Label(g.Suite, g.SuiteVersion), g.Phase)
	if _, err := os.Stat(p); err == nil {
		return fmt.Errorf("write grade %s: %w", p, os.ErrExist)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return WriteJSON(p, g)
}

// Grades returns the grades of an attempt under suiteID ("name@version"),
// one per snapshot record, index i holding phase i+1 (nil where a phase has
// no grade). A grade file of a phase that no snapshot record names means
// the records disagree: the list then ends in one more nil, so that the
// attempt reads as ungraded (evalctl.ScoreGraded), never as a failure.
func (s *Store) Grades(a *evalctl.Attempt, suiteID string) ([]*evalctl.Grade, error) {
	out, err := s.snapshotGrades(a, suiteID)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(s.AttemptDir(a.ID), GradesDir, suiteID))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	snapped := map[string]bool{}
	for _, snap := range a.Snapshots {
		snapped[fmt.Sprintf("phase-%d.json", snap.Phase)] = true
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "phase-") && strings.HasSuffix(e.Name(), ".json") && !snapped[e.Name()] {
			return append(out, nil), nil
		}
	}
	return out, nil
}

func (s *Store) snapshotGrades(a *evalctl.Attempt, suiteID string) ([]*evalctl.Grade, error) {
	var out []*evalctl.Grade
	for _, snap := range a.Snapshots {
		var g evalctl.Grade
		err := ReadJSON(s.GradePath(a.ID, suiteID, snap.Phase), &g)
		switch {
		case errors.Is(err, os.ErrNotExist):
			out = append(out, nil)
		case err != nil:
			return nil, err
		default:
			out = append(out, &g)
		}
	}
	return out, nil
}

// SuiteIDs lists the suite versions an attempt has grades under.
func (s *Store) SuiteIDs(attemptID string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.AttemptDir(attemptID), GradesDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// AppendEvent appends one event to events.jsonl and syncs it.
func (s *Store) AppendEvent(e Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.Path(EventsFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("event log: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("event log: %w", err)
	}
	return f.Close()
}

// ErrEventLog is what EventLogErr's error wraps: events of the run
// could not be written.
var ErrEventLog = errors.New("event log incomplete")

// EventLogError says how many events Log could not write, and why the
// first could not.
type EventLogError struct {
	Lost  int
	First error
}

var _ error = (*EventLogError)(nil)

func (e *EventLogError) Error() string {
	return fmt.Sprintf("%v: %d event(s) could not be written (the first: %v)", ErrEventLog, e.Lost, e.First)
}

func (e *EventLogError) Unwrap() []error { return []error{ErrEventLog, e.First} }

// Log appends e to the event log: the one way the runner, screens and
// probes write events. An event that cannot be written does not stop the
// step that was recording it (its records are written apart); it is
// counted, and EventLogErr reports it, which every writer checks at its
// next boundary and at its end, stopping there resumably. The log is
// thus never silently incomplete. See docs/records.md.
func (s *Store) Log(e Event) {
	if err := s.AppendEvent(e); err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lost++
		if s.logErr == nil {
			s.logErr = err
		}
	}
}

// EventLogErr is an *EventLogError when Log lost events, else nil.
func (s *Store) EventLogErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost == 0 {
		return nil
	}
	return &EventLogError{Lost: s.lost, First: s.logErr}
}

// Events reads the event log; a torn last line (a crash mid-write) is
// ignored.
func (s *Store) Events() ([]Event, error) {
	f, err := os.Open(s.Path(EventsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// WriteJSON marshals v (indented) and writes it atomically.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o644)
}

// ReadJSON reads and unmarshals a JSON file, naming the file in errors.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file in path's directory,
// fsyncs it, renames it over path and fsyncs the directory, so that a crash
// leaves either the old file or the new one, never a torn one.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return WriteAtomic(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomic is WriteFileAtomic for content produced by fill.
func WriteAtomic(path string, perm os.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fill(f); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// FileSHA256 returns the hex SHA-256 of a file's content.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// IsRunDir reports whether dir looks like a run directory.
func IsRunDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, RunFile))
	return err == nil && !strings.HasPrefix(filepath.Base(dir), ".")
}

// PhasesFile is where the runner keeps what each running attempt is doing
// now ("turn 1, agent step 4, 812 tokens", "grading phase 1"), by attempt
// id, for readers of a run in progress. Only running attempts are in it.
const PhasesFile = "phases.json"

// WritePhases records what the running attempts are doing now.
func (s *Store) WritePhases(phases map[string]string) error {
	return WriteJSON(s.Path(PhasesFile), phases)
}

// Phases is what the running attempts were doing when their runner last
// said (empty when it said nothing).
func (s *Store) Phases() map[string]string {
	var m map[string]string
	if ReadJSON(s.Path(PhasesFile), &m) != nil || m == nil {
		return map[string]string{}
	}
	return m
}

// Busy reports whether a runner holds the run's lock now (see locked).
func (s *Store) Busy() bool { return locked(s) }
