package tasks

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/evalctl/evalctl/internal/yamlcheck"
)

// CaseError is a case of a suite that did not load.
type CaseError struct {
	Case string
	Err  error
}

func (e *CaseError) Error() string { return fmt.Sprintf("case %s: %v", e.Case, e.Err) }

func (e *CaseError) Unwrap() error { return e.Err }

// LoadSuitePartial is LoadSuite for a gate over many cases: a case that
// does not load is returned as a CaseError (every one of them, not only
// the first) and left out of the suite, whose other cases load as usual.
// The suite file itself, and the fingerprint, must still be good. Use it
// to check or report; a run needs LoadSuite, all or nothing.
func LoadSuitePartial(dir string) (*Suite, []*CaseError, error) {
	s, err := LoadSuite(dir)
	if err == nil {
		return s, nil, nil
	}
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		return nil, nil, err
	}
	file := filepath.Join(abs, SuiteFile)
	var sy suiteYAML
	if _, derr := yamlcheck.DecodeFile(file, &sy); derr != nil {
		return nil, nil, err
	}
	// Load each case on its own.
	s = &Suite{Dir: abs, Name: sy.Name, Version: sy.Version}
	var bad []*CaseError
	seen := map[string]bool{}
	for _, name := range sy.Cases {
		if seen[name] {
			bad = append(bad, &CaseError{Case: name, Err: fmt.Errorf("%s: duplicate case %q", file, name)})
			continue
		}
		seen[name] = true
		c, cerr := LoadCase(filepath.Join(abs, name))
		if cerr == nil && c.Name != name {
			cerr = fieldErr(&yamlcheck.Doc{File: filepath.Join(c.Dir, CaseFile)})("name", fmt.Sprintf("%q differs from its directory name %q", c.Name, name))
		}
		if cerr != nil {
			bad = append(bad, &CaseError{Case: name, Err: cerr})
			continue
		}
		s.Cases = append(s.Cases, c)
	}
	if len(bad) == 0 {
		return nil, nil, err // the suite file itself is at fault
	}
	fp, ferr := Fingerprint(abs)
	if ferr != nil {
		return nil, nil, errors.Join(err, ferr)
	}
	s.Fingerprint = fp
	return s, bad, nil
}
