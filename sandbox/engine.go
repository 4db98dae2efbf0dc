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
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// Engine is a connection to one Docker Engine.
type Engine struct {
	cli *client.Client
	// name is how records and messages name the engine (its host URL, or
	// the name a hosts file gives it).
	name string
	// lost is set once the engine stopped answering (see Alive).
	lost atomic.Bool
}

// ConnectOptions address an engine other than the environment's.
type ConnectOptions struct {
	// Name names the engine in records and messages (default: Host, or
	// "local" for the environment's engine).
	Name string
	// Host is the engine's address: unix:///var/run/docker.sock,
	// tcp://host:2376 or ssh://user@host. Empty means the environment's
	// (DOCKER_HOST, else the local socket).
	Host string
	// TLSDir holds ca.pem, cert.pem and key.pem for a tcp:// engine that
	// checks client certificates (docker's --tlsverify layout).
	TLSDir string
	// SSHConfig is the ssh_config file an ssh:// engine is reached with,
	// instead of the user's (ssh -F): its key, known hosts, port, user.
	SSHConfig string
}

// Connect opens a connection to the engine named by the environment
// (DOCKER_HOST etc.), negotiating the API version down to what the engine
// speaks (our machines run an older engine, API 1.41), and checks that it
// answers. Options address another engine (at most one set is used).
func Connect(ctx context.Context, opts ...ConnectOptions) (*Engine, error) {
	var o ConnectOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	clientOpts, err := o.clientOpts()
	if err != nil {
		return nil, err
	}
	cli, err := client.NewClientWithOpts(clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("docker client for %s: %w", o.describe(), err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		cli.Close()
		if o.Host == "" {
			return nil, fmt.Errorf("%w (%v)", ErrNoDaemon, err)
		}
		return nil, fmt.Errorf("%w: engine %s at %s does not answer (%v)", ErrNoDaemon, o.describe(), o.Host, err)
	}
	cli.NegotiateAPIVersion(pctx)
	name := o.Name
	if name == "" {
		name = o.Host
	}
	if name == "" {
		name = "local"
	}
	return &Engine{cli: cli, name: name}, nil
}

func (o ConnectOptions) describe() string {
	switch {
	case o.Name != "":
		return o.Name
	case o.Host != "":
		return o.Host
	}
	return "local"
}

// clientOpts turns the options into the SDK's.
func (o ConnectOptions) clientOpts() ([]client.Opt, error) {
	opts := []client.Opt{client.WithAPIVersionNegotiation()}
	if o.Host == "" {
		if o.TLSDir != "" {
			return nil, fmt.Errorf("engine %s: a TLS directory needs a tcp:// host", o.describe())
		}
		return append([]client.Opt{client.FromEnv}, opts...), nil
	}
	u, err := url.Parse(o.Host)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("engine %s: host %q is not an address such as unix:///var/run/docker.sock, tcp://host:2376 or ssh://user@host", o.describe(), o.Host)
	}
	switch u.Scheme {
	case "unix", "tcp":
		opts = append(opts, client.WithHost(o.Host))
	case "ssh":
		helper, err := sshHelper(o.Host, o.SSHConfig)
		if err != nil {
			return nil, fmt.Errorf("engine %s: %w", o.describe(), err)
		}
		opts = append(opts, helper...)
	default:
		return nil, fmt.Errorf("engine %s: host %q: scheme %q is not one of unix, tcp, ssh", o.describe(), o.Host, u.Scheme)
	}
	if o.SSHConfig != "" {
		if u.Scheme != "ssh" {
			return nil, fmt.Errorf("engine %s: an ssh_config is for ssh:// hosts, not %s", o.describe(), u.Scheme)
		}
		if _, err := os.Stat(o.SSHConfig); err != nil {
			return nil, fmt.Errorf("engine %s: ssh_config: %w", o.describe(), err)
		}
	}
	if o.TLSDir != "" {
		if u.Scheme != "tcp" {
			return nil, fmt.Errorf("engine %s: TLS is for tcp:// hosts, not %s", o.describe(), u.Scheme)
		}
		files := []string{"ca.pem", "cert.pem", "key.pem"}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(o.TLSDir, f)); err != nil {
				return nil, fmt.Errorf("engine %s: TLS directory %s lacks %s (it needs ca.pem, cert.pem and key.pem): %w", o.describe(), o.TLSDir, f, err)
			}
		}
		opts = append(opts, client.WithTLSClientConfig(filepath.Join(o.TLSDir, "ca.pem"), filepath.Join(o.TLSDir, "cert.pem"), filepath.Join(o.TLSDir, "key.pem")))
	}
	return opts, nil
}

// Name is how records name the engine.
func (e *Engine) Name() string { return e.name }

// Close releases the connection.
func (e *Engine) Close() error { return e.cli.Close() }

// Prune force-removes every evalctl container matching all the given labels
// (e.g. {LabelRun: id}); with no labels, every evalctl container. It returns
// the names of the containers removed.
func (e *Engine) Prune(ctx context.Context, labels map[string]string) ([]string, error) {
	names, _, err := e.prune(ctx, labels)
	return names, err
}

// prune is Prune, also returning the removed containers' IDs.
func (e *Engine) prune(ctx context.Context, labels map[string]string) (names, ids []string, err error) {
	args := filters.NewArgs(filters.Arg("label", LabelManaged+"=1"))
	for k, v := range labels {
		args.Add("label", k+"="+v)
	}
	lctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	list, err := e.cli.ContainerList(lctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, nil, fmt.Errorf("list evalctl containers: %w", err)
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
		ids = append(ids, c.ID)
	}
	return removed, ids, errors.Join(errs...)
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

// StorageDriver is the engine's storage driver (overlay2, fuse-overlayfs...).
func (e *Engine) StorageDriver(ctx context.Context) (string, error) {
	ictx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	info, err := e.cli.Info(ictx)
	if err != nil {
		return "", fmt.Errorf("engine %s: info: %w", e.name, err)
	}
	return info.Driver, nil
}

// ErrEngineLost means an engine stopped answering during the run; work
// placed there is an infrastructure failure, to be retried elsewhere.
var ErrEngineLost = errors.New("sandbox engine stopped answering")

// Alive pings the engine (ten seconds at most). An engine that does not
// answer is lost for good: the pool drains it and never places work there
// again in this process.
func (e *Engine) Alive(ctx context.Context) bool {
	if e.lost.Load() {
		return false
	}
	// Two tries: a loaded engine may be slow to answer once; a lost one
	// refuses at once or never answers.
	for try := 0; try < 2; try++ {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := e.cli.Ping(pctx)
		cancel()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return true // our caller gave up; says nothing of the engine
		}
	}
	e.lost.Store(true)
	return false
}

// Lost reports whether Alive found the engine gone.
func (e *Engine) Lost() bool { return e.lost.Load() }

// MarkLost drains the engine for good, as Alive does when it stops
// answering (a pool does it to an engine that cannot hold its image).
func (e *Engine) MarkLost() { e.lost.Store(true) }

// barrier refuses work for a drained engine: once drained (Lost), no new
// start, exec or copy goes to it.
func (e *Engine) barrier() error {
	if e.lost.Load() {
		return fmt.Errorf("%w: engine %s was drained; nothing more is sent to it", ErrEngineLost, e.name)
	}
	return nil
}
