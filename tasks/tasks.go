// Package tasks holds the Go types of a suite of coding cases and the loader
// that validates them. A suite is data: the loader refuses anything it does
// not understand, so that a typo in a case file can never silently change
// what a cohort measures.
package tasks

import (
	"time"
)

// Language names the toolchain a case is written for. It decides which check
// groups a case must declare and which runners they may use.
type Language string

// Languages a case may be written in.
const (
	Python     Language = "python"
	TypeScript Language = "typescript"
)

// Runner names how the grader runs a check group and reads its result. The
// grader owns the exact command line (isolation flags, report paths), so a
// case can only choose among hardened runners, never pass raw shell.
type Runner string

// Runners a check group may use.
const (
	// RunnerPytest runs pytest over Paths and reads its JUnit XML report.
	RunnerPytest Runner = "pytest"
	// RunnerPyCompile byte-compiles every Python file of the workspace; each
	// file is one test.
	RunnerPyCompile Runner = "py-compile"
	// RunnerNodeTest compiles with TSConfig (tsc) and runs node's test
	// runner over Paths inside the build output, reading its TAP report.
	RunnerNodeTest Runner = "node-test"
	// RunnerTSC type-checks with TSConfig (tsc --noEmit); the project is one
	// test, which fails if tsc reports any error.
	RunnerTSC Runner = "tsc"
)

// Suite is a versioned set of cases. Versions are immutable once used: the
// fingerprint is what a run records to prove which suite graded it.
type Suite struct {
	// Dir is the absolute directory the suite was loaded from.
	Dir string
	// Name and Version identify the suite in grades ("dev@1.0.0").
	Name    string
	Version string
	// Fingerprint is the SHA-256 (hex) over every file of the suite in a
	// canonical order; see Fingerprint.
	Fingerprint string
	// Cases in the order suite.yaml lists them.
	Cases []*Case
}

// Case is one coding task.
type Case struct {
	// Dir is the absolute directory of the case.
	Dir      string
	Name     string
	Language Language
	Summary  string
	// Protected holds glob patterns (relative to the workspace, "**" allowed)
	// of files the agent must not change, add or delete.
	Protected []string
	// WorkspaceDir is the absolute starter directory the agent sees.
	WorkspaceDir string
	// ChecksDir is the absolute directory of frozen checks, mounted at
	// /checks in the grading container and never shown to the agent.
	ChecksDir string
	Phases    []*Phase
	Controls  []*Control
	// CorpusDir, when set, is the absolute directory of the files the
	// first prompt must draw on (see orchestrator/longctx).
	CorpusDir string
}

// Phase is one user request of a case. Phase 1 is the first; later phases
// are follow-up requests in the same conversation.
type Phase struct {
	// Number counts from 1.
	Number int
	// Prompt is the text of the user message that opens the phase.
	Prompt string
	// PromptFile is the absolute path the prompt was read from.
	PromptFile string
	// OverlayDir, when set, is an absolute directory whose files are added to
	// the workspace as the phase begins (its contract, new public tests).
	OverlayDir string
	// ReferenceDir is the absolute directory of the reference solution for
	// this phase, an overlay on the workspace as it stands when the phase
	// begins (starter, earlier references, this phase's overlay).
	ReferenceDir string
	Groups       []*Group
}

// Group is a named check the grader runs for a phase.
type Group struct {
	Name   string
	Runner Runner
	// Paths are test paths for pytest (relative to /workspace, or absolute
	// under /checks; a path may end in a node id selecting tests inside its
	// file, "test_x.py::TestA::test_y") and, for node-test, paths inside the tsc output
	// directory (which mirrors the file system from "/").
	Paths []string
	// TSConfig is the tsconfig.json tsc uses (node-test, tsc runners), an
	// absolute path under /checks.
	TSConfig string
	// Timeout bounds the whole group.
	Timeout time.Duration
	// Required groups decide "solved"; an optional group is reported only.
	Required bool
	// Tests is how many tests the group runs (pytest, node-test; 0 when
	// not declared). An answer that ends the test process early with
	// status 0 (pytest.exit, process.exit) leaves a report of the tests run
	// so far, all passing: the grader fails a group whose report counts
	// other than this many, and 'cases check' requires it to be declared.
	Tests int
	// Keyword, for pytest, selects tests by keyword expression (pytest -k),
	// so a group can run a subset of a file without a copy of it.
	Keyword string
}

// Control is a negative control: a deliberately wrong answer that the
// frozen checks must reject, proving they test what the contract says.
type Control struct {
	Name string
	// Phase the control answers (1-based).
	Phase int
	// OverlayDir is laid over the workspace as it stands when the phase
	// begins (starter, earlier references, this phase's overlay).
	OverlayDir string
	// MustFail maps a group name to the test ids it must fail. An empty list
	// means the group as a whole must fail, whichever tests do.
	MustFail map[string][]string
	// Why says what mistake the control stands for.
	Why string
}

// Phase returns phase n (1-based), or nil.
func (c *Case) Phase(n int) *Phase {
	if n < 1 || n > len(c.Phases) {
		return nil
	}
	return c.Phases[n-1]
}

// Case returns the case with the given name, or nil.
func (s *Suite) Case(name string) *Case {
	for _, c := range s.Cases {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ID is the suite's label (see Label), the key under which grades are
// stored.
func (s *Suite) ID() string { return Label(s.Name, s.Version) }

// Label is "name@version", how a version of a suite is named everywhere:
// grade directories, reports, regrades.
func Label(name, version string) string { return name + "@" + version }
