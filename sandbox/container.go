package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
)

// Role says what a container is for. A grader container is always fresh:
// the agent's container is never reused for grading.
type Role string

// Roles of a container.
const (
	RoleAgent  Role = "agent"
	RoleGrader Role = "grader"
	RoleBench  Role = "bench"
	RoleTest   Role = "test"
)

// Limits bound what one container may use.
type Limits struct {
	// MemoryBytes is the memory limit (swap is not allowed on top).
	MemoryBytes int64
	// CPUs is the number of CPUs the container may use (fractions allowed).
	CPUs float64
	// PIDs bounds the number of processes (fork bombs stop here).
	PIDs int64
	// TmpBytes is the size of the /tmp tmpfs.
	TmpBytes int64
	// WorkspaceBytes is the size of /workspace (a tmpfs volume): a command
	// that writes more fails with ENOSPC ("No space left on device") and
	// the command's result says the limit was reached. It counts what the
	// graded snapshot leaves out (caches) too, so it is larger than
	// MaxArchiveBytes.
	WorkspaceBytes int64
}

// DefaultLimits are sensible limits for one attempt on a small machine.
var DefaultLimits = Limits{MemoryBytes: 2 << 30, CPUs: 2, PIDs: 512, TmpBytes: 512 << 20, WorkspaceBytes: 512 << 20}

// Spec describes a container to start.
type Spec struct {
	// Image is the sandbox image reference or ID.
	Image string
	Role  Role
	// Run and Attempt label the container so leaked ones can be pruned.
	Run, Attempt string
	// Limits default to DefaultLimits field by field when zero.
	Limits Limits
	// Env is added to every command's environment.
	Env []string
	// Volumes are extra writable directories (besides /workspace and /tmp)
	// backed by anonymous volumes removed with the container, e.g. /checks
	// for a grader, filled with root-owned files the commands cannot change.
	Volumes []string
	// ReadOnlyWorkspace makes /workspace root-owned, so that only root-owned
	// copies (CopyInReadOnly) go in and no command can change it: the
	// grader's answer is what was copied in, whatever the answer's code does.
	ReadOnlyWorkspace bool
	// Near names the machine a pool of engines (Hosts) places the
	// container on when it can (an agent's endpoint's machine).
	Near string
	// ProxySocket mounts a host directory private to the container at
	// ProxyMount, for a recording proxy's Unix socket (Container.ProxySocket):
	// with no network, it is the container's only way out. Only an engine
	// on this machine (a unix:// socket) can mount it.
	ProxySocket bool
	// Class is what a pool of engines (Hosts) grants the place for, which
	// orders the waiters (a grader's is ClassGrade whatever is set).
	Class Class
	// Yield, for ClassAhead, is called by a pool when a higher class
	// waits and no place is free: it returns true when the holder gives
	// the place back (removes the container soon), false when it cannot
	// (the container is in use now; it is not asked again).
	Yield func() bool
	// Promote, for ClassAhead, is closed when the work is needed now (its
	// attempt took its device): a pool then grants the place as
	// ClassAttempt.
	Promote <-chan struct{}
}

// ProxyMount is where Spec.ProxySocket's directory appears in the
// container; the socket in it is ProxyMount + "/proxy.sock".
const ProxyMount = "/run/evalctl"

// Container is a started sandbox container. Its methods are safe for
// concurrent use.
type Container struct {
	ID     string
	engine *Engine
	// mu guards removed and oomKills; removed is closed once the container
	// is gone, and removeErr is set before.
	mu        sync.Mutex
	removed   chan struct{}
	removeErr error
	oomKills  int
	// stopWatch cancels the removal-on-cancel hook.
	stopWatch func() bool
	// runners are the command runners living in the container (see
	// execd), one per user, each held to one request at a time by its own
	// mutex (so that two users' runners start and run concurrently);
	// runnersMu guards the map.
	runnersMu sync.Mutex
	runners   map[string]*userRunner
	// release gives the container's place back to its pool (nil for a
	// container started on an engine directly); Remove calls it once.
	release func()
	// proxyDir is the host directory of Spec.ProxySocket ("" without).
	proxyDir string
}

// ProxySocket is the host path of the Unix socket a recording proxy
// listens on to be reached from inside the container at ProxyMount +
// "/proxy.sock"; "" for a container started without Spec.ProxySocket.
func (c *Container) ProxySocket() string {
	if c.proxyDir == "" {
		return ""
	}
	return filepath.Join(c.proxyDir, "proxy.sock")
}

// userRunner is one user's command runner; mu holds it to one request at a
// time and d is nil until started.
type userRunner struct {
	mu  sync.Mutex
	dmu sync.Mutex // guards d
	d   *execd
}

// runnerFor returns user's runner slot, creating it.
func (c *Container) runnerFor(user string) *userRunner {
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	if c.runners == nil {
		c.runners = map[string]*userRunner{}
	}
	r := c.runners[user]
	if r == nil {
		r = &userRunner{}
		c.runners[user] = r
	}
	return r
}

// Start creates and starts a container for spec. If ctx is cancelled while
// the container lives, the container is removed: a caller that gives up can
// never leak one.
func (e *Engine) Start(ctx context.Context, spec Spec) (*Container, error) {
	if err := e.barrier(); err != nil {
		return nil, err
	}
	profile, err := seccompProfile()
	if err != nil {
		return nil, err
	}
	cfg, host := containerConfig(spec, withDefaults(spec.Limits), profile)
	proxyDir, err := e.proxyMount(spec, host)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	created, err := e.cli.ContainerCreate(cctx, cfg, host, nil, nil, "")
	if err != nil {
		os.RemoveAll(proxyDir)
		if client.IsErrNotFound(err) {
			return nil, fmt.Errorf("create %s container: image %q not found: build it with 'evalctl image build': %w", spec.Role, spec.Image, err)
		}
		return nil, fmt.Errorf("create %s container: %w", spec.Role, err)
	}
	c := &Container{ID: created.ID, engine: e, proxyDir: proxyDir}
	if err := e.cli.ContainerStart(cctx, created.ID, container.StartOptions{}); err != nil {
		c.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("start %s container: %w", spec.Role, err)
	}
	// Removal on cancellation: the caller's context owns the container. The
	// hook may run at once (ctx already done); c.mu orders it after the
	// assignment it reads.
	c.mu.Lock()
	c.stopWatch = context.AfterFunc(ctx, func() { c.Remove(context.WithoutCancel(ctx)) })
	c.mu.Unlock()
	return c, nil
}

// withDefaults fills every limit left at zero with DefaultLimits'.
func withDefaults(lim Limits) Limits {
	if lim.MemoryBytes == 0 {
		lim.MemoryBytes = DefaultLimits.MemoryBytes
	}
	if lim.CPUs == 0 {
		lim.CPUs = DefaultLimits.CPUs
	}
	if lim.PIDs == 0 {
		lim.PIDs = DefaultLimits.PIDs
	}
	if lim.TmpBytes == 0 {
		lim.TmpBytes = DefaultLimits.TmpBytes
	}
	if lim.WorkspaceBytes == 0 {
		lim.WorkspaceBytes = DefaultLimits.WorkspaceBytes
	}
	return lim
}

// containerConfig is the container a spec asks for: no network, every
// capability dropped, the seccomp profile, a read-only root, size-capped
// tmpfs workspace and /tmp, and the limits lim.
func containerConfig(spec Spec, lim Limits, profile string) (*container.Config, *container.HostConfig) {
	labels := map[string]string{LabelManaged: "1", LabelRole: string(spec.Role)}
	if spec.Run != "" {
		labels[LabelRun] = spec.Run
	}
	if spec.Attempt != "" {
		labels[LabelAttempt] = spec.Attempt
	}
	pids := lim.PIDs
	init := true
	cfg := &container.Config{
		Image:           spec.Image,
		User:            keeperUser,
		Cmd:             []string{"sleep", "infinity"},
		WorkingDir:      "/workspace",
		Env:             spec.Env,
		Labels:          labels,
		NetworkDisabled: true,
		Volumes:         map[string]struct{}{},
	}
	for _, v := range spec.Volumes {
		cfg.Volumes[v] = struct{}{}
	}
	owner := "uid=1000,gid=1000"
	if spec.ReadOnlyWorkspace {
		owner = "uid=0,gid=0"
	}
	host := &container.HostConfig{
		NetworkMode: "none",
		CapDrop:     []string{"ALL"},
		// The seccomp profile denies ptrace and cross-process memory access
		// (see deniedSyscalls).
		SecurityOpt: []string{"no-new-privileges", "seccomp=" + profile},
		// /workspace is an anonymous volume backed by a tmpfs of a fixed
		// size (removed with the container): a command cannot fill the
		// host's disk, and the archive API still reaches it (it does not
		// reach a plain --tmpfs mount).
		Mounts: []mount.Mount{{
			Type: mount.TypeVolume, Target: "/workspace",
			VolumeOptions: &mount.VolumeOptions{DriverConfig: &mount.Driver{Name: "local", Options: map[string]string{
				"type": "tmpfs", "device": "tmpfs",
				"o": fmt.Sprintf("size=%d,%s,mode=0755,nosuid,nodev", lim.WorkspaceBytes, owner),
			}}},
		}},
		ReadonlyRootfs: true,
		Init:           &init,
		Tmpfs:          map[string]string{"/tmp": fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,mode=1777", lim.TmpBytes)},
		Resources: container.Resources{
			Memory:     lim.MemoryBytes,
			MemorySwap: lim.MemoryBytes,
			NanoCPUs:   int64(lim.CPUs * 1e9),
			PidsLimit:  &pids,
		},
	}
	return cfg, host
}

// Short is the container ID's first 12 characters, as docker prints it.
func (c *Container) Short() string { return c.ID[:12] }

// Remove force-removes the container and its /workspace volume. It is
// idempotent.
func (c *Container) Remove(ctx context.Context) error {
	c.mu.Lock()
	if c.removed != nil {
		// Another caller (the cancellation hook, say) is removing it: wait,
		// so that whoever returns knows the container is gone.
		done := c.removed
		c.mu.Unlock()
		select {
		case <-done:
			return c.removeErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.removed = make(chan struct{})
	stopWatch, release := c.stopWatch, c.release
	c.mu.Unlock()
	defer close(c.removed)
	if stopWatch != nil {
		stopWatch()
	}
	c.runnersMu.Lock()
	runners := make([]*userRunner, 0, len(c.runners))
	for _, r := range c.runners {
		runners = append(runners, r)
	}
	c.runnersMu.Unlock()
	for _, r := range runners {
		// Closing the connection ends a request in flight; its holder then
		// lets go of the lock.
		if d := r.peek(); d != nil {
			d.abort()
		}
	}
	if err := c.engine.forceRemove(ctx, c.ID); err != nil {
		c.removeErr = fmt.Errorf("remove container %s on %s: %w", c.Short(), c.engine.name, err)
	}
	if release != nil {
		release()
	}
	if c.proxyDir != "" {
		os.RemoveAll(c.proxyDir)
	}
	return c.removeErr
}

// proxyMount adds spec's proxy socket directory to host: a fresh host
// directory, searchable by the container's users (its socket is made
// writable by whoever listens on it).
func (e *Engine) proxyMount(spec Spec, host *container.HostConfig) (string, error) {
	if !spec.ProxySocket {
		return "", nil
	}
	if !strings.HasPrefix(e.cli.DaemonHost(), "unix://") {
		return "", fmt.Errorf("engine %s is not on this machine (%s): an agent command's proxy socket can be mounted only by the local engine", e.name, e.cli.DaemonHost())
	}
	dir, err := os.MkdirTemp("", "evalctl-proxy-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("proxy socket directory: %w", err)
	}
	host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: dir, Target: ProxyMount})
	return dir, nil
}

// DefaultMaxOutput caps each captured stream of a command.
const DefaultMaxOutput = 1 << 20

// TruncationMark is appended to a captured stream that hit its cap.
const TruncationMark = "\n[... output truncated by evalctl ...]\n"

// ExecOptions configure one command.
type ExecOptions struct {
	// Timeout bounds the command; zero means one minute.
	Timeout time.Duration
	// Dir is the working directory; empty means /workspace.
	Dir string
	// Env is added to the container's environment.
	Env []string
	// Stdin, when set, is copied to the command's standard input.
	Stdin io.Reader
	// MaxOutput caps each of stdout and stderr; zero means DefaultMaxOutput.
	MaxOutput int
	// User overrides the user (default the image's uid 1000, CommandUser;
	// HarnessUser for the grader's own processes). Each user has a command
	// runner of its own.
	User string
	// Detach starts the command in a session of its own and returns at
	// once (exit status 0 when it started) without waiting for it or
	// capturing its output; it runs until it ends, its user's processes
	// are killed (KillAll for CommandUser) or the container goes. Only
	// through a runner.
	Detach bool
	// NoRunner makes the command a container runtime exec (docker exec)
	// instead of going through the container's command runner.
	NoRunner bool
	// Preload names Python modules for the user's runner to keep imported
	// in a warm interpreter: the first command that names them starts it
	// (it imports them while this and later commands run), and a later
	// `python3 -I -B SCRIPT ...` command that names the same modules runs
	// in a fork of it, as if started afresh but without importing them
	// again (pytest costs a quarter of a second to import). Any other
	// command, or one the warm interpreter cannot take, runs as usual.
	// Only through a runner; docs/sandbox.md says what differs.
	Preload []string
}

// ExecResult is what a command did. A failing command is a result, not an
// error; an error from Exec means the sandbox itself failed.
type ExecResult struct {
	ExitCode        int
	Stdout, Stderr  []byte
	StdoutTruncated bool
	StderrTruncated bool
	// StdoutBytes and StderrBytes count everything the command wrote,
	// including what the caps discarded.
	StdoutBytes, StderrBytes int64
	// TimedOut is true when the command overran its timeout and was killed.
	TimedOut bool
	// OOMKilled is true when the kernel's OOM killer killed a process of the
	// container while the command ran.
	OOMKilled bool
	Duration  time.Duration
}

// Exit codes GNU timeout uses for a command it stopped.
const (
	exitTimeoutTerm = 124
	exitKilled      = 137
)

// killGrace is how long after its timeout a command may take to die before
// evalctl kills every process of the sandbox user, and then the container.
const killGrace = 2 * time.Second

// Exec runs cmd in the container under the image's wrapper
// (/opt/evalctl/exec: timeout(1) in a process group of its own, and the
// group killed when the command ends), so that a command which overruns is
// really stopped inside the container (the Engine API cannot kill an exec'd
// process) and none outlives its exec. If that fails, every process of the
// command user is killed, and as the last resort the container itself.
func (c *Container) Exec(ctx context.Context, cmd []string, opt ExecOptions) (*ExecResult, error) {
	if len(cmd) == 0 {
		return nil, errors.New("exec: empty command")
	}
	if err := c.engine.barrier(); err != nil {
		return nil, err
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	max := opt.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	if !opt.NoRunner {
		res, ok, err := c.execViaRunner(ctx, cmd, opt, timeout, max)
		if ok {
			if err == nil && (res.ExitCode == exitKilled || res.ExitCode > 128) {
				res.OOMKilled = c.sawOOMKill(context.WithoutCancel(ctx))
			}
			return res, err
		}
	}
	if opt.Detach {
		return nil, fmt.Errorf("exec %s in %s: no command runner to detach it", cmd[0], c.Short())
	}
	return c.execDirect(ctx, cmd, opt, timeout, max)
}

// execDirect runs cmd through the engine's exec API, for a container
// without a command runner: timeout(1) in the image bounds it, and the
// engine's exec state tells when it ended.
func (c *Container) execDirect(ctx context.Context, cmd []string, opt ExecOptions, timeout time.Duration, max int) (*ExecResult, error) {
	secs := strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64)
	full := append([]string{"/opt/evalctl/exec", secs}, cmd...)
	user := opt.User
	if user == "" {
		user = commandUser
	}
	dir := opt.Dir
	if dir == "" {
		dir = "/workspace"
	}
	cli := c.engine.cli
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	created, err := cli.ContainerExecCreate(cctx, c.ID, container.ExecOptions{
		Cmd: full, AttachStdout: true, AttachStderr: true, AttachStdin: opt.Stdin != nil,
		WorkingDir: dir, Env: opt.Env, User: user,
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("exec %s in %s: %w", cmd[0], c.Short(), err)
	}
	resp, err := cli.ContainerExecAttach(cctx, created.ID, container.ExecAttachOptions{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("exec %s in %s: attach: %w", cmd[0], c.Short(), err)
	}
	defer resp.Close()
	if opt.Stdin != nil {
		go func() {
			io.Copy(resp.Conn, opt.Stdin)
			resp.CloseWrite()
		}()
	}
	stdout, stderr := &capped{max: max}, &capped{max: max}
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, resp.Reader)
		done <- err
	}()

	res := &ExecResult{}
	if err := c.waitExec(ctx, created.ID, user, cmd[0], timeout, resp, done, res); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), apiTimeout)
	ins, err := cli.ContainerExecInspect(ictx, created.ID)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("exec %s in %s: inspect: %w", cmd[0], c.Short(), err)
	}
	if ins.Running {
		// Still running after everything above: only the container's death
		// can stop it.
		c.engine.cli.ContainerKill(context.WithoutCancel(ctx), c.ID, "KILL")
		return nil, fmt.Errorf("exec %s in %s: command could not be stopped; container killed", cmd[0], c.Short())
	}
	res.ExitCode = ins.ExitCode
	if (res.ExitCode == exitTimeoutTerm || res.ExitCode == exitKilled) && res.Duration >= timeout {
		res.TimedOut = true
	}
	res.Stdout, res.StdoutTruncated, res.StdoutBytes = stdout.result()
	res.Stderr, res.StderrTruncated, res.StderrBytes = stderr.result()
	if res.ExitCode == exitKilled || res.ExitCode > 128 {
		res.OOMKilled = c.sawOOMKill(context.WithoutCancel(ctx))
	}
	return res, nil
}

// waitExec waits until the exec's output ends, its time is up (then it
// kills the user's processes, and the container if they outlive that), or
// ctx ends; res.TimedOut says which.
func (c *Container) waitExec(ctx context.Context, execID, user, name string, timeout time.Duration, resp types.HijackedResponse, done <-chan error, res *ExecResult) error {
	cli := c.engine.cli
	deadline := time.NewTimer(timeout + killGrace)
	defer deadline.Stop()
	// An orphan that keeps the output pipe open (`sleep 600 &`) would hold
	// the stream past the command's exit; poll the exec's state to notice.
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	exitedAt := time.Time{}
wait:
	for {
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("exec %s in %s: read output: %w", name, c.Short(), err)
			}
			break wait
		case <-ctx.Done():
			c.killUserAs(context.WithoutCancel(ctx), user)
			return fmt.Errorf("exec %s in %s: %w", name, c.Short(), ctx.Err())
		case <-deadline.C:
			// timeout(1) should have acted by now; make sure.
			res.TimedOut = true
			c.killUserAs(context.WithoutCancel(ctx), user)
			select {
			case <-done:
			case <-time.After(killGrace):
				resp.Close()
				c.engine.cli.ContainerKill(context.WithoutCancel(ctx), c.ID, "KILL")
				return fmt.Errorf("exec %s in %s: command outlived its timeout and the kill; container killed", name, c.Short())
			}
			break wait
		case <-poll.C:
			ictx, cancel := context.WithTimeout(ctx, apiTimeout)
			ins, err := cli.ContainerExecInspect(ictx, execID)
			cancel()
			if err == nil && !ins.Running {
				if exitedAt.IsZero() {
					exitedAt = time.Now()
				} else if time.Since(exitedAt) > 500*time.Millisecond {
					resp.Close() // orphans hold the pipe; stop reading
					<-done
					break wait
				}
			}
		}
	}
	return nil
}

// Users inside the container: commands run as CommandUser (the agent,
// and in a grading container everything of the answer's); the grader's
// own processes (test runners, report writers) run as HarnessUser, which
// the answer's processes can neither signal nor trace nor write to; PID 1
// and its keeper run as keeperUser, so that killing every process of
// CommandUser (kill -9 -1) can never stop the container.
const (
	CommandUser = "1000:1000"
	HarnessUser = "1001:1001"
	keeperUser  = "65534:65534"
	commandUser = CommandUser
)

// KillAll kills every process the sandbox's commands left running (daemons
// that escaped their command's process group), so the next command starts
// clean.
func (c *Container) KillAll(ctx context.Context) {
	ur := c.runnerFor(commandUser)
	ur.mu.Lock()
	defer ur.mu.Unlock()
	// The command runner does it in a few milliseconds and survives (a
	// runtime exec costs a quarter of a second); a runner that does not
	// answer (stopped or killed by a command) is forgotten, and a runtime
	// exec kills everything, the runner included.
	r := ur.d
	if r != nil && !r.broken {
		resp, err := r.run(ctx, execdRequest{KillAll: true}, 15*time.Second)
		if err == nil && resp.Error == "" {
			return
		}
	}
	if r != nil {
		r.close()
		ur.setD(nil)
	}
	c.killUser(ctx)
}

// killUser kills every process of the command user: kill(-1) reaches every
// process the caller may signal, which is exactly that user's.
func (c *Container) killUser(ctx context.Context) { c.killUserAs(ctx, commandUser) }

// killUserAs kills every process of user (see killUser).
func (c *Container) killUserAs(ctx context.Context, user string) {
	kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ex, err := c.engine.cli.ContainerExecCreate(kctx, c.ID, container.ExecOptions{Cmd: []string{"kill", "-9", "-1"}, User: user, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return
	}
	// Wait until the kill has really run: a kill still pending when the
	// next command starts would kill that command instead.
	resp, err := c.engine.cli.ContainerExecAttach(kctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Reader)
	resp.Close()
	for kctx.Err() == nil {
		ins, err := c.engine.cli.ContainerExecInspect(kctx, ex.ID)
		if err != nil || !ins.Running {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sawOOMKill reports whether the container's memory cgroup counted a new
// OOM kill since the last check (cgroup v2 memory.events or v1
// memory.oom_control, both expose "oom_kill N").
func (c *Container) sawOOMKill(ctx context.Context) bool {
	out, err := c.Exec(ctx, []string{"sh", "-c", "cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null"}, ExecOptions{Timeout: 5 * time.Second, NoRunner: true})
	if err != nil {
		return false
	}
	n := -1
	for _, line := range strings.Split(string(out.Stdout), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "oom_kill" {
			if v, err := strconv.Atoi(f[1]); err == nil {
				n = v
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > c.oomKills {
		c.oomKills = n
		return true
	}
	return false
}

// capped keeps the first max bytes written to it and counts the rest, so a
// flood of output costs no memory.
type capped struct {
	buf   bytes.Buffer
	max   int
	total int64
}

func (w *capped) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.max - w.buf.Len(); room > 0 {
		if len(p) > room {
			w.buf.Write(p[:room])
		} else {
			w.buf.Write(p)
		}
	}
	return len(p), nil
}

func (w *capped) result() ([]byte, bool, int64) {
	if w.total > int64(w.buf.Len()) {
		out := append(w.buf.Bytes(), TruncationMark...)
		return out, true, w.total
	}
	return w.buf.Bytes(), false, w.total
}

// EngineName names the engine the container runs on (see Engine.Name).
func (c *Container) EngineName() string { return c.engine.name }

// EngineLost reports whether the container's engine stopped answering (it
// pings the engine): the caller's error is then the engine's, not the
// command's, and wrapping ErrEngineLost lets callers retry elsewhere.
func (c *Container) EngineLost(ctx context.Context) bool { return !c.engine.Alive(ctx) }

// Drained says, without asking the engine, whether it was drained (found
// silent, or refused as holding another image): nothing more of the run's
// goes to it.
func (c *Container) Drained() bool { return c.engine.Lost() }
