package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// This file holds agent images: images derived from the sandbox image
// that hold an agent CLI, in which an arm's agent containers run
// (docs/agents.md).

// Labels of an agent image: what it is, and the sandbox image ID it was
// built on.
const (
	LabelAgentImage = "io.evalctl.agent-image"
	LabelBaseImage  = "io.evalctl.base-image"
)

// ErrNotDerived means a built agent image does not start from the sandbox
// image (its Dockerfile does not say FROM ${BASE}): the agent would run
// without the users, tools and forwarder the sandbox needs.
var ErrNotDerived = errors.New("the image is not derived from the sandbox image")

// AgentBuild is what building an agent image takes.
type AgentBuild struct {
	// Dockerfile is the host path of the Dockerfile; its directory is the
	// build context. It gets the sandbox image as the build argument BASE.
	Dockerfile string
	// Tag names the result (what an arm's agent.image says).
	Tag string
	// NetworkMode is the build's network ("": the engine's default, which
	// a step installing a package from a registry needs).
	NetworkMode string
	// Labels are added to the image's own (e.g. to find test images).
	Labels map[string]string
	// Log receives the build's steps (nil: discarded).
	Log io.Writer
}

// BuildAgent builds an agent image on base (the sandbox image) and
// checks that the result is derived from it: base's layers must be the
// first layers of the result. A result that is not is removed again and
// the error wraps ErrNotDerived.
func (e *Engine) BuildAgent(ctx context.Context, base *BuiltImage, b AgentBuild) (*BuiltImage, error) {
	logw := b.Log
	if logw == nil {
		logw = io.Discard
	}
	if b.Tag == "" {
		return nil, errors.New("build agent image: no tag")
	}
	dir := filepath.Dir(b.Dockerfile)
	entries, err := DirEntries(dir, nil)
	if err != nil {
		return nil, fmt.Errorf("build agent image: read the build context %s: %w", dir, err)
	}
	var buf bytes.Buffer
	if err := WriteArchive(&buf, entries); err != nil {
		return nil, err
	}
	labels := map[string]string{LabelManaged: "1", LabelAgentImage: "1", LabelBaseImage: base.ID}
	for k, v := range b.Labels {
		labels[k] = v
	}
	ref := base.Ref
	if ref == "" {
		ref = base.ID
	}
	fmt.Fprintf(logw, "building the agent image %s from %s on %s...\n", b.Tag, b.Dockerfile, ref)
	bctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	resp, err := e.cli.ImageBuild(bctx, &buf, build.ImageBuildOptions{
		Tags: []string{b.Tag}, Dockerfile: filepath.Base(b.Dockerfile), BuildArgs: map[string]*string{"BASE": &ref},
		Remove: true, ForceRemove: true, Version: build.BuilderV1, Labels: labels, NetworkMode: b.NetworkMode,
	})
	if err != nil {
		return nil, fmt.Errorf("build agent image: %w", err)
	}
	err = streamBuild(resp.Body, logw, "build agent image")
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	id, err := e.ImageID(ctx, b.Tag)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, fmt.Errorf("build agent image %s: the build finished but the tag is missing", b.Tag)
	}
	if err := e.derived(ctx, base.ID, id); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), apiTimeout)
		e.cli.ImageRemove(rctx, b.Tag, image.RemoveOptions{Force: true})
		cancel()
		return nil, fmt.Errorf("build agent image %s: %w", b.Tag, err)
	}
	return &BuiltImage{Ref: b.Tag, ID: id}, nil
}

// derived checks that image id starts with base's layers; the error wraps
// ErrNotDerived when it does not.
func (e *Engine) derived(ctx context.Context, base, id string) error {
	ictx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	b, err := e.cli.ImageInspect(ictx, base)
	if err != nil {
		return fmt.Errorf("inspect the sandbox image %s: %w", base, err)
	}
	r, err := e.cli.ImageInspect(ictx, id)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", id, err)
	}
	if len(r.RootFS.Layers) < len(b.RootFS.Layers) || !slices.Equal(r.RootFS.Layers[:len(b.RootFS.Layers)], b.RootFS.Layers) {
		return fmt.Errorf("%w: its first layers are not those of the sandbox image %s: start the Dockerfile with 'ARG BASE' and 'FROM ${BASE}'", ErrNotDerived, shortID(base))
	}
	return nil
}

// RemoveImage removes the image named ref; one already gone is no error.
func (e *Engine) RemoveImage(ctx context.Context, ref string) error {
	rctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	_, err := e.cli.ImageRemove(rctx, ref, image.RemoveOptions{Force: true, PruneChildren: true})
	if err != nil && !client.IsErrNotFound(err) {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	return nil
}

// BuildAgentImage is 'evalctl image build --agent': it reuses (or builds)
// the sandbox image, builds the agent image on it and prints its name and
// ID on stdout; unless quiet, the build's log goes to log.
func BuildAgentImage(ctx context.Context, dockerfile, tag string, quiet bool, stdout, log io.Writer) error {
	if _, err := os.Stat(dockerfile); err != nil {
		return fmt.Errorf("agent Dockerfile: %w", err)
	}
	start := time.Now()
	if quiet {
		log = nil
	}
	eng, base, err := connectImage(ctx, BuildOptions{Log: log})
	if err != nil {
		return err
	}
	defer eng.Close()
	img, err := eng.BuildAgent(ctx, base, AgentBuild{Dockerfile: dockerfile, Tag: tag, Log: log})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s\n", img.Ref, img.ID)
	if log != nil {
		fmt.Fprintf(log, "built the agent image %s on %s in %.1fs: name it in an arm as agent: {image: %s}\n", img.Ref, base.Ref, time.Since(start).Seconds(), img.Ref)
	}
	return nil
}

// ImageID of a pool is the image's ID on its source engine (where agent
// images are built).
func (h *Hosts) ImageID(ctx context.Context, ref string) (string, error) {
	return h.hosts[0].Engine.ImageID(ctx, ref)
}
