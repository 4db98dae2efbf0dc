package controls

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/evalctl/evalctl/tasks"
)

// ReportFile is where Write records a case's mutation reports, beside its
// case.yaml, for 'cases check' to show.
const ReportFile = "mutation.json"

// Write adds the kept mutants of the reports to case c as controls: each
// mutated file under controls/ID/, an entry under controls: in case.yaml
// (comments and the rest of the file kept), and the reports in
// mutation.json. A control name the case already has is an error: nothing
// is overwritten.
func Write(c *tasks.Case, reps []*Report) error {
	file := filepath.Join(c.Dir, tasks.CaseFile)
	doc, seq, err := readControls(file)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, ctl := range c.Controls {
		have[ctl.Name] = true
	}
	added := 0
	for _, r := range reps {
		for _, m := range r.Kept() {
			if have[m.ID] {
				return fmt.Errorf("%s: control %s exists already", file, m.ID)
			}
			n, err := writeControl(c.Dir, r.Phase, m)
			if err != nil {
				return err
			}
			seq.Content = append(seq.Content, n)
			added++
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if added > 0 {
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	js, err := json.MarshalIndent(reps, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.Dir, ReportFile), append(js, '\n'), 0o644)
}

// readControls parses case.yaml at file as a node tree (so comments
// survive a rewrite) and returns it with its controls: list, added empty
// when the case has none.
func readControls(file string) (*yaml.Node, *yaml.Node, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s: not a mapping", file)
	}
	root := doc.Content[0]
	var seq *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "controls" {
			seq = root.Content[i+1]
		}
	}
	if seq == nil || seq.Kind != yaml.SequenceNode {
		if seq != nil && !(seq.Kind == yaml.ScalarNode && seq.Tag == "!!null") {
			return nil, nil, fmt.Errorf("%s: field controls: not a list", file)
		}
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "controls"}, seq)
	}
	return &doc, seq, nil
}

// writeControl writes mutant m's file under caseDir/controls/ID/ (never
// over an existing directory) and returns its case.yaml entry, its
// must_fail lists in flow style as a person writes them.
func writeControl(caseDir string, phase int, m Mutant) (*yaml.Node, error) {
	dir := filepath.Join(caseDir, "controls", m.ID)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("control %s: %s exists already", m.ID, dir)
	}
	p := filepath.Join(dir, filepath.FromSlash(m.File))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p, m.source, 0o644); err != nil {
		return nil, err
	}
	entry := controlEntry{
		Name: m.ID, Phase: phase, Overlay: "controls/" + m.ID, MustFail: m.MustFail,
		Why: fmt.Sprintf("Generated mutant of the reference (%s, %s line %d): %s.", m.Op, m.File, m.Line, m.Desc),
	}
	var n yaml.Node
	if err := n.Encode(entry); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "must_fail" {
			for _, ids := range n.Content[i+1].Content {
				if ids.Kind == yaml.SequenceNode {
					ids.Style = yaml.FlowStyle
				}
			}
		}
	}
	return &n, nil
}

// controlEntry is a control as case.yaml spells it, in the order a person
// writes it.
type controlEntry struct {
	Name     string              `yaml:"name"`
	Phase    int                 `yaml:"phase"`
	Overlay  string              `yaml:"overlay"`
	MustFail map[string][]string `yaml:"must_fail"`
	Why      string              `yaml:"why"`
}

// ReadReports reads the mutation reports Write recorded for c (nil, nil
// when there are none).
func ReadReports(c *tasks.Case) ([]*Report, error) {
	data, err := os.ReadFile(filepath.Join(c.Dir, ReportFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var reps []*Report
	if err := json.Unmarshal(data, &reps); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(c.Dir, ReportFile), err)
	}
	return reps, nil
}

// Summary is one line per report: the mutation score over the graded
// mutants and the surviving ones.
func Summary(r *Report) string {
	if r.Score == nil {
		return fmt.Sprintf("%s phase %d: no mutant graded (mutation score null)", r.Case, r.Phase)
	}
	var surv []string
	for _, m := range r.Survivors() {
		surv = append(surv, fmt.Sprintf("%s (%s line %d: %s)", m.ID, m.File, m.Line, m.Desc))
	}
	s := fmt.Sprintf("%s phase %d: mutation score %.2f (%d of %d graded mutants caught; %d made)", r.Case, r.Phase, *r.Score, r.Killed, r.Graded, r.Made)
	if len(surv) > 0 {
		s += "; surviving: " + strings.Join(surv, ", ")
	}
	return s
}
