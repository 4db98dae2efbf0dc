package evalctl

import (
	"encoding/json"
	"time"
)

// Grade is the verdict on one answer snapshot for one case phase under one
// suite version. It is stored as JSON beside the attempt, keyed by suite
// name and version, and never rewritten: a regrade adds another Grade.
type Grade struct {
	Suite            string `json:"suite"`
	SuiteVersion     string `json:"suite_version"`
	SuiteFingerprint string `json:"suite_fingerprint"`
	Case             string `json:"case"`
	Phase            int    `json:"phase"`
	// SnapshotSHA256 identifies the graded answer (the canonical tarball).
	SnapshotSHA256 string `json:"snapshot_sha256"`
	ImageID        string `json:"image_id"`
	// Engine names the Docker Engine the grade ran on (a sandbox host's
	// name, or "local"); empty when no container ran (an answer too large).
	Engine string `json:"engine,omitempty"`
	// ProtectedChanges lists protected files the answer modified, added or
	// deleted; they were restored before any check ran.
	ProtectedChanges      []string `json:"protected_changes"`
	ProtectedChangesCount int      `json:"protected_changes_count"`
	// MissingStarterFiles lists unprotected starter files the answer deleted.
	MissingStarterFiles      []string `json:"missing_starter_files"`
	MissingStarterFilesCount int      `json:"missing_starter_files_count"`
	// AnswerTooLarge is set when the answer's files (caches left out)
	// exceeded what a snapshot keeps: no group ran and the grade fails
	// (sandbox.TooLargeMarker). An answer cannot make itself unscored.
	AnswerTooLarge bool          `json:"answer_too_large,omitempty"`
	Groups         []GroupResult `json:"groups"`
	// Shadowed lists answer files Python never imports while grading
	// because a standard-library or image module has their name
	// (tasks.Shadowed): the tests ran against that module instead.
	Shadowed []string `json:"shadowed,omitempty"`
	// Solved is no protected change, no missing starter file and every
	// required group succeeded.
	Solved   bool      `json:"solved"`
	GradedAt time.Time `json:"graded_at"`
	Seconds  float64   `json:"seconds"`
}

// GroupResult is the outcome of one check group.
type GroupResult struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Passed   int    `json:"passed"`
	Failed   int    `json:"failed"`
	Total    int    `json:"total"`
	// Declared is the number of tests the case declares for the group (0:
	// not declared); a report counting other than that fails the group.
	Declared int `json:"declared,omitempty"`
	// Success is exit status zero, at least one test run, none failed and,
	// where the case declares a count, exactly that many run.
	Success bool `json:"success"`
	// FailedTests names the failed tests (see cases/README.md for ids).
	FailedTests []string `json:"failed_tests,omitempty"`
	// TestIDs and FailedIDs are the qualified ids (pytest: JUnit classname
	// and name, "test_p.TestA.test_empty") of every test run and of those
	// failed; see ids.go. CollectionErrors names the modules pytest could not
	// import (an import error of the answer).
	TestIDs          []string `json:"test_ids,omitempty"`
	FailedIDs        []string `json:"failed_ids,omitempty"`
	CollectionErrors []string `json:"collection_errors,omitempty"`
	// CollectionError, set when CollectionErrors is, says why in the
	// user's words: "the tests could not be collected: test_acc:
	// ImportError: cannot import name 'add' from 'adder'". It is not a
	// session cut short (tampering), which fails with exit status 3.
	CollectionError string `json:"collection_error,omitempty"`
	// Unrepresentable names the failed tests during which the boundary met
	// a construct of the tests' it cannot carry to the answer (a module
	// they handed over, a value nested too deeply), each with what it was;
	// UnrepresentableCount is how many. Such a failure says nothing of the
	// answer: see OnlyUnrepresentable and docs/boundary.md.
	Unrepresentable      []UnrepresentableTest `json:"unrepresentable,omitempty"`
	UnrepresentableCount int                   `json:"unrepresentable_count,omitempty"`
	TimedOut             bool                  `json:"timed_out,omitempty"`
	ExitCode             int                   `json:"exit_code"`
	// Output is the tail of the group's output, for a person reading why.
	Output  string  `json:"output,omitempty"`
	Seconds float64 `json:"seconds"`
	// CountsUnknown is set for a group read from a grade that records no
	// test counts (one imported from another harness keeps only the
	// verdict): Passed, Failed and Total are then unknown, not 0, and
	// Success is the recorded verdict, which no count can contradict. The
	// group is written back without counts.
	CountsUnknown bool `json:"-"`
}

// UnrepresentableTest is a failed test whose failure the grading
// boundary caused: Construct says what it could not carry.
type UnrepresentableTest struct {
	Test      string `json:"test"`
	Construct string `json:"construct"`
}

// ExitTestsFailed is the exit status of a test run (pytest, node --test)
// whose tests ran and some failed: nothing else went wrong.
const ExitTestsFailed = 1

// OnlyUnrepresentable reports whether the group fails only because of
// tests the boundary cannot represent: every failed test is one, and
// nothing else went wrong (the run ended with the status of failed tests,
// in time, with the tests the case declares).
func (g *GroupResult) OnlyUnrepresentable() bool {
	return GroupOnlyUnrepresentable(g.Success, g.CountsUnknown, g.Failed, g.UnrepresentableCount, g.Total, g.Declared, g.ExitCode, g.TimedOut)
}

// GroupOnlyUnrepresentable is OnlyUnrepresentable over a group's figures
// (the export's evidence carries these, not the whole result).
func GroupOnlyUnrepresentable(success, countsUnknown bool, failed, unrepresentable, total, declared, exitCode int, timedOut bool) bool {
	return !success && !countsUnknown && unrepresentable > 0 && failed == unrepresentable && total > 0 &&
		(declared == 0 || total == declared) && exitCode == ExitTestsFailed && !timedOut
}

// BlockedByBoundary reports whether the grade falls short of solved only
// because of tests the boundary cannot represent: no protected change, no
// missing starter file, the answer not too large, and every required group
// that failed failed only for them. Such a grade is no verdict on the
// answer: Score leaves the attempt ungraded rather than not functional.
func (g *Grade) BlockedByBoundary() bool {
	if g.Solved || g.AnswerTooLarge || g.ProtectedChangesCount > 0 || g.MissingStarterFilesCount > 0 {
		return false
	}
	blocked := false
	for i := range g.Groups {
		gr := &g.Groups[i]
		if !gr.Required || gr.Success {
			continue
		}
		if !gr.OnlyUnrepresentable() {
			return false
		}
		blocked = true
	}
	return blocked
}

// groupJSON is GroupResult's JSON form.
type groupJSON GroupResult

// UnmarshalJSON reads a group, noting a grade that gives no test counts
// (no "total") as CountsUnknown.
func (g *GroupResult) UnmarshalJSON(data []byte) error {
	var probe struct {
		Total *json.RawMessage `json:"total"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	if err := json.Unmarshal(data, (*groupJSON)(g)); err != nil {
		return err
	}
	g.CountsUnknown = probe.Total == nil
	return nil
}

// MarshalJSON writes a group; one whose counts are unknown is written
// without them, as it was read.
func (g GroupResult) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(groupJSON(g))
	if err != nil || !g.CountsUnknown {
		return data, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "passed")
	delete(m, "failed")
	delete(m, "total")
	return json.Marshal(m)
}

// Group returns the result of the named group, or nil.
func (g *Grade) Group(name string) *GroupResult {
	for i := range g.Groups {
		if g.Groups[i].Name == name {
			return &g.Groups[i]
		}
	}
	return nil
}
