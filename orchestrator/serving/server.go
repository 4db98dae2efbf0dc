package serving

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evalctl/evalctl/orchestrator/model"
)

// StartOptions are what one start of a profile needs besides the profile.
type StartOptions struct {
	// LogPath receives the server's stdout and stderr; it is kept after the
	// server stops (a failed start's log is the diagnosis). Required.
	LogPath string
	// CtxSize overrides the profile's ctx_size (capacity probes).
	CtxSize int
	// Evalctl is the value of {{evalctl}}; "" means this executable.
	Evalctl string
	// Vars set the profile's declared variables (the rest keep their
	// defaults); a name the profile does not declare is an error.
	Vars map[string]string
	// HealthInterval is the polling period of the health wait; 0 means
	// 100 ms.
	HealthInterval time.Duration
}

// StartError says why a server did not become healthy. The log is kept at
// LogPath and its last lines are in LogTail, so a caller can record the
// server's own words.
type StartError struct {
	Profile string
	// Reason is one line: "exited with exit status 1 during startup",
	// "not healthy within 10m0s (last: 503 ...)".
	Reason string
	// ExitCode is the server's exit code when it exited; nil otherwise.
	ExitCode *int
	LogPath  string
	LogTail  string
	Err      error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("start %s: %s (server log kept at %s)", e.Profile, e.Reason, e.LogPath)
}

func (e *StartError) Unwrap() error { return e.Err }

// ErrNotHealthy is wrapped by a StartError whose server never answered its
// health check in time.
var ErrNotHealthy = errors.New("server not healthy in time")

// Server is a running model server started from a profile.
type Server struct {
	Profile *Profile
	// BaseURL is http://host:port, without a trailing slash.
	BaseURL string
	Port    int
	CtxSize int
	// Argv and Env are exactly what was run (Env: the profile's additions).
	Argv      []string
	Env       []string
	HashFiles []string
	LogPath   string
	PID       int
	StartedAt time.Time
	// ReadySeconds is the time from exec to the first healthy answer.
	ReadySeconds float64

	cmd      *exec.Cmd
	log      *os.File
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// Start runs the profile's server and waits until its health path answers
// 200; 503 (llama-server's "Loading model") and refused connections mean
// "still starting". On failure the process group is stopped and a
// *StartError is returned. Cancelling ctx during startup stops the server
// too; after Start returns, the caller owns the server and must Stop it
// (typically deferred, which also covers Ctrl-C: main's context ends, the
// command returns, the deferred Stop runs).
func Start(ctx context.Context, p *Profile, o StartOptions) (*Server, error) {
	if !supported {
		return nil, fmt.Errorf("start %s: starting model servers needs a Unix system", p.Name)
	}
	if o.LogPath == "" {
		return nil, fmt.Errorf("start %s: no log path", p.Name)
	}
	evalctl := o.Evalctl
	if evalctl == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("start %s: locate evalctl: %w", p.Name, err)
		}
		evalctl = exe
	}
	port := p.Port
	if port == 0 {
		var err error
		if port, err = freePort(p.Host); err != nil {
			return nil, fmt.Errorf("start %s: %w", p.Name, err)
		}
	}
	ctxSize := p.CtxSize
	if o.CtxSize > 0 {
		ctxSize = o.CtxSize
	}
	own, err := p.OwnVars(o.Vars)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	vars := Vars{Host: p.Host, Port: port, Model: p.Model, CtxSize: ctxSize, Evalctl: evalctl, ProfileDir: p.Dir, Own: own}
	argv, env, hashFiles, err := p.Resolve(vars)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o755); err != nil {
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	logf, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: server log: %w", p.Name, err)
	}
	fmt.Fprintf(logf, "# evalctl: %s starting %q\n", time.Now().UTC().Format(time.RFC3339Nano), argv)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = p.WorkDir
	if cmd.Dir == "" {
		cmd.Dir = p.Dir
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	s := &Server{
		Profile: p, Port: port, CtxSize: ctxSize, Argv: argv, Env: env, HashFiles: hashFiles,
		BaseURL: "http://" + net.JoinHostPort(httpHost(p.Host), fmt.Sprint(port)),
		LogPath: o.LogPath, cmd: cmd, log: logf, exited: make(chan struct{}),
	}
	s.StartedAt = time.Now().UTC()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, &StartError{Profile: p.Name, Reason: fmt.Sprintf("exec %s: %v", argv[0], err), LogPath: o.LogPath, Err: err}
	}
	s.PID = cmd.Process.Pid
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitHealthy(ctx, o.HealthInterval); err != nil {
		s.Stop(context.Background())
		var se *StartError
		if errors.As(err, &se) {
			se.LogTail = tail(o.LogPath, 4096)
		}
		return nil, err
	}
	s.ReadySeconds = time.Since(s.StartedAt).Seconds()
	return s, nil
}

func (s *Server) waitHealthy(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	timeout := time.Duration(s.Profile.StartupTimeout)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	client := model.New(model.Config{BaseURL: s.BaseURL, HealthPath: s.Profile.HealthPath, InfoTimeout: 2 * time.Second})
	last := "no answer yet"
	for {
		err := client.Health(ctx)
		if err == nil {
			return nil
		}
		// What an answer said is kept; a server not listening yet says
		// nothing.
		if me := (*model.Error)(nil); errors.As(err, &me) && me.Status != 0 {
			last = fmt.Sprintf("%d %s", me.Status, me.Message)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start %s: %w", s.Profile.Name, ctx.Err())
		case <-s.exited:
			se := &StartError{Profile: s.Profile.Name, LogPath: s.LogPath, Err: s.waitErr,
				Reason: fmt.Sprintf("exited during startup (%v)", s.waitErr)}
			if ee, ok := s.waitErr.(*exec.ExitError); ok {
				code := ee.ExitCode()
				se.ExitCode = &code
			}
			return se
		case <-deadline.C:
			return &StartError{Profile: s.Profile.Name, LogPath: s.LogPath, Err: ErrNotHealthy,
				Reason: fmt.Sprintf("not healthy within %s (last: %s)", timeout, last)}
		case <-tick.C:
		}
	}
}

// Exited is closed when the server process has exited, by Stop or by
// itself (a crash).
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitErr is how the process ended; meaningful once Exited is closed.
func (s *Server) ExitErr() error {
	select {
	case <-s.exited:
		return s.waitErr
	default:
		return nil
	}
}

// Stop ends the server's whole process group: SIGTERM, then SIGKILL after
// the profile's stop_timeout (or when ctx ends), then SIGKILL again to any
// member the leader left behind. It waits until the leader is reaped and
// the group is empty (bounded), and closes the log. It is safe to call
// more than once and after a crash.
func (s *Server) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Server) stop(ctx context.Context) error {
	defer s.log.Close()
	pgid := s.PID
	select {
	case <-s.exited:
	default:
		signalGroup(pgid, syscall.SIGTERM)
		grace := time.NewTimer(time.Duration(s.Profile.StopTimeout))
		select {
		case <-s.exited:
		case <-grace.C:
			fmt.Fprintf(s.log, "# evalctl: no exit %s after SIGTERM; SIGKILL\n", time.Duration(s.Profile.StopTimeout))
		case <-ctx.Done():
		}
		grace.Stop()
	}
	// Whatever the leader did, nothing of the group may survive it.
	signalGroup(pgid, syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("stop %s: process %d did not exit after SIGKILL", s.Profile.Name, s.PID)
	}
	for deadline := time.Now().Add(5 * time.Second); groupAlive(pgid) && !allZombies(pgid); {
		if time.Now().After(deadline) {
			return fmt.Errorf("stop %s: process group %d still has members after SIGKILL", s.Profile.Name, pgid)
		}
		signalGroup(pgid, syscall.SIGKILL)
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(s.log, "# evalctl: %s stopped (%v)\n", time.Now().UTC().Format(time.RFC3339Nano), s.waitErr)
	return nil
}

// allZombies reports whether every process left in the group has already
// exited and only waits to be reaped by its new parent (an init that is
// slow to reap is not a survivor).
func allZombies(pgid int) bool {
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(procs) == 0 {
		return false // no /proc: cannot tell, keep waiting
	}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		state, pg, ok := statFields(string(b))
		if ok && pg == pgid && state != "Z" && state != "X" {
			return false
		}
	}
	return true
}

// statFields returns the state and process group of a /proc/PID/stat line.
func statFields(stat string) (state string, pgrp int, ok bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	if _, err := fmt.Sscan(f[2], &pgrp); err != nil {
		return "", 0, false
	}
	return f[0], pgrp, true
}

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("pick a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// httpHost is the address a client uses for a listen host: a server bound
// to all interfaces is reached on loopback.
func httpHost(h string) string {
	switch h {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return h
}

// tail returns the last n bytes of a file, starting at a line boundary.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
