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
	"slices"
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
	// Err is the cause when the file could not be read.
	Err error
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

func (e *Error) Unwrap() error { return e.Err }

// Errors are every problem found in a file (or several), in line order:
// a writer fixes them all at once instead of one per try.
type Errors []*Error

func (l Errors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Errors lists the problems one by one (the command line prints a line
// for each).
func (l Errors) Errors() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

func (l Errors) Unwrap() []error { return l.Errors() }

// Err is nil for no problem, the one *Error for one, else the list.
func (l Errors) Err() error {
	switch len(l) {
	case 0:
		return nil
	case 1:
		return l[0]
	}
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].File != l[j].File {
			return l[i].File < l[j].File
		}
		return l[i].Line < l[j].Line
	})
	return l
}

// Doc is a parsed file: what Line needs to place later (semantic) errors,
// and which fields were found wrong while decoding.
type Doc struct {
	File string
	Root *yaml.Node
	// reported are the paths of fields found wrong while decoding.
	reported map[string]bool
}

// ReadFile reads a file a person named; one that cannot be read is an
// *Error naming it ("no such file").
func ReadFile(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &Error{File: file, Msg: "no such file", Err: err}
	case err != nil:
		return nil, &Error{File: file, Msg: "cannot be read: " + err.Error(), Err: err}
	}
	return data, nil
}

// DecodeFile reads file and decodes it as Decode does.
func DecodeFile(file string, v any) (*Doc, error) {
	data, err := ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Decode(file, data, v)
}

// Decode parses data (the content of file), checks it against v's type and
// decodes it into v. A file that does not parse is one *Error. Otherwise
// every problem is reported, as Errors (or the one *Error); then the Doc
// is returned too, with v holding what could be decoded (a field found
// wrong left unset), so that a loader may go on to check the rest and
// report its own problems beside these (see Doc.Reported).
func Decode(file string, data []byte, v any) (*Doc, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(file, data, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty file"}
	}
	doc := &Doc{File: file, Root: &root, reported: map[string]bool{}}
	c := &checker{file: file, doc: doc}
	c.check(root.Content[0], reflect.TypeOf(v), "")
	if len(c.errs) > 0 {
		// What was found wrong is left unset; the rest decodes.
		for _, n := range c.unset {
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: n.Line, Column: n.Column}
		}
		for _, k := range c.drop {
			dropKey(k.mapping, k.key)
		}
		_ = root.Decode(v)
		return doc, c.errs.Err()
	}
	// The strict decoder stays as a backstop; it agrees with check on
	// every input check accepts.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
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

func dropKey(m *yaml.Node, key *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i] == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// Reported reports whether the field at path, or one of its parents, was
// found wrong while decoding: a loader's own check of it would only repeat
// the problem (or report the unset value the decoder left).
func (d *Doc) Reported(path string) bool {
	if d == nil {
		return false
	}
	for p := path; p != ""; p = parentPath(p) {
		if d.reported[p] {
			return true
		}
	}
	return false
}

func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return ""
}

// Has reports whether the file spells out the field at path.
func (d *Doc) Has(path string) bool {
	return d.node(path) != nil
}

// node is the value node at path, nil when the file leaves it out.
func (d *Doc) node(path string) *yaml.Node {
	if d == nil || d.Root == nil || len(d.Root.Content) == 0 {
		return nil
	}
	n := d.Root.Content[0]
	for _, step := range splitPath(path) {
		var next *yaml.Node
		switch {
		case step.key != "" && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == step.key {
					next = n.Content[i+1]
				}
			}
		case step.key == "" && n.Kind == yaml.SequenceNode && step.index < len(n.Content):
			next = n.Content[step.index]
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
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
// ("modes[1].name"), as an *Error placed on its line; a field the file
// leaves out is placed at its nearest parent.
func (d *Doc) Errorf(path, format string, a ...any) error {
	return &Error{File: d.File, Line: d.Line(path), Field: path, Msg: fmt.Sprintf(format, a...)}
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
	// Enum is the `enum` tag: the values a text field takes ("a,b").
	Enum string
	// Default is the `default` tag: the value a field left out takes, as
	// it would be written in the file.
	Default string
	// Shape is the `yamltype` tag: what a field the loader reads itself
	// (a yaml.Node, or a type with its own UnmarshalYAML) takes, in words.
	Shape string
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
		out = append(out, Field{Name: name, Type: f.Type, Index: []int{i}, Range: f.Tag.Get("range"), Enum: f.Tag.Get("enum"),
			Default: f.Tag.Get("default"), Shape: f.Tag.Get("yamltype"), GoName: f.Name, Owner: t})
	}
	return out
}

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
var nodeType = reflect.TypeOf(yaml.Node{})
var typedType = reflect.TypeOf((*Typed)(nil)).Elem()

// Typed is a type that decodes itself (it implements yaml.Unmarshaler) and
// names, in the writer's words, what it takes; the reference prints that
// name and the decoder reports the type's own error at the field.
type Typed interface {
	YAMLType() string
}

// checker walks a document against a Go type, gathering every problem.
type checker struct {
	file string
	doc  *Doc
	errs Errors
	// unset are the values found wrong (decoded as unset); drop the keys
	// no field has.
	unset []*yaml.Node
	drop  []struct{ mapping, key *yaml.Node }
}

// fail records a problem with the field at path (placed on line); what
// the field holds is left unset when unset is true.
func (c *checker) fail(n *yaml.Node, path string, line int, unset bool, format string, a ...any) {
	c.errs = append(c.errs, &Error{File: c.file, Line: line, Field: path, Msg: fmt.Sprintf(format, a...)})
	c.doc.reported[path] = true
	if unset {
		c.unset = append(c.unset, n)
	}
}

func (c *checker) check(n *yaml.Node, t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func(format string, a ...any) { c.fail(n, path, n.Line, true, format, a...) }
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // left unset
	}
	if t == nodeType {
		return // the loader reads it and says what is wrong
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		// The type decodes itself: try it, and say its complaint here.
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			msg := err.Error()
			if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
				msg = m[2]
			}
			bad("%s", cleanYAML(msg))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		c.mapping(n, t, path)
		return
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			bad("expected a list (- item lines, or [a, b]), got %s", describe(n))
			return
		}
		for i, e := range n.Content {
			c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
		return
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			bad("expected a mapping (name: value lines), got %s", describe(n))
			return
		}
		if t.Elem().Kind() == reflect.Interface {
			return // free-form (extra)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.check(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value))
		}
		return
	case reflect.Interface:
		return
	}
	if n.Kind != yaml.ScalarNode {
		bad("expected %s, got %s", expected(t), describe(n))
		return
	}
	c.scalar(n, t, bad)
}

func (c *checker) scalar(n *yaml.Node, t reflect.Type, bad func(string, ...any)) {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			bad("expected a number, got %s%s", describe(n), quotedHint(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch {
		case n.Tag == "!!float":
			bad("expected a whole number, got %s", n.Value)
		case n.Tag != "!!int":
			bad("expected a whole number, got %s%s", describe(n), quotedHint(n))
		}
	case reflect.Bool:
		if n.Tag != "!!bool" {
			bad("expected true or false, got %s", describe(n))
		}
	case reflect.String:
		// Any scalar reads as text.
	}
}

func (c *checker) mapping(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, path, n.Line, true, "expected a mapping (name: value lines, or {name: value, ...}), got %s", describe(n))
		return
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
			c.fail(v, sub, k.Line, false, "given twice (first on line %d)", prev)
			c.drop = append(c.drop, struct{ mapping, key *yaml.Node }{n, k})
			continue
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
			c.errs = append(c.errs, &Error{File: c.file, Line: k.Line, Field: path, Msg: msg})
			c.doc.reported[sub] = true
			c.drop = append(c.drop, struct{ mapping, key *yaml.Node }{n, k})
			continue
		}
		before := len(c.errs)
		c.check(v, f.Type, sub)
		if len(c.errs) == before {
			c.checkValue(v, f, sub)
		}
	}
}

// checkValue enforces a field's `range` and `enum` tags on the value
// written.
func (c *checker) checkValue(n *yaml.Node, f Field, path string) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return
	}
	if f.Enum != "" {
		values := strings.Split(f.Enum, ",")
		if !slices.Contains(values, n.Value) {
			msg := fmt.Sprintf("%q is not one of %s", n.Value, strings.Join(values, ", "))
			if s := Suggest(n.Value, values); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			c.fail(n, path, n.Line, false, "%s", msg)
		}
	}
	if msg := checkRange(n, f); msg != "" {
		c.fail(n, path, n.Line, false, "%s", msg)
	}
}

// checkRange says what is wrong with a number outside the field's `range`
// tag ("" when nothing is).
func checkRange(n *yaml.Node, f Field) string {
	if f.Range == "" || (n.Tag != "!!int" && n.Tag != "!!float") {
		return ""
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	if err != nil {
		return ""
	}
	lo, hi := ParseRange(f.Range)
	if v < lo || v > hi || math.IsNaN(v) {
		return fmt.Sprintf("%s is out of range: %s", n.Value, DescribeRange(f.Range))
	}
	return ""
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

// expected names what a Go type takes, in YAML words, as an error says
// it ("a whole number", "text").
func expected(t reflect.Type) string {
	name := TypeName(t)
	if name == "text" || name == "true or false" {
		return name
	}
	return "a " + name
}

// TypeOf names what the field takes, in YAML words: its `yamltype` tag,
// else the name of its type.
func (f Field) TypeOf() string {
	if f.Shape != "" {
		return f.Shape
	}
	return TypeName(f.Type)
}

// TypeName names a Go type in YAML words, for errors and the reference.
func TypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(typedType) {
		return reflect.New(t).Interface().(Typed).YAMLType()
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

// FillDefaults gives every field of the struct v points to that holds its
// zero value (unset: nil, 0, "") the value of its `default` tag, written as
// in the file ("10m", "1800", "interleaved"), through nested structs,
// pointers to them and lists of them. The tag is the one place a default
// lives: the loaders apply it here and the reference prints it. A tag that
// does not decode as its field's type is an error (a test loads every
// type).
func FillDefaults(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("yamlcheck.FillDefaults: %T is not a pointer to a struct", v)
	}
	return fillStruct(rv.Elem())
}

func fillStruct(v reflect.Value) error {
	for _, f := range Fields(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		if f.Default != "" && fv.IsZero() {
			ptr := reflect.New(fv.Type())
			if err := yaml.Unmarshal([]byte(f.Default), ptr.Interface()); err != nil {
				return fmt.Errorf("default of %s.%s (%q): %w", f.Owner.Name(), f.GoName, f.Default, err)
			}
			fv.Set(ptr.Elem())
		}
		if err := fillNested(fv); err != nil {
			return err
		}
	}
	return nil
}

func fillNested(fv reflect.Value) error {
	switch {
	case fv.Kind() == reflect.Struct && fv.Type() != nodeType:
		return fillStruct(fv)
	case fv.Kind() == reflect.Pointer && !fv.IsNil() && fv.Elem().Kind() == reflect.Struct:
		return fillStruct(fv.Elem())
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
		for i := 0; i < fv.Len(); i++ {
			if err := fillStruct(fv.Index(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Default is the `default` tag of the YAML field name of the struct type
// of v, decoded into T; it panics when the field has none or it does not
// decode (for defaults applied where a value is used, read once at start).
func Default[T any](v any, name string) T {
	for _, f := range Fields(reflect.TypeOf(v)) {
		if f.Name == name && f.Default != "" {
			var out T
			if err := yaml.Unmarshal([]byte(f.Default), &out); err != nil {
				panic(fmt.Sprintf("yamlcheck.Default(%T, %s): %v", v, name, err))
			}
			return out
		}
	}
	panic(fmt.Sprintf("yamlcheck.Default(%T, %s): no default tag", v, name))
}
