package tasks

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Materialize writes a suite held in fsys (suite.yaml at its root) to a
// directory under cacheDir named after the suite and its fingerprint, once,
// and loads it from there. Runs record their suite's directory, so a suite
// that lives only inside the binary needs a stable place on disk for
// resume and regrade to find it again; a copy whose fingerprint no longer
// matches (edited by hand) is written afresh.
func Materialize(fsys fs.FS, cacheDir string) (*Suite, error) {
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("materialize suite: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".suite-")
	if err != nil {
		return nil, fmt.Errorf("materialize suite: %w", err)
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return nil, fmt.Errorf("materialize suite: %w", err)
	}
	s, err := LoadSuite(tmp)
	if err != nil {
		return nil, fmt.Errorf("materialize suite: %w", err)
	}
	if strings.ContainsAny(s.Name+s.Version, `/\`) {
		return nil, fmt.Errorf("materialize suite: name %q or version %q holds a path separator", s.Name, s.Version)
	}
	final := filepath.Join(cacheDir, s.ID()+"-"+s.Fingerprint[:16])
	same := func() (*Suite, bool) {
		have, err := LoadSuite(final)
		return have, err == nil && have.Fingerprint == s.Fingerprint
	}
	if have, ok := same(); ok {
		return have, nil
	}
	if err := os.RemoveAll(final); err != nil {
		return nil, fmt.Errorf("materialize suite: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another evalctl may have put the same suite there meanwhile.
		if have, ok := same(); ok {
			return have, nil
		}
		return nil, fmt.Errorf("materialize suite: %w", err)
	}
	return LoadSuite(final)
}
