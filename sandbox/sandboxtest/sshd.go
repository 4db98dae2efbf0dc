package sandboxtest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
)

// Sshd is the OpenSSH server StartSSH runs (Debian's openssh-server).
const Sshd = "/usr/sbin/sshd"

// SSHServer is an OpenSSH server a test started for itself, through which
// an engine is reached as over ssh://: `ssh host docker system dial-stdio`.
type SSHServer struct {
	// Host is the engine's address: ssh://root@127.0.0.N:PORT/SOCKET.
	Host string
	// Config is the ssh_config file that reaches it: the test's key and
	// the server's host key as the one known host.
	Config string
}

// StartSSH starts sshd for the test: its own loopback address and port,
// host key and the one client key it accepts (for root, as the tests
// run), generated under a temporary directory. Its sessions run the
// docker CLI against the engine whose unix socket is socket. The server
// stops when the test ends; a test binary killed by its timeout takes it
// along.
//
// Skipped under -short, like Engine; needs root, the docker CLI and sshd
// (apt-get install openssh-server; 'make setup-test' installs it).
func StartSSH(t testing.TB, socket string) *SSHServer {
	t.Helper()
	requireSSH(t)
	dir, err := os.MkdirTemp("", "evs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// sshd's privilege separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	ip := "127.0.0." + strconv.Itoa(int(2+(int32(os.Getpid())*7+nextAddr.Add(1))%250))
	port := freePort(t, ip)
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	s, sshdConfig := writeSSHFiles(t, dir, ip, port, socket)
	runSshd(t, dir, sshdConfig, addr)
	return s
}

// requireSSH skips the test where sshd cannot be started (under -short,
// not root) and fails it where a tool it needs is missing, naming the
// package that provides it.
func requireSSH(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs sshd: skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("starting sshd needs root")
	}
	for _, bin := range []string{Sshd, "ssh", "ssh-keygen", "docker"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("ssh engine: %s missing (apt-get install openssh-server openssh-client; the docker CLI runs on the ssh side): %v", bin, err)
		}
	}
}

// writeSSHFiles generates under dir the host key, the one client key the
// server accepts, the server's and the client's configuration and the
// client's known_hosts (the host key pinned at ip:port). It returns the
// server as clients reach it and the sshd_config path.
func writeSSHFiles(t testing.TB, dir, ip string, port int, socket string) (*SSHServer, string) {
	t.Helper()
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	key := func(name string) {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "evalctl-test", "-f", filepath.Join(dir, name)).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh engine: ssh-keygen: %v: %s", err, out)
		}
	}
	key("host_key")
	key("client_key")
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	write("authorized_keys", read("client_key.pub")+"\n")
	sshdConfig := write("sshd_config", fmt.Sprintf(`ListenAddress %s
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
`, addr, filepath.Join(dir, "host_key"), filepath.Join(dir, "sshd.pid"), filepath.Join(dir, "authorized_keys")))
	known := write("known_hosts", fmt.Sprintf("[%s]:%d %s\n", ip, port, read("host_key.pub")))
	s := &SSHServer{
		Host: "ssh://root@" + addr + socket,
		Config: write("ssh_config", fmt.Sprintf(`Host *
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
  BatchMode yes
`, filepath.Join(dir, "client_key"), known)),
	}
	return s, sshdConfig
}

// runSshd starts sshd on sshdConfig in its own process group (stopped,
// with the sessions it forked, when the test ends or its binary dies)
// and waits for its banner at addr; a server that never greets fails the
// test with the tail of its log.
func runSshd(t testing.TB, dir, sshdConfig, addr string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Sshd, "-D", "-e", "-f", sshdConfig)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatalf("ssh engine: start sshd: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		// The whole group: sshd and the sessions it forked.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	if err := waitBanner(addr, exited, 30*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
		t.Fatalf("ssh engine at %s: %v\n%s", addr, err, tail(log, 2000))
	}
}

// waitBanner waits until the server at addr greets with its SSH banner.
func waitBanner(addr string, exited <-chan struct{}, within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("sshd exited before answering")
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			line, rerr := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if rerr == nil && strings.HasPrefix(line, "SSH-2.0-") {
				return nil
			}
			err = fmt.Errorf("greeting %q: %v", line, rerr)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no SSH greeting within %v: %v", within, last)
}

// Options are the sandbox.Connect options that reach the engine.
func (s *SSHServer) Options(name string) sandbox.ConnectOptions {
	return sandbox.ConnectOptions{Name: name, Host: s.Host, SSHConfig: s.Config}
}

// Connect connects to the engine through the server and closes the
// connection when the test ends.
func (s *SSHServer) Connect(t testing.TB, name string) *sandbox.Engine {
	t.Helper()
	return connect(t, s.Options(name))
}
