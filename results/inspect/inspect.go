// Package inspect reads one attempt back for a person: its record, the
// conversation from transcript.jsonl, its grades under every suite version
// and the answer's diff against the starter. 'evalctl show' prints it and
// the web viewer serves it; both read the run directory as the runner wrote
// it and change nothing.
package inspect

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/transcript"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

// Detail is everything about one attempt.
type Detail struct {
	RunDir  string           `json:"run_dir"`
	Run     *runstore.Run    `json:"run"`
	Attempt *evalctl.Attempt `json:"attempt"`
	// Transcript is every line of transcript.jsonl in order; a torn last
	// line (a crash mid-write) is left out and counted in TornLines.
	Transcript []transcript.Event `json:"transcript"`
	TornLines  int                `json:"torn_lines,omitempty"`
	// Grades holds the grades per suite id ("dev@1.0.0"), the run's own
	// suite first, then the others in name order.
	Grades []SuiteGrades `json:"grades"`
	// Outcomes are the attempt's scores under each suite id of Grades, as
	// runstore scores them (null where unscored or ungraded).
	Outcomes []SuiteOutcome `json:"outcomes"`
	// Diff is the final answer against the starter workspace (with the
	// overlays of the phases it reached); DiffNote says why it is missing.
	Diff     []FileDiff `json:"diff"`
	DiffNote string     `json:"diff_note,omitempty"`
}

// SuiteGrades are an attempt's grades under one suite id, one per phase
// (nil where that phase has none).
type SuiteGrades struct {
	Suite  string           `json:"suite"`
	Phases []*evalctl.Grade `json:"phases"`
}

// SuiteOutcome is an attempt's outcome under one suite id.
type SuiteOutcome struct {
	Suite    string           `json:"suite"`
	Outcome  *evalctl.Outcome `json:"outcome"`
	Ungraded bool             `json:"ungraded"`
}

// FileDiff is one changed file of the answer.
type FileDiff struct {
	Path string `json:"path"`
	// Status is added, deleted or modified.
	Status string `json:"status"`
	// Unified is the unified diff (empty for binary files).
	Unified string `json:"unified,omitempty"`
	Binary  bool   `json:"binary,omitempty"`
}

// ErrNoAttempt is returned when an attempt named does not exist.
var ErrNoAttempt = runstore.ErrNoAttempt

// Load reads one attempt of the run in dir.
func Load(dir, id string) (*Detail, error) {
	st, err := runstore.Open(dir)
	if err != nil {
		return nil, err
	}
	run, err := st.ReadRun()
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", dir, err)
	}
	var a evalctl.Attempt
	if err := runstore.ReadJSON(filepath.Join(st.AttemptDir(id), runstore.AttemptFile), &a); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("attempt %s of run %s: %w", id, dir, ErrNoAttempt)
		}
		return nil, err
	}
	d := &Detail{RunDir: dir, Run: run, Attempt: &a}
	if d.Transcript, d.TornLines, err = readTranscript(filepath.Join(st.AttemptDir(id), runstore.TranscriptFile)); err != nil {
		return nil, err
	}
	ids, err := st.SuiteIDs(id)
	if err != nil {
		return nil, err
	}
	own := tasks.Label(run.Suite.Name, run.Suite.Version)
	sort.SliceStable(ids, func(i, j int) bool {
		if (ids[i] == own) != (ids[j] == own) {
			return ids[i] == own
		}
		return ids[i] < ids[j]
	})
	for _, sid := range ids {
		gs, err := st.Grades(&a, sid)
		if err != nil {
			return nil, err
		}
		d.Grades = append(d.Grades, SuiteGrades{Suite: sid, Phases: gs})
		o, ungraded := evalctl.ScoreGraded(&a, gs)
		d.Outcomes = append(d.Outcomes, SuiteOutcome{Suite: sid, Outcome: o, Ungraded: ungraded})
	}
	d.Diff, d.DiffNote = answerDiff(st, run, &a)
	return d, nil
}

func readTranscript(p string) ([]transcript.Event, int, error) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return transcript.Read(f)
}

// BuiltinSuite, when set, returns the suite built into the binary; the
// diff falls back to it when the run's suite directory is gone and the
// fingerprints agree.
var BuiltinSuite func() (*tasks.Suite, error)

func answerDiff(st *runstore.Store, run *runstore.Run, a *evalctl.Attempt) ([]FileDiff, string) {
	if len(a.Snapshots) == 0 {
		return nil, "no answer snapshot (the attempt did not reach the end of a phase)"
	}
	var ps evalctl.Plan
	_ = runstore.ReadJSON(st.Path(runstore.PlanFile), &ps)
	var suite *tasks.Suite
	if ps.SuiteDir != "" {
		if s, err := tasks.LoadSuite(ps.SuiteDir); err == nil && s.Fingerprint == run.Suite.Fingerprint {
			suite = s
		}
	}
	if suite == nil && BuiltinSuite != nil {
		if s, err := BuiltinSuite(); err == nil && s.Fingerprint == run.Suite.Fingerprint {
			suite = s
		}
	}
	if suite == nil {
		return nil, fmt.Sprintf("the starter is not available: suite %s (fingerprint %.16s) is neither at %q nor built in", tasks.Label(run.Suite.Name, run.Suite.Version), run.Suite.Fingerprint, ps.SuiteDir)
	}
	c := suite.Case(a.Case)
	if c == nil {
		return nil, fmt.Sprintf("suite %s has no case %q", suite.ID(), a.Case)
	}
	last := a.Snapshots[len(a.Snapshots)-1]
	starter, err := readDir(c.WorkspaceDir)
	if err != nil {
		return nil, fmt.Sprintf("read the starter: %v", err)
	}
	for _, p := range c.Phases {
		if p.Number > last.Phase || p.OverlayDir == "" {
			continue
		}
		over, err := readDir(p.OverlayDir)
		if err != nil {
			return nil, fmt.Sprintf("read phase %d overlay: %v", p.Number, err)
		}
		for k, v := range over {
			starter[k] = v
		}
	}
	answer, err := readTar(st.SnapshotPath(a.ID, last.Phase))
	if err != nil {
		return nil, fmt.Sprintf("read the answer snapshot: %v", err)
	}
	return Diff(starter, answer), ""
}

// Diff compares two file trees (path -> content).
func Diff(from, to map[string][]byte) []FileDiff {
	names := map[string]bool{}
	for k := range from {
		names[k] = true
	}
	for k := range to {
		names[k] = true
	}
	var sorted []string
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []FileDiff
	for _, n := range sorted {
		a, inA := from[n]
		b, inB := to[n]
		fd := FileDiff{Path: n}
		switch {
		case inA && inB && bytes.Equal(a, b):
			continue
		case !inA:
			fd.Status = "added"
		case !inB:
			fd.Status = "deleted"
		default:
			fd.Status = "modified"
		}
		if binary(a) || binary(b) {
			fd.Binary = true
		} else {
			from, to := "starter/"+n, "answer/"+n
			if !inA {
				from = "/dev/null"
			}
			if !inB {
				to = "/dev/null"
			}
			fd.Unified, _ = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
				A: lines(a), B: lines(b), FromFile: from, ToFile: to, Context: 3,
			})
		}
		out = append(out, fd)
	}
	return out
}

// lines splits a file for the diff: none for an empty or missing file,
// and a last line without its newline marked as such.
func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	l := strings.SplitAfter(string(b), "\n")
	if last := len(l) - 1; l[last] == "" {
		return l[:last]
	} else {
		l[last] += "\n\\ No newline at end of file\n"
	}
	return l
}

func binary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }

func readDir(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && tasks.Ignored(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	return out, err
}

func readTar(p string) (map[string][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, 64<<20))
		if err != nil {
			return nil, err
		}
		out[path.Clean(strings.TrimPrefix(h.Name, "./"))] = data
	}
}
