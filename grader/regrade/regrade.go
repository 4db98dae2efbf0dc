// Package regrade grades stored answers again under another suite version
// without calling any model, and diagnoses a case's fixtures by grading
// stored answers, the reference and the negative controls under two suite
// versions side by side.
//
// Both read run directories and never change what is in them: a regrade
// only adds grade files under the new suite id (and one line to the run's
// append-only event log); every answer snapshot's SHA-256 is checked against
// its attempt record before it is graded, so a changed answer is refused
// rather than silently given a new verdict. Nothing here imports a model
// client: the only process a regrade talks to is the Docker Engine.
package regrade

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Schema names the version of the regrade result's JSON shape.
const Schema = "evalctl.regrade/v1"

// Record is what a regrade writes in a run directory it graded, as a new
// file under regrades/ (a record of the run directory, in the root
// package).
type Record = evalctl.RegradeRecord

// Grader grades one answer snapshot; *grader.Grader satisfies it.
type Grader interface {
	Grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels grader.Labels) (*evalctl.Grade, error)
}

// Errors callers branch on.
var (
	// ErrSuiteName: the suite's name differs from the name a run ran under
	// (regrading a run under an unrelated suite is almost always a mistake).
	ErrSuiteName = errors.New("suite name differs from the run's suite")
	// ErrDigest: an answer snapshot's bytes no longer match the SHA-256 its
	// attempt record holds.
	ErrDigest = errors.New("snapshot SHA-256 differs from the attempt record")
	// ErrVersionReused: grades under this suite id were made with a
	// different fingerprint, i.e. a used suite version was changed.
	ErrVersionReused = errors.New("suite version was changed after grades were made under it")
	// ErrRefused: some attempts were refused (see Result.Attempts).
	ErrRefused = errors.New("some attempts were refused")
)

// Options configure a regrade.
type Options struct {
	// Suite is the suite version to grade under.
	Suite *tasks.Suite
	// AllowOtherSuite lets a run be regraded under a suite whose name
	// differs from the run's own.
	AllowOtherSuite bool
	// Concurrency bounds how many attempts are graded at once (default 1).
	// The grader has its own bound on containers.
	Concurrency int
	// Progress receives one line per attempt as it finishes (nil: none).
	Progress io.Writer
}

// Action says what a regrade did with one attempt.
type Action string

// Actions.
const (
	// Graded: every phase snapshot was graded and the grades written.
	Graded Action = "graded"
	// CompletedPartial: some phases already had grades under the suite id
	// (an earlier regrade was cut short); the missing ones were added.
	CompletedPartial Action = "completed_partial"
	// Skipped: grades under the suite id already exist for every phase.
	Skipped Action = "skipped_already_graded"
	// NotScored: the attempt never completed; it has no outcome under any
	// suite version and nothing is graded.
	NotScored Action = "not_completed"
	// Refused: the attempt could not be graded (digest mismatch, case or
	// phase missing from the suite, a changed suite version); nothing was
	// written for it.
	Refused Action = "refused"
	// Failed: grading itself failed (Docker error, cancellation); nothing
	// was written for it.
	Failed Action = "failed"
)

// AttemptResult is what happened to one attempt.
type AttemptResult struct {
	Dir       string `json:"run_dir"`
	RunID     string `json:"run_id"`
	AttemptID string `json:"attempt_id"`
	Arm       string `json:"arm"`
	Case      string `json:"case"`
	Repeat    string `json:"repeat"`
	State     string `json:"state"`
	Action    Action `json:"action"`
	// Phases lists the phases graded by this regrade (empty when none).
	Phases []int `json:"phases_graded"`
	// Reason explains a refusal, a failure or a skip.
	Reason string `json:"reason,omitempty"`
	// Err is the refusal or failure (not serialised; Reason holds its text).
	Err error `json:"-"`
}

// Counts are an arm's outcome counts under one suite id: successes of
// scored attempts (Of), with the attempts left ungraded under that id
// alongside so that a shrinking denominator is visible.
type Counts struct {
	Functional int `json:"functional"`
	Delivered  int `json:"delivered"`
	Of         int `json:"of"`
	Ungraded   int `json:"ungraded"`
}

// ArmChange is an arm's counts before (under each run's own suite) and
// after (under the regrade suite).
type ArmChange struct {
	Arm    string `json:"arm"`
	Before Counts `json:"before"`
	After  Counts `json:"after"`
}

// OutcomeChange is one attempt whose outcome differs between the run's own
// suite and the regrade suite. Null is an unknown outcome (ungraded).
type OutcomeChange struct {
	RunID            string `json:"run_id"`
	AttemptID        string `json:"attempt_id"`
	Arm              string `json:"arm"`
	Case             string `json:"case"`
	Repeat           string `json:"repeat"`
	FunctionalBefore *bool  `json:"functional_before"`
	FunctionalAfter  *bool  `json:"functional_after"`
	DeliveredBefore  *bool  `json:"delivered_before"`
	DeliveredAfter   *bool  `json:"delivered_after"`
}

// RunResult is one regraded run.
type RunResult struct {
	Dir   string `json:"run_dir"`
	RunID string `json:"run_id"`
	// From is the suite id the run ran (and was first graded) under.
	From string `json:"from_suite"`
	// Record is the regrade record written in the run directory (relative
	// to it), only when this regrade wrote grades.
	Record string `json:"record,omitempty"`
}

// Result is the outcome of a regrade.
type Result struct {
	Schema           string          `json:"schema"`
	Suite            string          `json:"suite"`
	SuiteFingerprint string          `json:"suite_fingerprint"`
	Concurrency      int             `json:"concurrency"`
	Runs             []RunResult     `json:"runs"`
	Attempts         []AttemptResult `json:"attempts"`
	Arms             []ArmChange     `json:"arms"`
	Changed          []OutcomeChange `json:"changed"`
	// Tallies by action.
	Graded    int `json:"graded"`
	Skipped   int `json:"skipped"`
	Refused   int `json:"refused"`
	Failed    int `json:"failed"`
	NotScored int `json:"not_completed"`
	// ModelsCalled is always false: a regrade has no model client.
	ModelsCalled bool `json:"models_called"`
	// OriginalResultsUnchanged is measured, not assumed: every completed
	// attempt record and every grade file that existed before the regrade
	// hashes the same after it.
	OriginalResultsUnchanged bool    `json:"original_results_unchanged"`
	Seconds                  float64 `json:"seconds"`
}

// Err returns nil when every attempt was graded, skipped or had nothing to
// grade, and otherwise a *RefusalError naming each refusal and failure.
func (r *Result) Err() error {
	var errs []error
	for _, a := range r.Attempts {
		if (a.Action == Refused || a.Action == Failed) && a.Err != nil {
			errs = append(errs, a.Err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &RefusalError{Errs: errs}
}

// RefusalError lists the attempts a regrade refused or failed to grade.
// errors.Is finds ErrRefused and each attempt's own cause (ErrDigest...).
type RefusalError struct{ Errs []error }

func (e *RefusalError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d attempts not regraded (nothing written for them): %s", len(e.Errs), strings.Join(msgs, "; "))
}

// Unwrap exposes ErrRefused and every cause.
func (e *RefusalError) Unwrap() []error { return append([]error{ErrRefused}, e.Errs...) }

// job is one attempt to grade.
type job struct {
	res    *AttemptResult
	st     *runstore.Store
	run    *runstore.Run
	a      *evalctl.Attempt
	c      *tasks.Case
	phases []evalctl.Snapshot // snapshots still to grade
}

type runEntry struct {
	dir string
	st  *runstore.Store
	run *runstore.Run
	as  []*evalctl.Attempt
}

// Run regrades the completed attempts of the run directories under
// opts.Suite with g. It returns a Result even when some attempts were
// refused (then Result.Err is non-nil); the error it returns itself means
// nothing could be done (a run directory unreadable, a suite name mismatch).
func Run(ctx context.Context, g Grader, dirs []string, opts Options) (*Result, error) {
	start := time.Now()
	s := opts.Suite
	if s == nil {
		return nil, errors.New("regrade: no suite given")
	}
	if len(dirs) == 0 {
		return nil, errors.New("regrade: no run directory given")
	}
	n := opts.Concurrency
	if n < 1 {
		n = 1
	}
	suiteID := s.ID()
	res := &Result{Schema: Schema, Suite: suiteID, SuiteFingerprint: s.Fingerprint, Concurrency: n,
		Runs: []RunResult{}, Attempts: []AttemptResult{}, Arms: []ArmChange{}, Changed: []OutcomeChange{}}

	runs, err := readRuns(dirs, s, opts.AllowOtherSuite, res)
	if err != nil {
		return nil, err
	}
	results, err := hashAll(runs)
	if err != nil {
		return nil, err
	}
	jobs := planJobs(runs, s, res)
	gradeJobs(ctx, g, s, jobs, n, opts.Progress)
	res.count()
	if err := writeRecords(runs, s, res); err != nil {
		return nil, err
	}
	if err := compare(runs, res, suiteID); err != nil {
		return nil, err
	}
	after, err := hashAll(runs)
	if err != nil {
		return nil, err
	}
	res.OriginalResultsUnchanged = true
	for path, sum := range results {
		if after[path] != sum {
			res.OriginalResultsUnchanged = false
			return res, fmt.Errorf("regrade: %s changed while regrading (another process writing the run?)", path)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// readRuns opens and checks every run directory before anything is
// graded: each run once, under suite s (or another suite when
// allowOtherSuite), never under s's label with a different fingerprint.
// Each run gets its row in res.Runs.
func readRuns(dirs []string, s *tasks.Suite, allowOtherSuite bool, res *Result) ([]runEntry, error) {
	suiteID := s.ID()
	var runs []runEntry
	seen := map[string]string{}
	for _, dir := range dirs {
		st, err := runstore.Open(dir)
		if err != nil {
			return nil, fmt.Errorf("regrade: %w", err)
		}
		run, err := st.ReadRun()
		if err != nil {
			return nil, fmt.Errorf("regrade: read run %s: %w", dir, err)
		}
		if prev, ok := seen[run.ID]; ok {
			return nil, fmt.Errorf("regrade: run %s given twice (%s and %s)", run.ID, prev, dir)
		}
		seen[run.ID] = dir
		if run.Suite.Name != s.Name && !allowOtherSuite {
			return nil, fmt.Errorf("regrade: run %s (%s) ran under suite %q, not %q (the suite at %s); pass --allow-other-suite if that is meant: %w",
				run.ID, dir, run.Suite.Name, s.Name, s.Dir, ErrSuiteName)
		}
		if run.Suite.Name == s.Name && run.Suite.Version == s.Version && run.Suite.Fingerprint != s.Fingerprint {
			return nil, fmt.Errorf("regrade: run %s ran under %s with fingerprint %s, but the suite at %s has fingerprint %s; give the changed suite a new version: %w",
				run.ID, suiteID, run.Suite.Fingerprint, s.Dir, s.Fingerprint, ErrVersionReused)
		}
		as, err := st.Attempts()
		if err != nil {
			return nil, fmt.Errorf("regrade: %w", err)
		}
		runs = append(runs, runEntry{dir: dir, st: st, run: run, as: as})
		res.Runs = append(res.Runs, RunResult{Dir: dir, RunID: run.ID, From: tasks.Label(run.Suite.Name, run.Suite.Version)})
	}
	return runs, nil
}

// hashAll hashes the recorded results of every run (see hashResults),
// so a regrade can prove it left them as they were.
func hashAll(runs []runEntry) (map[string]string, error) {
	sums := map[string]string{}
	for _, r := range runs {
		if err := hashResults(r, sums); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// planJobs gives every attempt of every run its row in res.Attempts and
// returns the jobs of those plan decides to grade.
func planJobs(runs []runEntry, s *tasks.Suite, res *Result) []*job {
	var jobs []*job
	for _, r := range runs {
		for _, a := range r.as {
			res.Attempts = append(res.Attempts, AttemptResult{Dir: r.dir, RunID: r.run.ID, AttemptID: a.ID,
				Arm: a.Arm, Case: a.Case, Repeat: a.Repeat, State: string(a.State), Phases: []int{}})
		}
	}
	i := 0
	for _, r := range runs {
		for _, a := range r.as {
			ar := &res.Attempts[i]
			i++
			if j := plan(r, a, s, ar); j != nil {
				jobs = append(jobs, j)
			}
		}
	}
	return jobs
}

// gradeJobs grades the jobs, at most n attempts at once; a job still
// waiting when ctx ends fails. Each finished job is one line on progress
// (if not nil).
func gradeJobs(ctx context.Context, g Grader, s *tasks.Suite, jobs []*job, n int, progress io.Writer) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	var logMu sync.Mutex
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				fail(j.res, Failed, fmt.Errorf("run %s attempt %s: %w", j.run.ID, j.a.ID, ctx.Err()))
				return
			}
			defer func() { <-sem }()
			gradeAttempt(ctx, g, s, j)
			if progress != nil {
				logMu.Lock()
				fmt.Fprintf(progress, "%s %s %s/%s %s: %s\n", j.run.ID, j.a.ID, j.a.Arm, j.a.Repeat, j.a.Case, describe(j.res))
				logMu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// count tallies the attempts by what was done with them.
func (res *Result) count() {
	for _, a := range res.Attempts {
		switch a.Action {
		case Graded, CompletedPartial:
			res.Graded++
		case Skipped:
			res.Skipped++
		case Refused:
			res.Refused++
		case Failed:
			res.Failed++
		case NotScored:
			res.NotScored++
		}
	}
}

// writeRecords writes one new record file per run where grades were
// written (earlier records are never rewritten) and names it in the
// run's row.
func writeRecords(runs []runEntry, s *tasks.Suite, res *Result) error {
	suiteID := s.ID()
	for k, r := range runs {
		var graded []string
		for _, a := range res.Attempts {
			if a.RunID == r.run.ID && (a.Action == Graded || a.Action == CompletedPartial) {
				graded = append(graded, a.AttemptID)
			}
		}
		if len(graded) == 0 {
			continue
		}
		now := time.Now().UTC()
		rel := filepath.Join(runstore.RegradesDir, now.Format("20060102T150405.000000000Z")+"-"+suiteID+".json")
		rec := Record{Kind: evalctl.RegradeKind, At: now, Suite: suiteID, Fingerprint: s.Fingerprint, Attempts: graded,
			Note: fmt.Sprintf("graded %d attempts under %s without calling any model; earlier grades unchanged", len(graded), suiteID)}
		if err := os.MkdirAll(r.st.Path(runstore.RegradesDir), 0o755); err != nil {
			return fmt.Errorf("regrade: run %s: %w", r.dir, err)
		}
		if err := runstore.WriteJSON(r.st.Path(rel), rec); err != nil {
			return fmt.Errorf("regrade: run %s: %w", r.dir, err)
		}
		res.Runs[k].Record = rel
	}
	return nil
}

// hashResults adds to sums the SHA-256 of every file that holds a recorded
// result of run r: run.json, plan.json, each completed attempt's record
// and every grade file. (Records of attempts still running may change
// under a live runner; they are not results yet.)
func hashResults(r runEntry, sums map[string]string) error {
	add := func(path string) error {
		sum, err := runstore.FileSHA256(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("regrade: %w", err)
		}
		sums[path] = sum
		return nil
	}
	for _, f := range []string{runstore.RunFile, runstore.PlanFile} {
		if err := add(r.st.Path(f)); err != nil {
			return err
		}
	}
	for _, a := range r.as {
		if a.State != evalctl.Completed {
			continue
		}
		if err := add(filepath.Join(r.st.AttemptDir(a.ID), runstore.AttemptFile)); err != nil {
			return err
		}
		root := filepath.Join(r.st.AttemptDir(a.ID), runstore.GradesDir)
		if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return add(p)
		})
		if err != nil {
			return fmt.Errorf("regrade: %w", err)
		}
	}
	return nil
}

// plan fills ar's action for attempts that need no grading and returns the
// job for those that do.
func plan(r runEntry, a *evalctl.Attempt, s *tasks.Suite, ar *AttemptResult) *job {
	id := s.ID()
	where := fmt.Sprintf("run %s attempt %s (%s/%s %s)", r.run.ID, a.ID, a.Arm, a.Repeat, a.Case)
	if a.State != evalctl.Completed {
		ar.Action = NotScored
		ar.Reason = fmt.Sprintf("state %s: no outcome under any suite version", a.State)
		return nil
	}
	c := s.Case(a.Case)
	if c == nil {
		fail(ar, Refused, fmt.Errorf("%s: suite %s has no case %q", where, id, a.Case))
		return nil
	}
	if len(c.Phases) != a.ExpectedTurns {
		fail(ar, Refused, fmt.Errorf("%s: case %s has %d phases under %s but the attempt expected %d turns",
			where, a.Case, len(c.Phases), id, a.ExpectedTurns))
		return nil
	}
	if len(a.Snapshots) == 0 {
		fail(ar, Refused, fmt.Errorf("%s: completed but records no answer snapshot", where))
		return nil
	}
	var todo []evalctl.Snapshot
	have := 0
	for _, snap := range a.Snapshots {
		if c.Phase(snap.Phase) == nil {
			fail(ar, Refused, fmt.Errorf("%s: snapshot of phase %d, but case %s has %d phases under %s", where, snap.Phase, a.Case, len(c.Phases), id))
			return nil
		}
		var old evalctl.Grade
		err := runstore.ReadJSON(r.st.GradePath(a.ID, id, snap.Phase), &old)
		switch {
		case errors.Is(err, os.ErrNotExist):
			todo = append(todo, snap)
		case err != nil:
			fail(ar, Refused, fmt.Errorf("%s phase %d: existing grade under %s: %w", where, snap.Phase, id, err))
			return nil
		case old.SuiteFingerprint != s.Fingerprint:
			fail(ar, Refused, fmt.Errorf("%s phase %d: its grade under %s was made with fingerprint %s, the suite at %s has %s; give the changed suite a new version: %w",
				where, snap.Phase, id, old.SuiteFingerprint, s.Dir, s.Fingerprint, ErrVersionReused))
			return nil
		case old.SnapshotSHA256 != snap.SHA256:
			fail(ar, Refused, fmt.Errorf("%s phase %d: its grade under %s is of snapshot %s, the record says %s: %w",
				where, snap.Phase, id, old.SnapshotSHA256, snap.SHA256, ErrDigest))
			return nil
		default:
			have++
		}
	}
	if len(todo) == 0 {
		ar.Action = Skipped
		ar.Reason = "already graded under " + id
		return nil
	}
	j := &job{res: ar, st: r.st, run: r.run, a: a, c: c, phases: todo}
	if have > 0 {
		ar.Reason = fmt.Sprintf("%d of %d phases already graded under %s; grading the rest", have, len(a.Snapshots), id)
	}
	return j
}

func fail(ar *AttemptResult, act Action, err error) {
	ar.Action, ar.Err, ar.Reason = act, err, err.Error()
}

// gradeAttempt checks every snapshot's digest, grades each phase, and only
// then writes the grades: a refusal or failure writes nothing.
func gradeAttempt(ctx context.Context, g Grader, s *tasks.Suite, j *job) {
	where := fmt.Sprintf("run %s attempt %s (%s/%s %s)", j.run.ID, j.a.ID, j.a.Arm, j.a.Repeat, j.a.Case)
	snaps := make([]*sandbox.Snapshot, len(j.phases))
	for i, rec := range j.phases {
		snap, err := ReadSnapshot(j.st, j.a, rec)
		if err != nil {
			fail(j.res, Refused, fmt.Errorf("%s phase %d: %w", where, rec.Phase, err))
			return
		}
		snaps[i] = snap
	}
	grades := make([]*evalctl.Grade, len(j.phases))
	for i, rec := range j.phases {
		gr, err := g.Grade(ctx, s, j.c, rec.Phase, snaps[i], grader.Labels{Run: j.run.ID, Attempt: j.a.ID})
		if err != nil {
			fail(j.res, Failed, fmt.Errorf("%s phase %d: grade: %w", where, rec.Phase, err))
			return
		}
		if gr.SnapshotSHA256 != rec.SHA256 {
			fail(j.res, Failed, fmt.Errorf("%s phase %d: the grader graded snapshot %s, not %s", where, rec.Phase, gr.SnapshotSHA256, rec.SHA256))
			return
		}
		grades[i] = gr
	}
	for i, gr := range grades {
		if err := j.st.WriteGrade(j.a.ID, gr); err != nil {
			fail(j.res, Failed, fmt.Errorf("%s phase %d: %w", where, j.phases[i].Phase, err))
			return
		}
		j.res.Phases = append(j.res.Phases, gr.Phase)
	}
	if j.res.Reason != "" {
		j.res.Action = CompletedPartial
	} else {
		j.res.Action = Graded
	}
}

// ReadSnapshot reads phase rec.Phase's answer tarball of attempt a and
// checks it against the record: same file name, same SHA-256. It never
// returns a snapshot whose bytes differ from what was recorded.
func ReadSnapshot(st *runstore.Store, a *evalctl.Attempt, rec evalctl.Snapshot) (*sandbox.Snapshot, error) {
	path := st.SnapshotPath(a.ID, rec.Phase)
	if rec.File != "" && rec.File != filepath.Base(path) {
		return nil, fmt.Errorf("record names snapshot file %q, expected %q", rec.File, filepath.Base(path))
	}
	if rec.SHA256 == "" {
		return nil, fmt.Errorf("record holds no SHA-256 for %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	if got != rec.SHA256 {
		return nil, fmt.Errorf("%s has SHA-256 %s but the attempt record says %s; refusing to grade a changed answer: %w", path, got, rec.SHA256, ErrDigest)
	}
	return &sandbox.Snapshot{Tar: data, SHA256: got}, nil
}

// outcome is an attempt's outcome under one suite id: nil functional and
// delivered when it has none (not completed, or ungraded there).
type outcome struct {
	functional, delivered *bool
	ungraded              bool
}

// outcomeUnder scores a under suiteID with runstore.ScoreGraded, as the
// report does: a phase snapshot left ungraded makes the outcome unknown.
func outcomeUnder(st *runstore.Store, a *evalctl.Attempt, suiteID string) (outcome, error) {
	if a.State != evalctl.Completed {
		return outcome{}, nil
	}
	grades, err := st.Grades(a, suiteID)
	if err != nil {
		return outcome{}, fmt.Errorf("attempt %s: grades %s: %w", a.ID, suiteID, err)
	}
	o, ungraded := evalctl.ScoreGraded(a, grades)
	if ungraded {
		return outcome{ungraded: true}, nil
	}
	if o == nil {
		return outcome{}, nil
	}
	f, d := o.Functional, o.Delivered
	return outcome{functional: &f, delivered: &d}, nil
}

func (c *Counts) add(o outcome) {
	switch {
	case o.ungraded:
		c.Ungraded++
	case o.functional != nil:
		c.Of++
		if *o.functional {
			c.Functional++
		}
		if *o.delivered {
			c.Delivered++
		}
	}
}

// compare fills per-arm before/after counts (arms in the order first met)
// and the attempts whose outcome changed. "Before" is each run's own
// suite; "after" the regrade suite. It reads outcomes from disk, so a
// re-run reports the same figures.
func compare(runs []runEntry, res *Result, suiteID string) error {
	idx := map[string]int{}
	for _, r := range runs {
		from := tasks.Label(r.run.Suite.Name, r.run.Suite.Version)
		for _, a := range r.as {
			b, err := outcomeUnder(r.st, a, from)
			if err != nil {
				return fmt.Errorf("regrade: run %s: %w", r.dir, err)
			}
			n, err := outcomeUnder(r.st, a, suiteID)
			if err != nil {
				return fmt.Errorf("regrade: run %s: %w", r.dir, err)
			}
			k, ok := idx[a.Arm]
			if !ok {
				k = len(res.Arms)
				idx[a.Arm] = k
				res.Arms = append(res.Arms, ArmChange{Arm: a.Arm})
			}
			res.Arms[k].Before.add(b)
			res.Arms[k].After.add(n)
			if eq(b.functional, n.functional) && eq(b.delivered, n.delivered) {
				continue
			}
			res.Changed = append(res.Changed, OutcomeChange{RunID: r.run.ID, AttemptID: a.ID, Arm: a.Arm, Case: a.Case, Repeat: a.Repeat,
				FunctionalBefore: b.functional, FunctionalAfter: n.functional, DeliveredBefore: b.delivered, DeliveredAfter: n.delivered})
		}
	}
	sort.SliceStable(res.Changed, func(i, j int) bool {
		x, y := res.Changed[i], res.Changed[j]
		if x.Arm != y.Arm {
			return x.Arm < y.Arm
		}
		if x.Case != y.Case {
			return x.Case < y.Case
		}
		return x.Repeat < y.Repeat
	})
	return nil
}

func eq(a, b *bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func describe(a *AttemptResult) string {
	switch a.Action {
	case Graded, CompletedPartial:
		s := fmt.Sprintf("%s phases %v", a.Action, a.Phases)
		if a.Reason != "" {
			s += " (" + a.Reason + ")"
		}
		return s
	default:
		return fmt.Sprintf("%s: %s", a.Action, a.Reason)
	}
}
