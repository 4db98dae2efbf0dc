package yamlcheck

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type inner struct {
	Temperature *float64 `yaml:"temperature" range:"0,2"`
	TopK        int      `yaml:"top_k" range:"0,"`
}

type outer struct {
	Name  string         `yaml:"name"`
	Items []inner        `yaml:"items"`
	Free  map[string]any `yaml:"free"`
	On    bool           `yaml:"on"`
}

func TestDecode(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ok", "name: x\nitems:\n  - {temperature: 0.5, top_k: 3}\nfree: {a: [1, 2]}\non: true\n", ""},
		{"unknown", "nmae: x\n", `f.yaml:1: unknown field "nmae"; did you mean "name"?`},
		{"nested unknown", "name: x\ntemperature: 1\n", `f.yaml:2: unknown field "temperature"; did you mean items[].temperature?`},
		{"range", "items:\n  - {temperature: 2.5}\n", `f.yaml:2: items[0].temperature: 2.5 is out of range: from 0 to 2`},
		{"negative", "items:\n  - top_k: -1\n", `f.yaml:2: items[0].top_k: -1 is out of range: at least 0`},
		{"quoted", "items:\n  - temperature: '1'\n", `f.yaml:2: items[0].temperature: expected a number, got the text "1" (drop the quotes)`},
		{"float for int", "items:\n  - top_k: 1.5\n", `f.yaml:2: items[0].top_k: expected a whole number, got 1.5`},
		{"bool", "on: yes please\n", `f.yaml:1: on: expected true or false, got the text "yes please"`},
		{"scalar for list", "items: 3\n", `f.yaml:1: items: expected a list (- item lines, or [a, b]), got the number 3`},
		{"tab", "name: x\nitems:\n\t- top_k: 1\n", `f.yaml:3: a tab indents this line; YAML indents with spaces only`},
		{"empty", "", `f.yaml: empty file`},
		{"two documents", "name: x\n---\nname: y\n", `f.yaml: holds more than one YAML document (a line with ---); keep one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v outer
			_, err := Decode("f.yaml", []byte(tt.in), &v)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestDocLine(t *testing.T) {
	var v outer
	doc, err := Decode("f.yaml", []byte("name: x\nitems:\n  - top_k: 1\n  - temperature: 1\n    top_k: 2\n"), &v)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"name": 1, "items": 2, "items[1]": 4, "items[1].top_k": 5, "items[1].missing": 4, "nothing": 1} {
		if got := doc.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"max_tokens", "sampling", "budgets"}
	for in, want := range map[string]string{"max_token": "max_tokens", "budget": "budgets", "zzz": "", "sampl": "sampling"} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeFile(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/f.yaml"
	var v outer
	if _, err := DecodeFile(f, &v); err == nil || !strings.Contains(err.Error(), f) {
		t.Fatalf("missing file: %v, want an error naming %s", err, f)
	}
	os.WriteFile(f, []byte("name: x\n---\nname: y\n"), 0o644)
	if _, err := DecodeFile(f, &v); err == nil || err.Error() != f+": holds more than one YAML document (a line with ---); keep one" {
		t.Fatalf("trailing document: %v", err)
	}
	os.WriteFile(f, []byte("name: x\nitems: [{top_k: 2}]\n"), 0o644)
	doc, err := DecodeFile(f, &v)
	if err != nil || v.Name != "x" || v.Items[0].TopK != 2 {
		t.Fatalf("decoded %+v, %v", v, err)
	}
	if got, want := doc.Errorf(Path("items", 0, "top_k"), "%d is odd", 3).Error(), f+":2: items[0].top_k: 3 is odd"; got != want {
		t.Fatalf("Errorf = %s, want %s", got, want)
	}
}

type typed struct{ v string }

func (typed) YAMLType() string { return "a word of two letters" }

func (t *typed) UnmarshalYAML(n *yaml.Node) error {
	if len(n.Value) != 2 {
		return fmt.Errorf("line %d: %q has not two letters", n.Line, n.Value)
	}
	t.v = n.Value
	return nil
}

type tagged struct {
	Policy string  `yaml:"policy" enum:"interleaved,sequential" default:"interleaved"`
	Code   typed   `yaml:"code"`
	Rate   float64 `yaml:"rate" range:"0,1"`
	Name   string  `yaml:"name"`
	Items  []inner `yaml:"items"`
}

// TestDecodeReportsEveryProblem: every mistake of a file comes back at
// once, in line order, each with its line and field path; what was not
// wrong is decoded (a wrong field left unset) and Doc.Reported tells the
// loader which fields not to check again.
func TestDecodeReportsEveryProblem(t *testing.T) {
	in := "policy: interleavd\ncode: abc\nrate: 3\nnmae: x\nname: ok\nitems:\n  - top_k: [1]\n  - top_k: 4\n    temperature: 1\n"
	var v tagged
	doc, err := Decode("f.yaml", []byte(in), &v)
	want := []string{
		`f.yaml:1: policy: "interleavd" is not one of interleaved, sequential (did you mean "interleaved"?)`,
		`f.yaml:2: code: "abc" has not two letters`,
		`f.yaml:3: rate: 3 is out of range: from 0 to 1`,
		`f.yaml:4: unknown field "nmae"; did you mean "name"?`,
		`f.yaml:7: items[0].top_k: expected a whole number, got a list`,
	}
	var list Errors
	if !errors.As(err, &list) || err.Error() != strings.Join(want, "\n") || len(list.Errors()) != len(want) {
		t.Fatalf("got\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
	if doc == nil || v.Name != "ok" || len(v.Items) != 2 || v.Items[0].TopK != 0 || v.Items[1].TopK != 4 || v.Code.v != "" {
		t.Errorf("decoded %+v", v)
	}
	for path, want := range map[string]bool{"policy": true, "code": true, "nmae": true, "items[0].top_k": true, "items[0]": false,
		"items[1].top_k": false, "name": false, "items[0].top_k.x": true} {
		if got := doc.Reported(path); got != want {
			t.Errorf("Reported(%q) = %v, want %v", path, got, want)
		}
	}
	if !doc.Has("items[1].temperature") || doc.Has("items[0].temperature") || doc.Has("rate.x") {
		t.Error("Has is wrong")
	}
	var ye *Error
	if !errors.As(err, &ye) || ye.Line != 1 {
		t.Errorf("errors.As(*Error) = %v", ye)
	}
	// One problem is the one *Error, as before.
	if _, err := Decode("f.yaml", []byte("rate: 2\n"), &v); err == nil || err.Error() != "f.yaml:1: rate: 2 is out of range: from 0 to 1" {
		t.Errorf("one problem: %v", err)
	}
	if _, err := Decode("f.yaml", []byte("code: ab\npolicy: sequential\n"), &v); err != nil || v.Code.v != "ab" {
		t.Errorf("good file: %v %+v", err, v)
	}
}

// TestTypeNames: the reference names a type as the decoder takes it.
func TestTypeNames(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want string
	}{{typed{}, "a word of two letters"}, {1.5, "number"}, {3, "whole number"}, {"", "text"}, {[]inner{}, "list of mapping"}, {map[string]string{}, "mapping of text"}} {
		if got := TypeName(reflect.TypeOf(tt.v)); got != tt.want {
			t.Errorf("%T: %q, want %q", tt.v, got, tt.want)
		}
	}
}
