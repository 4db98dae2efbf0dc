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
	"regexp"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/internal/yamlcheck"
	screens "github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/serving"
)

var updateRef = flag.Bool("update", false, "rewrite the generated plan reference (../docs/plan.md)")

//go:generate go test -run TestPlanReference -update .

// TestPlanReference generates the plan reference from the types the
// loaders decode and fails when docs/plan.md differs: a field added to a
// plan, arm, profile or screen spec is documented by running 'go generate
// ./orchestrator'. What the reference says of a field is what the decoder
// enforces, from the same source: its type as the decoder names it in
// errors, the values its `range` and `enum` tags allow, the default its
// `default` tag gives (applied by the loaders, see TestPlanDefaults), and
// its doc comment, in the user's words (no Go identifier).
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
A test fails when this file and the types disagree. The type, the allowed values and the
default of each field are the ones the decoder enforces (the same tags drive both). Every
field is optional unless its description says otherwise; a field left out takes its
default. A value of the wrong type, outside what is allowed, or an unknown field (with the
closest known name) is an error naming the file, the line and the field path, and every
such mistake of a file is reported at once.

`)
	section := func(title, intro string, t reflect.Type, prefix string) {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n| field | type | allowed | default | meaning |\n|---|---|---|---|---|\n", title, intro)
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
	for _, m := range goIdentifier.FindAllString(b.String(), -1) {
		if !wordsOK[m] {
			t.Errorf("the reference names %q, a Go identifier, not the user's word: say it as the file or the user does", m)
		}
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
		allowed := ""
		switch {
		case f.Range != "":
			allowed = yamlcheck.DescribeRange(f.Range)
		case f.Enum != "":
			allowed = "one of " + strings.ReplaceAll(f.Enum, ",", ", ")
		}
		def := ""
		if f.Default != "" {
			def = "`" + f.Default + "`"
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
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", path, f.TypeOf(), allowed, def, doc)
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

// goIdentifier matches words spelt as Go names are (mixedCaps), which a
// reference in the user's words does not hold; wordsOK are the English
// words of that shape it may.
var goIdentifier = regexp.MustCompile(`\b[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*\b`)

var wordsOK = map[string]bool{"TypeScript": true, "JavaScript": true, "OpenAI": true, "IDs": true, "vLLM": true}

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
