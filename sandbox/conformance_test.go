package sandbox_test

import (
	"context"
	"testing"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestConformance runs the one backend suite against the local engine, a
// remote engine reached over TCP with TLS, and a pool of both.
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

	hosts, err := sandbox.NewHosts([]sandbox.Host{{Engine: local, Capacity: 1}, {Engine: remote, Capacity: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts.UseImage(img)
	t.Run("hosts", func(t *testing.T) { sandboxtest.Conformance(t, hosts, img.Ref) })
}
