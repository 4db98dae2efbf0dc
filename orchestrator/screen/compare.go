package screen

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// CompareRow sets two screen modes side by side at one prompt target: the
// results file's "fresh_same_input_comparison" (DFlash against MTP). Both
// modes saw the same fixture text for each (target, seed); only the unique
// cold-prompt prefix differs.
type CompareRow struct {
	// Fixture names the input like the results file: "input8K".
	Fixture      string `json:"fixture"`
	PromptTarget int    `json:"prompt_target"`
	// InputTokens is the mean prompt size over both modes' samples.
	InputTokens  *float64 `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	ASamples     int      `json:"a_samples"`
	BSamples     int      `json:"b_samples"`
	// ATPS and BTPS are pooled decode TPS (server timings, no prefill).
	ATPS *float64 `json:"a_tps"`
	BTPS *float64 `json:"b_tps"`
	// ChangePercent is A against B: (A / B - 1) x 100.
	ChangePercent *float64 `json:"a_tps_change_percent"`
	// Wall seconds are means per request and include prefill.
	AWallSeconds *float64 `json:"a_wall_seconds"`
	BWallSeconds *float64 `json:"b_wall_seconds"`
	// WallChangePercent is (A / B - 1) x 100 of the mean wall seconds.
	WallChangePercent *float64 `json:"a_wall_change_percent"`
	AEndToEndTPS      *float64 `json:"a_end_to_end_tps"`
	BEndToEndTPS      *float64 `json:"b_end_to_end_tps"`
}

// Comparison is mode A against mode B over every prompt target.
type Comparison struct {
	A    string       `json:"a"`
	B    string       `json:"b"`
	Rows []CompareRow `json:"rows"`
}

// Compare sets two modes side by side. A name is a leg label
// (baseline_start, baseline_end, a mode's own leg) or a mode name, so the
// baseline mode's name pools both of its legs.
func (r *Report) Compare(a, b string) (*Comparison, error) {
	find := func(mode string, target int) *Aggregate {
		for _, list := range [][]Aggregate{r.Aggregates, r.ModeAggregates} {
			for i := range list {
				if list[i].Mode == mode && list[i].PromptTarget == target {
					return &list[i]
				}
			}
		}
		return nil
	}
	var targets []int
	seen := map[int]bool{}
	known := map[string]bool{}
	for _, ag := range append(append([]Aggregate(nil), r.Aggregates...), r.ModeAggregates...) {
		known[ag.Mode] = true
		if !seen[ag.PromptTarget] {
			seen[ag.PromptTarget] = true
			targets = append(targets, ag.PromptTarget)
		}
	}
	for _, m := range []string{a, b} {
		if !known[m] {
			return nil, fmt.Errorf("compare: %q is neither a mode nor a leg of screen %s (baseline_start, baseline_end and mode names are)", m, r.Name)
		}
	}
	c := &Comparison{A: a, B: b}
	for _, t := range targets {
		x, y := find(a, t), find(b, t)
		row := CompareRow{Fixture: fmt.Sprintf("input%dK", t/1000), PromptTarget: t, OutputTokens: r.OutputTokens,
			ASamples: x.Samples, BSamples: y.Samples, ATPS: x.DecodeTPS, BTPS: y.DecodeTPS,
			ChangePercent: gainPercent(x.DecodeTPS, y.DecodeTPS), AWallSeconds: x.MeanWallSeconds, BWallSeconds: y.MeanWallSeconds,
			WallChangePercent: gainPercent(x.MeanWallSeconds, y.MeanWallSeconds), AEndToEndTPS: x.EndToEndTPS, BEndToEndTPS: y.EndToEndTPS}
		if x.MeanPromptTokens != nil && y.MeanPromptTokens != nil {
			m := (*x.MeanPromptTokens*float64(x.Samples) + *y.MeanPromptTokens*float64(y.Samples)) / float64(x.Samples+y.Samples)
			row.InputTokens = &m
		}
		c.Rows = append(c.Rows, row)
	}
	return c, nil
}

// MarshalJSON writes rows with the modes' names in the keys, as the results
// file does ("dflash2_tps", "mtp4_wall_seconds").
func (c *Comparison) MarshalJSON() ([]byte, error) {
	rows := make([]map[string]any, 0, len(c.Rows))
	for _, r := range c.Rows {
		rows = append(rows, map[string]any{
			"fixture":                    r.Fixture,
			"prompt_target":              r.PromptTarget,
			"input_tokens":               r.InputTokens,
			"output_tokens":              r.OutputTokens,
			c.A + "_samples":             r.ASamples,
			c.B + "_samples":             r.BSamples,
			c.A + "_tps":                 r.ATPS,
			c.B + "_tps":                 r.BTPS,
			c.A + "_tps_change_percent":  r.ChangePercent,
			c.A + "_wall_seconds":        r.AWallSeconds,
			c.B + "_wall_seconds":        r.BWallSeconds,
			c.A + "_wall_change_percent": r.WallChangePercent,
			c.A + "_end_to_end_tps":      r.AEndToEndTPS,
			c.B + "_end_to_end_tps":      r.BEndToEndTPS,
		})
	}
	return json.Marshal(map[string]any{"a": c.A, "b": c.B, "comparison": rows})
}

// WriteTable writes the comparison as aligned text.
func (c *Comparison) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s against %s (decode TPS from server timings, no prefill; wall seconds per request include prefill)\n\n", c.A, c.B)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "fixture\tinput tokens\toutput\t%s tps\t%s tps\tchange %%\t%s wall s\t%s wall s\twall change %%\t\n", c.A, c.B, c.A, c.B)
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Fixture, fmtF(r.InputTokens, 0), r.OutputTokens,
			fmtF(r.ATPS, 2), fmtF(r.BTPS, 2), fmtSigned(r.ChangePercent), fmtF(r.AWallSeconds, 2), fmtF(r.BWallSeconds, 2),
			fmtSigned(r.WallChangePercent))
	}
	return tw.Flush()
}
