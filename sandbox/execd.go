package sandbox

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// execd is the connection to /opt/evalctl/execd, the command runner that
// lives in the container for as long as it is not killed: one container
// runtime exec for many commands. A command that kills it (kill -9 -1, say)
// only costs a restart on the next command.
type execd struct {
	conn   types.HijackedResponse
	lines  *bufio.Reader
	pipeW  *io.PipeWriter
	seq    int
	broken bool
}

type execdRequest struct {
	ID        int      `json:"id"`
	Argv      []string `json:"argv"`
	Dir       string   `json:"dir"`
	Env       []string `json:"env"`
	Timeout   float64  `json:"timeout"`
	MaxOutput int      `json:"max_output"`
	Stdin     *string  `json:"stdin"`
	// KillAll asks the runner to kill every other process of the command
	// user instead of running a command.
	KillAll bool `json:"kill_all,omitempty"`
	// Detach starts the command and answers at once (see ExecOptions).
	Detach bool `json:"detach,omitempty"`
	// Preload names the modules of the runner's warm interpreter (see
	// ExecOptions).
	Preload []string `json:"preload,omitempty"`
}

type execdResponse struct {
	ID          int     `json:"id"`
	Error       string  `json:"error"`
	ExitCode    int     `json:"exit_code"`
	Stdout      string  `json:"stdout"`
	Stderr      string  `json:"stderr"`
	StdoutBytes int64   `json:"stdout_bytes"`
	StderrBytes int64   `json:"stderr_bytes"`
	TimedOut    bool    `json:"timed_out"`
	Seconds     float64 `json:"seconds"`
}

// errExecdGone means the runner died under a command (the command killed
// it); the command's own outcome is unknown.
var errExecdGone = errors.New("evalctl's command runner in the sandbox was killed by the command")

// startExecd starts the runner in c as user; with preload, the runner
// starts its warm interpreter at once (see ExecOptions.Preload), before
// it greets.
func (c *Container) startExecd(ctx context.Context, user string, preload []string) (*execd, error) {
	cli := c.engine.cli
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	cmd := []string{"python3", "-I", "-u", "/opt/evalctl/execd"}
	if len(preload) > 0 {
		mods, err := json.Marshal(preload)
		if err != nil {
			return nil, err
		}
		cmd = append(cmd, "--preload", string(mods))
	}
	created, err := cli.ContainerExecCreate(cctx, c.ID, container.ExecOptions{
		Cmd: cmd, User: user,
		AttachStdin: true, AttachStdout: true, AttachStderr: true, WorkingDir: "/workspace",
	})
	if err != nil {
		return nil, fmt.Errorf("start command runner in %s: %w", c.Short(), err)
	}
	conn, err := cli.ContainerExecAttach(cctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("start command runner in %s: %w", c.Short(), err)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, io.Discard, conn.Reader)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	d := &execd{conn: conn, lines: bufio.NewReaderSize(pr, 1<<16), pipeW: pw}
	ready := make(chan error, 1)
	go func() {
		line, err := d.lines.ReadBytes('\n')
		if err == nil && string(line) != "{\"ready\": true}\n" {
			err = fmt.Errorf("unexpected greeting %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			d.close()
			return nil, fmt.Errorf("start command runner in %s: %w", c.Short(), err)
		}
	case <-time.After(30 * time.Second):
		d.close()
		return nil, fmt.Errorf("start command runner in %s: no greeting within 30s", c.Short())
	case <-ctx.Done():
		d.close()
		return nil, ctx.Err()
	}
	return d, nil
}

// peek and setD read and set the runner of a slot (Remove reads it without
// the slot's lock, to end a request in flight).
func (r *userRunner) peek() *execd {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	return r.d
}

func (r *userRunner) setD(d *execd) {
	r.dmu.Lock()
	r.d = d
	r.dmu.Unlock()
}

// abort closes the connection without taking the runner's lock: a request
// in flight fails, and its holder marks the runner broken.
func (d *execd) abort() {
	d.conn.Close()
	d.pipeW.CloseWithError(io.EOF)
}

func (d *execd) close() {
	d.broken = true
	d.conn.Close()
	d.pipeW.CloseWithError(io.EOF)
}

// run sends one request and waits for its answer, at most until deadline.
func (d *execd) run(ctx context.Context, req execdRequest, deadline time.Duration) (*execdResponse, error) {
	d.seq++
	req.ID = d.seq
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := d.conn.Conn.Write(append(line, '\n')); err != nil {
		d.close()
		return nil, errExecdGone
	}
	type answer struct {
		resp *execdResponse
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		raw, err := d.lines.ReadBytes('\n')
		if err != nil {
			got <- answer{nil, errExecdGone}
			return
		}
		var resp execdResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			got <- answer{nil, fmt.Errorf("command runner: bad answer: %w", err)}
			return
		}
		got <- answer{&resp, nil}
	}()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case a := <-got:
		if a.err != nil {
			d.close()
			return nil, a.err
		}
		if a.resp.ID != req.ID {
			d.close()
			return nil, fmt.Errorf("command runner: answer %d to request %d", a.resp.ID, req.ID)
		}
		return a.resp, nil
	case <-ctx.Done():
		d.close()
		return nil, ctx.Err()
	case <-timer.C:
		d.close()
		return nil, errExecdStuck
	}
}

var errExecdStuck = errors.New("command runner did not answer in time")

// execViaRunner runs cmd through the container's command runner, starting
// it if needed. ok is false when the runner cannot be used (then the caller
// falls back to a runtime exec).
func (c *Container) execViaRunner(ctx context.Context, cmd []string, opt ExecOptions, timeout time.Duration, max int) (*ExecResult, bool, error) {
	user := opt.User
	if user == "" {
		user = commandUser
	}
	ur := c.runnerFor(user)
	ur.mu.Lock()
	defer ur.mu.Unlock()
	runner := ur.d
	if runner == nil || runner.broken {
		d, err := c.startExecd(ctx, user, opt.Preload)
		if err != nil {
			if ctx.Err() != nil {
				return nil, true, ctx.Err()
			}
			return nil, false, nil
		}
		ur.setD(d)
		runner = d
	}
	req := execdRequest{Argv: cmd, Dir: opt.Dir, Env: opt.Env, Timeout: timeout.Seconds(), MaxOutput: max, Detach: opt.Detach, Preload: opt.Preload}
	if opt.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(opt.Stdin, MaxArchiveBytes))
		if err != nil {
			return nil, true, fmt.Errorf("exec %s in %s: read stdin: %w", cmd[0], c.Short(), err)
		}
		s := base64.StdEncoding.EncodeToString(data)
		req.Stdin = &s
	}
	start := time.Now()
	// The runner kills what a command left behind before it answers (a
	// fork bomb takes a while): allow for that beyond the command's time.
	resp, err := runner.run(ctx, req, timeout+killGrace+20*time.Second)
	switch {
	case err == nil && resp.Error == "":
	case ctx.Err() != nil:
		c.killUserAs(context.WithoutCancel(ctx), user)
		return nil, true, fmt.Errorf("exec %s in %s: %w", cmd[0], c.Short(), ctx.Err())
	case errors.Is(err, errExecdGone):
		// The command killed its own runner; what it did is unknown, so it
		// is reported as killed, like any process that dies by SIGKILL.
		msg := "\nevalctl: the command killed the sandbox's command runner (e.g. kill -9 -1); its output is lost\n"
		return &ExecResult{ExitCode: exitKilled, Stderr: []byte(msg), StderrBytes: int64(len(msg)), Duration: time.Since(start)}, true, nil
	case errors.Is(err, errExecdStuck):
		c.killUserAs(context.WithoutCancel(ctx), user)
		return &ExecResult{ExitCode: exitKilled, TimedOut: true, Duration: time.Since(start)}, true, nil
	default:
		if err == nil {
			err = errors.New(resp.Error)
		}
		return nil, true, fmt.Errorf("exec %s in %s: %w", cmd[0], c.Short(), err)
	}
	res := &ExecResult{ExitCode: resp.ExitCode, TimedOut: resp.TimedOut, Duration: time.Since(start),
		StdoutBytes: resp.StdoutBytes, StderrBytes: resp.StderrBytes}
	var derr error
	if res.Stdout, derr = base64.StdEncoding.DecodeString(resp.Stdout); derr != nil {
		return nil, true, fmt.Errorf("exec %s: bad stdout: %w", cmd[0], derr)
	}
	if res.Stderr, derr = base64.StdEncoding.DecodeString(resp.Stderr); derr != nil {
		return nil, true, fmt.Errorf("exec %s: bad stderr: %w", cmd[0], derr)
	}
	if res.StdoutBytes > int64(len(res.Stdout)) {
		res.Stdout, res.StdoutTruncated = append(res.Stdout, TruncationMark...), true
	}
	if res.StderrBytes > int64(len(res.Stderr)) {
		res.Stderr, res.StderrTruncated = append(res.Stderr, TruncationMark...), true
	}
	return res, true, nil
}
