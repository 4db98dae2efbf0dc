package orchestrator_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/results/summary"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestRerunChangesOneSetting: an attempt cut by its per-response cap is
// rerun with the same case, repeat and seed and only the cap raised; the
// rerun records the original and the diff, and the side-by-side shows the
// truncated longest response against the rerun's.
func TestRerunChangesOneSetting(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	ctx := context.Background()
	out := t.TempDir()
	res, err := orchestrator.Run(ctx, orchestrator.Options{
		Plan:   loadPlan(t, adderPlan(t, "", []string{`{name: cap, endpoint: {base_url: "` + srv.URL() + `", model: reference}, max_tokens: 24, sampling: {temperature: 0.6}}`}, "")),
		OutDir: out, Engine: eng, Image: img,
	})
	if err != nil {
		t.Fatal(err)
	}
	orig := res.Attempts[0]
	if orig.Turns[0].Termination != evalctl.TermOutputTruncated {
		t.Fatalf("original termination %s, want output_truncated (the cap must cut it)", orig.Turns[0].Termination)
	}
	attemptDir := filepath.Join(res.Dir, runstore.AttemptsDir, orig.ID)

	for _, bad := range []struct {
		sets []string
		want string
	}{
		{[]string{"max_token=8192"}, "not an arm setting"},
		{[]string{"max_tokens=24"}, "already has max_tokens = 24"},
		{[]string{"name=x"}, "not a setting that can be changed"},
		{[]string{"max_tokens=lots"}, `"max_tokens" = "lots"`},
		{nil, "--set FIELD=VALUE"},
	} {
		_, _, err := orchestrator.RerunPlan(attemptDir, bad.sets, "")
		if !errors.Is(err, orchestrator.ErrRerun) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("--set %v: %v, want ErrRerun saying %q", bad.sets, err, bad.want)
		}
	}

	re, err := orchestrator.Rerun(ctx, orchestrator.Options{OutDir: out, Engine: eng, Image: img}, attemptDir, []string{"max_tokens=8192"}, "cap-8k")
	if err != nil {
		t.Fatal(err)
	}
	if len(re.Attempts) != 1 {
		t.Fatalf("rerun attempts %d", len(re.Attempts))
	}
	a := re.Attempts[0]
	if a.Case != orig.Case || a.Repeat != orig.Repeat || a.Seed != orig.Seed || a.Arm != "cap-8k" || a.ArmHash == orig.ArmHash {
		t.Errorf("rerun attempt %s/%s/%d arm %s, want the original's case, repeat and seed under cap-8k", a.Case, a.Repeat, a.Seed, a.Arm)
	}
	sbs, err := report.LoadRerun(re.Dir)
	if err != nil {
		t.Fatal(err)
	}
	changes := sbs.Changes
	if len(changes) != 1 || changes[0].Field != "max_tokens" || string(changes[0].From) != "24" || string(changes[0].To) != "8192" {
		t.Errorf("arm diff %+v, want exactly max_tokens 24 -> 8192", sbs.Changes)
	}
	o, n := sbs.Original, sbs.Rerun
	if o.AttemptID != orig.ID || o.Functional == nil || *o.Functional || n.Functional == nil || !*n.Functional {
		t.Errorf("outcomes: original %v, rerun %v; want false then true", o.Functional, n.Functional)
	}
	if o.LongestResponseTokens == nil || *o.LongestResponseTokens != 24 || n.LongestResponseTokens == nil || *n.LongestResponseTokens <= 24 {
		t.Errorf("longest responses %v vs %v, want the cap (24) against a longer one", o.LongestResponseTokens, n.LongestResponseTokens)
	}
	if o.FinishReasons["length"] == 0 || n.FinishReasons["length"] != 0 || n.MaxSequenceTokens == nil || n.NativeOutputTokens == nil {
		t.Errorf("finish reasons %v vs %v, max_sequence_tokens %v", o.FinishReasons, n.FinishReasons, n.MaxSequenceTokens)
	}
	var buf bytes.Buffer
	sbs.WriteTable(&buf)
	for _, want := range []string{"changed: max_tokens 24 -> 8192", "output_truncated", "longest response tokens", "max_sequence_tokens"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("side-by-side lacks %q:\n%s", want, buf.String())
		}
	}
	t.Logf("\n%s", buf.String())
	doc, err := summary.Summarize(ctx, []string{res.Dir, re.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Diagnostics) != 1 || doc.Diagnostics[0].Label != "cap-8k" || doc.Diagnostics[0].RunIDs[0] != res.RunID ||
		doc.Diagnostics[0].RunIDs[1] != re.RunID || *doc.Diagnostics[0].Original.LongestResponseTokens != 24 {
		t.Errorf("results document diagnostics %+v", doc.Diagnostics)
	}
}
