package orchestrator

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
)

// images is an engine's images by name, for AgentImages.
type images map[string]string

func (m images) ImageID(ctx context.Context, ref string) (string, error) { return m[ref], nil }

const agentImagePlan = `name: t
suite: SUITE
cases: [adder]
repeats: [{label: repeat-1, seed: 1}]
arms:
  - name: builtin
    endpoint: {base_url: "http://127.0.0.1:1", model: m}
  - name: opencode
    endpoint: {base_url: "http://127.0.0.1:1", model: m}
    agent:
      command: [opencode, run]
      image: evalctl-agent-opencode
  - file: arm-b.yaml
`

const agentImageArm = `name: aider
endpoint: {base_url: "http://127.0.0.1:1", model: m}
agent:
  command: [aider]
  image: evalctl-agent-aider
`

// TestAgentImageMissing: an arm's agent.image the engine does not hold is
// a plan mistake (a usage error, exit 2) naming the file and line where
// it was written, its field path, and the command that builds it; one
// the engine holds resolves to its image ID.
func TestAgentImageMissing(t *testing.T) {
	file := writePlan(t, agentImagePlan, agentImageArm)
	p, _, err := LoadPlan(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = AgentImages(context.Background(), images{"evalctl-agent-aider": "sha256:aaa"}, p)
	var pe *PlanError
	var ue *evalctl.UsageError
	if !errors.As(err, &pe) || !errors.As(PlanUsage(err), &ue) {
		t.Fatalf("a missing image is %T %v, want a plan mistake", err, err)
	}
	want := file + ":12: arms[1].agent.image: image \"evalctl-agent-opencode\" is not on the sandbox engine: build it from the Dockerfile that installs the agent with 'evalctl image build --agent DOCKERFILE --tag evalctl-agent-opencode'"
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "aider") {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	// An arm from its own file is placed in that file.
	_, err = AgentImages(context.Background(), images{"evalctl-agent-opencode": "sha256:ooo"}, p)
	armFile := filepath.Join(filepath.Dir(file), "arm-b.yaml")
	if want := armFile + ":5: agent.image (arms[2] of plan.yaml): image \"evalctl-agent-aider\""; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error in the arm file: %v, want %s", err, want)
	}
	ids, err := AgentImages(context.Background(), images{"evalctl-agent-opencode": "sha256:ooo", "evalctl-agent-aider": "sha256:aaa"}, p)
	if err != nil || len(ids) != 2 || ids["opencode"] != "sha256:ooo" || ids["aider"] != "sha256:aaa" {
		t.Errorf("resolved %v, %v", ids, err)
	}
	// plan.json holds the name as written, not where it was written.
	data, _ := p.Encode()
	if !strings.Contains(string(data), `"image": "evalctl-agent-opencode"`) || strings.Contains(string(data), "plan.yaml") {
		t.Errorf("plan.json: %s", data)
	}
}

// TestAgentImageName: a name no engine could hold is refused when the
// plan loads.
func TestAgentImageName(t *testing.T) {
	file := writePlan(t, strings.Replace(agentImagePlan, "image: evalctl-agent-opencode", `image: "evalctl agent"`, 1), agentImageArm)
	_, _, err := LoadPlan(file)
	if want := file + `:12: arms[1].agent.image: "evalctl agent" is not an image name`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestAgentImageIdentity: the image ID an arm's agent.image resolved to
// is part of the arm's identity, and a resumed run whose tag now names
// another image is refused (ErrAgentChanged).
func TestAgentImageIdentity(t *testing.T) {
	base := newIdentity(map[string]string{"model": "m"})
	a, b := withAgentImage(base, "sha256:one"), withAgentImage(base, "sha256:two")
	if withAgentImage(base, "") != base || a.SHA256 == base.SHA256 || a.SHA256 == b.SHA256 || a.Fields["agent.image_id"] != "sha256:one" {
		t.Errorf("identities: base %s, one %s, two %s", base.SHA256, a.SHA256, b.SHA256)
	}
	run := &runstore.Run{ArmIdentities: map[string]*runstore.ArmIdentity{"x": a, "plain": base}}
	if err := sameAgentImages(run, map[string]string{"x": "sha256:one"}); err != nil {
		t.Errorf("same image refused: %v", err)
	}
	err := sameAgentImages(run, map[string]string{"x": "sha256:two"})
	if !errors.Is(err, ErrAgentChanged) || !strings.Contains(err.Error(), "now sha256:two, the run registered sha256:one") {
		t.Errorf("moved tag: %v", err)
	}
}

// TestBoxesPerImage: containers started ahead are per image: an attempt
// of an arm with its own agent image never gets a spare of the sandbox
// image, nor the reverse, and a released container's spare is of an image
// attempts still wait for.
func TestBoxesPerImage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFakeEngines(1, []int{8}, 0)
	b := newBoxes(ctx, f, sandbox.Spec{Image: "sandbox", Role: sandbox.RoleAgent, Run: "img"}, 4)
	b.expect("sha256:agent", 2)
	image := func(e *boxEntry) string { return e.c.(*fakeBox).image }
	first, err := b.take(ctx, "a1", "", "sha256:agent", sandbox.ClassAttempt, nil)
	if err != nil || image(first) != "sha256:agent" {
		t.Fatalf("first: %v %v", first, err)
	}
	b.release(first, "")
	b.bg.Wait() // the spare's start
	b.mu.Lock()
	if len(b.spares) != 1 || b.spares[0].image != "sha256:agent" {
		t.Errorf("spares after the agent image's attempt: %d", len(b.spares))
	}
	b.mu.Unlock()
	plain, err := b.take(ctx, "a2", "", "", sandbox.ClassAttempt, nil)
	if err != nil || image(plain) != "sandbox" {
		t.Fatalf("an attempt of the sandbox image got %q (%v)", image(plain), err)
	}
	spare := b.spares[0]
	second, err := b.take(ctx, "a3", "", "sha256:agent", sandbox.ClassAttempt, nil)
	if err != nil || second != spare || image(second) != "sha256:agent" {
		t.Errorf("the agent image's second attempt did not take its spare: %v", err)
	}
	// No attempt of the agent image waits now: the spare is of the
	// sandbox image, for the one plain attempt left.
	b.release(second, "")
	b.bg.Wait()
	b.mu.Lock()
	if len(b.spares) != 1 || b.spares[0].image != "" || image(b.spares[0]) != "sandbox" {
		t.Errorf("spare after the last agent-image attempt: %+v", b.spares)
	}
	b.mu.Unlock()
	b.release(plain, "")
	b.close()
	if n := f.live.Load(); n != 0 {
		t.Errorf("%d containers left", n)
	}
}
