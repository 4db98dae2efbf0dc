package regrade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/grader/regrade"
)

func TestFixtureDiagnosis(t *testing.T) {
	t.Parallel()
	s1, s2, _ := suites(t)
	dir := fixtureRun(t)
	before := hashTree(t, dir)
	d, err := regrade.Diagnose(context.Background(), cached, regrade.DiagnoseOptions{
		Case: "wordcount", Original: s1, Corrected: s2, Answers: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if a, c, r := treeDiff(before, hashTree(t, dir)); len(a)+len(c)+len(r) != 0 {
		t.Errorf("a diagnosis changed the answer run: added %v changed %v removed %v", a, c, r)
	}

	type want struct {
		orig, corr, tests int
	}
	rows := map[string]want{
		// The "with" answers fail only 1.0.0's wrong read-error test.
		"answer armA/repeat-1 1": {7, 8, 8},
		"answer armA/repeat-1 2": {11, 12, 12},
		"answer armB/repeat-2 1": {7, 8, 8},
		// The reference-style answer passes both versions.
		"answer armA/repeat-2 1": {8, 8, 8},
		"reference reference 1":  {8, 8, 8},
		"reference reference 2":  {12, 12, 12},
		// The control fails the read-error test under both, and the
		// missing-file test.
		"control swallow-read-error 1": {6, 6, 8},
	}
	seen := 0
	for _, r := range d.Results {
		if r.CandidateChanged == nil || *r.CandidateChanged {
			t.Errorf("%s phase %d: candidate_changed %v", r.Candidate, r.Phase, r.CandidateChanged)
		}
		if r.Original == nil || r.Corrected == nil || r.Original.SnapshotSHA256 != r.Corrected.SnapshotSHA256 {
			t.Errorf("%s phase %d: not the same bytes graded under both", r.Candidate, r.Phase)
		}
		w, ok := rows[r.Kind+" "+r.Candidate+" "+string(rune('0'+r.Phase))]
		if !ok {
			continue
		}
		seen++
		if *r.OriginalPassed != w.orig || *r.CorrectedPassed != w.corr || r.Tests == nil || *r.Tests != w.tests {
			t.Errorf("%s %s phase %d: %d -> %d of %v, want %d -> %d of %d", r.Kind, r.Candidate, r.Phase, *r.OriginalPassed, *r.CorrectedPassed, r.Tests, w.orig, w.corr, w.tests)
		}
	}
	if seen != len(rows) {
		t.Errorf("found %d of the %d expected rows", seen, len(rows))
	}
	// 4 attempts x 2 phases, then reference, starter, control of phase 1
	// and reference, starter of phase 2; the infra failure has no answer.
	if len(d.Results) != 8+5 {
		t.Errorf("%d rows, want 13", len(d.Results))
	}
	yes := func(b *bool) bool { return b != nil && *b }
	if !yes(d.ReferenceSolvedOriginal) || !yes(d.ReferenceSolvedCorrected) || !yes(d.NegativeControlsRejected) || d.ModelsCalled {
		t.Errorf("reference solved %v/%v, controls rejected %v", d.ReferenceSolvedOriginal, d.ReferenceSolvedCorrected, d.NegativeControlsRejected)
	}
	if len(d.Controls) != 1 || !yes(d.Controls[0].OriginalRejected) || !yes(d.Controls[0].CorrectedRejected) || d.Controls[0].Why == "" {
		t.Errorf("controls %+v", d.Controls)
	}
	// Per group: the read-error test is the one that moved.
	for _, r := range d.Results {
		if r.Candidate == "armA/repeat-1" && r.Phase == 1 {
			acc := r.Original.Groups[0]
			if acc.Name != "acceptance" || acc.Passed != 3 || acc.Total != 4 || strings.Join(acc.FailedTests, ",") != "test_read_error" {
				t.Errorf("original acceptance %+v", acc)
			}
		}
	}

	// The JSON carries the seed's field names.
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"original_passed":7`, `"corrected_passed":8`, `"tests":8`, `"candidate_changed":false`, `"models_called":false`, `"negative_controls_rejected":true`} {
		if !bytes.Contains(data, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	var buf bytes.Buffer
	if err := regrade.WriteDiagnosisText(&buf, d); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/controls.golden", buf.String())
}

func TestDiagnosisWithOneSuiteAndNoAnswers(t *testing.T) {
	t.Parallel()
	s1, _, _ := suites(t)
	d, err := regrade.Diagnose(context.Background(), cached, regrade.DiagnoseOptions{Case: "wordcount", Original: s1})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Results) != 5 || d.Corrected != nil || d.ReferenceSolvedCorrected != nil {
		t.Fatalf("results %d corrected %v", len(d.Results), d.Corrected)
	}
	for _, r := range d.Results {
		if r.CandidateChanged != nil || r.Corrected != nil || r.CorrectedPassed != nil || r.Tests == nil {
			t.Errorf("%s: one suite must leave the corrected side null: %+v", r.Candidate, r)
		}
	}
	if _, err := regrade.Diagnose(context.Background(), cached, regrade.DiagnoseOptions{Case: "nope", Original: s1}); err == nil || !strings.Contains(err.Error(), `no case "nope"`) {
		t.Errorf("unknown case: %v", err)
	}
}

func TestDiagnosisRefusesAChangedAnswer(t *testing.T) {
	t.Parallel()
	s1, s2, _ := suites(t)
	dir := fixtureRun(t)
	rewriteByte(t, dir+"/attempts/b2/phase-1.tar", "count_words")
	_, err := regrade.Diagnose(context.Background(), cached, regrade.DiagnoseOptions{Case: "wordcount", Original: s1, Corrected: s2, Answers: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "attempt b2") || !strings.Contains(err.Error(), "phase 1") {
		t.Fatalf("error %v", err)
	}
}
