package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// SweepAxis is one setting a declared arm is swept over: Field is the
// arm's JSON name of the setting, dotted ("max_tokens",
// "sampling.temperature", "reasoning.effort", "extra.n_probs",
// "budgets.wall_seconds", "profile" for a server profile file per value).
type SweepAxis struct {
	// Field is the arm setting to sweep, by its dotted name (max_tokens,
	// sampling.temperature, extra.FIELD, profile_vars.NAME, ...).
	Field string `json:"field" yaml:"field"`
	// Values are the setting's values, one swept arm each.
	Values []yaml.Node `json:"-" yaml:"values" yamltype:"list of values of the setting's type"`
}

// sweepAxes is an arm's sweep: one axis, or a list of them (a grid).
type sweepAxes []SweepAxis

// UnmarshalYAML takes a single axis (a mapping) or a list of axes.
func (s *sweepAxes) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		var a SweepAxis
		if err := n.Decode(&a); err != nil {
			return err
		}
		*s = sweepAxes{a}
		return nil
	}
	var list []SweepAxis
	if err := n.Decode(&list); err != nil {
		return err
	}
	*s = list
	return nil
}

// maxSweepArms bounds how many arms one declaration may expand into.
const maxSweepArms = 64

// expandSweeps resolves arm files and expands every arm that declares a
// sweep into one arm per value (per combination for a grid), named by the
// arm's name with {value} (or {FIELD} for a grid axis) replaced, or NAME
// followed by the values joined with '-'. It returns the arms as inline
// references, the plan field each came from (for error messages) and the
// sweep records.
func expandSweeps(file, base string, refs []armRef) ([]armRef, []string, []SweepRecord, error) {
	var out []armRef
	var fields []string
	var records []SweepRecord
	bad := func(field, format string, a ...any) error {
		return &PlanError{File: file, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	for i, ref := range refs {
		field := fmt.Sprintf("arms[%d]", i)
		if len(ref.Sweep) == 0 {
			out, fields = append(out, ref), append(fields, field)
			continue
		}
		arm, err := sweptArm(ref, field, base, bad)
		if err != nil {
			return nil, nil, nil, err
		}
		rec := SweepRecord{Name: strings.NewReplacer("{value}", "", "{", "", "}", "").Replace(arm.Name)}
		combos, err := sweepCombos(ref, field, bad)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, ax := range ref.Sweep {
			rec.Fields = append(rec.Fields, ax.Field)
		}
		for _, c := range combos {
			swept, point, err := sweepPoint(arm, ref, field, c, bad)
			if err != nil {
				return nil, nil, nil, err
			}
			rec.Arms = append(rec.Arms, point)
			out = append(out, armRef{Arm: swept})
			fields = append(fields, fmt.Sprintf("%s (swept: %s)", field, swept.Name))
		}
		records = append(records, rec)
	}
	return out, fields, records, nil
}

// planErrf makes a plan error at a field path.
type planErrf func(field, format string, a ...any) error

// sweptArm returns the arm a sweeping reference expands: its own, or the
// one in its arm file (never both), which must have a name to name the
// swept arms after.
func sweptArm(ref armRef, field, base string, bad planErrf) (Arm, error) {
	arm := ref.Arm
	if ref.File != "" {
		if ref.Arm.Name != "" || !reflect.DeepEqual(ref.Arm.Endpoint, Endpoint{}) {
			return Arm{}, bad(field+".file", "an arm comes either from a file or inline, not both")
		}
		af := ref.File
		if !filepath.IsAbs(af) {
			af = filepath.Join(base, af)
		}
		var fromFile Arm
		if _, err := decodeYAML(af, &fromFile); err != nil {
			return Arm{}, bad(field+".file", "%v", err)
		}
		arm = fromFile
	}
	if arm.Name == "" {
		return Arm{}, bad(field+".name", "is required (the swept arms are named after it)")
	}
	return arm, nil
}

// sweepCombos returns every combination of the sweep's axes (the grid),
// one value per axis in axis order, refusing an axis without a field or
// values and a grid of more than maxSweepArms arms.
func sweepCombos(ref armRef, field string, bad planErrf) ([][]*yaml.Node, error) {
	combos := [][]*yaml.Node{{}}
	for a, ax := range ref.Sweep {
		af := fmt.Sprintf("%s.sweep[%d]", field, a)
		if ax.Field == "" {
			return nil, bad(af+".field", "is required (the setting to sweep, e.g. max_tokens or sampling.temperature)")
		}
		if len(ax.Values) == 0 {
			return nil, bad(af+".values", "lists no value")
		}
		var next [][]*yaml.Node
		for _, c := range combos {
			for v := range ax.Values {
				next = append(next, append(append([]*yaml.Node(nil), c...), &ax.Values[v]))
			}
		}
		combos = next
		if len(combos) > maxSweepArms {
			return nil, bad(field+".sweep", "expands into more than %d arms", maxSweepArms)
		}
	}
	return combos, nil
}

// sweepPoint sets combination c's values on a copy of arm and names it
// ({value} or {FIELD} replaced, else the values appended with '-'); the
// point records the name and the values as JSON.
func sweepPoint(arm Arm, ref armRef, field string, c []*yaml.Node, bad planErrf) (Arm, SweepPoint, error) {
	swept := arm
	point := SweepPoint{}
	var parts []string
	name := arm.Name
	for a, ax := range ref.Sweep {
		v := c[a]
		af := fmt.Sprintf("%s.sweep[%d]", field, a)
		var val any
		if err := v.Decode(&val); err != nil {
			return Arm{}, point, bad(af+".values", "line %d: %v", v.Line, err)
		}
		var err error
		swept, err = SetArmField(swept, ax.Field, val)
		if err != nil {
			return Arm{}, point, bad(af+".field", "%v (line %d)", err, v.Line)
		}
		raw, _ := json.Marshal(val)
		point.Values = append(point.Values, raw)
		text := v.Value
		if v.Kind != yaml.ScalarNode {
			text = string(raw)
		}
		if ax.Field == "profile" {
			text = strings.TrimSuffix(filepath.Base(text), filepath.Ext(text))
		}
		parts = append(parts, text)
		if len(ref.Sweep) == 1 {
			name = strings.ReplaceAll(name, "{value}", text)
		}
		name = strings.ReplaceAll(name, "{"+ax.Field+"}", text)
	}
	if name == arm.Name {
		name = arm.Name + "-" + strings.Join(parts, "-")
	}
	swept.Name = name
	point.Arm = name
	return swept, point, nil
}

// SetArmField returns a copy of arm with the dotted JSON field set to v,
// refusing a name that is not a setting of an arm, a value of the wrong
// type, and the arm's name (a changed arm gets its own name elsewhere).
func SetArmField(arm Arm, field string, v any) (Arm, error) {
	if field == "name" || field == "profile_sha256" {
		return arm, fmt.Errorf("%q is not a setting that can be changed", field)
	}
	data, err := json.Marshal(arm)
	if err != nil {
		return arm, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return arm, err
	}
	path := strings.Split(field, ".")
	cur := m
	known := armSettings()
	for i, p := range path[:len(path)-1] {
		if i == 0 && !known[p] {
			return arm, fmt.Errorf("%q is not an arm setting (known: %s)", field, knownList())
		}
		next, ok := cur[p].(map[string]any)
		if !ok {
			if cur[p] != nil {
				return arm, fmt.Errorf("%q: %s is not an object", field, strings.Join(path[:i+1], "."))
			}
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	if len(path) == 1 && !known[path[0]] {
		return arm, fmt.Errorf("%q is not an arm setting (known: %s)", field, knownList())
	}
	if path[0] == "profile_vars" {
		// A server flag's value is text on the command line.
		switch x := v.(type) {
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		case int:
			v = strconv.Itoa(x)
		case bool:
			v = strconv.FormatBool(x)
		}
	}
	cur[path[len(path)-1]] = v
	data, err = json.Marshal(m)
	if err != nil {
		return arm, err
	}
	var out Arm
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // extra is a map: any name goes there
	if err := dec.Decode(&out); err != nil {
		return arm, fmt.Errorf("%q = %s: %v", field, brief(v), err)
	}
	return out, nil
}

func brief(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// armFields are the top-level JSON names of Arm's settings.
func armSettings() map[string]bool {
	return map[string]bool{"endpoint": true, "max_tokens": true, "sampling": true, "reasoning": true,
		"extra": true, "budgets": true, "stream": true, "profile": true, "context": true, "profile_vars": true}
}

func knownList() string {
	return "endpoint.*, max_tokens, sampling.*, reasoning.*, extra.*, budgets.*, stream, profile, profile_vars.*, context.*"
}
