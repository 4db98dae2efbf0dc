package evalctl_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may grow (its signature line to
// its closing brace): a longer one is split where its stages are.
const maxFuncLines = 80

// stillLong lists the functions still over maxFuncLines, each with its
// length when listed: they are in files other work was changing when the
// rest of the module was split at its stages. The list is a ratchet: it
// may only shrink. A function split below the limit must leave it (the
// test fails while it is listed), and nothing new may join it.
var stillLong = map[string]int{}

// longFunc is a function over maxFuncLines: its key in stillLong
// (path:Func or path:Type.Method), where it starts and its length.
type longFunc struct {
	key, pos string
	lines    int
}

// longFuncs lists the functions of the Go file src (at path, slash
// separated) longer than maxFuncLines.
func longFuncs(path string, src []byte) ([]longFunc, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0)
	if err != nil {
		return nil, err
	}
	var out []longFunc
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
			out = append(out, longFunc{key: path + ":" + funcName(fd), pos: fset.Position(fd.Pos()).String(), lines: n})
		}
	}
	return out, nil
}

// funcName is a function's name, a method's prefixed by its receiver's
// type (Container.Exec), so two types' methods of one name differ.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr: // a generic type's method
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// moduleGoFiles lists the module's non-test Go files the go tool builds:
// every directory but testdata and those it ignores ("." or "_" first).
func moduleGoFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFunctionsShort: no function of the module (tests aside) is over
// maxFuncLines, but those stillLong lists, and each of those is still
// over it and no longer than listed.
func TestFunctionsShort(t *testing.T) {
	var long []longFunc
	for _, p := range moduleGoFiles(t) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := longFuncs(p, src)
		if err != nil {
			t.Fatal(err)
		}
		long = append(long, fs...)
	}
	for _, msg := range ratchet(long, stillLong) {
		t.Error(msg)
	}
}

// ratchet holds the long functions found against the list of those
// allowed: one not listed, one grown past its listed length and a listed
// one no longer found long are each a problem.
func ratchet(long []longFunc, listed map[string]int) []string {
	var out []string
	found := map[string]bool{}
	for _, f := range long {
		found[f.key] = true
		n, ok := listed[f.key]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s is %d lines (at most %d: split it where its stages are)", f.pos, f.key, f.lines, maxFuncLines))
		case f.lines > n:
			out = append(out, fmt.Sprintf("%s: %s grew to %d lines (listed in stillLong at %d, at most %d: split it where its stages are)", f.pos, f.key, f.lines, n, maxFuncLines))
		}
	}
	var gone []string
	for key := range listed {
		if !found[key] {
			gone = append(gone, key)
		}
	}
	sort.Strings(gone)
	for _, key := range gone {
		out = append(out, fmt.Sprintf("%s is listed in stillLong but is not over %d lines (or is gone): remove it from the list", key, maxFuncLines))
	}
	return out
}

// TestRatchet: an unlisted long function, a listed one that grew and a
// listed one now short are each reported; a listed one as long as listed
// or shorter (still over the limit) is not.
func TestRatchet(t *testing.T) {
	long := []longFunc{
		{key: "a.go:new", pos: "a.go:1:1", lines: 90},
		{key: "a.go:grew", pos: "a.go:9:1", lines: 95},
		{key: "a.go:same", pos: "a.go:20:1", lines: 85},
		{key: "a.go:shrank", pos: "a.go:30:1", lines: 82},
	}
	listed := map[string]int{"a.go:grew": 91, "a.go:same": 85, "a.go:shrank": 88, "a.go:split": 120}
	got := ratchet(long, listed)
	want := []string{"a.go:new is 90 lines", "a.go:grew grew to 95 lines", "a.go:split is listed in stillLong but is not over"}
	if len(got) != len(want) {
		t.Fatalf("got %d problems %q, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("problem %d: got %q, want it to say %q", i, got[i], w)
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
	if len(got) != 1 || got[0].key != "p.go:over" || got[0].lines != 81 {
		t.Errorf("got %+v, want only over, at 81 lines", got)
	}
}
