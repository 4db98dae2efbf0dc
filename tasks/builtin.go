package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/evalctl/evalctl"
)

// Builtin is the development suite built into the binary
// (evalctl.DevSuite), written once under the user's cache directory so
// that commands run from any directory.
func Builtin() (*Suite, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sub, err := fs.Sub(evalctl.DevSuite, "cases")
	if err != nil {
		return nil, err
	}
	return Materialize(sub, filepath.Join(cache, "evalctl", "suites"))
}

// LoadDefault loads the suite in dir; with no dir, ./cases when it holds a
// suite (a checkout), else the built-in one.
func LoadDefault(dir string) (*Suite, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, SuiteFile)); errors.Is(err, os.ErrNotExist) {
			return nil, evalctl.Usage(fmt.Errorf("suite %s: no such suite (no %s there)", dir, filepath.Join(dir, SuiteFile)))
		}
		return LoadSuite(dir)
	}
	if _, err := os.Stat(filepath.Join("cases", "suite.yaml")); err == nil {
		return LoadSuite("cases")
	}
	return Builtin()
}

// LoadDefaultPartial is LoadDefault that returns every case that does not
// load beside the suite of those that do (see LoadSuitePartial).
func LoadDefaultPartial(dir string) (*Suite, []*CaseError, error) {
	if dir == "" {
		if _, err := os.Stat(filepath.Join("cases", "suite.yaml")); err != nil {
			s, err := Builtin()
			return s, nil, err
		}
		dir = "cases"
	}
	return LoadSuitePartial(dir)
}
