package report

import (
	"bytes"
	"context"
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

	"github.com/evalctl/evalctl/results/runstore"
)

// Files of an export directory.
const (
	AttemptsJSON   = "attempts.json"
	AttemptsCSV    = "attempts.csv"
	AggregatesJSON = "aggregates.json"
	AggregatesCSV  = "aggregates.csv"
	ProtocolJSON   = "protocol.json"
	SumsFile       = "SHA256SUMS"
	// CheckerPy is the stdlib-only Python checker shipped beside the data.
	CheckerPy = "check.py"
)

// exportFiles are the files SHA256SUMS must cover, in the order it lists
// them.
var exportFiles = []string{AggregatesCSV, AggregatesJSON, AttemptsCSV, AttemptsJSON, CheckerPy, ProtocolJSON}

// ProtocolSchema names the version of protocol.json's shape.
const ProtocolSchema = "evalctl.protocol/v1"

// Protocol is protocol.json: each pooled run's registration exactly as
// stored (run.json and plan.json) with its identities, and the options the
// aggregates were built with.
type Protocol struct {
	Schema         string        `json:"schema"`
	EvalctlVersion string        `json:"evalctl_version"`
	Options        Options       `json:"options"`
	Runs           []ProtocolRun `json:"runs"`
}

// ProtocolRun is one run's registration.
type ProtocolRun struct {
	RunID string `json:"run_id"`
	// Run and Plan are run.json and plan.json as stored; RunFileSHA256 and
	// PlanFileSHA256 are the SHA-256 of those files' bytes.
	Run            json.RawMessage `json:"run"`
	RunFileSHA256  string          `json:"run_file_sha256"`
	Plan           json.RawMessage `json:"plan"`
	PlanFileSHA256 string          `json:"plan_file_sha256"`
	// PlanMatchesRun is whether plan.json still hashes to the plan_sha256
	// registered in run.json.
	PlanMatchesRun bool `json:"plan_matches_run"`
}

// ErrExportDir is returned when the export directory already holds files.
var ErrExportDir = errors.New("export directory is not empty")

// Export writes the rows and aggregates of the runs in dirs to out (created;
// it must be empty or absent): attempts.json, attempts.csv, aggregates.json,
// aggregates.csv, protocol.json and SHA256SUMS over them.
func Export(ctx context.Context, dirs []string, out string, opts Options) (*Report, error) {
	in, err := Load(ctx, dirs, opts.Suite)
	if err != nil {
		return nil, err
	}
	rep, err := Build(in, opts)
	if err != nil {
		return nil, err
	}
	proto := &Protocol{Schema: ProtocolSchema, EvalctlVersion: runstore.Version(), Options: opts}
	for _, dir := range dirs {
		pr, err := protocolRun(dir)
		if err != nil {
			return nil, err
		}
		proto.Runs = append(proto.Runs, pr)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if len(entries) > 0 {
		return nil, fmt.Errorf("export to %s: %w", out, ErrExportDir)
	}
	files := map[string][]byte{}
	if files[AttemptsJSON], err = marshalIndent(in.Rows); err != nil {
		return nil, err
	}
	if files[AttemptsCSV], err = attemptsCSV(in.Rows); err != nil {
		return nil, err
	}
	if files[AggregatesJSON], err = marshalIndent(rep); err != nil {
		return nil, fmt.Errorf("report json: %w", err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rep); err != nil {
		return nil, err
	}
	files[AggregatesCSV] = bytes.Clone(buf.Bytes())
	if files[ProtocolJSON], err = marshalIndent(proto); err != nil {
		return nil, err
	}
	files[CheckerPy] = checkerPy
	var sums strings.Builder
	for _, name := range exportFiles {
		h := sha256.Sum256(files[name])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), name)
		if err := runstore.WriteFileAtomic(filepath.Join(out, name), files[name], 0o644); err != nil {
			return nil, err
		}
	}
	if err := runstore.WriteFileAtomic(filepath.Join(out, SumsFile), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return rep, nil
}

func protocolRun(dir string) (ProtocolRun, error) {
	runBytes, err := os.ReadFile(filepath.Join(dir, runstore.RunFile))
	if err != nil {
		return ProtocolRun{}, fmt.Errorf("export protocol: %w", err)
	}
	planBytes, err := os.ReadFile(filepath.Join(dir, runstore.PlanFile))
	if err != nil {
		return ProtocolRun{}, fmt.Errorf("export protocol of %s: %w", dir, err)
	}
	var run runstore.Run
	if err := json.Unmarshal(runBytes, &run); err != nil {
		return ProtocolRun{}, fmt.Errorf("export protocol: %s: %w", filepath.Join(dir, runstore.RunFile), err)
	}
	rh, ph := sha256.Sum256(runBytes), sha256.Sum256(planBytes)
	pr := ProtocolRun{RunID: run.ID, RunFileSHA256: hex.EncodeToString(rh[:]), PlanFileSHA256: hex.EncodeToString(ph[:])}
	pr.PlanMatchesRun = pr.PlanFileSHA256 == run.PlanSHA256
	var compact bytes.Buffer
	if err := json.Compact(&compact, runBytes); err != nil {
		return ProtocolRun{}, fmt.Errorf("export protocol: run.json of %s: %w", dir, err)
	}
	pr.Run = bytes.Clone(compact.Bytes())
	compact.Reset()
	if err := json.Compact(&compact, planBytes); err != nil {
		return ProtocolRun{}, fmt.Errorf("export protocol: plan.json of %s: %w", dir, err)
	}
	pr.Plan = bytes.Clone(compact.Bytes())
	return pr, nil
}

// attemptColumns are the columns of attempts.csv: Row's JSON names, in
// Row's order, with empty cells for null.
var attemptColumns = []struct {
	name string
	get  func(*Row) string
}{
	{"run_id", func(r *Row) string { return r.RunID }},
	{"attempt_id", func(r *Row) string { return r.AttemptID }},
	{"slot", func(r *Row) string { return strconv.Itoa(r.Slot) }},
	{"arm", func(r *Row) string { return r.Arm }},
	{"arm_hash", func(r *Row) string { return r.ArmHash }},
	{"case", func(r *Row) string { return r.Case }},
	{"language", func(r *Row) string { return r.Language }},
	{"repeat", func(r *Row) string { return r.Repeat }},
	{"seed", func(r *Row) string { return strconv.FormatInt(r.Seed, 10) }},
	{"state", func(r *Row) string { return r.State }},
	{"replacement_of", func(r *Row) string { return csvS(r.ReplacementOf) }},
	{"replaced_by", func(r *Row) string { return csvS(r.ReplacedBy) }},
	{"image_id", func(r *Row) string { return r.ImageID }},
	{"suite", func(r *Row) string { return r.Suite }},
	{"suite_fingerprint", func(r *Row) string { return csvS(r.SuiteFingerprint) }},
	{"status", func(r *Row) string { return string(r.Status) }},
	{"functional", func(r *Row) string { return csvB(r.Functional) }},
	{"delivered", func(r *Row) string { return csvB(r.Delivered) }},
	{"expected_turns", func(r *Row) string { return strconv.Itoa(r.ExpectedTurns) }},
	{"turns", func(r *Row) string { return csvN(r.Turns) }},
	{"termination", func(r *Row) string { return csvS(r.Termination) }},
	{"native_output_tokens", func(r *Row) string { return csvI(r.NativeOutputTokens) }},
	{"decode_seconds", func(r *Row) string { return csvF(r.DecodeSeconds) }},
	{"task_seconds", func(r *Row) string { return csvF(r.TaskSeconds) }},
	{"prompt_tokens", func(r *Row) string { return csvI(r.PromptTokens) }},
	{"prompt_seconds", func(r *Row) string { return csvF(r.PromptSeconds) }},
	{"tool_calls", func(r *Row) string { return csvN(r.ToolCalls) }},
	{"tool_errors", func(r *Row) string { return csvN(r.ToolErrors) }},
	{"max_sequence_tokens", func(r *Row) string { return csvI(r.MaxSequenceTokens) }},
	{"draft_tokens", func(r *Row) string { return csvI(r.DraftTokens) }},
	{"draft_accepted", func(r *Row) string { return csvI(r.DraftAccepted) }},
	{"timings_source", func(r *Row) string { return csvS(r.TimingsSource) }},
	{"overlapped_attempts", func(r *Row) string { return csvN(r.OverlappedAttempts) }},
}

func csvS(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

func csvN(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

func attemptsCSV(rows []Row) ([]byte, error) {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	header := make([]string, len(attemptColumns))
	for i, c := range attemptColumns {
		header[i] = c.name
	}
	if err := cw.Write(header); err != nil {
		return nil, err
	}
	rec := make([]string, len(attemptColumns))
	for i := range rows {
		for j, c := range attemptColumns {
			rec[j] = c.get(&rows[i])
		}
		if err := cw.Write(rec); err != nil {
			return nil, err
		}
	}
	cw.Flush()
	return buf.Bytes(), cw.Error()
}

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

// Verify checks an export directory: every checksum in SHA256SUMS, that
// attempts.csv holds the rows of attempts.json, that protocol.json's plans
// match their runs, and that every aggregate recomputed from attempts.json
// with the report's own pooling equals aggregates.json and aggregates.csv.
// It returns a *Difference for the first mismatch.
func Verify(dir string) error {
	listed, err := readListed(dir)
	if err != nil {
		return err
	}
	rows, err := verifyRows(listed)
	if err != nil {
		return err
	}
	var proto Protocol
	if err := strictUnmarshal(listed[ProtocolJSON], &proto); err != nil {
		return &Difference{ProtocolJSON, "(document)", "a protocol", err.Error()}
	}
	in, err := protocolInput(&proto, rows)
	if err != nil {
		return err
	}
	return verifyAggregates(listed, in, proto.Options)
}

// readListed checks every checksum line of the export in dir and returns
// each listed file's bytes, read once: what was checksummed is what is
// parsed.
func readListed(dir string) (map[string][]byte, error) {
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
		if name != filepath.Base(name) {
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
	return listed, nil
}

// verifyRows reads attempts.json's rows and checks the shipped checker,
// each row's evidence and attempts.csv against them.
func verifyRows(listed map[string][]byte) ([]Row, error) {
	var rows []Row
	if err := strictUnmarshal(listed[AttemptsJSON], &rows); err != nil {
		return nil, &Difference{AttemptsJSON, "(document)", "an array of attempt rows", err.Error()}
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

// protocolInput checks protocol.json's runs against their plans and
// returns the report input they and rows make.
func protocolInput(proto *Protocol, rows []Row) (*Input, error) {
	in := &Input{Rows: rows}
	for i, pr := range proto.Runs {
		var run runstore.Run
		if err := json.Unmarshal(pr.Run, &run); err != nil {
			return nil, &Difference{ProtocolJSON, fmt.Sprintf("runs[%d].run", i), "a run.json", err.Error()}
		}
		if pr.RunID != run.ID {
			return nil, &Difference{ProtocolJSON, fmt.Sprintf("runs[%d].run_id", i), strconv.Quote(run.ID), strconv.Quote(pr.RunID)}
		}
		if want := pr.PlanFileSHA256 == run.PlanSHA256; want != pr.PlanMatchesRun {
			return nil, &Difference{ProtocolJSON, fmt.Sprintf("runs[%d].plan_matches_run", i), strconv.FormatBool(want), strconv.FormatBool(pr.PlanMatchesRun)}
		}
		in.Runs = append(in.Runs, NewRunInfo(&run, proto.Options.Suite))
		sweeps, err := planSweeps(pr.Plan)
		if err != nil {
			return nil, &Difference{ProtocolJSON, fmt.Sprintf("runs[%d].plan", i), "a plan", err.Error()}
		}
		in.Sweeps = append(in.Sweeps, sweeps...)
	}
	return in, nil
}

// verifyAggregates rebuilds the report from in and compares it with
// aggregates.json and aggregates.csv (whose options must be protocol.json's).
func verifyAggregates(listed map[string][]byte, in *Input, opts Options) error {
	aggBytes := listed[AggregatesJSON]
	var head struct {
		Options Options `json:"options"`
	}
	if err := json.Unmarshal(aggBytes, &head); err != nil {
		return &Difference{AggregatesJSON, "(document)", "a report", err.Error()}
	}
	if head.Options != opts {
		return &Difference{AggregatesJSON, "options", fmt.Sprintf("%+v (protocol.json)", opts), fmt.Sprintf("%+v", head.Options)}
	}
	rep, err := Build(in, head.Options)
	if err != nil {
		return &Difference{AttemptsJSON, "(rows)", "rows a report can be built from", err.Error()}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		return err
	}
	if d := diffJSONDocs(AggregatesJSON, buf.Bytes(), aggBytes); d != nil {
		return d
	}
	buf.Reset()
	if err := WriteCSV(&buf, rep); err != nil {
		return err
	}
	return diffCSV(AggregatesCSV, buf.Bytes(), listed[AggregatesCSV])
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

// diffCSV compares the CSV Verify rendered with the file's bytes, naming
// the first differing row and column.
func diffCSV(name string, want, got []byte) error {
	if bytes.Equal(want, got) {
		return nil
	}
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
	return &Difference{name, "(bytes)", "the rendering of the rows", "the same values, formatted differently"}
}

// diffJSONDocs compares two JSON documents value by value (numbers as
// written, so to the last digit) and names the first differing path.
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
	if !bytes.Equal(want, got) {
		return &Difference{name, "(bytes)", "the rendering of the recomputed report", "the same values, formatted differently"}
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
		for k := range g {
			if _, ok := w[k]; !ok {
				p := k
				if path != "" {
					p = path + "." + k
				}
				return &Difference{file, p, "no such field", brief(g[k])}
			}
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
		if brief(want) != brief(got) {
			return &Difference{file, at(path), brief(want), brief(got)}
		}
		return nil
	}
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
