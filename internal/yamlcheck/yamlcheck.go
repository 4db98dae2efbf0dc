// Package yamlcheck is the one strict YAML decoder for the files people
// write (plans, arms, cases, suites, server profiles, screen specs): one
// document a file, and what is wrong is said in the writer's words: the field
// path (arms[1].sampling.temperature), the line, what was expected, "did
// you mean" for a misspelt name, the allowed range of a number, and for a
// file that does not parse, the line that breaks the indentation or holds
// a tab. yaml.v3's own messages name Go types and, for indentation, often
// the line where the enclosing block began; these do not.
//
// The checks come from the Go types themselves (yaml tags, and a `range`
// tag "min,max" on numbers, either side may be empty), so a field added to
// a type is checked, and documented by the reference generator, without
// more code. It imports only yaml.v3 and the standard library, so that the
// case loader (package tasks), low in the package graph, can use it.
package yamlcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a file.
type Error struct {
	File string
	// Line is 1-based; 0 when unknown.
	Line int
	// Field is the path of the field ("arms[1].sampling.temperature"),
	// empty for a file that does not parse.
	Field string
	Msg   string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	if e.Field == "" {
		return loc + ": " + e.Msg
	}
	return loc + ": " + e.Field + ": " + e.Msg
}

// Doc is a parsed file: what Line needs to place later (semantic) errors.
type Doc struct {
	File string
	Root *yaml.Node
}

// DecodeFile reads file and decodes it as Decode does.
func DecodeFile(file string, v any) (*Doc, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Decode(file, data, v)
}

// Decode parses data (the content of file), checks it against v's type and
// decodes it into v. The first problem is returned as an *Error.
func Decode(file string, data []byte, v any) (*Doc, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(file, data, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty file"}
	}
	doc := &Doc{File: file, Root: &root}
	if err := check(file, root.Content[0], reflect.TypeOf(v), ""); err != nil {
		return nil, err
	}
	// The strict decoder stays as a backstop; it agrees with check on
	// every input check accepts.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		// A type's own UnmarshalYAML (a duration, say) reports "line N: ...".
		msg := err.Error()
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
		}
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return nil, &Error{File: file, Line: n, Msg: cleanYAML(m[2])}
		}
		return nil, &Error{File: file, Msg: cleanYAML(msg)}
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{File: file, Msg: "holds more than one YAML document (a line with ---); keep one"}
	}
	return doc, nil
}

// Line is the line of the field at path ("arms[1].sampling"), or of its
// nearest parent the file spells out (a default-filled field has none).
func (d *Doc) Line(path string) int {
	if d == nil || d.Root == nil || len(d.Root.Content) == 0 {
		return 0
	}
	n := d.Root.Content[0]
	line := n.Line
	for _, step := range splitPath(path) {
		var next *yaml.Node
		switch {
		case step.key != "" && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == step.key {
					next, line = n.Content[i+1], n.Content[i].Line
				}
			}
		case step.key == "" && n.Kind == yaml.SequenceNode && step.index < len(n.Content):
			next = n.Content[step.index]
			line = next.Line
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// Errorf reports a problem found after decoding with the value at path
// ("modes[1].name"), as "file:line: field path: message"; a field the file
// leaves out is placed at its nearest parent.
func (d *Doc) Errorf(path, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if line := d.Line(path); line > 0 {
		return fmt.Errorf("%s:%d: field %s: %s", d.File, line, path, msg)
	}
	return fmt.Errorf("%s: field %s: %s", d.File, path, msg)
}

// Path spells a field path from map keys (strings) and list indexes
// (ints): Path("modes", 1, "name") is "modes[1].name".
func Path(steps ...any) string {
	var b strings.Builder
	for _, p := range steps {
		switch k := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(k) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, k)
		}
	}
	return b.String()
}

type pathStep struct {
	key   string
	index int
}

var indexRE = regexp.MustCompile(`\[(\d+)\]`)

func splitPath(p string) []pathStep {
	var out []pathStep
	for _, part := range strings.Split(p, ".") {
		if part == "" {
			continue
		}
		key := part
		if i := strings.IndexByte(part, '['); i >= 0 {
			key = part[:i]
		}
		if key != "" {
			out = append(out, pathStep{key: key})
		}
		for _, m := range indexRE.FindAllStringSubmatch(part, -1) {
			n, _ := strconv.Atoi(m[1])
			out = append(out, pathStep{index: n})
		}
	}
	return out
}

// Field describes one YAML field of a struct type, with embedded and
// ",inline" fields flattened.
type Field struct {
	Name  string
	Type  reflect.Type
	Index []int
	// Range is the `range` tag ("0,2", ",1", "1,").
	Range string
	// GoName is the Go field's name, for the reference's doc lookup.
	GoName string
	// Owner is the struct type that declares the field.
	Owner reflect.Type
}

// Fields lists the YAML fields of struct type t in declaration order.
func Fields(t reflect.Type) []Field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []Field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") || (f.Anonymous && tag == "") {
			for _, sub := range Fields(f.Type) {
				sub.Index = append([]int{i}, sub.Index...)
				out = append(out, sub)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out = append(out, Field{Name: name, Type: f.Type, Index: []int{i}, Range: f.Tag.Get("range"), GoName: f.Name, Owner: t})
	}
	return out
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
var nodeType = reflect.TypeOf(yaml.Node{})

func check(file string, n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func(line int, format string, a ...any) error {
		return &Error{File: file, Line: line, Field: path, Msg: fmt.Sprintf(format, a...)}
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // left unset
	}
	if t == nodeType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // the type decodes itself and says what is wrong
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return bad(n.Line, "expected a mapping (name: value lines, or {name: value, ...}), got %s", describe(n))
		}
		fields := Fields(t)
		byName := map[string]Field{}
		var names []string
		for _, f := range fields {
			byName[f.Name] = f
			names = append(names, f.Name)
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			sub := join(path, k.Value)
			if prev, ok := seen[k.Value]; ok {
				return &Error{File: file, Line: k.Line, Field: sub, Msg: fmt.Sprintf("given twice (first on line %d)", prev)}
			}
			seen[k.Value] = k.Line
			f, ok := byName[k.Value]
			if !ok {
				msg := fmt.Sprintf("unknown field %q", k.Value)
				if s := Suggest(k.Value, names); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				} else if s := suggestNested(k.Value, fields); s != "" {
					msg += fmt.Sprintf("; did you mean %s?", s)
				} else {
					msg += "; known fields: " + strings.Join(names, ", ")
				}
				return &Error{File: file, Line: k.Line, Field: path, Msg: msg}
			}
			if err := check(file, v, f.Type, sub); err != nil {
				return err
			}
			if err := checkRange(file, v, f, sub); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return bad(n.Line, "expected a list (- item lines, or [a, b]), got %s", describe(n))
		}
		for i, c := range n.Content {
			if err := check(file, c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return bad(n.Line, "expected a mapping (name: value lines), got %s", describe(n))
		}
		if t.Elem().Kind() == reflect.Interface {
			return nil // free-form (extra)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := check(file, n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Interface:
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return bad(n.Line, "expected %s, got %s", expected(t), describe(n))
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			return bad(n.Line, "expected a number, got %s%s", describe(n), quotedHint(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Tag != "!!int" {
			if n.Tag == "!!float" {
				return bad(n.Line, "expected a whole number, got %s", n.Value)
			}
			return bad(n.Line, "expected a whole number, got %s%s", describe(n), quotedHint(n))
		}
	case reflect.Bool:
		if n.Tag != "!!bool" {
			return bad(n.Line, "expected true or false, got %s", describe(n))
		}
	case reflect.String:
		// Any scalar reads as text.
	}
	return nil
}

// checkRange enforces a field's `range` tag on the value written.
func checkRange(file string, n *yaml.Node, f Field, path string) error {
	if f.Range == "" || n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return nil
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if err != nil {
		return nil
	}
	lo, hi := ParseRange(f.Range)
	if v < lo || v > hi || math.IsNaN(v) {
		return &Error{File: file, Line: n.Line, Field: path, Msg: fmt.Sprintf("%s is out of range: %s", n.Value, DescribeRange(f.Range))}
	}
	return nil
}

// ParseRange reads a `range` tag "min,max"; an empty side is unbounded.
func ParseRange(r string) (lo, hi float64) {
	a, b, _ := strings.Cut(r, ",")
	lo, hi = math.Inf(-1), math.Inf(1)
	if x, err := strconv.ParseFloat(a, 64); err == nil {
		lo = x
	}
	if x, err := strconv.ParseFloat(b, 64); err == nil {
		hi = x
	}
	return lo, hi
}

// DescribeRange says a `range` tag in words.
func DescribeRange(r string) string {
	a, b, _ := strings.Cut(r, ",")
	switch {
	case a != "" && b != "":
		return fmt.Sprintf("from %s to %s", a, b)
	case a != "":
		return "at least " + a
	case b != "":
		return "at most " + b
	}
	return "any"
}

func quotedHint(n *yaml.Node) string {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		if _, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return " (drop the quotes)"
		}
	}
	return ""
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("the text %q", n.Value)
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		}
		return n.Value
	}
	return "something else"
}

// Expected names what a Go type takes, in YAML words.
func expected(t reflect.Type) string {
	return TypeName(t)
}

// TypeName names a Go type in YAML words, for errors and the reference.
func TypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType {
		return "value"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	case reflect.Slice:
		return "list of " + TypeName(t.Elem())
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "mapping (free-form)"
		}
		return "mapping of " + TypeName(t.Elem())
	case reflect.Struct:
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			return "text"
		}
		return "mapping"
	}
	return t.Kind().String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Suggest returns the known name closest to name when it is close enough
// to be a slip (edit distance at most a third of its length, at least 1;
// or a prefix), else "".
func Suggest(name string, known []string) string {
	best, bestD := "", math.MaxInt
	for _, k := range known {
		d := distance(strings.ToLower(name), strings.ToLower(k))
		if d < bestD {
			best, bestD = k, d
		}
	}
	limit := len(name) / 3
	if limit < 1 {
		limit = 1
	}
	if bestD <= limit {
		return best
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	for _, k := range sorted {
		if len(name) >= 3 && (strings.HasPrefix(k, name) || strings.HasPrefix(name, k)) {
			return k
		}
	}
	return ""
}

// suggestNested looks one level down: "temperature" at the top of an arm
// belongs under sampling.
func suggestNested(name string, fields []Field) string {
	for _, f := range fields {
		t, parent := f.Type, f.Name
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Slice {
			t, parent = t.Elem(), parent+"[]"
		}
		if t.Kind() != reflect.Struct || t == nodeType {
			continue
		}
		var sub []string
		for _, g := range Fields(t) {
			sub = append(sub, g.Name)
		}
		if s := Suggest(name, sub); s != "" {
			return parent + "." + s
		}
	}
	return ""
}

// distance is the edit distance counting a swap of two neighbouring
// letters as one edit (optimal string alignment).
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func cleanYAML(s string) string {
	s = strings.TrimPrefix(s, "yaml: ")
	return regexp.MustCompile(` in type [\w.]+`).ReplaceAllString(s, "")
}

// syntaxError places a parse error on the line that causes it: a tab in
// the indentation, or a line whose indentation matches no enclosing block.
// yaml.v3 often reports the line where the enclosing block began instead.
func syntaxError(file string, data []byte, err error) error {
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if strings.HasPrefix(trimmed, "\t") {
			return &Error{File: file, Line: i + 1, Msg: "a tab indents this line; YAML indents with spaces only"}
		}
	}
	if line, want := badIndent(lines); line > 0 {
		got := len(lines[line-1]) - len(strings.TrimLeft(lines[line-1], " "))
		return &Error{File: file, Line: line, Msg: fmt.Sprintf("this line is indented by %d spaces, which matches no enclosing block (%s); line it up with the field or list item it belongs to", got, want)}
	}
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: n, Msg: "does not parse as YAML: " + m[2]}
	}
	return &Error{File: file, Msg: "does not parse as YAML: " + cleanYAML(msg)}
}

// badIndent finds the first line that dedents to a column no open block
// starts at. It follows block structure only: flow collections and block
// scalars (| and >) are skipped over.
func badIndent(lines []string) (int, string) {
	stack := []int{0}
	scalarIndent := -1 // inside a block scalar deeper than this
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "---") {
			continue
		}
		ind := len(l) - len(t)
		if scalarIndent >= 0 {
			if ind > scalarIndent {
				continue
			}
			scalarIndent = -1
		}
		for len(stack) > 1 && stack[len(stack)-1] > ind {
			stack = stack[:len(stack)-1]
		}
		if top := stack[len(stack)-1]; top != ind {
			if top > ind || !opens(lines, i) {
				var cols []string
				for _, c := range stack {
					cols = append(cols, strconv.Itoa(c))
				}
				return i + 1, "open blocks start at column(s) " + strings.Join(cols, ", ") + " counting from 0"
			}
			stack = append(stack, ind)
		}
		// A list item's content starts after "- ".
		rest := t
		col := ind
		for strings.HasPrefix(rest, "- ") {
			r := strings.TrimLeft(rest[2:], " ")
			col += len(rest) - len(r)
			rest = r
			stack = append(stack, col)
		}
		if strings.HasSuffix(strings.TrimSpace(stripComment(rest)), "|") || strings.HasSuffix(strings.TrimSpace(stripComment(rest)), ">") ||
			strings.HasSuffix(strings.TrimSpace(stripComment(rest)), "|-") || strings.HasSuffix(strings.TrimSpace(stripComment(rest)), ">-") {
			scalarIndent = col
		}
	}
	return 0, ""
}

// opens reports whether the last content line before i ends a key with no
// value on its line (so the next line may go deeper).
func opens(lines []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		t := strings.TrimSpace(stripComment(lines[j]))
		if t == "" {
			continue
		}
		return strings.HasSuffix(t, ":") || t == "-"
	}
	return true
}

func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}
