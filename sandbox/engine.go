// Package sandbox runs untrusted candidate code in Docker containers. It is
// the only package that talks to the Docker Engine: everything else sees
// containers through its small API (start for a role, exec with a timeout,
// copy in, snapshot out, remove).
//
// Every container runs without network, commands as uid 1000 (the grader's
// own processes as uid 1001, out of reach of the answer's), with all
// capabilities dropped, no-new-privileges, a seccomp profile that denies
// ptrace and cross-process memory access, a read-only root file system
// (only /workspace, a size-limited tmpfs, and /tmp are writable) and
// memory, CPU and PID limits. Containers carry labels so that those a
// crashed run leaves behind can be found and removed.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

// Labels put on every container evalctl starts.
const (
	LabelManaged = "io.evalctl.managed"
	LabelRun     = "io.evalctl.run"
	LabelAttempt = "io.evalctl.attempt"
	LabelRole    = "io.evalctl.role"
)

// ErrNoDaemon means the Docker Engine could not be reached.
var ErrNoDaemon = errors.New("cannot reach the Docker Engine: start it (e.g. 'systemctl start docker') or set DOCKER_HOST")

// apiTimeout bounds each plain Engine API call (not execs or copies, which
// have their own limits).
const apiTimeout = 30 * time.Second

// Engine is a connection to the Docker Engine.
type Engine struct {
	cli *client.Client
}

// Connect opens a connection to the engine named by the environment
// (DOCKER_HOST etc.), negotiating the API version down to what the engine
// speaks (our machines run an older engine, API 1.41), and checks that it
// answers.
func Connect(ctx context.Context) (*Engine, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w (%v)", ErrNoDaemon, err)
	}
	cli.NegotiateAPIVersion(pctx)
	return &Engine{cli: cli}, nil
}

// Close releases the connection.
func (e *Engine) Close() error { return e.cli.Close() }

// Prune force-removes every evalctl container matching all the given labels
// (e.g. {LabelRun: id}); with no labels, every evalctl container. It returns
// the names of the containers removed.
func (e *Engine) Prune(ctx context.Context, labels map[string]string) ([]string, error) {
	args := filters.NewArgs(filters.Arg("label", LabelManaged+"=1"))
	for k, v := range labels {
		args.Add("label", k+"="+v)
	}
	lctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	list, err := e.cli.ContainerList(lctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list evalctl containers: %w", err)
	}
	var removed []string
	var errs []error
	for _, c := range list {
		err := e.forceRemove(ctx, c.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", c.ID[:12], err))
			continue
		}
		name := c.ID[:12]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// forceRemove removes a container and its volumes. A container the engine
// is already removing (its previous owner was killed mid-request) is waited
// for, so that a prune that returns without error leaves nothing behind.
func (e *Engine) forceRemove(ctx context.Context, id string) error {
	rctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	err := e.cli.ContainerRemove(rctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err == nil || client.IsErrNotFound(err) {
		return nil
	}
	if !cerrdefs.IsConflict(err) || !strings.Contains(err.Error(), "in progress") {
		return err
	}
	waitC, errC := e.cli.ContainerWait(rctx, id, container.WaitConditionRemoved)
	select {
	case <-waitC:
		return nil
	case werr := <-errC:
		if client.IsErrNotFound(werr) {
			return nil
		}
		return fmt.Errorf("%w (waiting for the removal: %v)", err, werr)
	}
}

// List returns the IDs of evalctl containers matching all the labels.
func (e *Engine) List(ctx context.Context, labels map[string]string) ([]string, error) {
	args := filters.NewArgs(filters.Arg("label", LabelManaged+"=1"))
	for k, v := range labels {
		args.Add("label", k+"="+v)
	}
	lctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	list, err := e.cli.ContainerList(lctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list evalctl containers: %w", err)
	}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	return ids, nil
}
