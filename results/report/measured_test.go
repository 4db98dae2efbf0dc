package report

import (
	"encoding/csv"
	"encoding/json"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
)

// renderPlain renders the report with HTML character references decoded,
// so that every format can be searched for the same text.
func renderPlain(t *testing.T, rep *Report, format string) string {
	t.Helper()
	return html.UnescapeString(render(t, rep, format))
}

// armRow is the first line of text holding the table row of arm: "arm  ..."
// in a table, "| arm | ..." in Markdown, "<tr><td>arm</td>..." in HTML.
func armRow(text, arm string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, arm+" ") || strings.HasPrefix(l, "| "+arm+" |") || strings.HasPrefix(l, "<tr><td>"+arm+"</td>") {
			return l
		}
	}
	return ""
}

// TestNullMeasurementsNotPooled: an attempt whose output tokens (or decode
// seconds) are null, because some response reported none, is scored as
// usual but left out of decode TPS and task TPS, counted as unmeasured and
// said so; it is never pooled as 0 tokens with its seconds, which would
// understate the arm's speed.
func TestNullMeasurementsNotPooled(t *testing.T) {
	noTokens := att("A", "c1", "repeat-2", 1, "", true, 99999, 30)
	noTokens.TokensUnknown = true
	noDecode := att("A", "c2", "repeat-1", 2, "", false, 2000, 40)
	noDecode.DecodeUnknown = true
	onlyNull := att("B", "c1", "repeat-1", 4, "", true, 0, 10)
	onlyNull.TokensUnknown = true
	dir := writeRun(t, &reporttest.RunSpec{ID: "nullmeas", Attempts: []reporttest.AttemptSpec{
		att("A", "c1", "repeat-1", 0, "", true, 1000, 10),
		noTokens,
		noDecode,
		att("A", "c2", "repeat-2", 3, "", true, 1000, 10),
		onlyNull,
	}})
	in := mustLoad(t, dir)
	if r := in.Rows[1]; r.NativeOutputTokens != nil || r.DecodeSeconds == nil || *r.DecodeSeconds != 30 {
		t.Errorf("row without a token count: tokens %v, decode %v; want null and 30", r.NativeOutputTokens, r.DecodeSeconds)
	}
	if r := in.Rows[2]; r.DecodeSeconds != nil || r.NativeOutputTokens == nil {
		t.Errorf("row without decode seconds: tokens %v, decode %v", r.NativeOutputTokens, r.DecodeSeconds)
	}
	rep := build(t, []string{dir}, Options{})
	a, b := rep.Arm("A"), rep.Arm("B")
	// Outcomes count every scored attempt; speed only the measured ones.
	if a.Scored != 4 || a.Functional.Count != 3 || a.Measured != 2 || a.Unmeasured != 2 {
		t.Errorf("A: scored %d functional %d measured %d unmeasured %d; want 4, 3, 2, 2", a.Scored, a.Functional.Count, a.Measured, a.Unmeasured)
	}
	if *a.NativeOutputTokens != 2000 || *a.DecodeSeconds != 20 || *a.TaskSeconds != 40 || *a.DecodeTPS != 100 || *a.TaskOutputTPS != 50 {
		t.Errorf("A pooled %d tokens / %v s (task %v) = %v decode, %v task TPS; want 2000 / 20 (40) = 100, 50",
			*a.NativeOutputTokens, *a.DecodeSeconds, *a.TaskSeconds, *a.DecodeTPS, *a.TaskOutputTPS)
	}
	if b.Scored != 1 || b.Measured != 0 || b.Unmeasured != 1 || b.DecodeTPS != nil || b.TaskOutputTPS != nil || b.NativeOutputTokens != nil || b.TimingsSource != nil {
		t.Errorf("B (its only attempt without tokens): %+v", b.Stats)
	}
	if b.TokensPerWeek != nil || b.DecodeTPSGainPercent != nil {
		t.Error("B has derived speed figures without a measurement")
	}
	if c := rep.Cases[0].Arms[0]; c.Arm != "A" || c.Measured != 1 || c.Unmeasured != 1 || *c.DecodeTPS != 100 {
		t.Errorf("case c1 of A: %+v", c.Stats)
	}
	// The ratio pools only measured attempts: c1 has none in B.
	if ri := rep.Comparisons[0].DecodeTPSRatio; ri.Ratio != nil || ri.Cases != 0 {
		t.Errorf("B vs A ratio over %d cases: %v", ri.Cases, ri.Ratio)
	}
	note := "3 scored attempt(s) have no native output token count or no decode seconds"
	if !strings.Contains(strings.Join(rep.Notes, "\n"), note) {
		t.Errorf("notes do not say what was left out: %q", rep.Notes)
	}

	var doc struct {
		Arms []struct {
			Arm        string          `json:"arm"`
			Measured   int             `json:"measured"`
			Unmeasured int             `json:"unmeasured"`
			DecodeTPS  json.RawMessage `json:"decode_tps"`
			TaskTPS    json.RawMessage `json:"task_output_tps"`
			Tokens     json.RawMessage `json:"native_output_tokens"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(render(t, rep, FormatJSON)), &doc); err != nil {
		t.Fatal(err)
	}
	if x := doc.Arms[1]; x.Arm != "B" || x.Unmeasured != 1 || string(x.DecodeTPS) != "null" || string(x.TaskTPS) != "null" || string(x.Tokens) != "null" {
		t.Errorf("B in JSON: %+v; want unmeasured 1 and null speed figures", x)
	}
	if x := doc.Arms[0]; x.Measured != 2 || x.Unmeasured != 2 || string(x.DecodeTPS) != "100" {
		t.Errorf("A in JSON: %+v", x)
	}
	for _, f := range []string{FormatTable, FormatMarkdown, FormatHTML} {
		out := renderPlain(t, rep, f)
		if !strings.Contains(out, "2 (+2 null)") || !strings.Contains(out, "0 (+1 null)") {
			t.Errorf("%s: the speed table does not show the unmeasured attempts:\n%s", f, out)
		}
		if !strings.Contains(out, note) {
			t.Errorf("%s: no note on the unmeasured attempts", f)
		}
	}
	if csvText := render(t, rep, FormatCSV); !strings.Contains(csvText, "arm,B,,1,1,1,0,0,0,completed 1,,1,1,") || !strings.Contains(csvText, ",0,,,,,,,") {
		t.Errorf("CSV of B does not leave its speed figures empty:\n%s", csvText)
	}
}

// TestTimingSourceMarked: an arm's pooled stats say where its decode
// seconds came from, and every human format marks a decode TPS that is not
// purely server-timed (client-measured figures are marked);
// server-timed arms stay unmarked.
func TestTimingSourceMarked(t *testing.T) {
	spec := &reporttest.RunSpec{ID: "timings"}
	add := func(arm, c, repeat, source string) {
		a := att(arm, c, repeat, len(spec.Attempts), "", true, 1000, 10)
		a.TimingsSource = source
		spec.Attempts = append(spec.Attempts, a)
	}
	add("server", "c1", "repeat-1", "")
	add("server", "c2", "repeat-1", "server")
	add("client", "c1", "repeat-1", "client")
	add("client", "c2", "repeat-1", "client")
	add("mixed", "c1", "repeat-1", "server")
	add("mixed", "c2", "repeat-1", "client")
	add("within", "c1", "repeat-1", "mixed")
	add("within", "c2", "repeat-1", "server")
	add("silent", "c1", "repeat-1", "server")
	add("silent", "c2", "repeat-1", "none") // no responses: adds no decode time
	rep := build(t, []string{writeRun(t, spec)}, Options{})
	want := map[string]string{"server": "server", "client": "client", "mixed": "mixed", "within": "mixed", "silent": "server"}
	for arm, src := range want {
		a := rep.Arm(arm)
		if a.TimingsSource == nil || *a.TimingsSource != src {
			t.Errorf("%s: timings_source %v, want %s", arm, a.TimingsSource, src)
		}
	}
	if c := rep.Cases[1].Arms[2]; c.Arm != "mixed" || c.TimingsSource == nil || *c.TimingsSource != "client" {
		t.Errorf("case c2 of arm mixed: %+v", c.Stats)
	}

	var doc struct {
		Arms []struct {
			Arm           string  `json:"arm"`
			TimingsSource *string `json:"timings_source"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(render(t, rep, FormatJSON)), &doc); err != nil {
		t.Fatal(err)
	}
	for _, a := range doc.Arms {
		if a.TimingsSource == nil || *a.TimingsSource != want[a.Arm] {
			t.Errorf("JSON arm %s: timings_source %v, want %s", a.Arm, a.TimingsSource, want[a.Arm])
		}
	}

	// The aggregates CSV carries the source in its own column.
	rows, err := csv.NewReader(strings.NewReader(render(t, rep, FormatCSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "timings_source")
	for _, r := range rows[1:] {
		if r[0] == "arm" && (col < 0 || r[col] != want[r[1]]) {
			t.Errorf("CSV arm %s: timings_source column %d holds %q, want %s", r[1], col, r[max(col, 0)], want[r[1]])
		}
	}

	marks := map[string]string{"client": "100.00 (client-measured)", "mixed": "100.00 (mixed timing sources)", "within": "100.00 (mixed timing sources)"}
	for _, f := range []string{FormatTable, FormatMarkdown, FormatHTML} {
		out := renderPlain(t, rep, f)
		speed := out[strings.Index(out, "Speed per arm"):]
		for arm, mark := range marks {
			if !strings.Contains(armRow(speed, arm), mark) {
				t.Errorf("%s: the speed row of %s lacks %q: %q", f, arm, mark, armRow(speed, arm))
			}
			if !strings.Contains(out, arm+": decode TPS 100.00 ") {
				t.Errorf("%s: no note on the timing source of %s", f, arm)
			}
		}
		for _, arm := range []string{"server", "silent"} {
			if l := armRow(speed, arm); l == "" || strings.Contains(l, "(client-measured)") || strings.Contains(l, "timing") {
				t.Errorf("%s: the server-timed arm %s is marked or missing: %q", f, arm, l)
			}
		}
		if f == FormatHTML {
			if !strings.Contains(out, "<td>100.00 (client-measured)</td>") || !strings.Contains(out, "<td>100.00 (mixed timing sources)</td>") {
				t.Errorf("html: the speed table does not mark the decode TPS")
			}
			// The TPS chart marks the same arms under their names.
			if !strings.Contains(out, ">client-measured</text>") || strings.Count(out, `class="timing"`) != 3 {
				t.Errorf("html: the TPS chart marks %d arms, want 3", strings.Count(out, `class="timing"`))
			}
		}
	}
	if strings.Contains(render(t, rep, FormatTable), "silent: decode TPS") {
		t.Error("an attempt without responses made a server-timed arm look otherwise")
	}
}

// TestTimingSourceUnknown: rows that do not say how they were timed (an
// attempts.json from elsewhere) make the pool's source unknown, marked as
// such; the report does not guess server.
func TestTimingSourceUnknown(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	server := "server"
	var rows []Row
	for i, src := range []*string{&server, nil} {
		r := row("A", "c", []string{"repeat-1", "repeat-2"}[i], bp(true), bp(true))
		r.NativeOutputTokens, r.DecodeSeconds, r.TaskSeconds, r.TimingsSource = i64(500), f64(5), f64(10), src
		rows = append(rows, r)
	}
	rep, err := Build(&Input{Rows: rows}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Arm("A")
	if a.TimingsSource == nil || *a.TimingsSource != TimingsUnknown || *a.DecodeTPS != 100 {
		t.Errorf("A: timings_source %v, decode TPS %v", a.TimingsSource, a.DecodeTPS)
	}
	if out := render(t, rep, FormatTable); !strings.Contains(out, "100.00 (timing source unknown)") {
		t.Errorf("table does not mark an unknown timing source:\n%s", out)
	}
}
