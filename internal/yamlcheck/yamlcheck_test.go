package yamlcheck

import (
	"os"
	"strings"
	"testing"
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
	if got, want := doc.Errorf(Path("items", 0, "top_k"), "%d is odd", 3).Error(), f+":2: field items[0].top_k: 3 is odd"; got != want {
		t.Fatalf("Errorf = %s, want %s", got, want)
	}
}
