package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/sandbox"
)

// TestConnectOptionsSayWhatIsWrong: an engine address evalctl cannot use
// is refused naming the engine and how to write it, before any dial; an
// engine that does not answer is ErrNoDaemon naming it.
func TestConnectOptionsSayWhatIsWrong(t *testing.T) {
	tlsDir := t.TempDir()
	os.WriteFile(filepath.Join(tlsDir, "ca.pem"), []byte("x"), 0o600)
	tests := []struct {
		name string
		opts sandbox.ConnectOptions
		want []string
	}{
		{"scheme", sandbox.ConnectOptions{Name: "gpu2", Host: "http://10.0.0.2:2376"}, []string{"engine gpu2", `scheme "http"`, "unix, tcp, ssh"}},
		{"no scheme", sandbox.ConnectOptions{Name: "gpu2", Host: "10.0.0.2"}, []string{"engine gpu2", "tcp://host:2376"}},
		{"tls on ssh", sandbox.ConnectOptions{Name: "gpu2", Host: "ssh://me@10.0.0.2", TLSDir: tlsDir}, []string{"engine gpu2", "TLS is for tcp://"}},
		{"tls without host", sandbox.ConnectOptions{Name: "here", TLSDir: tlsDir}, []string{"engine here", "needs a tcp:// host"}},
		{"tls files", sandbox.ConnectOptions{Name: "gpu2", Host: "tcp://127.0.0.1:1", TLSDir: tlsDir}, []string{"engine gpu2", "lacks cert.pem", "ca.pem, cert.pem and key.pem"}},
		{"silent", sandbox.ConnectOptions{Name: "gpu2", Host: "tcp://127.0.0.1:1"}, []string{"engine gpu2 at tcp://127.0.0.1:1 does not answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sandbox.Connect(context.Background(), tt.opts)
			if err == nil {
				t.Fatal("connected")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.name == "silent" && !errors.Is(err, sandbox.ErrNoDaemon) {
				t.Errorf("error %v is not ErrNoDaemon", err)
			}
		})
	}
}
