package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// RerunSideBySide sets a diagnostic rerun's attempt beside the original
// attempt it reran: the settings changed and, for each, the outcome,
// terminations, finish reasons, longest response, max_sequence_tokens,
// tool calls, tokens and decode seconds.
type RerunSideBySide struct {
	Label    string              `json:"label"`
	Changes  []evalctl.ArmChange `json:"changes"`
	Original AttemptSummary      `json:"original"`
	Rerun    AttemptSummary      `json:"rerun"`
}

// AttemptSummary is one side.
type AttemptSummary struct {
	RunID        string   `json:"run_id"`
	AttemptID    string   `json:"attempt_id"`
	Arm          string   `json:"arm"`
	ArmHash      string   `json:"arm_hash"`
	Case         string   `json:"case"`
	Repeat       string   `json:"repeat"`
	Seed         int64    `json:"seed"`
	State        string   `json:"state"`
	Status       Status   `json:"status"`
	Functional   *bool    `json:"functional"`
	Delivered    *bool    `json:"delivered"`
	Terminations []string `json:"terminations"`
	// FinishReasons counts the responses by finish_reason.
	FinishReasons map[string]int `json:"finish_reasons"`
	// LongestResponseTokens is the most output tokens of one response:
	// the attempt's max_response_tokens, or read from its transcript for
	// records made before that figure was kept; null when unknown.
	LongestResponseTokens *int64   `json:"longest_response_tokens"`
	MaxSequenceTokens     *int64   `json:"max_sequence_tokens"`
	ToolCalls             *int     `json:"tool_calls"`
	NativeOutputTokens    *int64   `json:"native_output_tokens"`
	DecodeSeconds         *float64 `json:"decode_seconds"`
}

// ErrNotRerun is returned for a run directory whose plan records no rerun.
var ErrNotRerun = errors.New("not a diagnostic rerun")

// LoadRerun reads a rerun's run directory and the original run it names.
// Outcomes are read under each run's own suite.
func LoadRerun(dir string) (*RerunSideBySide, error) {
	data, err := os.ReadFile(filepath.Join(dir, runstore.PlanFile))
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", dir, err)
	}
	var p evalctl.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, runstore.PlanFile), err)
	}
	if p.Rerun == nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRerun)
	}
	out := &RerunSideBySide{Label: p.Rerun.Label, Changes: p.Rerun.Changes}
	orig, err := summarizeAttempt(p.Rerun.OriginalRunDir, func(as []*evalctl.Attempt) *evalctl.Attempt {
		for _, a := range as {
			if a.ID == p.Rerun.OriginalAttemptID {
				return a
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("original of rerun %s: %w", dir, err)
	}
	re, err := summarizeAttempt(dir, func(as []*evalctl.Attempt) *evalctl.Attempt {
		// A rerun has one slot; its current record is what stands.
		for _, a := range runstore.Current(as) {
			return a
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Original, out.Rerun = *orig, *re
	return out, nil
}

func summarizeAttempt(dir string, pick func([]*evalctl.Attempt) *evalctl.Attempt) (*AttemptSummary, error) {
	st, err := runstore.Open(dir)
	if err != nil {
		return nil, err
	}
	run, err := st.ReadRun()
	if err != nil {
		return nil, err
	}
	as, err := st.Attempts()
	if err != nil {
		return nil, err
	}
	a := pick(as)
	if a == nil {
		return nil, fmt.Errorf("%s holds no such attempt", dir)
	}
	suite := SuiteID(run, "")
	gs, err := st.Grades(a, suite)
	if err != nil {
		return nil, err
	}
	row := NewRow(a, suite, gs)
	s := &AttemptSummary{RunID: a.RunID, AttemptID: a.ID, Arm: a.Arm, ArmHash: a.ArmHash, Case: a.Case, Repeat: a.Repeat,
		Seed: a.Seed, State: string(a.State), Status: row.Status, Functional: row.Functional, Delivered: row.Delivered,
		Terminations: []string{}, FinishReasons: map[string]int{}, NativeOutputTokens: row.NativeOutputTokens,
		DecodeSeconds: row.DecodeSeconds, ToolCalls: row.ToolCalls, MaxSequenceTokens: row.MaxSequenceTokens}
	for _, t := range a.Turns {
		s.Terminations = append(s.Terminations, string(t.Termination))
	}
	if m := a.Measurements; m != nil {
		for k, v := range m.FinishReasons {
			s.FinishReasons[k] = v
		}
		s.LongestResponseTokens = m.MaxResponseTokens
	}
	if s.LongestResponseTokens == nil && a.State == evalctl.Completed {
		s.LongestResponseTokens, err = longestFromTranscript(filepath.Join(st.AttemptDir(a.ID), runstore.TranscriptFile))
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// longestFromTranscript reads the most output tokens of one response from
// a transcript's response events (timings.predicted_n, else
// usage.completion_tokens); null when none reported a count.
func longestFromTranscript(path string) (*int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var best *int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct {
			Kind     string `json:"kind"`
			Response *struct {
				Timings *struct {
					PredictedN *int64 `json:"predicted_n"`
				} `json:"timings"`
				Usage *struct {
					CompletionTokens *int64 `json:"completion_tokens"`
				} `json:"usage"`
			} `json:"response"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Kind != "response" || ev.Response == nil {
			continue
		}
		var n *int64
		switch {
		case ev.Response.Timings != nil && ev.Response.Timings.PredictedN != nil:
			n = ev.Response.Timings.PredictedN
		case ev.Response.Usage != nil && ev.Response.Usage.CompletionTokens != nil:
			n = ev.Response.Usage.CompletionTokens
		}
		if n != nil && (best == nil || *n > *best) {
			v := *n
			best = &v
		}
	}
	return best, sc.Err()
}

// WriteTable writes the side-by-side as aligned text.
func (r *RerunSideBySide) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "diagnostic rerun %q of attempt %s (run %s)\n", r.Label, r.Original.AttemptID, r.Original.RunID)
	for _, c := range r.Changes {
		fmt.Fprintf(w, "  changed: %s %s -> %s\n", c.Field, c.From, c.To)
	}
	fmt.Fprintf(w, "  same case %s, repeat %s, seed %d\n\n", r.Original.Case, r.Original.Repeat, r.Original.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	o, n := &r.Original, &r.Rerun
	rows := [][3]string{
		{"", "original", "rerun"},
		{"arm", o.Arm, n.Arm},
		{"attempt", o.AttemptID, n.AttemptID},
		{"state", o.State, n.State},
		{"functional", boolText(o.Functional), boolText(n.Functional)},
		{"delivered", boolText(o.Delivered), boolText(n.Delivered)},
		{"terminations", strings.Join(o.Terminations, ", "), strings.Join(n.Terminations, ", ")},
		{"finish reasons", finishText(o.FinishReasons), finishText(n.FinishReasons)},
		{"longest response tokens", fmtI(o.LongestResponseTokens), fmtI(n.LongestResponseTokens)},
		{"max_sequence_tokens", fmtI(o.MaxSequenceTokens), fmtI(n.MaxSequenceTokens)},
		{"tool calls", intText(o.ToolCalls), intText(n.ToolCalls)},
		{"output tokens", fmtI(o.NativeOutputTokens), fmtI(n.NativeOutputTokens)},
		{"decode seconds", fmtF(o.DecodeSeconds, 1), fmtF(n.DecodeSeconds, 1)},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", row[0], row[1], row[2])
	}
	return tw.Flush()
}

func finishText(m map[string]int) string {
	if len(m) == 0 {
		return dash
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k + " " + strconv.Itoa(m[k])
	}
	return strings.Join(parts, ", ")
}

func intText(v *int) string {
	if v == nil {
		return dash
	}
	return strconv.Itoa(*v)
}
