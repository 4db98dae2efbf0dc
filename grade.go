package evalctl

import (
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
	TimedOut         bool     `json:"timed_out,omitempty"`
	ExitCode         int      `json:"exit_code"`
	// Output is the tail of the group's output, for a person reading why.
	Output  string  `json:"output,omitempty"`
	Seconds float64 `json:"seconds"`
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
