package grader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// testdataDir is this package's testdata directory, absolute.
func testdataDir(t *testing.T) string {
	d, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAnswerCannotDriveTheProtocol: an answer driving the boundary's raw
// protocol from its side (testdata/probes/protocol.py) is refused every
// time: the tests' builtins and classes named by the answer (str.format,
// getattr, exec), references made up by number to whatever the tests'
// side sent, keyword arguments named like the protocol's parameters, the
// insides of an exception of the tests', a second client on the host's
// socket, the checks and the running test's name in /tmp or the
// environment. add() is right only if nothing got through.
func TestAnswerCannotDriveTheProtocol(t *testing.T) {
	s, g := setup(t)
	c := s.Case("adder")
	probe, err := os.ReadFile("testdata/probes/protocol.py")
	if err != nil {
		t.Fatal(err)
	}
	gr, err := g.Grade(context.Background(), s, c, 1, answer(t, c, true, file("adder.py", string(probe))), grader.Labels{Run: sandboxtest.RunLabel(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"acceptance", "regression", "public"} {
		if grp := gr.Group(name); !grp.Success {
			t.Errorf("%s: %d/%d: something the boundary should have refused went through:\n%s", name, grp.Passed, grp.Total, grp.Output)
		}
	}
}

// TestIPCLeftBehindIsReclaimed: an answer leaving 200 MiB of System V
// shared memory (and a semaphore set, a message queue) behind in each of
// its test runs, in a container of 512 MiB (three runs would not fit), is
// graded as the honest answer it otherwise is, within twice the honest
// answer's time: what it leaves is removed before the next group.
func TestIPCLeftBehindIsReclaimed(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	// The fixture with room for a loaded machine: a group that times out
	// says nothing of what the answer left behind.
	dir := t.TempDir()
	copyDir(t, "testdata/suite", dir)
	caseFile := filepath.Join(dir, "adder", "case.yaml")
	data, err := os.ReadFile(caseFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caseFile, []byte(strings.ReplaceAll(string(data), "timeout: 60s", "timeout: 600s")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := tasks.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 1, Limits: sandbox.Limits{MemoryBytes: 512 << 20}})
	c := s.Case("adder")
	hog, err := os.ReadFile(filepath.Join(testdataDir(t), "probes", "ipc.py"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	grade := func(content string) (time.Duration, bool, string) {
		start := time.Now()
		gr, err := g.Grade(ctx, s, c, 1, answer(t, c, true, file("adder.py", content)), grader.Labels{Run: sandboxtest.RunLabel(t)})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range gr.Groups {
			out = append(out, fmt.Sprintf("%s: exit %d, timed out %v, %.1fs: %s", x.Name, x.ExitCode, x.TimedOut, x.Seconds, x.Output))
		}
		return time.Since(start), gr.Solved, strings.Join(out, "\n")
	}
	honest, ok, out := grade("def add(a, b):\n    return a + b\n")
	if !ok {
		t.Fatalf("the honest answer is not solved:\n%s", out)
	}
	leaky, ok, out := grade(string(hog))
	if !ok {
		t.Errorf("the answer leaving IPC objects is not solved (a later group ran short of memory?):\n%s", out)
	}
	// The honest answer again, after: on a loaded machine the slower of
	// the two honest gradings is the fair comparison.
	after, ok, out := grade("def add(a, b):\n    return a + b\n")
	if !ok {
		t.Fatalf("the honest answer graded after the one leaving IPC objects is not solved:\n%s", out)
	}
	if leaky > 2*max(honest, after) {
		t.Errorf("grading the answer leaving IPC objects took %s, over twice the honest answer's %s (before) and %s (after)", leaky, honest, after)
	}
	t.Logf("honest %s before and %s after, leaving IPC objects %s", honest, after, leaky)
}
