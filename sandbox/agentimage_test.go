package sandbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestBuildAgentImage: an agent image built FROM ${BASE} is derived from
// the sandbox image (its layers first), labelled with the base's ID, and
// its added file is there in a container of it; a Dockerfile that starts
// from anything else is refused with ErrNotDerived and leaves no image.
func TestBuildAgentImage(t *testing.T) {
	sandboxtest.Long(t)
	eng, base := sandboxtest.Engine(t)
	img := sandboxtest.AgentImage(t, "ARG BASE\nFROM ${BASE}\nUSER root\nCOPY hello /usr/local/bin/hello\nUSER 65534:65534\n",
		map[string]string{"hello": "#!/bin/sh\necho hello from the agent image\n"})
	if img.ID == "" || img.ID == base.ID {
		t.Fatalf("agent image %+v on %+v", img, base)
	}
	c := sandboxtest.Start(t, sandbox.Spec{Image: img.ID})
	res, err := c.Exec(context.Background(), []string{"hello"}, sandbox.ExecOptions{Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != "hello from the agent image\n" {
		t.Errorf("the added program in the agent image: %+v %v", res, err)
	}

	tag, _, err := sandboxtest.BuildAgentImage(t, "FROM scratch\nCOPY hello /hello\n", map[string]string{"hello": "not derived\n"})
	if !errors.Is(err, sandbox.ErrNotDerived) {
		t.Fatalf("a Dockerfile FROM scratch: %v, want ErrNotDerived", err)
	}
	if id, err := eng.ImageID(context.Background(), tag); id != "" || err != nil {
		t.Errorf("the refused build left %s as %q (%v)", tag, id, err)
	}
}
