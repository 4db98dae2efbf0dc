package regrade_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// The fixture suite: regradefx@1.0.0 has a wrong frozen test (its fake file
// in test_read_error lacks the context-manager protocol, which the contract
// never rules out), so a correct answer that opens files with "with" fails
// it; regradefx@1.0.1 fixes the fake.

// Answer code, per style and phase.
const (
	withP1 = `def count_words(path):
    try:
        with open(path, encoding="utf-8") as f:
            return len(f.read().split())
    except OSError as e:
        raise ValueError(f"unreadable: {path}") from e
`
	withP2 = `def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"unreadable: {path}") from e


def count_words(path):
    return len(_read(path).split())


def count_lines(path):
    return len(_read(path).splitlines())
`
)

// answer styles: "with" (correct, fails 1.0.0's wrong test), "ref" (the
// reference, passes both), "nolines" (phase 2 only: phase-1 code, no
// count_lines: fails both).
func answerTree(t testing.TB, c *tasks.Case, phase int, style string) []sandbox.Entry {
	t.Helper()
	tree, err := grader.Pristine(c, phase)
	if err != nil {
		t.Fatal(err)
	}
	var code []byte
	switch {
	case style == "ref":
		ref, err := sandbox.DirEntries(c.Phase(phase).ReferenceDir, tasks.Ignored)
		if err != nil {
			t.Fatal(err)
		}
		return grader.Overlay(tree, ref)
	case style == "with" && phase == 1, style == "nolines":
		code = []byte(withP1)
	case style == "with":
		code = []byte(withP2)
	default:
		t.Fatalf("unknown style %q", style)
	}
	return grader.Overlay(tree, []sandbox.Entry{{Name: "wordcount.py", Mode: 0o644, Data: code}})
}

type attemptSpec struct {
	id, arm, repeat string
	styles          []string // per phase; nil: infra failure, no snapshot
	// wallLimit marks the last turn as stopped by the wall-time limit
	// (functional possible, never delivered).
	wallLimit bool
}

// fixtureAttempts: before (1.0.0) / after (1.0.1), functional and delivered.
//
//	armA repeat-1 with/with      F F -> T T   changed
//	armA repeat-2 ref/ref, wall  T F -> T F
//	armB repeat-1 with/nolines   F F -> F F   (phase 2 lacks count_lines)
//	armB repeat-2 with/with      F F -> T T   changed
//	armB repeat-3 infra failure  unscored
var fixtureAttempts = []attemptSpec{
	{id: "a1", arm: "armA", repeat: "repeat-1", styles: []string{"with", "with"}},
	{id: "b1", arm: "armB", repeat: "repeat-1", styles: []string{"with", "nolines"}},
	{id: "a2", arm: "armA", repeat: "repeat-2", styles: []string{"ref", "ref"}, wallLimit: true},
	{id: "b2", arm: "armB", repeat: "repeat-2", styles: []string{"with", "with"}},
	{id: "b3", arm: "armB", repeat: "repeat-3"},
}

var (
	setupOnce sync.Once
	setupErr  error
	v1, v2    *tasks.Suite
	realG     *grader.Grader
)

func suites(t testing.TB) (*tasks.Suite, *tasks.Suite, *grader.Grader) {
	t.Helper()
	eng, img := sandboxtest.Engine(t)
	setupOnce.Do(func() {
		if v1, setupErr = tasks.LoadSuite("testdata/suite-v1"); setupErr != nil {
			return
		}
		if v2, setupErr = tasks.LoadSuite("testdata/suite-v2"); setupErr != nil {
			return
		}
		realG = grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 2})
		cached.g = realG
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return v1, v2, realG
}

// cachedGrader is the real grader, asked once per distinct (suite id,
// phase, snapshot digest): a grade is a pure function of the three (the
// grader's own determinism test shows it), and Docker grading is the slow
// part of these tests. Keys include the phase, so a snapshot graded as the
// wrong phase still gets its own, real, grade.
type cachedGrader struct {
	g  *grader.Grader
	mu sync.Mutex
	m  map[string]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	gr   *evalctl.Grade
	err  error
}

var cached = &cachedGrader{m: map[string]*cacheEntry{}}

func (c *cachedGrader) Grade(ctx context.Context, s *tasks.Suite, cs *tasks.Case, phase int, snap *sandbox.Snapshot, labels grader.Labels) (*evalctl.Grade, error) {
	key := fmt.Sprintf("%s/%s/%s/%d/%s", s.ID(), s.Fingerprint, cs.Name, phase, snap.SHA256)
	c.mu.Lock()
	e := c.m[key]
	if e == nil {
		e = &cacheEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.gr, e.err = c.g.Grade(ctx, s, cs, phase, snap, labels) })
	if e.err != nil {
		return nil, e.err
	}
	cp := *e.gr
	return &cp, nil
}

// writeRun writes a run directory as the cohort runner leaves it: run.json,
// plan.json, attempt records in state completed with their phase snapshots
// (canonical tarballs and their digests), and grades under 1.0.0 from the
// real grader. When grade is false no grade is written (benchmarks).
func writeRun(t testing.TB, g regrade.Grader, dir, runID string, specs []attemptSpec, grade bool) {
	t.Helper()
	s1, _, _ := suites(t)
	c := s1.Case("wordcount")
	st, err := runstore.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan := []byte(fmt.Sprintf("{\"run\": %q, \"attempts\": %d}\n", runID, len(specs)))
	if err := runstore.WriteFileAtomic(st.Path(runstore.PlanFile), plan, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(plan)
	ref := evalctl.SuiteRef{Name: s1.Name, Version: s1.Version, Fingerprint: s1.Fingerprint}
	created := time.Date(2025, 11, 30, 9, 0, 0, 0, time.UTC)
	if err := st.WriteRun(&runstore.Run{ID: runID, CreatedAt: created, PlanSHA256: hex.EncodeToString(sum[:]),
		Suite: ref, ImageID: "sha256:fixture", EvalctlVersion: "test", Kind: "cohort"}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvent(runstore.Event{Time: created, Kind: "registered", Detail: "fixture"}); err != nil {
		t.Fatal(err)
	}
	yes := true
	for i, sp := range specs {
		a := &evalctl.Attempt{ID: sp.id, RunID: runID, Slot: i, Arm: sp.arm, ArmHash: "hash-" + sp.arm, Case: c.Name,
			Language: "python", Repeat: sp.repeat, Seed: int64(i + 1), State: evalctl.InfraFailed, Suite: ref,
			ImageID: "sha256:fixture", EvalctlVersion: "test", ExpectedTurns: len(c.Phases),
			Turns: []evalctl.Turn{}, Snapshots: []evalctl.Snapshot{}}
		if sp.styles == nil {
			a.Error = "docker daemon went away"
		} else {
			a.State, a.ArmUnchanged = evalctl.Completed, &yes
			tokens, decode := int64(1000), 20.0
			a.Measurements = &evalctl.Measurements{NativeOutputTokens: &tokens, DecodeSeconds: &decode, TaskSeconds: 40, TimingsSource: "server"}
		}
		for p, style := range sp.styles {
			phase := p + 1
			snap, err := sandbox.NewSnapshot(answerTree(t, c, phase, style))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(st.AttemptDir(a.ID), 0o755); err != nil {
				t.Fatal(err)
			}
			path := st.SnapshotPath(a.ID, phase)
			if err := runstore.WriteFileAtomic(path, snap.Tar, 0o644); err != nil {
				t.Fatal(err)
			}
			a.Snapshots = append(a.Snapshots, evalctl.Snapshot{Phase: phase, File: filepath.Base(path), SHA256: snap.SHA256, Bytes: int64(len(snap.Tar))})
			term := evalctl.TermCompleted
			if sp.wallLimit && phase == len(sp.styles) {
				term = evalctl.TermWallTimeLimit
			}
			a.Turns = append(a.Turns, evalctl.Turn{Phase: phase, Termination: term, Seconds: 20, Responses: 3,
				AgentFinished: term == evalctl.TermCompleted, FinalText: term == evalctl.TermCompleted,
				LastTest: &evalctl.SelfCheck{Command: "python3 -m pytest tests", Passed: true}})
			if grade {
				gr, err := g.Grade(context.Background(), s1, c, phase, snap, grader.Labels{Run: runID, Attempt: a.ID})
				if err != nil {
					t.Fatal(err)
				}
				if err := st.WriteGrade(a.ID, gr); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := st.WriteAttempt(a); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	templateOnce sync.Once
	templateDir  string
)

// fixtureRun returns a fresh copy of the five-attempt fixture run (graded
// under 1.0.0), made once per test binary.
func fixtureRun(t *testing.T) string {
	t.Helper()
	suites(t)
	templateOnce.Do(func() {
		dir, err := os.MkdirTemp("", "regrade-template-")
		if err != nil {
			t.Fatal(err)
		}
		templateDir = filepath.Join(dir, "run")
		writeRun(t, cached, templateDir, "run-fixture", fixtureAttempts, true)
	})
	if templateDir == "" {
		t.Fatal("fixture run was not built")
	}
	dst := filepath.Join(t.TempDir(), "run")
	copyTree(t, templateDir, dst)
	return dst
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hashTree maps every file under dir (relative path) to its SHA-256.
func hashTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// treeDiff compares two hashes of a tree: files added, changed, removed.
func treeDiff(before, after map[string]string) (added, changed, removed []string) {
	for p, h := range after {
		old, ok := before[p]
		switch {
		case !ok:
			added = append(added, p)
		case old != h:
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			removed = append(removed, p)
		}
	}
	sort.Strings(added)
	sort.Strings(changed)
	sort.Strings(removed)
	return added, changed, removed
}
