package evalctl_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may grow (its signature line to
// its closing brace): a longer one is split where its stages are.
const maxFuncLines = 80

// shortFuncDirs are the trees whose functions are held to maxFuncLines
// ("." is the root package alone). Tests are not.
var shortFuncDirs = []string{".", "results"}

// longFuncs lists the functions of the Go file src (at path) longer than
// maxFuncLines.
func longFuncs(path string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
			out = append(out, fmt.Sprintf("%s: %s is %d lines (at most %d: split it where its stages are)", fset.Position(fd.Pos()), fd.Name.Name, n, maxFuncLines))
		}
	}
	return out, nil
}

// TestFunctionsShort: no function of the root package or of results/ is
// over maxFuncLines.
func TestFunctionsShort(t *testing.T) {
	for _, dir := range shortFuncDirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != dir && (dir == "." || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			long, err := longFuncs(p, src)
			for _, msg := range long {
				t.Error(msg)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestLongFuncsFound: a function over the limit is found, one at it is
// not.
func TestLongFuncsFound(t *testing.T) {
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	src := "package p\n\n" + body("atLimit", maxFuncLines) + body("over", maxFuncLines+1)
	got, err := longFuncs("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0], "over is 81 lines") {
		t.Errorf("got %q, want only over, at 81 lines", got)
	}
}
