package regrade_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if templateDir != "" {
		os.RemoveAll(filepath.Dir(templateDir))
	}
	os.Exit(code)
}

func TestRegradeAddsGradesAndChangesNothingElse(t *testing.T) {
	t.Parallel()
	_, s2, _ := suites(t)
	g := cached
	dir := fixtureRun(t)
	before := hashTree(t, dir)

	res, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s2, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}

	// Only new files appear: the grades and the regrade's record.
	after := hashTree(t, dir)
	added, changed, removed := treeDiff(before, after)
	var want []string
	for _, a := range fixtureAttempts {
		for p := range a.styles {
			want = append(want, fmt.Sprintf("attempts/%s/grades/regradefx@1.0.1/phase-%d.json", a.id, p+1))
		}
	}
	want = append(want, res.Runs[0].Record)
	sort.Strings(want)
	if strings.Join(added, "\n") != strings.Join(want, "\n") {
		t.Errorf("added files:\n%s\nwant:\n%s", strings.Join(added, "\n"), strings.Join(want, "\n"))
	}
	if len(removed) != 0 {
		t.Errorf("removed files: %v", removed)
	}
	if len(changed) != 0 {
		t.Errorf("changed files %v, want none", changed)
	}
	var rec regrade.Record
	if err := runstore.ReadJSON(filepath.Join(dir, res.Runs[0].Record), &rec); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Runs[0].Record, runstore.RegradesDir+"/") || rec.Suite != "regradefx@1.0.1" || rec.Fingerprint != s2.Fingerprint || len(rec.Attempts) != res.Graded {
		t.Errorf("regrade record %s: %+v", res.Runs[0].Record, rec)
	}
	if res.ModelsCalled || !res.OriginalResultsUnchanged {
		t.Errorf("run result %+v, models called %v", res.Runs[0], res.ModelsCalled)
	}

	// Per arm before/after counts.
	wantArms := map[string][2]regrade.Counts{
		"armA": {{Functional: 1, Delivered: 0, Of: 2}, {Functional: 2, Delivered: 1, Of: 2}},
		"armB": {{Functional: 0, Delivered: 0, Of: 2}, {Functional: 1, Delivered: 1, Of: 2}},
	}
	if len(res.Arms) != 2 {
		t.Fatalf("arms %+v", res.Arms)
	}
	for _, a := range res.Arms {
		w := wantArms[a.Arm]
		if a.Before != w[0] || a.After != w[1] {
			t.Errorf("%s: before %+v after %+v, want %+v %+v", a.Arm, a.Before, a.After, w[0], w[1])
		}
	}
	// Exactly the two "with" answers changed.
	var got []string
	for _, c := range res.Changed {
		got = append(got, c.AttemptID)
		if c.FunctionalBefore == nil || *c.FunctionalBefore || c.FunctionalAfter == nil || !*c.FunctionalAfter {
			t.Errorf("%s: functional %v -> %v", c.AttemptID, c.FunctionalBefore, c.FunctionalAfter)
		}
	}
	if strings.Join(got, ",") != "a1,b2" {
		t.Errorf("changed attempts %v, want a1,b2", got)
	}
	if res.Graded != 4 || res.NotScored != 1 || res.Skipped != 0 || res.Refused != 0 {
		t.Errorf("tallies graded %d not-completed %d skipped %d refused %d", res.Graded, res.NotScored, res.Skipped, res.Refused)
	}

	// Each phase's snapshot was graded as that phase: b1's phase-2 answer
	// lacks count_lines and fails phase 2's acceptance; its phase 1 passes.
	st, _ := runstore.Open(dir)
	as, _ := st.Attempts()
	for _, a := range as {
		if a.ID != "b1" {
			continue
		}
		grades, err := st.Grades(a, "regradefx@1.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if len(grades) != 2 || grades[0] == nil || !grades[0].Solved || grades[1] == nil || grades[1].Solved || grades[1].Group("acceptance").Success {
			t.Errorf("b1 grades under 1.0.1: %+v", grades)
		}
		if grades[1].SnapshotSHA256 != a.Snapshots[1].SHA256 || grades[1].SuiteFingerprint != s2.Fingerprint {
			t.Errorf("b1 phase 2 grade identifies snapshot %s fingerprint %s", grades[1].SnapshotSHA256, grades[1].SuiteFingerprint)
		}
	}

	// The text output, with the run's temporary directory masked.
	var buf bytes.Buffer
	if err := regrade.WriteText(&buf, res); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/regrade.golden", regexp.MustCompile(`regrades/[0-9T.]+Z-`).ReplaceAllString(strings.ReplaceAll(buf.String(), dir, "RUNDIR"), "regrades/TIME-"))

	// A second regrade is a no-op: every attempt is skipped, no byte changes.
	res2, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s2, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Graded != 0 || res2.Skipped != 4 || res2.Runs[0].Record != "" {
		t.Errorf("re-run graded %d skipped %d record %q", res2.Graded, res2.Skipped, res2.Runs[0].Record)
	}
	if a, c, r := treeDiff(after, hashTree(t, dir)); len(a)+len(c)+len(r) != 0 {
		t.Errorf("re-run changed the run directory: added %v changed %v removed %v", a, c, r)
	}
	if len(res2.Changed) != 2 || res2.Arms[0] != res.Arms[0] {
		t.Errorf("re-run reports %+v / %+v", res2.Changed, res2.Arms)
	}
}

func TestTamperedSnapshotIsRefused(t *testing.T) {
	t.Parallel()
	_, s2, _ := suites(t)
	g := cached
	dir := fixtureRun(t)
	// Keep a1 (to tamper) and a2 (graded as usual); drop the others so the
	// test grades little.
	for _, id := range []string{"b1", "b2", "b3"} {
		if err := os.RemoveAll(filepath.Join(dir, runstore.AttemptsDir, id)); err != nil {
			t.Fatal(err)
		}
	}
	rewriteByte(t, filepath.Join(dir, runstore.AttemptsDir, "a1", "phase-2.tar"), "count_lines")
	before := hashTree(t, dir)

	res, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s2, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	rerr := res.Err()
	if !errors.Is(rerr, regrade.ErrDigest) || !errors.Is(rerr, regrade.ErrRefused) {
		t.Fatalf("error %v, want a refusal for a changed snapshot", rerr)
	}
	for _, want := range []string{"run run-fixture", "attempt a1", "phase 2", "refusing to grade a changed answer"} {
		if !strings.Contains(rerr.Error(), want) {
			t.Errorf("error %q does not say %q", rerr, want)
		}
	}
	added, changed, removed := treeDiff(before, hashTree(t, dir))
	for _, p := range added {
		if strings.HasPrefix(p, "attempts/a1/") {
			t.Errorf("wrote %s for the refused attempt", p)
		}
	}
	if strings.Join(added, ",") != "attempts/a2/grades/regradefx@1.0.1/phase-1.json,attempts/a2/grades/regradefx@1.0.1/phase-2.json,"+res.Runs[0].Record {
		t.Errorf("added %v, want a2's two grades and the regrade record", added)
	}
	if len(removed) != 0 || len(changed) != 0 {
		t.Errorf("changed %v removed %v", changed, removed)
	}
	if res.Refused != 1 || res.Graded != 1 {
		t.Errorf("refused %d graded %d", res.Refused, res.Graded)
	}
}

func TestInterruptedRegradeCompletesMissingPhases(t *testing.T) {
	t.Parallel()
	_, s2, _ := suites(t)
	g := cached
	dir := fixtureRun(t)
	for _, id := range []string{"a1", "b1", "b2", "b3"} {
		if err := os.RemoveAll(filepath.Join(dir, runstore.AttemptsDir, id)); err != nil {
			t.Fatal(err)
		}
	}
	// As if an earlier regrade had written a2's phase 1 grade and died: the
	// 1.0.0 grade stands in (same snapshot, only the suite labels differ).
	st, _ := runstore.Open(dir)
	as, _ := st.Attempts()
	old, err := st.Grades(as[0], "regradefx@1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	g1 := *old[0]
	g1.SuiteVersion, g1.SuiteFingerprint = s2.Version, s2.Fingerprint
	if err := st.WriteGrade("a2", &g1); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dir)
	res, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts[0].Action != regrade.CompletedPartial || len(res.Attempts[0].Phases) != 1 || res.Attempts[0].Phases[0] != 2 {
		t.Errorf("attempt %+v, want phase 2 completed", res.Attempts[0])
	}
	added, changed, _ := treeDiff(before, hashTree(t, dir))
	if strings.Join(added, ",") != "attempts/a2/grades/regradefx@1.0.1/phase-2.json,"+res.Runs[0].Record || len(changed) != 0 {
		t.Errorf("added %v changed %v", added, changed)
	}
}

func TestRefusalsBeforeGrading(t *testing.T) {
	t.Parallel()
	s1, s2, _ := suites(t)
	g := cached
	dir := fixtureRun(t)
	before := hashTree(t, dir)

	// A suite of another name.
	other := copySuite(t, "testdata/suite-v2", func(d string) {
		rewrite(t, filepath.Join(d, "suite.yaml"), "name: regradefx", "name: otherfx")
	})
	_, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: other})
	if !errors.Is(err, regrade.ErrSuiteName) || !strings.Contains(err.Error(), "run-fixture") {
		t.Errorf("other suite name: %v", err)
	}

	// 1.0.0 changed in place after the run used it.
	changed := copySuite(t, "testdata/suite-v1", func(d string) {
		rewrite(t, filepath.Join(d, "wordcount/checks/regression/test_reg.py"), `"word"`, `"word "`)
	})
	_, err = regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: changed})
	if !errors.Is(err, regrade.ErrVersionReused) {
		t.Errorf("changed used version: %v", err)
	}

	// Regrading under the run's own suite version writes nothing.
	res, err := regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: s1})
	if err != nil || res.Skipped != 4 || res.Graded != 0 {
		t.Errorf("own version: %v, %+v", err, res)
	}

	// A suite without the case.
	nocase := copySuite(t, "testdata/suite-v2", func(d string) {
		if err := os.Rename(filepath.Join(d, "wordcount"), filepath.Join(d, "wc2")); err != nil {
			t.Fatal(err)
		}
		rewrite(t, filepath.Join(d, "suite.yaml"), "[wordcount]", "[wc2]")
		rewrite(t, filepath.Join(d, "wc2/case.yaml"), "name: wordcount", "name: wc2")
		rewrite(t, filepath.Join(d, "suite.yaml"), "1.0.1", "1.0.2")
	})
	res, err = regrade.Run(context.Background(), g, []string{dir}, regrade.Options{Suite: nocase})
	if err != nil || res.Refused != 4 || !strings.Contains(res.Err().Error(), `has no case "wordcount"`) {
		t.Errorf("suite without the case: %v %v", err, res.Err())
	}

	if a, c, r := treeDiff(before, hashTree(t, dir)); len(a)+len(c)+len(r) != 0 {
		t.Errorf("refusals changed the run directory: added %v changed %v removed %v", a, c, r)
	}
	_ = s2
}

// TestNoModelClient: the regrade package cannot call a model, because no
// model client is in its build.
func TestNoModelClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(dep, "github.com/sashabaranov/go-openai"),
			dep == "github.com/evalctl/evalctl/orchestrator/model",
			dep == "github.com/evalctl/evalctl/orchestrator/agent",
			dep == "github.com/evalctl/evalctl/orchestrator/scripted",
			dep == "github.com/evalctl/evalctl/orchestrator/serving":
			t.Errorf("regrade depends on %s", dep)
		}
	}
	if !strings.Contains(string(out), "github.com/evalctl/evalctl/grader") {
		t.Errorf("go list output looks wrong:\n%s", out)
	}
}

func copySuite(t *testing.T, src string, edit func(dir string)) *tasks.Suite {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "suite")
	copyTree(t, src, dst)
	edit(dst)
	s, err := tasks.LoadSuite(dst)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rewrite(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(file, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rewriteByte changes one byte of file, in the first occurrence of word.
func rewriteByte(t *testing.T, file, word string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(word))
	if i < 0 {
		t.Fatalf("%s has no %q", file, word)
	}
	data[i] ^= 0x20
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}
