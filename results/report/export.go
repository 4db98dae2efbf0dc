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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
const ProtocolSchema = "evalctl.protocol/v2"

// Protocol is protocol.json: each pooled run's registration exactly as
// stored (run.json and plan.json, byte for byte) with its identities, what
// its event log says of its sessions and rests, and the options the
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
	// RunFile and PlanFile are run.json and plan.json exactly as stored
	// (their bytes, as a string); RunFileSHA256 and PlanFileSHA256 are
	// the SHA-256 of those bytes.
	RunFile        string `json:"run_file"`
	RunFileSHA256  string `json:"run_file_sha256"`
	PlanFile       string `json:"plan_file"`
	PlanFileSHA256 string `json:"plan_file_sha256"`
	// PlanMatchesRun is whether plan.json still hashes to the plan_sha256
	// registered in run.json.
	PlanMatchesRun bool `json:"plan_matches_run"`
	// Runner is whether a runner was working on the run when it was
	// exported (RunInfo.Runner); Timeline its sessions and rests.
	Runner   string    `json:"runner"`
	Timeline *Timeline `json:"timeline"`
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
	proto := &Protocol{Schema: ProtocolSchema, EvalctlVersion: runstore.Version(), Options: opts, Runs: []ProtocolRun{}}
	for i, dir := range dirs {
		pr, err := protocolRun(dir)
		if err != nil {
			return nil, err
		}
		pr.Runner, pr.Timeline = in.Runs[i].Runner, in.Timelines[in.Runs[i].ID]
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
	if !utf8.Valid(runBytes) || !utf8.Valid(planBytes) {
		return ProtocolRun{}, fmt.Errorf("export protocol of %s: run.json or plan.json is not UTF-8 text", dir)
	}
	var run runstore.Run
	if err := json.Unmarshal(runBytes, &run); err != nil {
		return ProtocolRun{}, fmt.Errorf("export protocol: %s: %w", filepath.Join(dir, runstore.RunFile), err)
	}
	rh, ph := sha256.Sum256(runBytes), sha256.Sum256(planBytes)
	pr := ProtocolRun{RunID: run.ID, RunFile: string(runBytes), RunFileSHA256: hex.EncodeToString(rh[:]),
		PlanFile: string(planBytes), PlanFileSHA256: hex.EncodeToString(ph[:])}
	pr.PlanMatchesRun = pr.PlanFileSHA256 == run.PlanSHA256
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
	{"phase", func(r *Row) string { return csvS(r.Phase) }},
	{"device", func(r *Row) string { return r.Device }},
	{"started_at", func(r *Row) string { return csvT(r.StartedAt) }},
	{"endpoint_released_at", func(r *Row) string { return csvT(r.EndpointReleasedAt) }},
	{"finished_at", func(r *Row) string { return csvT(r.FinishedAt) }},
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
	{"tokens_source", func(r *Row) string { return csvS(r.TokensSource) }},
	{"server_generated_tokens", func(r *Row) string { return csvI(r.ServerGeneratedTokens) }},
	{"counter_check", func(r *Row) string { return csvS(r.CounterCheck) }},
	{"overlapped_attempts", func(r *Row) string { return csvN(r.OverlappedAttempts) }},
	{"input_strategy", func(r *Row) string { return csvS(r.InputStrategy) }},
	{"input_tokens", func(r *Row) string { return csvI(r.InputTokens) }},
	{"replica", func(r *Row) string { return r.Replica }},
}

// csvT is a time as JSON writes it (RFC 3339 with nanoseconds), or empty.
func csvT(v *time.Time) string {
	if v == nil {
		return ""
	}
	return v.Format(time.RFC3339Nano)
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
