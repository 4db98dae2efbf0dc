package orchestrator

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
)

// imageLookup says which image ID a name has on the sandbox engine (""
// when it has none); *sandbox.Engine and *sandbox.Hosts (the source
// engine) satisfy it.
type imageLookup interface {
	ImageID(ctx context.Context, ref string) (string, error)
}

// AgentImages resolves every arm's agent.image on the engine to its image
// ID, by arm name. An image the engine does not hold is a plan mistake
// (PlanErrors, a usage error), naming where agent.image was written and
// the command that builds it: the run must not start an arm in a
// container that cannot be created.
func AgentImages(ctx context.Context, eng imageLookup, plan *Plan) (map[string]string, error) {
	ids := map[string]string{}
	var missing PlanErrors
	for i, arm := range plan.Arms {
		if arm.Agent == nil || arm.Agent.Image == "" {
			continue
		}
		id, err := eng.ImageID(ctx, arm.Agent.Image)
		if err != nil {
			return nil, fmt.Errorf("arm %s: agent image: %w", arm.Name, err)
		}
		if id != "" {
			ids[arm.Name] = id
			continue
		}
		at, ok := plan.AgentImageAt[arm.Name]
		if !ok {
			at = evalctl.FieldAt{File: "plan " + plan.Name, Field: fmt.Sprintf("arms[%d].agent.image", i)}
		}
		missing = append(missing, &PlanError{File: at.File, Line: at.Line, Field: at.Field,
			Msg: fmt.Sprintf("image %q is not on the sandbox engine: build it from the Dockerfile that installs the agent with 'evalctl image build --agent DOCKERFILE --tag %s' (docs/agents.md)", arm.Agent.Image, arm.Agent.Image)})
	}
	if len(missing) > 0 {
		return nil, missing
	}
	return ids, nil
}

// agentImageKey is the image an arm's agent containers run: its agent
// image's ID, or "" for the sandbox image.
func (r *runner) agentImageKey(arm *Arm) string {
	return r.agentImages[arm.Name]
}

// withAgentImage adds an arm's agent image ID to its identity: the ID,
// not the tag, so that a tag moved to another build is another arm.
func withAgentImage(id *runstore.ArmIdentity, imageID string) *runstore.ArmIdentity {
	if imageID == "" {
		return id
	}
	fields := make(map[string]string, len(id.Fields)+1)
	for k, v := range id.Fields {
		fields[k] = v
	}
	fields["agent.image_id"] = imageID
	return newIdentity(fields)
}

// sameAgentImages refuses to resume a run whose arms' agent images now
// name other images than the run registered: the attempts would not pool.
func sameAgentImages(run *runstore.Run, ids map[string]string) error {
	names := make([]string, 0, len(ids))
	for n := range ids {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		id := run.ArmIdentities[n]
		if id == nil || id.Fields["agent.image_id"] == "" || id.Fields["agent.image_id"] == ids[n] {
			continue
		}
		was := id.Fields["agent.image_id"]
		return fmt.Errorf("%w: arm %s's agent image is now %s, the run registered %s: tag the registered image again ('docker tag %s NAME') or register a new run", ErrAgentChanged, n, ids[n], was, was)
	}
	return nil
}

// checkAgentImages is 'run --check' for the arms' agent images: each must
// be on the local engine, as the run will ask. A plan naming none needs
// no engine.
func checkAgentImages(ctx context.Context, plan *Plan, w io.Writer) error {
	need := false
	for _, a := range plan.Arms {
		need = need || a.Agent != nil && a.Agent.Image != ""
	}
	if !need {
		return nil
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	ids, err := AgentImages(ctx, eng, plan)
	if err != nil {
		return err
	}
	for _, a := range plan.Arms {
		if id := ids[a.Name]; id != "" {
			fmt.Fprintf(w, "agent image: arm %s runs its agent in %s (%s)\n", a.Name, a.Agent.Image, id)
		}
	}
	return nil
}
