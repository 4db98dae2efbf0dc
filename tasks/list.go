package tasks

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteList writes the suite's cases, one a line (name, language, phases,
// controls, summary), or as JSON with the suite's id and fingerprint.
func (s *Suite) WriteList(w io.Writer, asJSON bool) error {
	if asJSON {
		type caseRow struct {
			Name     string `json:"name"`
			Language string `json:"language"`
			Phases   int    `json:"phases"`
			Controls int    `json:"controls"`
			Summary  string `json:"summary"`
		}
		rows := []caseRow{}
		for _, c := range s.Cases {
			rows = append(rows, caseRow{c.Name, string(c.Language), len(c.Phases), len(c.Controls), c.Summary})
		}
		return writeJSON(w, map[string]any{"suite": s.ID(), "fingerprint": s.Fingerprint, "cases": rows})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CASE\tLANGUAGE\tPHASES\tCONTROLS\tSUMMARY\n")
	for _, c := range s.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", c.Name, c.Language, len(c.Phases), len(c.Controls), c.Summary)
	}
	return tw.Flush()
}

// WriteFingerprint writes the suite's name, version and fingerprint on
// one line, or as JSON with its directory.
func (s *Suite) WriteFingerprint(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, map[string]string{"name": s.Name, "version": s.Version, "fingerprint": s.Fingerprint, "dir": s.Dir})
	}
	_, err := fmt.Fprintf(w, "%s %s %s\n", s.Name, s.Version, s.Fingerprint)
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
