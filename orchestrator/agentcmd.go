package orchestrator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/proxy"
	"github.com/evalctl/evalctl/sandbox"
)

// ErrAgentChanged stops a run whose agent command's program or version
// changed between attempts of one arm: its attempts would no longer pool.
var ErrAgentChanged = errors.New("the agent command changed during the run")

// proxyPort is where the forwarder listens on the agent container's own
// loopback (the container has no other network).
const proxyPort = 4000

// agentHome is the command user's home in an agent-command container: a
// volume, so that configuration files can be written there.
const agentHome = evalctl.AgentHome

// phaseRunner is what runs an attempt's phases: the built-in loop
// (*agent.Loop) or an agent command.
type phaseRunner interface {
	RunPhase(ctx context.Context, phase int, prompt string) (evalctl.Turn, error)
	Measurements() *evalctl.Measurements
}

// commandAgent runs an arm's agent command in the attempt's container,
// phase after phase, behind its recording proxy.
type commandAgent struct {
	cmd   *evalctl.AgentCommand
	box   commandBox
	proxy *proxy.Proxy
	srv   *http.Server
	rec   *evalctl.AgentRecord
	vars  evalctl.AgentVars
	wall  time.Duration
	used  time.Duration
	files map[string]string // rendered configuration files
}

// startCommandAgent serves the attempt's proxy on the container's socket,
// starts the forwarder, identifies the agent and writes its
// configuration files.
// commandBox is what an agent command needs of its container: commands,
// the proxy's socket directory, and ending every process it left.
type commandBox interface {
	agent.Sandbox
	ProxySocket() string
	KillAll(ctx context.Context)
}

var _ commandBox = (*sandbox.Container)(nil)

func startCommandAgent(ctx context.Context, arm *Arm, box commandBox, pcfg proxy.Config) (*commandAgent, error) {
	sock := box.ProxySocket()
	if sock == "" {
		return nil, errors.New("agent command: the container has no proxy socket")
	}
	px, err := proxy.New(pcfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", sock)
	if err == nil {
		err = os.Chmod(sock, 0o666)
	}
	if err != nil {
		return nil, fmt.Errorf("agent command: proxy socket: %w", err)
	}
	c := &commandAgent{cmd: arm.Agent, box: box, proxy: px, srv: &http.Server{Handler: px, ReadHeaderTimeout: time.Minute}, wall: seconds(*arm.Budgets.WallSeconds)}
	go c.srv.Serve(ln)
	c.vars = evalctl.AgentVars{PromptFile: evalctl.AgentPromptFile, Model: arm.Endpoint.Model, BaseURL: fmt.Sprintf("http://127.0.0.1:%d/v1", proxyPort),
		MaxTokens: arm.MaxTokens, GeneratedTokens: *arm.Budgets.GeneratedTokens, ToolCalls: *arm.Budgets.ToolCalls, WallSeconds: *arm.Budgets.WallSeconds}
	if err := c.setup(ctx); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *commandAgent) setup(ctx context.Context) error {
	port := strconv.Itoa(proxyPort)
	if _, err := c.box.Exec(ctx, []string{"python3", "/opt/evalctl/forward.py", port, sandbox.ProxyMount + "/proxy.sock"}, sandbox.ExecOptions{Detach: true, User: sandbox.HarnessUser}); err != nil {
		return fmt.Errorf("agent command: start the proxy forwarder: %w", err)
	}
	// The forwarder runs as the harness user, out of the agent's reach; it
	// lives until that user's runner runs its next command (which kills
	// every other process of the user), so nothing else runs as it here.
	if _, err := c.run(ctx, []string{"python3", "/opt/evalctl/forward.py", "--ready", port}, nil, 20*time.Second, ""); err != nil {
		return fmt.Errorf("agent command: %w", err)
	}
	c.rec = &evalctl.AgentRecord{ConfigSHA256: map[string]string{}, Phases: []evalctl.AgentPhase{}}
	out, err := c.run(ctx, []string{"sh", "-c", `p=$(command -v "$1") && sha256sum "$(readlink -f "$p")"`, "sh", c.cmd.Command[0]}, nil, time.Minute, "")
	if err != nil {
		return fmt.Errorf("agent command: program %s: %w", c.cmd.Command[0], err)
	}
	c.rec.BinarySHA256, _, _ = strings.Cut(out, " ")
	args := c.cmd.VersionArgs
	if len(args) == 0 {
		args = []string{"--version"}
	}
	// The version text is what the program prints, whatever its status
	// (a program without a version flag prints its complaint, which still
	// identifies it).
	res, err := c.box.Exec(ctx, append([]string{c.cmd.Command[0]}, args...), sandbox.ExecOptions{Timeout: time.Minute, Env: []string{"HOME=" + agentHome}})
	if err != nil {
		return fmt.Errorf("agent command: its version: %w", err)
	}
	c.rec.Version = strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
	if res.ExitCode != 0 {
		c.rec.Version = fmt.Sprintf("(exit %d) %s", res.ExitCode, c.rec.Version)
	}
	_, _, files, err := c.cmd.Render(c.vars)
	if err != nil {
		return fmt.Errorf("agent command: %w", err)
	}
	c.files = files
	for path, content := range files {
		if err := c.write(ctx, path, content); err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(content))
		c.rec.ConfigSHA256[path] = hex.EncodeToString(sum[:])
	}
	return nil
}

// run runs a helper command and returns its trimmed output; a failing
// command is an error.
func (c *commandAgent) run(ctx context.Context, cmd []string, stdin io.Reader, timeout time.Duration, user string) (string, error) {
	res, err := c.box.Exec(ctx, cmd, sandbox.ExecOptions{Timeout: timeout, Stdin: stdin, User: user, Env: []string{"HOME=" + agentHome}})
	if err != nil {
		return "", err
	}
	out := strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
	if res.ExitCode != 0 {
		return "", fmt.Errorf("%s exited %d: %s", cmd[0], res.ExitCode, out)
	}
	return out, nil
}

// write writes a file as the command user.
func (c *commandAgent) write(ctx context.Context, path, content string) error {
	_, err := c.run(ctx, []string{"sh", "-c", `mkdir -p "$(dirname "$1")" && cat > "$1"`, "sh", path}, strings.NewReader(content), time.Minute, "")
	if err != nil {
		return fmt.Errorf("agent command: write %s: %w", path, err)
	}
	return nil
}

// RunPhase runs the agent command once with the phase's prompt; the
// proxy decides the turn.
func (c *commandAgent) RunPhase(ctx context.Context, phase int, prompt string) (evalctl.Turn, error) {
	v := c.vars
	v.Prompt = prompt
	argv, env, _, err := c.cmd.Render(v)
	if err == nil && c.cmd.Prompt == evalctl.PromptFile {
		err = c.write(ctx, evalctl.AgentPromptFile, prompt)
	}
	var stdin io.Reader
	if c.cmd.Prompt == evalctl.PromptStdin {
		stdin = strings.NewReader(prompt)
	}
	stopped := c.proxy.Begin(ctx, phase, prompt)
	var res *sandbox.ExecResult
	var ended bool
	if err == nil {
		res, ended, err = c.exec(ctx, stopped, argv, env, stdin)
	}
	if ctx.Err() != nil {
		c.proxy.Abort(evalctl.TermWallTimeLimit)
		turn, _ := c.proxy.End(proxy.Exit{})
		return turn, ctx.Err()
	}
	x := proxy.Exit{Err: err}
	// A model call still in flight has lost its agent.
	if res != nil && res.TimedOut {
		c.proxy.Abort(evalctl.TermWallTimeLimit)
	} else {
		c.proxy.Abort(evalctl.TermAgentExited)
	}
	ap := evalctl.AgentPhase{Phase: phase}
	if res != nil && !ended {
		x.WallTime, ap.TimedOut = res.TimedOut, res.TimedOut
		if !res.TimedOut {
			x.Code, ap.ExitCode = &res.ExitCode, &res.ExitCode
		}
	}
	if res != nil {
		ap.OutputTail = tail(string(res.Stdout), 2000) + tail(string(res.Stderr), 2000)
		if c.cmd.Usage == "standin" {
			ap.ReportedPromptTokens, ap.ReportedCompletionTokens = standinUsage(string(res.Stdout))
		}
	}
	c.rec.Phases = append(c.rec.Phases, ap)
	turn, terr := c.proxy.End(x)
	c.used += time.Duration(turn.Seconds * float64(time.Second))
	// Nothing of the agent's outlives its phase.
	c.box.KillAll(context.WithoutCancel(ctx))
	return turn, terr
}

// exec runs the agent under what is left of the wall-time budget; ended is
// true when the proxy stopped the turn and the agent's processes were
// ended for it.
func (c *commandAgent) exec(ctx context.Context, stopped <-chan struct{}, argv, env []string, stdin io.Reader) (*sandbox.ExecResult, bool, error) {
	timeout := 7 * 24 * time.Hour
	if c.wall > 0 {
		timeout = c.wall - c.used
		if timeout <= 0 {
			return &sandbox.ExecResult{TimedOut: true}, false, nil
		}
	}
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stopped:
			cancel()
		case <-ectx.Done():
		}
	}()
	res, err := c.box.Exec(ectx, argv, sandbox.ExecOptions{Timeout: timeout, Stdin: stdin, Env: append([]string{"HOME=" + agentHome}, env...)})
	select {
	case <-stopped:
		return res, true, nil
	default:
	}
	return res, false, err
}

// Measurements are the server's figures of the proxied calls.
func (c *commandAgent) Measurements() *evalctl.Measurements { return c.proxy.Measurements() }

// finish checks the configuration files and closes the proxy. A nil
// agent (the built-in loop) has no record.
func (c *commandAgent) finish(ctx context.Context) *evalctl.AgentRecord {
	if c == nil {
		return nil // the built-in loop: no agent record
	}
	defer c.close()
	paths := make([]string, 0, len(c.files))
	for p := range c.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ok := true
	for _, p := range paths {
		out, err := c.run(ctx, []string{"sha256sum", "--", p}, nil, time.Minute, "")
		if err != nil && !strings.Contains(err.Error(), "No such file") {
			return c.rec // unknown: config_unchanged stays null
		}
		sum, _, _ := strings.Cut(out, " ")
		ok = ok && err == nil && sum == c.rec.ConfigSHA256[p]
	}
	c.rec.ConfigUnchanged = &ok
	return c.rec
}

func (c *commandAgent) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.srv.Shutdown(ctx)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

var standinUsageRE = regexp.MustCompile(`(?m)^usage: prompt_tokens=(\d+) completion_tokens=(\d+)$`)

// standinUsage reads the stand-in agent's usage line (its last); nil
// when it printed none.
func standinUsage(out string) (prompt, completion *int64) {
	m := standinUsageRE.FindAllStringSubmatch(out, -1)
	if m == nil {
		return nil, nil
	}
	p, _ := strconv.ParseInt(m[len(m)-1][1], 10, 64)
	c, _ := strconv.ParseInt(m[len(m)-1][2], 10, 64)
	return &p, &c
}

var _ phaseRunner = (*agent.Loop)(nil)

// agentSpec gives the agent containers of a plan with agent commands a
// proxy socket and a writable home for the agents' configuration.
func agentSpec(p *Plan, spec sandbox.Spec) sandbox.Spec {
	for _, a := range p.Arms {
		if a.Agent != nil {
			spec.ProxySocket = true
			spec.Volumes = append(spec.Volumes, agentHome)
			return spec
		}
	}
	return spec
}
