package orchestrator_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/longctx"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/summary"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// corpusSuite copies the fixture suite and gives its adder case a
// generated corpus.
func corpusSuite(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "suite")
	if out, err := exec.Command("cp", "-r", fixtureSuite, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy suite: %v: %s", err, out)
	}
	cy := filepath.Join(dir, "adder", "case.yaml")
	data, _ := os.ReadFile(cy)
	os.WriteFile(cy, append(data, []byte("corpus: corpus\n")...), 0o644)
	os.MkdirAll(filepath.Join(dir, "adder", "corpus"), 0o755)
	docs := longctx.GenerateCorpus(3, 6000, 3, []string{"add() must return the exact sum of two integers, negative ones included."})
	for _, d := range docs {
		os.WriteFile(filepath.Join(dir, "adder", "corpus", d.Path), []byte(d.Text), 0o644)
	}
	return dir
}

// TestLongContextStrategies: one long-context case under three arms, whose
// strategies send the whole corpus, a crop and retrieved passages. Each
// attempt records the input tokens its strategy produced (three sizes, as
// the scripted server's tokenizer counts them), and the report gives per
// arm input and output tokens, checks passed of run, and the server's
// prefill + decode seconds.
func TestLongContextStrategies(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	suiteDir := corpusSuite(t)
	s, err := tasks.LoadSuite(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Case("adder").CorpusDir == "" {
		t.Fatal("corpus not loaded")
	}
	srv, err := scripted.New(scripted.Config{Suite: s, CtxSize: 65536})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ep := `endpoint: {base_url: "` + srv.URL() + `", model: reference}, max_tokens: 8192`
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{
		Plan: loadPlan(t, adderPlan(t, suiteDir, []string{
			`{name: full, ` + ep + `, context: {strategy: full}}`,
			`{name: cropped, ` + ep + `, context: {strategy: cropped, tokens: 3000}}`,
			`{name: retrieved, ` + ep + `, context: {strategy: retrieved, tokens: 1000}}`,
		}, "")),
		OutDir: t.TempDir(), Engine: eng, Image: img,
	})
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{}
	for _, a := range res.Attempts {
		if a.Input == nil || a.Input.Strategy != a.Arm {
			t.Fatalf("attempt %s: input %+v", a.Arm, a.Input)
		}
		sizes[a.Arm] = a.Input.InputTokens
		if a.Measurements == nil || a.Measurements.PromptTokens == nil || *a.Measurements.PromptTokens <= int64(a.Input.InputTokens) {
			t.Errorf("%s: the server processed %v prompt tokens for %d corpus tokens", a.Arm, a.Measurements.PromptTokens, a.Input.InputTokens)
		}
	}
	if !(sizes["full"] > sizes["cropped"] && sizes["cropped"] > sizes["retrieved"]) || sizes["cropped"] > 3000 || sizes["retrieved"] > 1000 {
		t.Fatalf("input tokens %v: want full > cropped (<= 3000) > retrieved (<= 1000)", sizes)
	}
	in, err := report.Load(context.Background(), []string{res.Dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.LongContext) != 3 {
		t.Fatalf("long-context rows %+v", rep.LongContext)
	}
	for _, la := range rep.LongContext {
		if la.InputTokens == nil || int(*la.InputTokens) != sizes[la.Arm] || la.PassedChecks == nil || *la.TotalChecks == 0 || *la.PassedChecks != *la.TotalChecks ||
			la.PrefillAndDecodeSeconds == nil || la.OutputTokens == nil {
			t.Errorf("long-context %s: input %v (want %d), checks %v/%v, prefill+decode %v, output %v", la.Arm, ptrv(la.InputTokens), sizes[la.Arm], ptrv(la.PassedChecks), ptrv(la.TotalChecks), ptrv(la.PrefillAndDecodeSeconds), ptrv(la.OutputTokens))
		}
	}
	doc, err := summary.Summarize(context.Background(), []string{res.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if lc := doc.LongContext["plan"]; lc == nil || len(lc.Arms) != 3 || lc.RunIDs[0] != res.RunID {
		t.Errorf("results document long_context %v", doc.LongContext)
	}
	var b strings.Builder
	report.Write(&b, rep, report.FormatTable)
	if !strings.Contains(b.String(), "Long-context input per arm") {
		t.Errorf("no long-context table:\n%s", b.String())
	}
}

func ptrv[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
