package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/evalctl/evalctl/results/runstore"
)

// Difference is the first thing Verify found that does not match: in which
// file, which field, what the recomputation expected and what the file
// holds.
type Difference struct {
	File, Field, Expected, Got string
}

var _ error = (*Difference)(nil)

func (d *Difference) Error() string {
	return fmt.Sprintf("%s: %s: expected %s, got %s", d.File, d.Field, d.Expected, d.Got)
}

var sumLine = regexp.MustCompile(`^([0-9a-f]{64}) [ *](.+)$`)

// Verify checks an export directory (docs/exports.md gives the rules, which
// check.py follows too): every checksum in SHA256SUMS and no file it does
// not list; every number written as evalctl writes it; every outcome
// recomputed from its evidence; attempts.csv holding the rows of
// attempts.json; protocol.json's digests; and every aggregate, note and
// word recomputed from the rows with the report's own pooling equal to
// aggregates.json and aggregates.csv. JSON files are compared by value
// (whitespace and key order are free), CSV files cell by cell (quoting is
// free). It returns a *Difference for the first mismatch.
func Verify(dir string) error {
	listed, err := verifySums(dir)
	if err != nil {
		return err
	}
	if d := verifyText(listed); d != nil {
		return d
	}
	rows, err := verifyRows(listed)
	if err != nil {
		return err
	}
	in, opts, d := verifyProtocol(listed[ProtocolJSON])
	if d != nil {
		return d
	}
	in.Rows = rows
	return verifyAggregates(listed, in, opts)
}

// verifyText checks that the data files are UTF-8 text and that every
// number of the JSON ones is written as evalctl writes it.
func verifyText(listed map[string][]byte) *Difference {
	for _, name := range []string{AttemptsJSON, AttemptsCSV, AggregatesJSON, AggregatesCSV, ProtocolJSON} {
		if !utf8.Valid(listed[name]) {
			return &Difference{name, "(document)", "UTF-8 text", "bytes that are not"}
		}
	}
	for _, name := range []string{AttemptsJSON, AggregatesJSON, ProtocolJSON} {
		if d := canonicalNumbers(name, listed[name]); d != nil {
			return d
		}
	}
	return nil
}

// verifyRows reads attempts.json's rows and checks them (written as
// evalctl writes them, each outcome from its evidence), the shipped
// checker and attempts.csv against them.
func verifyRows(listed map[string][]byte) ([]Row, error) {
	var rows []Row
	if err := strictUnmarshal(listed[AttemptsJSON], &rows); err != nil {
		return nil, &Difference{AttemptsJSON, "(document)", "an array of attempt rows", err.Error()}
	}
	if rows == nil {
		return nil, &Difference{AttemptsJSON, "(document)", "an array of attempt rows", "null"}
	}
	if d := roundTrip(AttemptsJSON, rows, listed[AttemptsJSON]); d != nil {
		return nil, d
	}
	if !bytes.Equal(listed[CheckerPy], checkerPy) {
		return nil, &Difference{CheckerPy, "(bytes)", "the checker this evalctl ships", "a different file"}
	}
	for i := range rows {
		if d := checkEvidence(i, &rows[i]); d != nil {
			return nil, d
		}
	}
	wantCSV, err := attemptsCSV(rows)
	if err != nil {
		return nil, err
	}
	if d := diffCSV(AttemptsCSV, wantCSV, listed[AttemptsCSV]); d != nil {
		return nil, d
	}
	return rows, nil
}

// verifyAggregates rebuilds the report from in and compares it with
// aggregates.json and aggregates.csv (whose options must be protocol.json's).
func verifyAggregates(listed map[string][]byte, in *Input, opts Options) error {
	var head struct {
		Options Options `json:"options"`
	}
	if err := json.Unmarshal(listed[AggregatesJSON], &head); err != nil {
		return &Difference{AggregatesJSON, "(document)", "a report", err.Error()}
	}
	if head.Options != opts {
		return &Difference{AggregatesJSON, "options", fmt.Sprintf("%+v (protocol.json)", opts), fmt.Sprintf("%+v", head.Options)}
	}
	rep, err := Build(in, opts)
	if err != nil {
		return &Difference{AttemptsJSON, "(rows)", "rows a report can be built from", err.Error()}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		return err
	}
	if err := diffJSONDocs(AggregatesJSON, buf.Bytes(), listed[AggregatesJSON]); err != nil {
		return err
	}
	buf.Reset()
	if err := WriteCSV(&buf, rep); err != nil {
		return err
	}
	return diffCSV(AggregatesCSV, buf.Bytes(), listed[AggregatesCSV])
}

// verifySums checks SHA256SUMS: a line per file of the export, each
// checksum right, no file of the directory unlisted. It returns each
// listed file's bytes, read once: what was checksummed is what is parsed.
func verifySums(dir string) (map[string][]byte, error) {
	sums, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", dir, err)
	}
	listed := map[string][]byte{}
	for i, line := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		m := sumLine.FindStringSubmatch(line)
		if m == nil {
			return nil, &Difference{SumsFile, fmt.Sprintf("line %d", i+1), "\"SHA256  FILE\"", strconv.Quote(line)}
		}
		name := m[2]
		if name != filepath.Base(name) || name == SumsFile {
			return nil, &Difference{SumsFile, fmt.Sprintf("line %d", i+1), "a file name in the export directory", strconv.Quote(name)}
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, &Difference{name, "sha256", m[1], "unreadable file: " + err.Error()}
		}
		h := sha256.Sum256(data)
		if got := hex.EncodeToString(h[:]); got != m[1] {
			return nil, &Difference{name, "sha256", m[1], got}
		}
		listed[name] = data
	}
	for _, name := range exportFiles {
		if _, ok := listed[name]; !ok {
			return nil, &Difference{SumsFile, name, "a checksum line", "none"}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", dir, err)
	}
	for _, e := range entries {
		if _, ok := listed[e.Name()]; !ok && e.Name() != SumsFile {
			return nil, &Difference{e.Name(), "(file)", "only the files SHA256SUMS lists", "a file it does not list"}
		}
	}
	for name := range listed {
		if !contains(exportFiles, name) {
			return nil, &Difference{SumsFile, name, "only the files of an export (" + strings.Join(exportFiles, ", ") + ")", "a checksum of another file"}
		}
	}
	return listed, nil
}

// verifyProtocol reads protocol.json and checks what follows in it: each
// run's identity and digests from its stored bytes. It returns the runs as
// a report input (rows to be added) and the options.
func verifyProtocol(data []byte) (*Input, Options, *Difference) {
	var proto Protocol
	if err := strictUnmarshal(data, &proto); err != nil {
		return nil, Options{}, &Difference{ProtocolJSON, "(document)", "a protocol", err.Error()}
	}
	if d := roundTrip(ProtocolJSON, &proto, data); d != nil {
		return nil, Options{}, d
	}
	if proto.Runs == nil {
		return nil, Options{}, &Difference{ProtocolJSON, "runs", "an array", "null"}
	}
	if proto.Schema != ProtocolSchema {
		return nil, Options{}, &Difference{ProtocolJSON, "schema", strconv.Quote(ProtocolSchema), strconv.Quote(proto.Schema)}
	}
	in := &Input{Timelines: map[string]*Timeline{}}
	for i, pr := range proto.Runs {
		if d := protocolRunInput(in, i, &pr, proto.Options.Suite); d != nil {
			return nil, Options{}, d
		}
	}
	return in, proto.Options, nil
}

// protocolRunInput checks protocol.json's run i and adds it to in.
func protocolRunInput(in *Input, i int, pr *ProtocolRun, suite string) *Difference {
	at := func(f string) string { return fmt.Sprintf("runs[%d].%s", i, f) }
	var run runstore.Run
	if err := json.Unmarshal([]byte(pr.RunFile), &run); err != nil {
		return &Difference{ProtocolJSON, at("run_file"), "a run.json", err.Error()}
	}
	for _, c := range []struct{ field, file, sum string }{{"run_file_sha256", pr.RunFile, pr.RunFileSHA256}, {"plan_file_sha256", pr.PlanFile, pr.PlanFileSHA256}} {
		h := sha256.Sum256([]byte(c.file))
		if got := hex.EncodeToString(h[:]); got != c.sum {
			return &Difference{ProtocolJSON, at(c.field), got, c.sum}
		}
	}
	if pr.RunID != run.ID {
		return &Difference{ProtocolJSON, at("run_id"), strconv.Quote(run.ID), strconv.Quote(pr.RunID)}
	}
	if want := pr.PlanFileSHA256 == run.PlanSHA256; want != pr.PlanMatchesRun {
		return &Difference{ProtocolJSON, at("plan_matches_run"), strconv.FormatBool(want), strconv.FormatBool(pr.PlanMatchesRun)}
	}
	if pr.Runner != RunnerActive && pr.Runner != RunnerNone {
		return &Difference{ProtocolJSON, at("runner"), strconv.Quote(RunnerActive) + " or " + strconv.Quote(RunnerNone), strconv.Quote(pr.Runner)}
	}
	info := NewRunInfo(&run, suite)
	info.Runner = pr.Runner
	in.Runs = append(in.Runs, info)
	if tl := pr.Timeline; tl != nil {
		if tl.Sessions == nil || tl.Rests == nil {
			return &Difference{ProtocolJSON, at("timeline"), "arrays of sessions and rests", "null"}
		}
		in.Timelines[run.ID] = tl
	}
	sweeps, err := planSweeps([]byte(pr.PlanFile))
	if err != nil {
		return &Difference{ProtocolJSON, at("plan_file"), "a plan", err.Error()}
	}
	in.Sweeps = append(in.Sweeps, sweeps...)
	setups, err := planAgentSetups([]byte(pr.PlanFile))
	if err != nil {
		return &Difference{ProtocolJSON, at("plan_file"), "a plan", err.Error()}
	}
	in.ArmSetups = append(in.ArmSetups, setups...)
	return nil
}

// roundTrip checks that a decoded file says exactly what its values say:
// written again it gives the same values, so no field is missing, none is
// spelled otherwise than evalctl writes it (a time, an omitted empty
// field) and none holds a value its type drops.
func roundTrip(name string, v any, data []byte) *Difference {
	again, err := marshalIndent(v)
	if err != nil {
		return &Difference{name, "(document)", "values evalctl can write", err.Error()}
	}
	if err := diffJSONDocs(name, again, data); err != nil {
		var d *Difference
		if errors.As(err, &d) {
			return d
		}
		return &Difference{name, "(document)", "valid JSON", err.Error()}
	}
	return nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the document")
	}
	return nil
}

// canonicalNumbers checks that every number of a JSON file is written as
// evalctl writes it: an integer as its digits, any other number as the
// shortest text that reads back as the same float64, in encoding/json's
// form (0.000001, 1e-7, 1e+21). A number written otherwise (1.50, 1e2) is
// an edit, whatever its value.
func canonicalNumbers(name string, data []byte) *Difference {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(path string) *Difference
	walk = func(path string) *Difference {
		tok, err := dec.Token()
		if err != nil {
			return &Difference{name, "(document)", "valid JSON", err.Error()}
		}
		at := path
		if at == "" {
			at = "(root)"
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return &Difference{name, "(document)", "valid JSON", err.Error()}
					}
					p := fmt.Sprint(k)
					if path != "" {
						p = path + "." + p
					}
					if d := walk(p); d != nil {
						return d
					}
				}
			case '[':
				for i := 0; dec.More(); i++ {
					if d := walk(fmt.Sprintf("%s[%d]", path, i)); d != nil {
						return d
					}
				}
			}
			if _, err := dec.Token(); err != nil {
				return &Difference{name, "(document)", "valid JSON", err.Error()}
			}
		case json.Number:
			if want, ok := canonicalNumber(string(t)); !ok {
				return &Difference{name, at, want + " (the number as evalctl writes it)", string(t)}
			}
		}
		return nil
	}
	return walk("")
}

// canonicalNumber reports whether text is a number as encoding/json writes
// it, and that text.
func canonicalNumber(text string) (string, bool) {
	if !strings.ContainsAny(text, ".eE") {
		return text, true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return "a number", false
	}
	want := csvNum(f)
	return want, want == text
}

// diffCSV compares the CSV Verify rendered with the file, record by record
// and cell by cell (so quoting and line endings are free), naming the first
// differing row and column.
func diffCSV(name string, want, got []byte) error {
	wr, err := csv.NewReader(bytes.NewReader(want)).ReadAll()
	if err != nil {
		return err
	}
	gr, err := csv.NewReader(bytes.NewReader(got)).ReadAll()
	if err != nil {
		return &Difference{name, "(document)", "valid CSV", err.Error()}
	}
	for i := 0; i < min(len(wr), len(gr)); i++ {
		for j := 0; j < min(len(wr[i]), len(gr[i])); j++ {
			if wr[i][j] != gr[i][j] {
				col := strconv.Itoa(j)
				if len(wr) > 0 && j < len(wr[0]) {
					col = wr[0][j]
				}
				return &Difference{name, fmt.Sprintf("line %d, column %s", i+1, col), strconv.Quote(wr[i][j]), strconv.Quote(gr[i][j])}
			}
		}
		if len(wr[i]) != len(gr[i]) {
			return &Difference{name, fmt.Sprintf("line %d", i+1), fmt.Sprintf("%d fields", len(wr[i])), fmt.Sprintf("%d fields", len(gr[i]))}
		}
	}
	if len(wr) != len(gr) {
		return &Difference{name, "lines", strconv.Itoa(len(wr)), strconv.Itoa(len(gr))}
	}
	return nil
}

// diffJSONDocs compares two JSON documents value by value (numbers by
// their text, which canonicalNumbers has made exact) and names the first
// differing path; whitespace and key order are not compared.
func diffJSONDocs(name string, want, got []byte) error {
	var w, g any
	dw := json.NewDecoder(bytes.NewReader(want))
	dw.UseNumber()
	if err := dw.Decode(&w); err != nil {
		return err
	}
	dg := json.NewDecoder(bytes.NewReader(got))
	dg.UseNumber()
	if err := dg.Decode(&g); err != nil {
		return &Difference{name, "(document)", "valid JSON", err.Error()}
	}
	if d := diffJSON(name, "", w, g); d != nil {
		return d
	}
	return nil
}

func diffJSON(file, path string, want, got any) *Difference {
	at := func(p string) string {
		if p == "" {
			return "(root)"
		}
		return p
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return &Difference{file, at(path), "an object", brief(got)}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			gv, ok := g[k]
			if !ok {
				return &Difference{file, p, brief(w[k]), "no such field"}
			}
			if d := diffJSON(file, p, w[k], gv); d != nil {
				return d
			}
		}
		extra := make([]string, 0)
		for k := range g {
			if _, ok := w[k]; !ok {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			p := extra[0]
			if path != "" {
				p = path + "." + p
			}
			return &Difference{file, p, "no such field", brief(g[extra[0]])}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return &Difference{file, at(path), "an array", brief(got)}
		}
		for i := 0; i < min(len(w), len(g)); i++ {
			if d := diffJSON(file, fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != nil {
				return d
			}
		}
		if len(w) != len(g) {
			return &Difference{file, at(path) + " length", strconv.Itoa(len(w)), strconv.Itoa(len(g))}
		}
		return nil
	default:
		// The whole value, not the brief form a message shows: two long
		// strings may share their first 120 characters.
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if !bytes.Equal(wj, gj) {
			if ws, ok := want.(string); ok {
				if gs, ok := got.(string); ok {
					w, g := around(ws, gs)
					return &Difference{file, at(path), w, g}
				}
			}
			return &Difference{file, at(path), brief(want), brief(got)}
		}
		return nil
	}
}

// around quotes two differing strings where they first differ, with a
// little of what comes before: long words differ far from their start.
func around(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	cut := func(s string) string {
		from, to := max(0, i-40), min(len(s), i+60)
		q := strconv.Quote(s[from:to])
		if from > 0 {
			q = "…" + q
		}
		if to < len(s) {
			q += "…"
		}
		return q
	}
	return cut(a), cut(b)
}

func brief(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
