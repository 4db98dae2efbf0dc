package sandboxtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
)

// Dockerd is the Debian daemon the extra test engines run.
const Dockerd = "/usr/sbin/dockerd"

// ExtraEngine is a Docker Engine a test started for itself.
type ExtraEngine struct {
	// Host is its address (tcp://127.0.0.N:PORT).
	Host string
	// TLSDir holds the client's ca.pem, cert.pem and key.pem (empty
	// without TLS).
	TLSDir string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// ExtraOptions tune StartEngine.
type ExtraOptions struct {
	// TLS makes the engine verify client certificates signed by a CA the
	// test generates.
	TLS bool
}

// nextAddr hands each extra engine of this test binary its own loopback
// address (127.0.0.2, 127.0.0.3, ...), offset by the process ID so that two
// test binaries rarely pick the same one (the port is free-picked anyway).
var nextAddr atomic.Int32

// StartEngine starts an extra Docker Engine with Debian's dockerd for the
// test: its own data root, exec root and pid file under a temporary
// directory, listening on its own loopback address, with no bridge, no
// iptables and an empty configuration file (sandboxes have no network). It
// waits until /_ping answers and stops the engine (SIGTERM, then SIGKILL
// after a grace) and removes its data root when the test ends. The storage
// driver is the shared engine's, which works on this host.
//
// Skipped under -short, like Engine.
func StartEngine(t testing.TB, opts ExtraOptions) *ExtraEngine {
	t.Helper()
	if testing.Short() {
		t.Skip("needs dockerd: skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("starting a Docker Engine needs root")
	}
	if _, err := os.Stat(Dockerd); err != nil {
		t.Fatalf("extra engine: %s missing (apt-get install docker.io): %v", Dockerd, err)
	}
	shared, _ := Engine(t)
	driver, err := shared.StorageDriver(context.Background())
	if err != nil {
		t.Fatalf("extra engine: %v", err)
	}
	// Short paths: containerd's socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "evd")
	if err != nil {
		t.Fatal(err)
	}
	n := 2 + (int32(os.Getpid())*7+nextAddr.Add(1))%250
	ip := "127.0.0." + strconv.Itoa(int(n))
	port := freePort(t, ip)
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	e := &ExtraEngine{dir: dir, exited: make(chan struct{})}
	cfg := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{
		"--config-file", cfg,
		"--data-root", filepath.Join(dir, "data"),
		"--exec-root", filepath.Join(dir, "x"),
		"--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--bridge=none", "--iptables=false", "--ip-masq=false",
		"--storage-driver", driver,
		"--cgroup-parent", "evalctl-test-" + filepath.Base(dir),
	}
	if opts.TLS {
		srv, cli := filepath.Join(dir, "server"), filepath.Join(dir, "client")
		if err := writeCerts(srv, cli, ip); err != nil {
			t.Fatalf("extra engine: certificates: %v", err)
		}
		args = append(args, "--tlsverify", "--tlscacert", filepath.Join(srv, "ca.pem"),
			"--tlscert", filepath.Join(srv, "cert.pem"), "--tlskey", filepath.Join(srv, "key.pem"))
		e.TLSDir = cli
	}
	args = append(args, "-H", "tcp://"+addr)
	e.Host = "tcp://" + addr
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	e.cmd = exec.Command(Dockerd, args...)
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	// A test binary killed by its timeout runs no cleanup: the engine
	// goes with it (SIGTERM, so it unmounts what it can).
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("extra engine: start dockerd: %v", err)
	}
	go func() { e.cmd.Wait(); logf.Close(); close(e.exited) }()
	t.Cleanup(func() { e.stop(t) })
	if err := e.waitPing(opts.TLS, 60*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
		t.Fatalf("extra engine at %s: %v\n%s", e.Host, err, tail(log, 2000))
	}
	return e
}

// Options are the sandbox.Connect options that reach the engine.
func (e *ExtraEngine) Options(name string) sandbox.ConnectOptions {
	return sandbox.ConnectOptions{Name: name, Host: e.Host, TLSDir: e.TLSDir}
}

// Connect connects to the engine and closes the connection when the test
// ends.
func (e *ExtraEngine) Connect(t testing.TB, name string) *sandbox.Engine {
	t.Helper()
	return connect(t, e.Options(name))
}

// connect connects as o says and closes the connection when the test ends.
func connect(t testing.TB, o sandbox.ConnectOptions) *sandbox.Engine {
	t.Helper()
	eng, err := sandbox.Connect(context.Background(), o)
	if err != nil {
		t.Fatalf("connect to engine %s at %s: %v", o.Name, o.Host, err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// Kill kills the engine's dockerd with SIGKILL (its containers' processes
// stay behind until the cleanup), as a crashed machine would stop answering.
func (e *ExtraEngine) Kill() {
	e.cmd.Process.Signal(syscall.SIGKILL)
	<-e.exited
}

// stop terminates dockerd (SIGTERM, SIGKILL after 20 s), kills what its
// containerd left, and removes the data root.
func (e *ExtraEngine) stop(t testing.TB) {
	e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(20 * time.Second):
		e.cmd.Process.Signal(syscall.SIGKILL)
		<-e.exited
	}
	// dockerd's containerd and shims live in its process group (Setpgid);
	// after a SIGKILL they may linger.
	syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	killUnder(e.dir)
	// Mounts under the data root (overlay layers, tmpfs volumes) go first.
	exec.Command("sh", "-c", "grep -o ' "+e.dir+"[^ ]*' /proc/self/mounts | sort -r | xargs -r -n1 umount -l").Run()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := os.RemoveAll(e.dir)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("extra engine: remove %s: %v", e.dir, err)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// killUnder kills processes whose command line names dir (the containerd
// shims of a killed engine, which leave its process group).
func killUnder(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), dir) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func (e *ExtraEngine) waitPing(useTLS bool, within time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	scheme := "http"
	if useTLS {
		cert, err := tls.LoadX509KeyPair(filepath.Join(e.TLSDir, "cert.pem"), filepath.Join(e.TLSDir, "key.pem"))
		if err != nil {
			return err
		}
		caPEM, err := os.ReadFile(filepath.Join(e.TLSDir, "ca.pem"))
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}
		scheme = "https"
	}
	url := scheme + "://" + e.Host[len("tcp://"):] + "/_ping"
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-e.exited:
			return fmt.Errorf("dockerd exited before answering")
		default:
		}
		resp, err := hc.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/_ping: %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer to /_ping within %v: %v", within, last)
}

func freePort(t testing.TB, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("extra engine: no free port on %s: %v", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// writeCerts writes a fresh CA, a server certificate for ip and a client
// certificate, in docker's layout (ca.pem, cert.pem, key.pem per side).
func writeCerts(srvDir, cliDir, ip string) error {
	for _, d := range []string{srvDir, cliDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "evalctl test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	leaf := func(dir string, serial int64, tmpl *x509.Certificate) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		files := map[string]*pem.Block{
			"ca.pem":   {Type: "CERTIFICATE", Bytes: caDER},
			"cert.pem": {Type: "CERTIFICATE", Bytes: der},
			"key.pem":  {Type: "EC PRIVATE KEY", Bytes: keyDER},
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
				return err
			}
		}
		return nil
	}
	if err := leaf(srvDir, 2, &x509.Certificate{Subject: pkix.Name{CommonName: ip}, IPAddresses: []net.IP{net.ParseIP(ip)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return err
	}
	return leaf(cliDir, 3, &x509.Certificate{Subject: pkix.Name{CommonName: "evalctl test client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}
