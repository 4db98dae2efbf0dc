package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/transcript"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestAgentCommandArms: in real containers, the stand-in agent CLI run as
// an arm's agent command solves the adder case through the recording
// proxy as the built-in loop does (same server-counted output tokens, the
// same outcome), its identity, configuration and own usage claims are
// recorded beside the server's figures, a misreporting agent's claim
// falls short of them, and an agent that changes its configuration file
// is not functional.
func TestAgentCommandArms(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	url := srv.URL()
	standin := func(name, extra, files string) string {
		return `{name: ` + name + `, endpoint: {base_url: "` + url + `", model: reference}, max_tokens: 8192, agent: {command: [standin-agent, --base-url, "{{.BaseURL}}", --model, "{{.Model}}", --prompt-file, "{{.PromptFile}}"` + extra + `], prompt: file, usage: standin` + files + `}}`
	}
	cfg := `, files: {/home/agent/.config/standin.json: "{\"model\": \"{{.Model}}\"}"}`
	arms := []string{
		`{name: loop, endpoint: {base_url: "` + url + `", model: reference}, max_tokens: 8192}`,
		standin("standin", "", cfg),
		standin("misreport", ", --misreport", ""),
		`{name: tamper, endpoint: {base_url: "` + url + `", model: reference}, max_tokens: 8192, agent: {command: [sh, -c, "echo changed >> /home/agent/.config/standin.json && exec standin-agent --base-url {{.BaseURL}} --model {{.Model}}"], prompt: stdin, usage: standin` + cfg + `}}`,
	}
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{
		Plan: loadPlan(t, adderPlan(t, "", arms, "")), OutDir: t.TempDir(), Engine: eng, Image: img, GradeConcurrency: 2, Progress: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	store, _ := runstore.Open(res.Dir)
	by := map[string]*evalctl.Attempt{}
	for _, a := range res.Attempts {
		by[a.Arm] = a
		if a.State != evalctl.Completed {
			t.Fatalf("%s: %s %s (turns %+v)", a.Arm, a.State, a.Error, a.Turns)
		}
	}
	outcome := func(a *evalctl.Attempt) *evalctl.Outcome {
		grades, err := store.Grades(a, "graderfixture@0.1.0")
		if err != nil {
			t.Fatal(err)
		}
		return evalctl.Score(a, grades)
	}
	loop := by["loop"]
	for _, name := range []string{"standin", "misreport"} {
		a := by[name]
		o := outcome(a)
		if o == nil || !o.Functional || !o.Delivered {
			t.Errorf("%s: outcome %+v, turns %+v", name, o, a.Turns)
		}
		m := a.Measurements
		if m == nil || m.NativeOutputTokens == nil || *m.NativeOutputTokens != *loop.Measurements.NativeOutputTokens || m.TimingsSource != "server" {
			t.Errorf("%s: measurements %+v; the built-in loop's output tokens %v", name, m, *loop.Measurements.NativeOutputTokens)
		}
		if a.ServerCounters == nil || a.ServerCounters.GeneratedTokens == nil || int64(*a.ServerCounters.GeneratedTokens) != *m.NativeOutputTokens {
			t.Errorf("%s: /metrics cross-check %+v against %v", name, a.ServerCounters, m.NativeOutputTokens)
		}
		ag := a.Agent
		if ag == nil || len(ag.BinarySHA256) != 64 || ag.Version != "standin-agent 1.0" || ag.ConfigUnchanged == nil || !*ag.ConfigUnchanged || len(ag.Phases) != 1 ||
			ag.Phases[0].ExitCode == nil || *ag.Phases[0].ExitCode != 0 || ag.Phases[0].ReportedCompletionTokens == nil {
			t.Fatalf("%s: agent record %+v", name, ag)
		}
		claim := *ag.Phases[0].ReportedCompletionTokens
		if honest := name == "standin"; honest != (claim == *m.NativeOutputTokens) || claim > *m.NativeOutputTokens {
			t.Errorf("%s: the agent claimed %d completion tokens, the server counted %d", name, claim, *m.NativeOutputTokens)
		}
		f, err := os.Open(filepath.Join(store.AttemptDir(a.ID), runstore.TranscriptFile))
		if err != nil {
			t.Fatal(err)
		}
		events, torn, err := transcript.Read(f)
		f.Close()
		if err != nil || torn != 0 || len(events) < 4 {
			t.Errorf("%s: transcript %d events, %d torn, %v", name, len(events), torn, err)
		}
	}
	if sum := by["standin"].Agent.ConfigSHA256["/home/agent/.config/standin.json"]; len(sum) != 64 {
		t.Errorf("configuration file's SHA-256 not recorded: %v", by["standin"].Agent.ConfigSHA256)
	}
	tam := by["tamper"]
	if o := outcome(tam); tam.Agent == nil || tam.Agent.ConfigUnchanged == nil || *tam.Agent.ConfigUnchanged || o == nil || o.Functional {
		t.Errorf("tamper: agent %+v outcome %+v", tam.Agent, o)
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: res.RunID}); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}
}
