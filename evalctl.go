// Package evalctl holds the records every other package shares, in their
// on-disk JSON form: one type for every file of a run directory (the plan
// as registered, the run, the event log, each attempt with its turns and
// measurements, the grade of an answer snapshot, regrade records, server
// identities; docs/records.md maps them) and the outcome the scoring rules
// (Score) derive from them. It imports only the standard library, so that
// anything may depend on the records without linking Docker or a model
// client (imports_test.go pins this and the rest of the package graph).
//
// It also carries what the evalctl binary needs wherever it is installed:
// the development suite, embedded, so that 'evalctl demo' runs on its
// built-in cases from any directory, not only from a checkout, and
// UsageError, how any package says the user asked for the work wrongly.
package evalctl

import "embed"

// DevSuite is the development suite (the cases/ directory: suite.yaml at
// the root of "cases", one directory per case). Files whose names begin
// with "." or "_" are not embedded; a test checks that the embedded suite's
// fingerprint equals the directory's, so none of the suite's files is left
// out.
//
//go:embed cases
var DevSuite embed.FS

// PlanReference is docs/plan.md, the reference of every plan, arm, profile
// and screen-spec field, generated from the types ('go generate
// ./orchestrator'); 'evalctl run --help-plan' prints it.
//
//go:embed docs/plan.md
var PlanReference string
