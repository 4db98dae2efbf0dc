package evalctl_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// citedFile matches what a comment cites as a file of the repository: a
// document (.md) or a Go file, with or without a directory.
var citedFile = regexp.MustCompile(`(?:^|[\s("'` + "`" + `])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.(?:md|go))\b`)

// repoFiles lists every file under the module root (.git left out), by
// path and by base name.
func repoFiles(t *testing.T) (paths, bases map[string]bool, goFiles []string) {
	t.Helper()
	paths, bases = map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		paths[filepath.ToSlash(p)] = true
		bases[d.Name()] = true
		if strings.HasSuffix(p, ".go") {
			goFiles = append(goFiles, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(goFiles)
	return paths, bases, goFiles
}

// uncitable lists the files the comments of the Go file src (at path)
// cite that are not in the repository: neither a path from the module
// root or from the file's directory, nor the name of a file somewhere in
// it.
func uncitable(path string, src []byte, paths, bases map[string]bool) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	dir := filepath.ToSlash(filepath.Dir(path))
	var out []string
	for _, g := range f.Comments {
		for _, c := range g.List {
			for _, line := range strings.Split(c.Text, "\n") {
				if strings.HasPrefix(line, "//\t") || strings.HasPrefix(line, "//  ") {
					continue // a preformatted block: a layout or an example, not a citation
				}
				for _, m := range citedFile.FindAllStringSubmatch(line, -1) {
					if name := m[1]; !inRepo(name, dir, paths, bases) {
						out = append(out, fmt.Sprintf("%s: a comment cites %s, which is not in the repository", fset.Position(c.Pos()), name))
					}
				}
			}
		}
	}
	return out, nil
}

// inRepo is whether name is a path from the module root or from dir, or
// the name of a file somewhere in the repository.
func inRepo(name, dir string, paths, bases map[string]bool) bool {
	return paths[name] || paths[filepath.ToSlash(filepath.Join(dir, name))] || (!strings.Contains(name, "/") && bases[name])
}

// TestCommentsCiteRepositoryFiles: every document or Go file a code
// comment names is in the repository, so a reader can follow it.
func TestCommentsCiteRepositoryFiles(t *testing.T) {
	paths, bases, goFiles := repoFiles(t)
	for _, p := range goFiles {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bad, err := uncitable(p, src, paths, bases)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range bad {
			t.Error(msg)
		}
	}
}

// TestUncitableFound: a comment citing a file the repository lacks is
// found; one citing a file it has, by path or by name, is not.
func TestUncitableFound(t *testing.T) {
	paths := map[string]bool{"docs/plan.md": true, "grader/ids.go": true, "pkg/local.md": true}
	bases := map[string]bool{"plan.md": true, "ids.go": true, "local.md": true}
	src := []byte(`package p

// As docs/plan.md says, and ids.go, and local.md beside this file.
// As NOTES.md says (see docs/missing.md).
//
//	layout/of/another.md tree, shown, not cited
var x int
`)
	got, err := uncitable("pkg/p.go", src, paths, bases)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"NOTES.md", "docs/missing.md"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want citations of %q", got, want)
	}
	for i, w := range want {
		if !strings.Contains(got[i], "cites "+w+",") {
			t.Errorf("got %q, want a citation of %s", got[i], w)
		}
	}
}
