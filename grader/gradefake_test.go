package grader

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Grade on fake containers: no Docker, so these run under -short. A
// memBox answers the grader's commands as the image's runners would: every
// pytest group's report counts the tests its case declares, all passing
// unless failing names one; py-compile finds one file that compiles.

// memBoxes starts memBoxes on engines named e0, e1, ...: a pool when pool
// is set (a lost engine is drained and the next one used).
type memBoxes struct {
	mu      sync.Mutex
	pool    bool
	engine  int // the engine the next box goes to
	boxes   []*memBox
	drained []string
	// lose makes the n-th box (1-based) lose its engine; execErr makes its
	// commands fail.
	lose    int
	execErr bool
	failing string // a test id every report fails
	groups  []*tasks.Group
}

var _ gradeBoxes = (*memBoxes)(nil)

func (m *memBoxes) Start(ctx context.Context, spec sandbox.Spec) (gradeBox, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := &memBox{m: m, engine: fmt.Sprintf("e%d", m.engine), spec: spec}
	m.boxes = append(m.boxes, b)
	if len(m.boxes) == m.lose {
		b.lost = true
	}
	return b, nil
}

func (m *memBoxes) Drain(ctx context.Context, b gradeBox) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.pool {
		return false
	}
	m.drained = append(m.drained, b.EngineName())
	m.engine++
	return true
}

func (m *memBoxes) Pool() bool { return m.pool }

// memBox is one fake grading container: it records what was copied in and
// answers the runners' commands.
type memBox struct {
	m       *memBoxes
	engine  string
	spec    sandbox.Spec
	lost    bool
	copies  []string // "DIR ro" or "DIR USER"
	junit   map[string]int
	kills   int
	removed int
}

var _ gradeBox = (*memBox)(nil)

func (b *memBox) Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error) {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	if b.m.execErr && b.lost {
		return nil, errors.New("exec: connection refused (fake)")
	}
	if b.junit == nil {
		b.junit = map[string]int{}
	}
	switch {
	case slices.Contains(cmd, "/opt/evalctl/run_pytest.py"):
		// The report holds the declared tests of the group whose paths
		// end the command line.
		for _, g := range b.m.groups {
			if g.Runner == tasks.RunnerPytest && slices.Equal(cmd[len(cmd)-len(g.Paths):], g.Paths) {
				for _, a := range cmd {
					if junit, ok := strings.CutPrefix(a, "--junitxml="); ok {
						b.junit[junit] = g.Tests
					}
				}
			}
		}
	case len(cmd) == 2 && cmd[0] == "cat":
		n, ok := b.junit[cmd[1]]
		if !ok {
			return &sandbox.ExecResult{ExitCode: 1}, nil
		}
		var r strings.Builder
		r.WriteString("<testsuites><testsuite>")
		for i := range n {
			id := fmt.Sprintf("test_%d", i)
			if i == 0 && b.m.failing != "" {
				id = b.m.failing
				fmt.Fprintf(&r, `<testcase classname="t" name="%s"><failure/></testcase>`, id)
				continue
			}
			fmt.Fprintf(&r, `<testcase classname="t" name="%s"/>`, id)
		}
		r.WriteString("</testsuite></testsuites>")
		return &sandbox.ExecResult{Stdout: []byte(r.String())}, nil
	case slices.Contains(cmd, pyCompileScript):
		return &sandbox.ExecResult{Stdout: []byte(`{"files": 1, "failed": []}`)}, nil
	}
	return &sandbox.ExecResult{}, nil
}

func (b *memBox) CopyInReadOnly(ctx context.Context, dir string, entries []sandbox.Entry) error {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	b.copies = append(b.copies, dir+" ro")
	return nil
}

func (b *memBox) CopyInPrivate(ctx context.Context, dir string, entries []sandbox.Entry, user string) error {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	b.copies = append(b.copies, dir+" "+user)
	return nil
}

func (b *memBox) KillAll(ctx context.Context) { b.m.mu.Lock(); b.kills++; b.m.mu.Unlock() }

func (b *memBox) Remove(ctx context.Context) error {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	b.removed++
	return nil
}

func (b *memBox) EngineName() string { return b.engine }

func (b *memBox) EngineLost(ctx context.Context) bool {
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	return b.lost
}

// TestGradeOnFakeBoxes: what a grade does with its container (the answer
// read-only, the checks the harness user's, one kill after each pytest
// group, removal), how reports become a grade, and a lost engine: graded
// again on another in a pool, named in the error on one engine.
func TestGradeOnFakeBoxes(t *testing.T) {
	s, err := tasks.LoadSuite("testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Case("adder")
	tree, err := PhaseStart(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := sandbox.DirEntries(c.Phases[0].ReferenceDir, tasks.Ignored)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := sandbox.NewSnapshot(Overlay(tree, ref))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		boxes   *memBoxes // nil: one engine, nothing lost
		solved  bool
		engine  string // the grade's (with no error)
		err     error  // errors.Is the grade's error
		started int
		drained []string
	}{
		{name: "solved on one engine", solved: true, engine: "e0", started: 1},
		{name: "a failing test unsolves", boxes: &memBoxes{failing: "test_negative"}, engine: "e0", started: 1},
		{name: "pool: a lost engine's grade is graded again on another", boxes: &memBoxes{pool: true, lose: 1}, solved: true, engine: "e1", started: 2, drained: []string{"e0"}},
		{name: "pool: commands fail on a lost engine, graded again on another", boxes: &memBoxes{pool: true, lose: 1, execErr: true}, solved: true, engine: "e1", started: 2, drained: []string{"e0"}},
		{name: "one engine lost: the error says so", boxes: &memBoxes{lose: 1, execErr: true}, err: sandbox.ErrEngineLost, started: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.boxes
			if m == nil {
				m = &memBoxes{}
			}
			m.groups = c.Phases[0].Groups
			g := newGrader(m, "img", "sha256:img", Options{})
			gr, err := g.Grade(context.Background(), s, c, 1, answer, Labels{Run: "run-1", Attempt: "att-1"})
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "engine e0") {
					t.Fatalf("got %v, want %v naming engine e0", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else {
				if gr.Solved != tc.solved || gr.Engine != tc.engine || gr.ImageID != "sha256:img" || gr.SnapshotSHA256 != answer.SHA256 {
					t.Errorf("grade solved=%v engine=%q image=%q snapshot %s, want solved=%v engine=%q", gr.Solved, gr.Engine, gr.ImageID, gr.SnapshotSHA256, tc.solved, tc.engine)
				}
				if len(gr.Groups) != len(c.Phases[0].Groups) {
					t.Fatalf("%d groups, want %d", len(gr.Groups), len(c.Phases[0].Groups))
				}
				for i, grp := range gr.Groups {
					want := c.Phases[0].Groups[i]
					fail := m.failing != "" && want.Runner == tasks.RunnerPytest
					if grp.Name != want.Name || grp.Success == fail || (fail && !slices.Contains(grp.FailedTests, m.failing)) {
						t.Errorf("group %d: %+v, want %s (success %v)", i, grp, want.Name, !fail)
					}
				}
			}
			if len(m.boxes) != tc.started || !slices.Equal(m.drained, tc.drained) {
				t.Errorf("%d containers started, drained %v; want %d, %v", len(m.boxes), m.drained, tc.started, tc.drained)
			}
			for _, b := range m.boxes {
				if b.removed != 1 || b.spec.Role != sandbox.RoleGrader || b.spec.Run != "run-1" || b.spec.Attempt != "att-1" || !b.spec.ReadOnlyWorkspace {
					t.Errorf("container on %s: removed %d times, spec %+v", b.engine, b.removed, b.spec)
				}
				if b.lost && m.execErr {
					continue // its commands failed
				}
				if want := []string{"/workspace ro", "/checks " + sandbox.HarnessUser}; !slices.Equal(b.copies, want) {
					t.Errorf("copied in %v, want %v", b.copies, want)
				}
				if b.kills != 3 {
					t.Errorf("%d kills, want one after each of the 3 pytest groups", b.kills)
				}
			}
		})
	}
}
