package serving

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written in YAML as Go duration text ("90s",
// "10m") or a number of seconds (30), and in JSON as duration text.
type Duration time.Duration

// YAMLType says what a duration field takes, for errors and the plan
// reference.
func (Duration) YAMLType() string { return "duration (90s, 10m, or a number of seconds)" }

// UnmarshalYAML accepts Go duration text or a number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected a duration (90s, 10m, or a number of seconds), got a %s", n.Line, map[yaml.Kind]string{yaml.MappingNode: "mapping", yaml.SequenceNode: "list"}[n.Kind])
	}
	if n.Tag == "!!int" || n.Tag == "!!float" {
		sec, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || sec < 0 || sec > math.MaxInt64/float64(time.Second) {
			return fmt.Errorf("line %d: %s is not a number of seconds a duration can hold", n.Line, n.Value)
		}
		*d = Duration(sec * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (90s, 10m, or a number of seconds)", n.Line, n.Value)
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
