package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
)

// hostsFile is the file given to --sandbox-hosts.
type hostsFile struct {
	// Hosts are the engines, as in a plan's sandbox_hosts.
	Hosts []SandboxHost `yaml:"hosts"`
}

// LoadSandboxHosts reads a hosts file (--sandbox-hosts): the engines that
// run sandboxes, checked like a plan (field, line, how to fix).
func LoadSandboxHosts(file string) ([]SandboxHost, error) {
	var hf hostsFile
	doc, err := decodeYAML(file, &hf)
	if err != nil {
		return nil, err
	}
	if len(hf.Hosts) == 0 {
		return nil, &PlanError{File: file, Field: "hosts", Msg: "names no engine: list at least one (name, host, capacity)"}
	}
	if err := checkSandboxHosts(file, "hosts", doc.Line, hf.Hosts); err != nil {
		return nil, err
	}
	return hf.Hosts, nil
}

// checkSandboxHosts validates hosts and makes TLS directories absolute.
func checkSandboxHosts(file, field string, line func(string) int, hosts []SandboxHost) error {
	names := map[string]bool{}
	base := filepath.Dir(file)
	for i := range hosts {
		h := &hosts[i]
		path := fmt.Sprintf("%s[%d]", field, i)
		bad := func(sub, format string, a ...any) error {
			return &PlanError{File: file, Field: path + sub, Line: line(path + sub), Msg: fmt.Sprintf(format, a...)}
		}
		if h.Name == "" {
			return bad(".name", "is required: a name for the engine, used in records")
		}
		if names[h.Name] {
			return bad(".name", "%q names two engines: give each its own name", h.Name)
		}
		names[h.Name] = true
		if h.Capacity == 0 {
			h.Capacity = 1
		}
		if h.Host != "" {
			u, err := url.Parse(h.Host)
			if err != nil || (u.Scheme != "tcp" && u.Scheme != "ssh" && u.Scheme != "unix") {
				return bad(".host", "%q is not an engine address: write tcp://HOST:2376, ssh://USER@HOST or unix:///var/run/docker.sock", h.Host)
			}
			if h.TLSDir != "" && u.Scheme != "tcp" {
				return bad(".tls_dir", "goes with a tcp:// host only")
			}
			if h.SSHConfig != "" && u.Scheme != "ssh" {
				return bad(".ssh_config", "goes with an ssh:// host only")
			}
		} else if h.TLSDir != "" {
			return bad(".tls_dir", "goes with a tcp:// host; the default engine needs none")
		} else if h.SSHConfig != "" {
			return bad(".ssh_config", "goes with an ssh:// host; the default engine needs none")
		}
		if h.TLSDir != "" && !filepath.IsAbs(h.TLSDir) {
			h.TLSDir = filepath.Join(base, h.TLSDir)
		}
		if h.SSHConfig != "" && !filepath.IsAbs(h.SSHConfig) {
			h.SSHConfig = filepath.Join(base, h.SSHConfig)
		}
	}
	return nil
}

// ConnectSandboxHosts connects to every engine of hosts and returns them as
// one pool. The engine named with an empty host is the local one and the
// image's source; when none is, local is the source and runs nothing. An
// engine that does not answer now is an error naming it.
func ConnectSandboxHosts(ctx context.Context, local *sandbox.Engine, hosts []SandboxHost, log io.Writer) (*sandbox.Hosts, error) {
	var pool []sandbox.Host
	var opened []*sandbox.Engine
	fail := func(err error) (*sandbox.Hosts, error) {
		for _, e := range opened {
			e.Close()
		}
		return nil, err
	}
	for _, h := range hosts {
		eng, err := sandbox.Connect(ctx, sandbox.ConnectOptions{Name: h.Name, Host: h.Host, TLSDir: h.TLSDir, SSHConfig: h.SSHConfig})
		if err != nil {
			return fail(fmt.Errorf("sandbox host %s: %w", h.Name, err))
		}
		opened = append(opened, eng)
		host := sandbox.Host{Engine: eng, Capacity: h.Capacity, Machine: h.Machine}
		if h.Host == "" {
			pool = append([]sandbox.Host{host}, pool...)
		} else {
			pool = append(pool, host)
		}
	}
	if len(pool) == 0 || hosts[indexOfLocal(hosts)].Host != "" {
		if local == nil {
			return fail(errors.New("sandbox hosts: no local engine to build the image on"))
		}
		pool = append([]sandbox.Host{{Engine: local, Capacity: 0}}, pool...)
	}
	h, err := sandbox.NewHosts(pool, log)
	if err != nil {
		return fail(err)
	}
	return h, nil
}

// indexOfLocal is the index of the entry naming the default engine, or 0.
func indexOfLocal(hosts []SandboxHost) int {
	for i, h := range hosts {
		if h.Host == "" {
			return i
		}
	}
	return 0
}

// withSandboxHosts makes opts.Engine a pool of the engines named by
// opts.SandboxHosts (a hosts file) or else the plan's, around the engine
// given (the image's source). With none named, opts is unchanged: one
// engine, as before.
func withSandboxHosts(ctx context.Context, opts Options, planHosts []SandboxHost) (Options, error) {
	hosts := opts.SandboxHosts
	if len(hosts) == 0 {
		hosts = planHosts
	}
	if len(hosts) == 0 {
		return opts, nil
	}
	if _, ok := opts.Engine.(*sandbox.Hosts); ok {
		return opts, nil // the caller built the pool
	}
	local, ok := opts.Engine.(*sandbox.Engine)
	if !ok {
		return opts, fmt.Errorf("sandbox hosts: the engine given is a %T, not one engine to build the image on", opts.Engine)
	}
	pool, err := ConnectSandboxHosts(ctx, local, hosts, opts.Progress)
	if err != nil {
		return opts, err
	}
	fmt.Fprintf(opts.Progress, "sandboxes on %d engine(s), %d container(s) at once\n", len(hosts), pool.Capacity())
	opts.Engine = pool
	opts.ownPool = pool
	return opts, nil
}

// closeHosts closes the engines of a pool the run connected itself.
func (r *runner) closeHosts() {
	if r.opts.ownPool != nil {
		r.opts.ownPool.Close()
	}
}

// ConnectGrader connects to the local Docker Engine, reuses (or builds)
// the sandbox image and returns a grader of conc grades at once on the
// engines hostsFile names ("": the local engine alone); done releases the
// engines. A mistake in the hosts file is a usage error naming its file,
// line and field.
func ConnectGrader(ctx context.Context, hostsFile string, conc int, log io.Writer) (g *grader.Grader, done func(), err error) {
	hosts, err := Request{HostsFile: hostsFile}.SandboxHosts()
	if err != nil {
		return nil, nil, err
	}
	eng, img, err := sandbox.ConnectImage(ctx, log)
	if err != nil {
		return nil, nil, err
	}
	if hostsFile == "" {
		return grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: conc}), func() { eng.Close() }, nil
	}
	pool, err := ConnectSandboxHosts(ctx, eng, hosts, log)
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	pool.UseImage(img)
	return grader.New(pool, img.Ref, img.ID, grader.Options{Concurrency: conc}), func() { pool.Close(); eng.Close() }, nil
}
