// Package evalctl carries what the evalctl binary needs wherever it is
// installed: the development suite, embedded, so that 'evalctl demo' runs on
// its built-in cases from any directory, not only from a checkout.
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
