package orchestrator

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/internal/yamlcheck"
	screens "github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/serving"
)

var updateRef = flag.Bool("update", false, "rewrite the generated plan reference (../docs/plan.md)")

//go:generate go test -run TestPlanReference -update .

// TestPlanReference generates the plan reference from the types the
// loaders decode (their yaml tags, `range` tags and doc comments) and fails
// when docs/plan.md differs: a field added to a plan, arm, profile or
// screen spec is documented by running 'go generate ./orchestrator'.
func TestPlanReference(t *testing.T) {
	docs, err := fieldDocs(".", "serving", "screen", "longctx", "..")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../examples/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var undocumented []string
	b.WriteString(`# Plan reference

Generated from the Go types the loaders decode (` + "`go generate ./orchestrator`" + `); do not edit.
A test fails when this file and the types disagree. Every field is optional unless its
description says otherwise; a number outside its range is an error naming the field and
the line, and so is an unknown field (with the closest known name).

`)
	section := func(title, intro string, t reflect.Type, prefix string) {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n| field | type | range | meaning |\n|---|---|---|---|\n", title, intro)
		writeFields(&b, docs, t, prefix, &undocumented)
		b.WriteString("\n")
	}
	section("Plan", "The file given to `evalctl run --plan`.", reflect.TypeOf(planYAML{}), "")
	section("Arm", "One entry of `arms` (inline), or a file named by `arms[].file` holding the same fields.", reflect.TypeOf(armRef{}), "")
	section("Server profile", "The file named by an arm's `profile`, a screen mode's `profile`, or `evalctl capacity --profile`. "+
		"`command`, `env` and `hash_files` may use `{{host}}`, `{{port}}`, `{{model}}`, `{{ctx_size}}`, `{{evalctl}}` and `{{profile_dir}}`.",
		reflect.TypeOf(serving.Profile{}), "")
	section("Screen spec", "The file given to `evalctl screen --spec`.", reflect.TypeOf(screens.Spec{}), "")
	b.WriteString("## Annotated example\n\n`examples/full.yaml`, which a test loads as a plan:\n\n```yaml\n")
	b.Write(example)
	b.WriteString("```\n")

	if len(undocumented) > 0 {
		t.Errorf("fields without a doc comment (the reference would say nothing of them): %s", strings.Join(undocumented, ", "))
	}
	const file = "../docs/plan.md"
	if *updateRef {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run 'go generate ./orchestrator')", err)
	}
	if string(have) != b.String() {
		t.Errorf("%s is out of date with the plan types: run 'go generate ./orchestrator'", file)
	}
}

func writeFields(b *strings.Builder, docs map[string]string, t reflect.Type, prefix string, undocumented *[]string) {
	for _, f := range yamlcheck.Fields(t) {
		path := prefix + f.Name
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		rng := ""
		if f.Range != "" {
			rng = yamlcheck.DescribeRange(f.Range)
		}
		doc := docs[f.Owner.Name()+"."+f.GoName]
		if doc == "" {
			*undocumented = append(*undocumented, f.Owner.Name()+"."+f.GoName)
		}
		// "Seed fixes ..." reads "`seed` fixes ..." in the reference.
		if rest, ok := strings.CutPrefix(doc, f.GoName+" "); ok {
			doc = "`" + f.Name + "` " + rest
		} else if rest, ok := strings.CutPrefix(doc, f.GoName+", "); ok {
			doc = "`" + f.Name + "`, " + rest
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", path, yamlcheck.TypeName(f.Type), rng, doc)
		switch {
		case ft.Kind() == reflect.Struct && yamlcheck.TypeName(ft) == "mapping":
			writeFields(b, docs, ft, path+".", undocumented)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && yamlcheck.TypeName(ft.Elem()) == "mapping":
			if ft.Elem() == reflect.TypeOf(armRef{}) {
				continue // its own section
			}
			writeFields(b, docs, ft.Elem(), path+"[].", undocumented)
		}
	}
}

// fieldDocs reads the doc comments of struct fields in the Go files of the
// given directories, keyed "Type.Field", as one line of Markdown.
func fieldDocs(dirs ...string) (map[string]string, error) {
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fld := range st.Fields.List {
					text := fld.Doc.Text()
					if text == "" {
						text = fld.Comment.Text()
					}
					text = strings.Join(strings.Fields(text), " ")
					text = strings.ReplaceAll(text, "|", "\\|")
					for _, id := range fld.Names {
						out[ts.Name.Name+"."+id.Name] = text
					}
				}
				return true
			})
		}
	}
	return out, nil
}
