package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestConformance runs the one backend suite against the local engine, a
// remote engine reached over TCP with TLS, the local engine reached over
// SSH (ssh://, the docker CLI's dial-stdio on the far side), and a pool of
// the local and the TLS one.
func TestConformance(t *testing.T) {
	local, img := sandboxtest.Engine(t)
	t.Run("local", func(t *testing.T) { sandboxtest.Conformance(t, local, img.Ref) })

	extra := sandboxtest.StartEngine(t, sandboxtest.ExtraOptions{TLS: true})
	remote := extra.Connect(t, "remote")
	if eng, err := sandbox.Connect(context.Background(), sandbox.ConnectOptions{Host: extra.Host}); err == nil {
		eng.Close()
		t.Fatal("the remote engine answered a client without a certificate: it is not checking TLS")
	}
	if sent, err := sandbox.Transfer(context.Background(), local, remote, img); err != nil || !sent {
		t.Fatalf("transfer the image to the fresh engine: sent %v, %v", sent, err)
	}
	t.Run("remote-tls", func(t *testing.T) { sandboxtest.Conformance(t, remote, img.ID) })

	sshd := sandboxtest.StartSSH(t, "/var/run/docker.sock")
	keyless := sshd.Options("keyless")
	keyless.SSHConfig = filepath.Join(t.TempDir(), "ssh_config")
	cfg, _ := os.ReadFile(sshd.Config)
	os.WriteFile(keyless.SSHConfig, regexp.MustCompile(`IdentityFile \S+`).ReplaceAll(cfg, []byte("IdentityFile /nonexistent")), 0o600)
	eng, err := sandbox.Connect(context.Background(), keyless)
	if err == nil {
		eng.Close()
		t.Fatal("the ssh server let in a client without the key: it is not checking keys")
	}
	if !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("a client without the key failed, but not by the server's refusal: %v", err)
	}
	viaSSH := sshd.Connect(t, "remote-ssh")
	t.Run("remote-ssh", func(t *testing.T) { sandboxtest.Conformance(t, viaSSH, img.Ref) })

	hosts, err := sandbox.NewHosts([]sandbox.Host{{Engine: local, Capacity: 1}, {Engine: remote, Capacity: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts.UseImage(img)
	t.Run("hosts", func(t *testing.T) { sandboxtest.Conformance(t, hosts, img.Ref) })
}
