package orchestrator_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// markerAgent is the stand-in agent under another name, installed only in
// the derived image: an attempt that ran it ran there.
const markerAgent = "#!/bin/sh\necho 'marker-agent: in the derived image' >&2\nexec standin-agent \"$@\"\n"

// TestAgentImageArm: in real containers, an arm naming agent.image runs
// its agent in that image (its program exists only there, and its
// SHA-256 is the one recorded), beside a built-in arm in the plain
// sandbox image in the same run; the image ID, not the tag, is recorded
// in the attempt's agent record and the arm's identity. An arm naming an
// image the engine lacks is refused before anything is registered, as a
// plan mistake with the field path (exit 2), in 'run --check' too.
func TestAgentImageArm(t *testing.T) {
	sandboxtest.Long(t)
	eng, img := sandboxtest.Engine(t)
	derived := sandboxtest.AgentImage(t, "ARG BASE\nFROM ${BASE}\nUSER root\nCOPY marker-agent /usr/local/bin/marker-agent\nUSER 65534:65534\n",
		map[string]string{"marker-agent": markerAgent})
	srv := startServer(t)
	url := srv.URL()
	arms := []string{
		`{name: loop, endpoint: {base_url: "` + url + `", model: reference}, max_tokens: 8192}`,
		`{name: marker, endpoint: {base_url: "` + url + `", model: reference}, max_tokens: 8192, agent: {command: [marker-agent, --base-url, "{{.BaseURL}}", --model, "{{.Model}}"], prompt: stdin, usage: standin, image: "` + derived.Ref + `"}}`,
	}
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{
		Plan: loadPlan(t, adderPlan(t, "", arms, "")), OutDir: t.TempDir(), Engine: eng, Image: img, Progress: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*evalctl.Attempt{}
	for _, a := range res.Attempts {
		by[a.Arm] = a
		if a.State != evalctl.Completed {
			t.Fatalf("%s: %s %s (turns %+v)", a.Arm, a.State, a.Error, a.Turns)
		}
	}
	m := by["marker"]
	sum := sha256.Sum256([]byte(markerAgent))
	ag := m.Agent
	if ag == nil || ag.BinarySHA256 != hex.EncodeToString(sum[:]) || ag.ImageID != derived.ID || len(ag.Phases) != 1 || !strings.Contains(ag.Phases[0].OutputTail, "marker-agent: in the derived image") {
		t.Fatalf("agent record %+v; want the marker agent's SHA-256 in image %s", ag, derived.ID)
	}
	if ag.Phases[0].ExitCode == nil || *ag.Phases[0].ExitCode != 0 || len(m.Turns) != 1 || m.Turns[0].Termination != evalctl.TermCompleted {
		t.Errorf("the derived image's agent did not finish: %+v %+v", ag.Phases, m.Turns)
	}
	if by["loop"].Agent != nil || m.ImageID != img.ID {
		t.Errorf("loop agent %+v; attempt image %s, want the sandbox image %s (it grades)", by["loop"].Agent, m.ImageID, img.ID)
	}
	store, _ := runstore.Open(res.Dir)
	run, err := store.ReadRun()
	if err != nil {
		t.Fatal(err)
	}
	if got := run.ArmIdentities["marker"].Fields["agent.image_id"]; got != derived.ID {
		t.Errorf("the arm's identity holds agent.image_id %q, want %s", got, derived.ID)
	}
	if left, _ := eng.List(context.Background(), map[string]string{sandbox.LabelRun: res.RunID}); len(left) != 0 {
		t.Errorf("containers left: %v", left)
	}

	// A missing image: a usage error naming the plan's line and field,
	// before any run is registered.
	missing := "evalctl-test-agent:missing-" + strings.ToLower(hex.EncodeToString(sum[:4]))
	file := adderPlan(t, "", []string{arms[0], strings.Replace(arms[1], derived.Ref, missing, 1)}, "")
	out := t.TempDir()
	_, err = orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, file), OutDir: out, Engine: eng, Image: img, Progress: os.Stderr})
	want := file + ":6: arms[1].agent.image: image \"" + missing + "\" is not on the sandbox engine: build it from the Dockerfile that installs the agent with 'evalctl image build --agent DOCKERFILE --tag " + missing + "'"
	var ue *evalctl.UsageError
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(orchestrator.PlanUsage(err), &ue) {
		t.Errorf("run with a missing image: %v\nwant a usage error with %s", err, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a run was registered: %v", entries)
	}
	var stdout strings.Builder
	err = orchestrator.Request{PlanFile: file, Check: true}.Do(context.Background(), evalctl.Console{Stdout: &stdout, Stderr: os.Stderr})
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ue) {
		t.Errorf("run --check with a missing image: %v\nwant a usage error with %s", err, want)
	}
}
