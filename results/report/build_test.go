package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/reporttest"
)

var devSuite = evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: "f00d"}

// att is a compact attempt spec: a completed one-phase python attempt that
// is functional and delivered when solved.
func att(arm, c, repeat string, slot int, state evalctl.State, solved bool, tokens int64, decode float64) reporttest.AttemptSpec {
	return reporttest.AttemptSpec{Arm: arm, Case: c, Language: "python", Repeat: repeat, Slot: slot, State: state, Phases: 1,
		Terminations: []evalctl.Termination{evalctl.TermCompleted}, Solved: []bool{solved},
		Tokens: tokens, Decode: decode, Task: decode + 10}
}

func writeRun(t *testing.T, spec *reporttest.RunSpec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), spec.ID)
	if spec.Suite.Name == "" {
		spec.Suite = devSuite
	}
	if spec.ImageID == "" {
		spec.ImageID = "sha256:img1"
	}
	if err := reporttest.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	return dir
}

func build(t *testing.T, dirs []string, opts Options) *Report {
	t.Helper()
	in, err := Load(context.Background(), dirs, opts.Suite)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func render(t *testing.T, rep *Report, format string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, rep, format); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestNullsNeverCounted: cancelled, interrupted and infra-failed attempts are
// null, not failures; zero of zero is no denominator, shown as a dash.
func TestNullsNeverCounted(t *testing.T) {
	dir := writeRun(t, &reporttest.RunSpec{ID: "nulls", Attempts: []reporttest.AttemptSpec{
		att("A", "c1", "repeat-1", 0, "", true, 1000, 10),
		att("B", "c1", "repeat-1", 1, "", true, 3000, 20),
		att("C", "c1", "repeat-1", 2, evalctl.Cancelled, false, 0, 0),
		att("A", "c1", "repeat-2", 3, evalctl.Cancelled, false, 0, 0),
		att("B", "c1", "repeat-2", 4, "", true, 3000, 20),
		att("A", "c2", "repeat-1", 5, evalctl.InfraFailed, false, 0, 0),
		att("B", "c2", "repeat-1", 6, "", true, 3000, 20),
		att("A", "c2", "repeat-2", 7, "", false, 1000, 30),
		att("B", "c2", "repeat-2", 8, evalctl.Interrupted, false, 0, 0),
	}})
	rep := build(t, []string{dir}, Options{})
	a, b, c := rep.Arm("A"), rep.Arm("B"), rep.Arm("C")
	if a.Attempts != 4 || a.Completed != 2 || a.Scored != 2 || a.Unscored != 2 {
		t.Errorf("A: attempts %d completed %d scored %d unscored %d", a.Attempts, a.Completed, a.Scored, a.Unscored)
	}
	if a.Functional.Count != 1 || a.Functional.Of != 2 {
		t.Errorf("A functional %d/%d, want 1/2 (nulls are not failures)", a.Functional.Count, a.Functional.Of)
	}
	if *a.NativeOutputTokens != 2000 || *a.DecodeSeconds != 40 || *a.DecodeTPS != 50 {
		t.Errorf("A pooled %d tokens / %v s = %v", *a.NativeOutputTokens, *a.DecodeSeconds, *a.DecodeTPS)
	}
	if *a.MedianAttemptSeconds != 30 { // (20 + 40) / 2, the failure included
		t.Errorf("A median %v", *a.MedianAttemptSeconds)
	}
	if b.Functional.Count != 3 || b.Functional.Of != 3 {
		t.Errorf("B functional %d/%d", b.Functional.Count, b.Functional.Of)
	}
	if c.Functional.Of != 0 || c.Functional.Rate != nil || c.Functional.Low != nil || c.DecodeTPS != nil || c.NativeOutputTokens != nil || c.MedianAttemptSeconds != nil {
		t.Errorf("C has no scored attempt, yet: %+v", c.Stats)
	}
	if c.TokensPerWeek != nil || c.DecodeTPSGainPercent != nil {
		t.Error("C has derived speed figures without a measurement")
	}
	cmp := rep.Comparisons[0]
	if cmp.Candidate != "B" || cmp.Baseline != "A" {
		t.Fatalf("comparison %s vs %s", cmp.Candidate, cmp.Baseline)
	}
	f := cmp.Functional
	if f.Pairs != 1 || f.BothPass != 1 || f.Unpaired != 3 || f.CandidateImproves != 0 {
		t.Errorf("A->B functional transitions %+v, want 1 pair (both pass) and 3 unpaired", f)
	}
	if cc := rep.Comparisons[1].Functional; cc.Pairs != 0 || cc.McNemarP != nil || !strings.Contains(cc.Words, "cannot be compared") {
		t.Errorf("A->C (no scored C) transitions %+v", cc)
	}
	js := render(t, rep, FormatJSON)
	var doc struct {
		Arms []struct {
			Arm        string `json:"arm"`
			Functional struct {
				Rate json.RawMessage `json:"rate"`
			} `json:"functional"`
			DecodeTPS json.RawMessage `json:"decode_tps"`
		} `json:"arms"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc.Arms[2].Functional.Rate) != "null" || string(doc.Arms[2].DecodeTPS) != "null" {
		t.Errorf("C in JSON: rate %s decode_tps %s, want null", doc.Arms[2].Functional.Rate, doc.Arms[2].DecodeTPS)
	}
	text := render(t, rep, FormatTable)
	if !strings.Contains(text, "0/0 -") {
		t.Errorf("text report does not show 0 of 0 as a dash:\n%s", text)
	}
	if !strings.Contains(text, "4 attempt(s) ended without an outcome (2 cancelled before start, 1 interrupted, 1 infrastructure failure(s)): null, not counted") {
		t.Errorf("text report does not say, by what happened, that unscored attempts were left out:\n%s", text)
	}
	csvText := render(t, rep, FormatCSV)
	if !strings.Contains(csvText, "arm,C,,1,0,0,0,1,0,cancelled_before_start 1,,0,,,,0,,,,0,0,,,,,,,,,") {
		t.Errorf("CSV row of C does not leave nulls empty:\n%s", csvText)
	}
}

// TestSuiteVersionSelection: outcomes are read under the run's own suite by
// default; --suite picks a regraded version, under which attempts without
// grades are ungraded (null), not failed.
func TestSuiteVersionSelection(t *testing.T) {
	spec := &reporttest.RunSpec{ID: "regraded", Attempts: []reporttest.AttemptSpec{
		att("A", "ledger", "repeat-1", 0, "", false, 1000, 10),
		att("A", "ledger", "repeat-2", 1, "", false, 1000, 10),
		att("A", "cache", "repeat-1", 2, "", true, 1000, 10),
	}}
	spec.Attempts[0].Regrades = map[string][]bool{"1.0.1": {true}}
	spec.Attempts[1].Regrades = map[string][]bool{"1.0.1": {true}}
	dir := writeRun(t, spec)
	orig := build(t, []string{dir}, Options{})
	if a := orig.Arm("A"); a.Functional.Count != 1 || a.Functional.Of != 3 || a.Ungraded != 0 {
		t.Errorf("under the run's suite: %d/%d, %d ungraded", a.Functional.Count, a.Functional.Of, a.Ungraded)
	}
	for _, v := range []string{"1.0.1", "dev@1.0.1"} {
		re := build(t, []string{dir}, Options{Suite: v})
		a := re.Arm("A")
		if a.Functional.Count != 2 || a.Functional.Of != 2 || a.Ungraded != 1 || a.Scored != 2 {
			t.Errorf("--suite %s: functional %d/%d, %d ungraded, %d scored; want 2/2 with 1 ungraded", v, a.Functional.Count, a.Functional.Of, a.Ungraded, a.Scored)
		}
		if re.Runs[0].GradedSuite != "dev@1.0.1" {
			t.Errorf("graded suite %q", re.Runs[0].GradedSuite)
		}
		if a.Measured != 2 {
			t.Errorf("--suite %s pools %d attempts' speed; the ungraded one must be left out", v, a.Measured)
		}
		if !strings.Contains(strings.Join(re.Notes, "\n"), "1 completed attempt(s) have no grade that can be computed under dev@1.0.1") {
			t.Errorf("notes do not mention the ungraded attempt: %q", re.Notes)
		}
	}
	none := build(t, []string{dir}, Options{Suite: "9.9.9"})
	if a := none.Arm("A"); a.Scored != 0 || a.Ungraded != 3 || a.Functional.Rate != nil {
		t.Errorf("a version nobody graded: %+v", a.Stats)
	}
}

// rows counts the rows row made, so that each has its own attempt id.
var rows int

func row(arm, c, repeat string, f, d *bool) Row {
	rows++
	r := Row{RunID: "r", AttemptID: fmt.Sprintf("%s%s%s-%d", arm, c, repeat, rows), Arm: arm, Case: c, Repeat: repeat, State: "completed", Status: Scored, Functional: f, Delivered: d}
	if f == nil {
		r.Status = Ungraded
	}
	return r
}

func bp(b bool) *bool { return &b }

func TestPairedTransitions(t *testing.T) {
	T, F := bp(true), bp(false)
	tests := []struct {
		name      string
		rows      []Row
		fun, del  Transitions
		wordsFun  string
		wantPFunc float64
	}{
		{
			name: "every kind",
			rows: []Row{
				row("base", "a", "repeat-1", T, T), row("cand", "a", "repeat-1", T, T), // both pass
				row("base", "b", "repeat-1", F, F), row("cand", "b", "repeat-1", F, F), // both fail
				row("base", "c", "repeat-1", F, F), row("cand", "c", "repeat-1", T, F), // improves functional; delivered both fail
				row("base", "d", "repeat-1", T, T), row("cand", "d", "repeat-1", F, F), // regresses
				row("base", "e", "repeat-1", T, T), row("cand", "e", "repeat-1", nil, nil), // unpaired: null side
				row("base", "f", "repeat-1", T, T), // unpaired: missing side
			},
			fun:       Transitions{Pairs: 4, BothPass: 1, BothFail: 1, CandidateImproves: 1, CandidateRegresses: 1, Unpaired: 2},
			del:       Transitions{Pairs: 4, BothPass: 1, BothFail: 2, CandidateImproves: 0, CandidateRegresses: 1, Unpaired: 2},
			wordsFun:  "cand vs base: the difference in functional (2/4 vs 2/4; cand improves on 1, regresses on 1) is inside the noise (McNemar exact p = 1.00); 2 unpaired not counted",
			wantPFunc: 1,
		},
		{
			name: "7/8 vs 8/8",
			rows: func() []Row {
				var rs []Row
				for i := 0; i < 8; i++ {
					c := string(rune('a' + i))
					rs = append(rs, row("base", c, "repeat-1", bp(i != 0), bp(i != 0)), row("cand", c, "repeat-1", T, T))
				}
				return rs
			}(),
			fun:       Transitions{Pairs: 8, BothPass: 7, CandidateImproves: 1},
			del:       Transitions{Pairs: 8, BothPass: 7, CandidateImproves: 1},
			wordsFun:  "cand vs base: the difference in functional (8/8 vs 7/8; cand improves on 1, regresses on 0) is inside the noise (McNemar exact p = 1.00)",
			wantPFunc: 1,
		},
		{
			name: "a clear regression",
			rows: func() []Row {
				var rs []Row
				for i := 0; i < 7; i++ {
					c := string(rune('a' + i))
					rs = append(rs, row("base", c, "repeat-1", T, T), row("cand", c, "repeat-1", F, F))
				}
				return rs
			}(),
			fun:       Transitions{Pairs: 7, CandidateRegresses: 7},
			del:       Transitions{Pairs: 7, CandidateRegresses: 7},
			wordsFun:  "cand vs base: the difference in functional (0/7 vs 7/7; cand improves on 0, regresses on 7) is unlikely to be noise (McNemar exact p = 0.016)",
			wantPFunc: 0.015625,
		},
		{
			name: "same repeat in two runs pairs by occurrence",
			rows: []Row{
				row("base", "a", "repeat-1", T, T), row("base", "a", "repeat-1", F, F),
				row("cand", "a", "repeat-1", T, T), row("cand", "a", "repeat-1", T, T),
			},
			fun:       Transitions{Pairs: 2, BothPass: 1, CandidateImproves: 1},
			del:       Transitions{Pairs: 2, BothPass: 1, CandidateImproves: 1},
			wantPFunc: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Build(&Input{Rows: tt.rows}, Options{Baseline: "base"})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Comparisons[0]
			check := func(what string, got, want Transitions) {
				got.McNemarP, got.Words = nil, ""
				if got != want {
					t.Errorf("%s: %+v, want %+v", what, got, want)
				}
			}
			check("functional", c.Functional, tt.fun)
			check("delivered", c.Delivered, tt.del)
			if c.Functional.McNemarP == nil || *c.Functional.McNemarP != tt.wantPFunc {
				t.Errorf("McNemar p = %v, want %v", c.Functional.McNemarP, tt.wantPFunc)
			}
			if tt.wordsFun != "" && c.Functional.Words != tt.wordsFun {
				t.Errorf("words:\n got %q\nwant %q", c.Functional.Words, tt.wordsFun)
			}
		})
	}
}

// TestBootstrapKeepsRepeatsTogether: every case has the same pooled ratio
// (exactly 2) while its repeats differ wildly. Resampling cases can only
// give 2; resampling repeats on their own would spread the interval.
func TestBootstrapKeepsRepeatsTogether(t *testing.T) {
	var rows []Row
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	for _, c := range []string{"a", "b", "c", "d", "e"} {
		for _, x := range []struct {
			arm, rep  string
			tok       int64
			sec, task float64
		}{
			{"base", "repeat-1", 900, 10, 12}, {"base", "repeat-2", 100, 10, 12},
			{"cand", "repeat-1", 400, 4, 6}, {"cand", "repeat-2", 1600, 6, 8},
		} {
			r := row(x.arm, c, x.rep, bp(true), bp(true))
			r.NativeOutputTokens, r.DecodeSeconds, r.TaskSeconds = i64(x.tok), f64(x.sec), f64(x.task)
			rows = append(rows, r)
		}
	}
	rep, err := Build(&Input{Rows: rows}, Options{Baseline: "base"})
	if err != nil {
		t.Fatal(err)
	}
	ri := rep.Comparisons[0].DecodeTPSRatio
	if ri.Ratio == nil || *ri.Ratio != 4 || ri.Low == nil || *ri.Low != 4 || *ri.High != 4 {
		t.Fatalf("ratio %v [%v, %v], want exactly 4 [4, 4]", deref(ri.Ratio), deref(ri.Low), deref(ri.High))
	}
	if ri.Cases != 5 || ri.Resamples != BootstrapResamples || ri.Seed != BootstrapSeed {
		t.Errorf("cases %d resamples %d seed %d", ri.Cases, ri.Resamples, ri.Seed)
	}
	if !strings.Contains(ri.Words, "excludes 1") {
		t.Errorf("words %q", ri.Words)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestBootstrapReproducible(t *testing.T) {
	a := seedReport(t, Options{Baseline: "original_q4"}).Comparisons[0].DecodeTPSRatio
	b := seedReport(t, Options{Baseline: "original_q4"}).Comparisons[0].DecodeTPSRatio
	if *a.Low != *b.Low || *a.High != *b.High {
		t.Error("two reports of the same runs differ")
	}
	if !(*a.Low < *a.Ratio && *a.Ratio < *a.High) {
		t.Errorf("interval [%v, %v] does not hold the ratio %v", *a.Low, *a.High, *a.Ratio)
	}
}

// TestMixedRefusedThenFlagged: runs that differ in image, suite fingerprint
// or an arm's hash are refused, and with AllowMixed flagged in every format.
func TestMixedRefusedThenFlagged(t *testing.T) {
	base := func(id string) *reporttest.RunSpec {
		return &reporttest.RunSpec{ID: id, Attempts: []reporttest.AttemptSpec{
			att("A", "c1", "repeat-1", 0, "", true, 1000, 10), att("B", "c1", "repeat-1", 1, "", true, 1000, 10)}}
	}
	first := writeRun(t, base("run-1"))
	otherImage := base("run-2")
	otherImage.ImageID = "sha256:img2"
	otherSuite := base("run-3")
	otherSuite.Suite = evalctl.SuiteRef{Name: "dev", Version: "1.0.0", Fingerprint: "beef"}
	otherArm := base("run-4")
	otherArm.Attempts[1].ArmHash = "changed"
	same := writeRun(t, base("run-5"))
	if _, err := Build(mustLoad(t, first, same), Options{}); err != nil {
		t.Fatalf("identical runs refused: %v", err)
	}
	for _, tt := range []struct {
		spec *reporttest.RunSpec
		want string
	}{{otherImage, "image IDs differ"}, {otherSuite, "suite fingerprints differ"}, {otherArm, "arm B has different hashes"}} {
		second := writeRun(t, tt.spec)
		in := mustLoad(t, first, second)
		_, err := Build(in, Options{})
		var me *MixedError
		if !errors.Is(err, ErrMixed) || !errors.As(err, &me) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--allow-mixed") {
			t.Errorf("%s: err = %v", tt.spec.ID, err)
			continue
		}
		rep, err := Build(in, Options{AllowMixed: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Mixed) == 0 {
			t.Fatalf("%s: allowed but not flagged", tt.spec.ID)
		}
		for _, f := range Formats {
			out := render(t, rep, f)
			if !strings.Contains(out, tt.want) {
				t.Errorf("%s: %s output does not flag %q", tt.spec.ID, f, tt.want)
			}
			if f != FormatJSON && f != FormatCSV && !strings.Contains(out, "MIXED POOL") {
				t.Errorf("%s: %s output lacks the MIXED POOL banner", tt.spec.ID, f)
			}
		}
	}
}

func mustLoad(t *testing.T, dirs ...string) *Input {
	t.Helper()
	in, err := Load(context.Background(), dirs, "")
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestLoadAndBuildErrors(t *testing.T) {
	if _, err := Load(context.Background(), []string{seedDir, seedDir}, ""); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("the same run twice: %v", err)
	}
	if _, err := Load(context.Background(), []string{t.TempDir()}, ""); err == nil {
		t.Error("a directory without run.json loaded")
	}
	in := mustLoad(t, seedDir)
	if _, err := Build(in, Options{Baseline: "nope"}); !errors.Is(err, ErrUnknownArm) {
		t.Errorf("unknown baseline: %v", err)
	}
	bad := []Row{row("A", "c", "repeat-1", nil, bp(true))}
	bad[0].Status = Scored
	if _, err := Build(&Input{Rows: bad}, Options{}); !errors.Is(err, ErrBadRow) {
		t.Errorf("scored row without functional: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, []string{seedDir}, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: %v", err)
	}
}
