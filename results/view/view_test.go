package view

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
)

// recorded is a real run of the grader's fixture suite (arms reference and
// flawed against the scripted model server, graded in the sandbox).
const recorded = "../../cmd/evalctl/testdata/recorded/fixture-ab-01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"

const runID = "01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"

func findChromium() string {
	if p := os.Getenv("EVALCTL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// copyRun copies the recorded run under a fresh folder (pointing its plan
// at this checkout's fixture suite) and returns the folder and the copy.
func copyRun(t testing.TB) (root, dir string) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, filepath.Base(recorded))
	err := filepath.WalkDir(recorded, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(recorded, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	suite, _ := filepath.Abs("../../grader/testdata/suite")
	var plan map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	plan["suite_dir"] = suite
	if err := runstore.WriteJSON(filepath.Join(dir, "plan.json"), plan); err != nil {
		t.Fatal(err)
	}
	return root, dir
}

// browser starts headless Chromium for the test and collects every console
// error, uncaught exception and failed load the pages report.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin := findChromium()
	if bin == "" {
		t.Skip("no Chromium binary found (install Debian's chromium package, 'make setup-test', or set EVALCTL_CHROMIUM): the viewer was not checked in a browser")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	b := &browser{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, "exception: "+ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.errors = append(b.errors, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError {
				b.errors = append(b.errors, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	})
	if err := chromedp.Run(ctx, cdplog.Enable(), runtime.Enable()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.errors {
			t.Errorf("browser reported: %s", e)
		}
	})
	return b
}

func (b *browser) run(t *testing.T, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// attr reads an attribute of the first node matching sel.
func (b *browser) attr(t *testing.T, sel, name string) string {
	t.Helper()
	var v string
	var ok bool
	b.run(t, chromedp.AttributeValue(sel, name, &v, &ok, chromedp.ByQuery))
	if !ok {
		t.Fatalf("%s has no attribute %s", sel, name)
	}
	return v
}

func reportJSON(t *testing.T, dir string) *report.Report {
	t.Helper()
	in, err := report.Load(context.Background(), []string{dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as 'report --format json' prints it.
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var out report.Report
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func sameNumber(t *testing.T, what, shown string, want *float64) {
	t.Helper()
	if want == nil {
		if shown != "null" {
			t.Errorf("%s: page shows %s, report has null", what, shown)
		}
		return
	}
	got, err := strconv.ParseFloat(shown, 64)
	if err != nil || got != *want {
		t.Errorf("%s: page shows %q, report JSON has %v", what, shown, *want)
	}
}

// TestViewerInChromium navigates runs -> run -> cell -> attempt in a real
// headless Chromium: every page loads without a console error, and every
// figure shown on the run page equals the report JSON's.
func TestViewerInChromium(t *testing.T) {
	root, dir := copyRun(t)
	srv := httptest.NewServer(New(root).Handler())
	defer srv.Close()
	b := newBrowser(t)
	rep := reportJSON(t, dir)

	// Runs.
	b.run(t, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(`#runs tr[data-run="`+runID+`"] a`, chromedp.ByQuery))
	// Run page, by following the link.
	b.run(t, chromedp.Click(`#runs tr[data-run="`+runID+`"] a`, chromedp.ByQuery), chromedp.WaitVisible(`#grid`, chromedp.ByQuery))
	var runText string
	b.run(t, chromedp.Text(`#app`, &runText, chromedp.ByQuery))
	if regexp.MustCompile(`(^|[^/])\bnull\b|undefined|NaN`).MatchString(runText) {
		t.Errorf("run page shows null, undefined or NaN:\n%s", runText)
	}
	var title string
	b.run(t, chromedp.Text(`#run-title`, &title, chromedp.ByQuery))
	if !strings.HasPrefix(title, "fixture-ab") {
		t.Errorf("run title %q lacks the plan name", title)
	}
	for _, a := range rep.Arms {
		row := `#arms tr[data-arm="` + a.Arm + `"] `
		sameNumber(t, a.Arm+" functional", b.attr(t, row+`td[data-field="functional"]`, "data-value"), a.Functional.Rate)
		sameNumber(t, a.Arm+" delivered", b.attr(t, row+`td[data-field="delivered"]`, "data-value"), a.Delivered.Rate)
		sameNumber(t, a.Arm+" decode_tps", b.attr(t, row+`td[data-field="decode_tps"]`, "data-value"), a.DecodeTPS)
		sameNumber(t, a.Arm+" task_output_tps", b.attr(t, row+`td[data-field="task_output_tps"]`, "data-value"), a.TaskOutputTPS)
		sameNumber(t, a.Arm+" decode_tps low", b.attr(t, row+`td[data-field="decode_tps"]`, "data-low"), a.DecodeTPSInterval.Low)
		sameNumber(t, a.Arm+" task_output_tps high", b.attr(t, row+`td[data-field="task_output_tps"]`, "data-high"), a.TaskOutputTPSInterval.High)
		sameNumber(t, a.Arm+" gain", b.attr(t, row+`td[data-field="decode_tps_gain_percent"]`, "data-value"), a.DecodeTPSGainPercent)
		if got := b.attr(t, row+`td[data-field="functional"]`, "data-count"); got != strconv.Itoa(a.Functional.Count) {
			t.Errorf("%s functional count %s, want %d", a.Arm, got, a.Functional.Count)
		}
		var text string
		b.run(t, chromedp.Text(row+`td[data-field="decode_tps"]`, &text, chromedp.ByQuery))
		if want := fmt.Sprintf("%.2f", *a.DecodeTPS); !strings.HasPrefix(text, want) {
			t.Errorf("%s decode TPS shown as %q, want %s", a.Arm, text, want)
		}
	}
	for _, c := range rep.Comparisons {
		row := `#comparisons tr[data-candidate="` + c.Candidate + `"] `
		sameNumber(t, "ratio", b.attr(t, row+`td[data-field="decode_tps_ratio"]`, "data-value"), c.DecodeTPSRatio.Ratio)
		sameNumber(t, "ratio low", b.attr(t, row+`td[data-field="decode_tps_ratio"]`, "data-low"), c.DecodeTPSRatio.Low)
		sameNumber(t, "ratio high", b.attr(t, row+`td[data-field="decode_tps_ratio"]`, "data-high"), c.DecodeTPSRatio.High)
		for field, want := range map[string]int{"functional.both_pass": c.Functional.BothPass, "functional.candidate_regresses": c.Functional.CandidateRegresses, "delivered.both_fail": c.Delivered.BothFail} {
			if got := b.attr(t, row+`td[data-field="`+field+`"]`, "data-value"); got != strconv.Itoa(want) {
				t.Errorf("%s: %s, want %d", field, got, want)
			}
		}
	}
	// Arm settings and the server's identity.
	var build string
	b.run(t, chromedp.Text(`#settings tr[data-arm="reference"] td[data-field="build_info"]`, &build, chromedp.ByQuery))
	if build != "evalctl-scripted" {
		t.Errorf("server build %q", build)
	}
	// Every whisker of the rate chart is drawn.
	var whiskers []*cdp.Node
	b.run(t, chromedp.Nodes(`#rate-chart line.whisker`, &whiskers, chromedp.ByQueryAll))
	if len(whiskers) != 2*len(rep.Arms) {
		t.Errorf("%d whiskers on the rate chart, want %d", len(whiskers), 2*len(rep.Arms))
	}
	b.run(t, chromedp.Nodes(`#speed-chart line.whisker`, &whiskers, chromedp.ByQueryAll))
	if len(whiskers) != 2*len(rep.Arms) {
		t.Errorf("%d whiskers on the speed chart, want %d", len(whiskers), 2*len(rep.Arms))
	}
	// A grid cell leads to its attempts, and an attempt to its page.
	var cells []*cdp.Node
	b.run(t, chromedp.Nodes(`#grid td.cell`, &cells, chromedp.ByQueryAll))
	if len(cells) != len(rep.Cases)*len(rep.Arms) {
		t.Errorf("%d grid cells, want %d", len(cells), len(rep.Cases)*len(rep.Arms))
	}
	b.run(t, chromedp.Click(`#grid td.cell[data-arm="flawed"][data-case="tsadd"] a`, chromedp.ByQuery), chromedp.WaitVisible(`#attempts`, chromedp.ByQuery))
	b.run(t, chromedp.Click(`#attempts tr a`, chromedp.ByQuery), chromedp.WaitVisible(`#transcript`, chromedp.ByQuery))
	var page string
	b.run(t, chromedp.Text(`#app`, &page, chromedp.ByQuery))
	if regexp.MustCompile(`(^|[^/])\bnull\b|undefined|NaN`).MatchString(page) {
		t.Errorf("attempt page shows null or undefined:\n%s", page)
	}
	for _, want := range []string{"flawed · tsadd · repeat-1", "functional false", "response 1", "tool bash", "FAILED", "sums fractions", "answer/src/sum.ts"} {
		if !strings.Contains(page, want) {
			t.Errorf("attempt page lacks %q", want)
		}
	}
	// Back to the run with the browser's history.
	b.run(t, chromedp.NavigateBack(), chromedp.WaitVisible(`#attempts`, chromedp.ByQuery), chromedp.NavigateBack(), chromedp.WaitVisible(`#grid`, chromedp.ByQuery))
	// The HTML report, opened through the viewer, links each cell to its
	// attempts.
	b.run(t, chromedp.Navigate(srv.URL+"/runs/"+runID+"/report.html"), chromedp.WaitVisible(`#chart-grid`, chromedp.ByQuery))
	var links []*cdp.Node
	b.run(t, chromedp.Nodes(`a.cell-link`, &links, chromedp.ByQueryAll))
	if len(links) != len(rep.Cases)*len(rep.Arms) {
		t.Errorf("%d linked cells in the HTML report, want %d", len(links), len(rep.Cases)*len(rep.Arms))
	}
	var h1 string
	b.run(t, chromedp.Text(`h1`, &h1, chromedp.ByQuery))
	if h1 != "evalctl report: fixture-ab" {
		t.Errorf("HTML report title %q", h1)
	}
	b.run(t, chromedp.Navigate(srv.URL+"/#/run/"+runID+"/cell/adder/reference"), chromedp.WaitVisible(`#attempts tr a`, chromedp.ByQuery))
}

// TestViewerUpdatesRunningRun: a run page open while an attempt ends shows
// the new figures without a reload; while the run runs, the page says so
// ("running, 3 of 4 attempts ended; 1 in flight" with the attempt's phase),
// never that the attempt in flight is unscored.
func TestViewerUpdatesRunningRun(t *testing.T) {
	root, dir := copyRun(t)
	// Hold back the last attempt: planned, no grades, no end event.
	const held = "01a230a6-ae9a-7445-918a-2cc4bb1c7f91"
	adir := filepath.Join(dir, "attempts", held)
	final, err := os.ReadFile(filepath.Join(adir, "attempt.json"))
	if err != nil {
		t.Fatal(err)
	}
	grades := filepath.Join(t.TempDir(), "grades")
	if err := os.Rename(filepath.Join(adir, "grades"), grades); err != nil {
		t.Fatal(err)
	}
	var a evalctl.Attempt
	json.Unmarshal(final, &a)
	a.State, a.Turns, a.Snapshots, a.Measurements, a.FinishedAt = evalctl.Running, nil, nil, nil, nil
	if err := runstore.WriteJSON(filepath.Join(adir, "attempt.json"), &a); err != nil {
		t.Fatal(err)
	}
	events, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(string(events)), "\n") {
		if !(strings.Contains(l, held) && strings.Contains(l, `"kind":"completed"`)) {
			kept = append(kept, l)
		}
	}
	os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(strings.Join(kept, "\n")+"\n"), 0o644)

	// A runner works on the run: it holds the lock and says what the
	// attempt in flight does.
	runner, _ := runstore.Open(dir)
	if err := runner.Lock(); err != nil {
		t.Fatal(err)
	}
	defer runner.Unlock()
	if err := runner.WritePhases(map[string]string{held: "turn 1, agent step 2, 40 tokens"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(root).Handler())
	defer srv.Close()
	b := newBrowser(t)
	b.run(t, chromedp.Navigate(srv.URL+"/?poll=200#/run/"+runID), chromedp.WaitVisible(`#grid`, chromedp.ByQuery))
	if got := b.attr(t, `#progress`, "data-scored"); got != "3" {
		t.Fatalf("scored before the attempt ends: %s, want 3", got)
	}
	var progress, page string
	b.run(t, chromedp.Text(`#progress`, &progress, chromedp.ByQuery), chromedp.Text(`body`, &page, chromedp.ByQuery))
	if want := "running, 3 of 4 attempts ended; 1 in flight: " + held + " flawed/tsadd/repeat-1 (turn 1, agent step 2, 40 tokens)"; !strings.Contains(progress, want) || b.attr(t, `#progress`, "data-state") != "running" {
		t.Errorf("progress %q, want it to say %q", progress, want)
	}
	for _, bad := range []string{"unscored", "never completed", "runner stopped during it"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page of a running run says %q:\n%s", bad, page)
		}
	}
	if got := b.attr(t, `#arms tr[data-arm="flawed"] td[data-field="functional"]`, "data-of"); got != "1" {
		t.Fatalf("flawed scored before: %s, want 1", got)
	}
	// The attempt ends, as the runner records it: grades, the record, the
	// event.
	if err := os.Rename(grades, filepath.Join(adir, "grades")); err != nil {
		t.Fatal(err)
	}
	if err := runstore.WriteFileAtomic(filepath.Join(adir, "attempt.json"), final, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runner.WritePhases(map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if err := runner.AppendEvent(runstore.Event{Kind: "completed", Attempt: held}); err != nil {
		t.Fatal(err)
	}
	runner.Unlock()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.WaitVisible(`#progress[data-scored="4"][data-state="complete"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#arms tr[data-arm="flawed"] td[data-field="functional"][data-of="2"]`, chromedp.ByQuery)); err != nil {
		t.Fatalf("the page did not update: %v", err)
	}
	rep := reportJSON(t, dir)
	sameNumber(t, "flawed functional after", b.attr(t, `#arms tr[data-arm="flawed"] td[data-field="functional"]`, "data-value"), rep.Arm("flawed").Functional.Rate)
}

// TestViewerAPI: the run's JSON is byte for byte the report's, unchanged
// runs answer 304, and unknown runs or attempts are 404 with a message.
func TestViewerAPI(t *testing.T) {
	root, dir := copyRun(t)
	srv := httptest.NewServer(New(root).Handler())
	defer srv.Close()
	get := func(path, etag string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(res.Body)
		return res, buf.Bytes()
	}
	res, body := get("/api/runs/"+runID+"/report", "")
	in, _ := report.Load(context.Background(), []string{dir}, "")
	rep, _ := report.Build(in, report.Options{})
	var want bytes.Buffer
	report.WriteJSON(&want, rep)
	if res.StatusCode != 200 || !bytes.Equal(body, want.Bytes()) {
		t.Errorf("report JSON differs from report.WriteJSON (status %d)", res.StatusCode)
	}
	if res2, _ := get("/api/runs/"+runID+"/report", res.Header.Get("ETag")); res2.StatusCode != http.StatusNotModified {
		t.Errorf("unchanged run: status %d, want 304", res2.StatusCode)
	}
	for _, p := range []string{"/api/runs/nosuch/report", "/api/runs/" + runID + "/attempts/nosuch"} {
		if res, body := get(p, ""); res.StatusCode != 404 && res.StatusCode != 301 {
			t.Errorf("%s: status %d %s, want 404", p, res.StatusCode, body)
		}
	}
}

// secondRun copies the run in dir to a sibling with another id, as a second
// run of the same plan, and returns its id. Its attempts get ids of their
// own too: the same attempt record reached through two runs is refused at
// pooling, as it would be counted twice.
func secondRun(t *testing.T, dir string) string {
	t.Helper()
	const id2 = "01a230a6-ffff-7a5b-8772-8ca68c6bda0a"
	dst := filepath.Join(filepath.Dir(dir), "fixture-ab-"+id2)
	entries, err := os.ReadDir(filepath.Join(dir, "attempts"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{runID, id2}
	for _, e := range entries {
		if id := e.Name(); len(id) == 36 {
			ids = append(ids, id, id[:9]+"ffff"+id[13:])
		}
	}
	rename := strings.NewReplacer(ids...)
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = rename.Replace(rel)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if ext := filepath.Ext(d.Name()); ext == ".json" || ext == ".jsonl" {
			data = []byte(rename.Replace(string(data)))
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id2
}

// TestViewerPoolsRuns: two runs picked on the runs page are pooled as
// 'evalctl report A B' pools them, figure for figure, and a cell lists the
// attempts of both.
func TestViewerPoolsRuns(t *testing.T) {
	root, dir := copyRun(t)
	id2 := secondRun(t, dir)
	srv := httptest.NewServer(New(root).Handler())
	defer srv.Close()
	dir2 := filepath.Join(root, "fixture-ab-"+id2)
	in, err := report.Load(context.Background(), []string{dir, dir2}, "")
	if err != nil {
		t.Fatal(err)
	}
	built, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	report.WriteJSON(&want, built)
	res, err := http.Get(srv.URL + "/api/report?run=" + runID + "&run=" + id2)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	got.ReadFrom(res.Body)
	res.Body.Close()
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("pooled JSON differs from the report's (status %d)", res.StatusCode)
	}
	var rep report.Report
	json.Unmarshal(want.Bytes(), &rep)

	b := newBrowser(t)
	b.run(t, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(`#runs input.pick`, chromedp.ByQuery),
		chromedp.Click(`tr[data-run="`+runID+`"] input.pick`, chromedp.ByQuery), chromedp.Click(`tr[data-run="`+id2+`"] input.pick`, chromedp.ByQuery),
		chromedp.Click(`#compare`, chromedp.ByQuery), chromedp.WaitVisible(`#grid`, chromedp.ByQuery))
	for _, a := range rep.Arms {
		row := `#arms tr[data-arm="` + a.Arm + `"] `
		sameNumber(t, a.Arm+" pooled functional", b.attr(t, row+`td[data-field="functional"]`, "data-value"), a.Functional.Rate)
		sameNumber(t, a.Arm+" pooled decode_tps", b.attr(t, row+`td[data-field="decode_tps"]`, "data-value"), a.DecodeTPS)
		if got := b.attr(t, row+`td[data-field="scored"]`, "data-value"); got != "4" {
			t.Errorf("%s pooled scored %s, want 4 (2 runs x 2 cases)", a.Arm, got)
		}
	}
	b.run(t, chromedp.Click(`#grid td.cell[data-arm="flawed"][data-case="tsadd"] a`, chromedp.ByQuery), chromedp.WaitVisible(`#attempts`, chromedp.ByQuery))
	var rows []*cdp.Node
	b.run(t, chromedp.Nodes(`#attempts tbody tr`, &rows, chromedp.ByQueryAll))
	if len(rows) != 2 {
		t.Errorf("the pooled cell lists %d attempts, want 2", len(rows))
	}
	b.run(t, chromedp.Click(`#attempts tr[data-attempt] a`, chromedp.ByQuery), chromedp.WaitVisible(`#transcript`, chromedp.ByQuery))
}
