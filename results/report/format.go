package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/evalctl/evalctl/tasks"
)

// Formats a report can be written in.
const (
	FormatTable    = "table"
	FormatMarkdown = "md"
	FormatJSON     = "json"
	FormatCSV      = "csv"
	FormatHTML     = "html"
)

// Formats lists every format Write accepts.
var Formats = []string{FormatTable, FormatMarkdown, FormatJSON, FormatCSV, FormatHTML}

// ErrFormat is returned for a format Write does not know.
var ErrFormat = errors.New("unknown report format")

// Write renders the report in the given format.
func Write(w io.Writer, r *Report, format string) error {
	switch format {
	case FormatTable:
		return writeText(w, r)
	case FormatMarkdown:
		return writeMarkdown(w, r)
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatCSV:
		return WriteCSV(w, r)
	case FormatHTML:
		return WriteHTML(w, r)
	}
	return fmt.Errorf("%q: %w (want one of %s)", format, ErrFormat, strings.Join(Formats, ", "))
}

// WriteJSON writes the report as indented JSON; floats keep full precision
// and unknown values are null.
func WriteJSON(w io.Writer, r *Report) error {
	data, err := marshalIndent(r)
	if err != nil {
		return fmt.Errorf("report json: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// marshalIndent is the JSON every export and report file is written as:
// two-space indentation and a final newline.
func marshalIndent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// dash is how every text format shows an unknown value.
const dash = "-"

func fmtF(v *float64, prec int) string {
	if v == nil {
		return dash
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

func fmtI(v *int64) string {
	if v == nil {
		return dash
	}
	return strconv.FormatInt(*v, 10)
}

func fmtPct(v *float64) string {
	if v == nil {
		return dash
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}

func fmtGain(v *float64) string {
	if v == nil {
		return dash
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

// fmtMeasured is the number of attempts the speed figures pool, with the
// scored attempts they leave out for a null measurement: "22 (+2 null)".
func fmtMeasured(s *Stats) string {
	out := strconv.Itoa(s.Measured)
	if s.Unmeasured > 0 {
		out += fmt.Sprintf(" (+%d null)", s.Unmeasured)
	}
	return out
}

// fmtDecodeTPS is the pooled decode TPS, marked when it is not purely
// server-timed: "41.20 (client-measured)".
func fmtDecodeTPS(s *Stats) string {
	out := fmtF(s.DecodeTPS, 2)
	if m := timingMark(s.TimingsSource); m != "" && s.DecodeTPS != nil {
		out += " (" + m + ")"
	}
	return out
}

// fmtRate is "22/24 91.7% [74.2-97.7]", or "0/0 -" without a denominator.
// fmtOverlapped is the count of measured attempts that overlapped another
// on their device: a plain 0, or a warning that cannot be missed.
func fmtOverlapped(s *Stats) string {
	switch {
	case s.Overlapped == nil:
		return dash
	case *s.Overlapped == 0:
		return "0"
	}
	return fmt.Sprintf("%d of %d OVERLAPPED: speed contaminated", *s.Overlapped, s.Measured)
}

func fmtRate(r Rate) string {
	if r.Rate == nil {
		return fmt.Sprintf("%d/%d %s", r.Count, r.Of, dash)
	}
	return fmt.Sprintf("%d/%d %.1f%% [%.1f-%.1f]", r.Count, r.Of, *r.Rate*100, *r.Low*100, *r.High*100)
}

// fmtCount is "3/3", or "-" without a denominator.
func fmtCount(r Rate) string {
	if r.Of == 0 {
		return dash
	}
	return fmt.Sprintf("%d/%d", r.Count, r.Of)
}

func fmtTerminations(m map[string]int) string {
	if len(m) == 0 {
		return dash
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// table is one section of the text and Markdown reports.
type table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// header lines describe the runs, the baseline and any mixing.
func headerLines(r *Report) []string {
	var out []string
	for _, ri := range r.Runs {
		line := fmt.Sprintf("run %s: suite %s (%s), outcomes under %s, image %s, plan %s",
			ri.ID, tasks.Label(ri.Suite.Name, ri.Suite.Version), short(ri.Suite.Fingerprint), ri.GradedSuite, short(ri.ImageID), short(ri.PlanSHA256))
		if ri.Progress != nil {
			line += "; " + ri.Progress.Words
		}
		out = append(out, line)
	}
	if r.Baseline != "" {
		line := "baseline arm: " + r.Baseline
		if r.BaselineWhy != "" {
			line += " (" + r.BaselineWhy + ")"
		}
		out = append(out, line)
	}
	return out
}

func mixedLines(r *Report) []string {
	var out []string
	for _, m := range r.Mixed {
		out = append(out, "MIXED POOL (--allow-mixed): "+m)
	}
	return out
}

func tables(r *Report) []table {
	var ts []table
	out := table{Title: "Outcomes per arm (of scored attempts; 95% Wilson intervals)",
		Header: []string{"arm", "planned", "completed", "scored", "ungraded", "unscored", "pending", "functional", "delivered", "terminations", "replaced (apart)"}}
	for _, a := range r.Arms {
		out.Rows = append(out.Rows, []string{a.Arm, strconv.Itoa(a.Attempts), strconv.Itoa(a.Completed), strconv.Itoa(a.Scored),
			strconv.Itoa(a.Ungraded), strconv.Itoa(a.Unscored), strconv.Itoa(a.Pending), fmtRate(a.Functional), fmtRate(a.Delivered),
			fmtTerminations(a.Terminations), fmtTerminations(a.Replaced)})
	}
	ts = append(ts, out)
	speed := table{Title: "Speed per arm (pooled: sum of tokens / sum of seconds over scored attempts with measurements)",
		Header: []string{"arm", "measured", "overlapped", "tokens", "decode s", "task s", "decode TPS", "task TPS", "median s", "draft accept", "decode gain", "task gain", "tokens/week"}}
	for _, a := range r.Arms {
		speed.Rows = append(speed.Rows, []string{a.Arm, fmtMeasured(&a.Stats), fmtOverlapped(&a.Stats), fmtI(a.NativeOutputTokens), fmtF(a.DecodeSeconds, 1),
			fmtF(a.TaskSeconds, 1), fmtDecodeTPS(&a.Stats), fmtF(a.TaskOutputTPS, 2), fmtF(a.MedianAttemptSeconds, 1),
			fmtPct(a.DraftAcceptance), fmtGain(a.DecodeTPSGainPercent), fmtGain(a.TaskOutputTPSGainPercent), fmtF(a.TokensPerWeek, 0)})
	}
	ts = append(ts, speed)
	cases := table{Title: "Per case (functional / delivered of scored attempts; - = none scored)", Header: []string{"case"}}
	for _, a := range r.Arms {
		cases.Header = append(cases.Header, a.Arm)
	}
	for _, c := range r.Cases {
		row := []string{c.Case}
		for _, ca := range c.Arms {
			if ca.Functional.Of == 0 {
				row = append(row, dash)
				continue
			}
			row = append(row, fmtCount(ca.Functional)+" / "+fmtCount(ca.Delivered))
		}
		cases.Rows = append(cases.Rows, row)
	}
	ts = append(ts, cases)
	if len(r.Comparisons) > 0 {
		pt := table{Title: "Paired transitions vs " + r.Baseline + " (matching case and repeat)",
			Header: []string{"candidate", "outcome", "pairs", "both pass", "both fail", "improves", "regresses", "unpaired", "McNemar exact p"}}
		for _, c := range r.Comparisons {
			for _, x := range []struct {
				name string
				t    Transitions
			}{{"functional", c.Functional}, {"delivered", c.Delivered}} {
				pt.Rows = append(pt.Rows, []string{c.Candidate, x.name, strconv.Itoa(x.t.Pairs), strconv.Itoa(x.t.BothPass), strconv.Itoa(x.t.BothFail),
					strconv.Itoa(x.t.CandidateImproves), strconv.Itoa(x.t.CandidateRegresses), strconv.Itoa(x.t.Unpaired), fmtF(x.t.McNemarP, 3)})
			}
		}
		ts = append(ts, pt)
		rt := table{Title: "Decode TPS ratio vs " + r.Baseline + " (paired bootstrap over cases, repeats kept together)",
			Header: []string{"candidate", "ratio", "95% low", "95% high", "cases", "resamples"}}
		for _, c := range r.Comparisons {
			x := c.DecodeTPSRatio
			rt.Rows = append(rt.Rows, []string{c.Candidate, fmtF(x.Ratio, 3), fmtF(x.Low, 3), fmtF(x.High, 3), strconv.Itoa(x.Cases), strconv.Itoa(x.Resamples)})
		}
		ts = append(ts, rt)
	}
	return append(append(append(ts, sweepTables(r)...), longContextTables(r)...), append(agentUsageTables(r), agentMatrixTables(r)...)...)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

func writeText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	ew.printf("evalctl report\n")
	for _, l := range mixedLines(r) {
		ew.printf("%s\n", l)
	}
	for _, l := range headerLines(r) {
		ew.printf("%s\n", l)
	}
	for _, t := range tables(r) {
		ew.printf("\n%s\n", t.Title)
		tw := tabwriter.NewWriter(ew.w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
		for _, row := range t.Rows {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil && ew.err == nil {
			ew.err = err
		}
	}
	if len(r.Notes) > 0 {
		ew.printf("\nIn words\n")
		for _, n := range r.Notes {
			ew.printf("- %s\n", n)
		}
	}
	ew.printf("\nLegend\n")
	for _, l := range Legend() {
		ew.printf("- %s: %s\n", l.Term, l.Meaning)
	}
	return ew.err
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func writeMarkdown(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	ew.printf("# evalctl report\n\n")
	for _, l := range mixedLines(r) {
		ew.printf("> **%s**\n\n", mdEscape(l))
	}
	for _, l := range headerLines(r) {
		ew.printf("- %s\n", mdEscape(l))
	}
	for _, t := range tables(r) {
		ew.printf("\n## %s\n\n", mdEscape(t.Title))
		ew.printf("| %s |\n", strings.Join(escapeAll(t.Header), " | "))
		seps := make([]string, len(t.Header))
		for i := range seps {
			seps[i] = "---"
			if i > 0 {
				seps[i] = "---:"
			}
		}
		ew.printf("|%s|\n", strings.Join(seps, "|"))
		for _, row := range t.Rows {
			ew.printf("| %s |\n", strings.Join(escapeAll(row), " | "))
		}
	}
	if len(r.Notes) > 0 {
		ew.printf("\n## In words\n\n")
		for _, n := range r.Notes {
			ew.printf("- %s\n", mdEscape(n))
		}
	}
	ew.printf("\n## Legend\n\n")
	for _, l := range Legend() {
		ew.printf("- **%s**: %s\n", mdEscape(l.Term), mdEscape(l.Meaning))
	}
	return ew.err
}

func escapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mdEscape(s)
	}
	return out
}

// csvNum formats a float exactly as encoding/json does, so the CSV and the
// JSON of an export agree digit for digit.
func csvNum(v float64) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "NaN"
	}
	return string(b)
}

func csvF(v *float64) string {
	if v == nil {
		return ""
	}
	return csvNum(*v)
}

func csvI(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

func csvB(v *bool) string {
	if v == nil {
		return ""
	}
	return strconv.FormatBool(*v)
}

// csvColumns are the columns of the aggregates CSV: one row per arm
// (scope "arm", compared with the baseline), one per case and arm
// (scope "case"), then the legend (scope "legend": the figure in the arm
// column, its meaning in the last). Empty cells are null.
var csvColumns = []string{
	"scope", "arm", "case", "attempts", "completed", "scored", "ungraded", "unscored", "pending", "states", "replaced",
	"functional", "functional_rate", "functional_wilson_low", "functional_wilson_high",
	"delivered", "delivered_rate", "delivered_wilson_low", "delivered_wilson_high",
	"measured", "unmeasured", "overlapped", "native_output_tokens", "decode_seconds", "task_seconds", "decode_tps", "timings_source", "task_output_tps",
	"median_attempt_seconds", "terminations", "draft_tokens", "draft_accepted", "draft_acceptance",
	"decode_tps_gain_percent", "task_output_tps_gain_percent", "tokens_per_week",
	"baseline", "functional_pairs", "functional_both_pass", "functional_both_fail", "functional_candidate_improves",
	"functional_candidate_regresses", "functional_unpaired", "functional_mcnemar_exact_p",
	"delivered_pairs", "delivered_both_pass", "delivered_both_fail", "delivered_candidate_improves",
	"delivered_candidate_regresses", "delivered_unpaired", "delivered_mcnemar_exact_p",
	"decode_tps_ratio", "decode_tps_ratio_low", "decode_tps_ratio_high", "ratio_cases", "ratio_resamples", "mixed", "meaning",
}

func statsCells(s *Stats) []string {
	rate := func(r Rate) []string {
		return []string{strconv.Itoa(r.Count), csvF(r.Rate), csvF(r.Low), csvF(r.High)}
	}
	out := []string{strconv.Itoa(s.Attempts), strconv.Itoa(s.Completed), strconv.Itoa(s.Scored), strconv.Itoa(s.Ungraded), strconv.Itoa(s.Unscored),
		strconv.Itoa(s.Pending), csvCounts(s.States), csvCounts(s.Replaced)}
	out = append(out, rate(s.Functional)...)
	out = append(out, rate(s.Delivered)...)
	terms := csvCounts(s.Terminations)
	source := ""
	if s.TimingsSource != nil {
		source = *s.TimingsSource
	}
	return append(out, strconv.Itoa(s.Measured), strconv.Itoa(s.Unmeasured), csvN(s.Overlapped), csvI(s.NativeOutputTokens), csvF(s.DecodeSeconds), csvF(s.TaskSeconds),
		csvF(s.DecodeTPS), source, csvF(s.TaskOutputTPS), csvF(s.MedianAttemptSeconds), terms,
		csvI(s.DraftTokens), csvI(s.DraftAccepted), csvF(s.DraftAcceptance))
}

// csvCounts is counts by name as words ("completed 8, running 1"); empty
// without any.
func csvCounts(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	return fmtTerminations(m)
}

// WriteCSV writes the aggregates as one CSV table (see csvColumns).
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	mixed := strings.Join(r.Mixed, "; ")
	if err := cw.Write(csvColumns); err != nil {
		return err
	}
	write := func(row []string) error {
		if len(row) != len(csvColumns) {
			return fmt.Errorf("aggregates csv: row of %d fields for %d columns", len(row), len(csvColumns))
		}
		return cw.Write(row)
	}
	cmp := map[string]*Comparison{}
	for i := range r.Comparisons {
		cmp[r.Comparisons[i].Candidate] = &r.Comparisons[i]
	}
	for i := range r.Arms {
		a := &r.Arms[i]
		row := append([]string{"arm", a.Arm, ""}, statsCells(&a.Stats)...)
		row = append(row, csvF(a.DecodeTPSGainPercent), csvF(a.TaskOutputTPSGainPercent), csvF(a.TokensPerWeek), r.Baseline)
		if c := cmp[a.Arm]; c != nil {
			for _, t := range []Transitions{c.Functional, c.Delivered} {
				row = append(row, strconv.Itoa(t.Pairs), strconv.Itoa(t.BothPass), strconv.Itoa(t.BothFail), strconv.Itoa(t.CandidateImproves),
					strconv.Itoa(t.CandidateRegresses), strconv.Itoa(t.Unpaired), csvF(t.McNemarP))
			}
			x := c.DecodeTPSRatio
			row = append(row, csvF(x.Ratio), csvF(x.Low), csvF(x.High), strconv.Itoa(x.Cases), strconv.Itoa(x.Resamples))
		} else {
			row = append(row, make([]string, 19)...)
		}
		if err := write(append(row, mixed, "")); err != nil {
			return err
		}
	}
	for _, c := range r.Cases {
		for i := range c.Arms {
			ca := &c.Arms[i]
			row := append([]string{"case", ca.Arm, c.Case}, statsCells(&ca.Stats)...)
			row = append(row, make([]string, 4+19)...)
			if err := write(append(row, mixed, "")); err != nil {
				return err
			}
		}
	}
	// The legend: one row per figure, scope "legend", the figure in the
	// arm column and what it means in the last.
	for _, l := range Legend() {
		row := make([]string, len(csvColumns))
		row[0], row[1], row[len(row)-1] = "legend", l.Term, l.Meaning
		if err := write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
