package serving

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/evalctl/evalctl/tasks/yamlcheck"
)

// yamlDoc is a strictly decoded YAML file that remembers where each value
// was written, so validation errors can say file:line like the decoder's own.
type yamlDoc struct {
	file string
	root *yaml.Node
}

// decodeYAML reads file into v, refusing unknown fields and extra
// documents; every error names the file and, where yaml.v3 knows it, the
// line.
func decodeYAML(file string, v any) (*yamlDoc, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return decodeYAMLData(file, data, v)
}

// decodeYAMLData is decodeYAML for a file already read; file names it in
// errors.
func decodeYAMLData(file string, data []byte, v any) (*yamlDoc, error) {
	// yamlcheck says what is wrong in a person's words (field path, line,
	// "did you mean", a tab or a broken indentation) and decodes strictly.
	doc, err := yamlcheck.Decode(file, data, v)
	if err != nil {
		return nil, err
	}
	return &yamlDoc{file: file, root: doc.Root}, nil
}

// errorf reports a problem with the value at path (map keys and sequence
// indexes), as "file:line: field a.b[2]: message". When the path is absent
// from the file the nearest parent that is present gives the line.
func (d *yamlDoc) errorf(path []any, format string, a ...any) error {
	line := 0
	n := d.root
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
		line = n.Line
	}
	for _, p := range path {
		if n == nil {
			break
		}
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == k {
						next = n.Content[i+1]
						line = n.Content[i].Line
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k < len(n.Content) {
				next = n.Content[k]
				line = next.Line
			}
		}
		n = next
	}
	return fmt.Errorf("%s:%d: field %s: %s", d.file, line, fieldPath(path), fmt.Sprintf(format, a...))
}

func fieldPath(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			b.WriteString("[" + strconv.Itoa(k) + "]")
		}
	}
	return b.String()
}

// Duration is a time.Duration written in YAML and JSON as Go duration text
// ("90s", "10m").
type Duration time.Duration

// UnmarshalYAML accepts Go duration text.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (like 90s or 10m)", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as Go duration text.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

// UnmarshalJSON reads Go duration text.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
