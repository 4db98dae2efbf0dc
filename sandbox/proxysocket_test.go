package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// reachProbe tries, as the agent would, every way out of the container:
// the proxy through the forwarder (which must work), a listener of the
// host on each of its addresses, the Docker socket, and the internet. It
// prints one "name ok|refused: why" line per try, and the network
// interfaces the container has.
const reachProbe = `import socket, sys, urllib.request
def tcp(name, host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        print(name, "ok")
    except OSError as e:
        print(name, "refused:", e)
try:
    urllib.request.urlopen("http://127.0.0.1:4000/v1/models", timeout=5).read()
    print("proxy ok")
except OSError as e:
    print("proxy refused:", e)
for i, h in enumerate(sys.argv[2:]):
    tcp("host%d" % i, h, int(sys.argv[1]))
tcp("internet", "1.1.1.1", 53)
tcp("internet-name", "example.com", 80)
for path in ("/var/run/docker.sock", "/run/docker.sock"):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); print("docker ok")
    except OSError as e:
        print("docker refused:", e)
print("interfaces", " ".join(sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:])))
`

// TestProxySocketIsTheOnlyWayOut: a container started with a proxy socket
// reaches a server listening on it through the forwarder on its own
// loopback, and nothing else: not a listener of the host (on any of the
// host's addresses), not the Docker socket, not the internet; its only
// network interface is the loopback, so no other container is reachable
// either.
func TestProxySocketIsTheOnlyWayOut(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{ProxySocket: true})
	sock := c.ProxySocket()
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o666)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"data":[]}`) })}
	go srv.Serve(ln)
	defer srv.Close()
	// A listener of the host on every address, which the probe must not reach.
	host, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			conn, err := host.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := host.Addr().(*net.TCPAddr).Port
	addrs := []string{"172.17.0.1", "host.docker.internal"}
	if ifs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
				addrs = append(addrs, ipn.IP.String())
			}
		}
	}
	ctx := context.Background()
	if _, err := c.Exec(ctx, []string{"python3", "/opt/evalctl/forward.py", "4000", sandbox.ProxyMount + "/proxy.sock"}, sandbox.ExecOptions{Detach: true, User: sandbox.HarnessUser}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.Exec(ctx, []string{"python3", "/opt/evalctl/forward.py", "--ready", "4000"}, sandbox.ExecOptions{Timeout: 20 * time.Second}); err != nil || res.ExitCode != 0 {
		t.Fatalf("forwarder not ready: %v %+v", err, res)
	}
	res, err := c.Exec(ctx, append([]string{"python3", "-c", reachProbe, fmt.Sprint(port)}, addrs...), sandbox.ExecOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	t.Logf("probe:\n%s%s", out, res.Stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4+len(addrs) {
		t.Fatalf("probe incomplete (exit %d):\n%s%s", res.ExitCode, out, res.Stderr)
	}
	for _, l := range lines {
		name, rest, _ := strings.Cut(l, " ")
		switch {
		case name == "proxy" && rest != "ok":
			t.Errorf("the proxy is not reachable through the forwarder: %s", rest)
		case name == "interfaces" && rest != "lo":
			t.Errorf("the container has network interfaces besides the loopback: %s", rest)
		case name != "proxy" && name != "interfaces" && rest == "ok":
			t.Errorf("%s reachable from the container", name)
		}
	}
	// The socket's directory is the container's alone, and goes with it.
	c.Remove(ctx)
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("proxy socket directory left after removal: %v", err)
	}
}
