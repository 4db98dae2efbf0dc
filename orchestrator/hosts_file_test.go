package orchestrator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator"
)

// TestSandboxHostsFile: a hosts file is read like a plan: TLS directories
// and ssh_config files resolve against the file, capacity defaults to 1, and every mistake names
// the file, the field and the line, saying how to fix it.
func TestSandboxHostsFile(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // error parts; none: valid
	}{
		{"valid", "hosts:\n  - {name: here}\n  - {name: gpu2, host: tcp://10.0.0.2:2376, tls_dir: certs/gpu2, capacity: 4, machine: m2}\n  - {name: gpu3, host: ssh://me@10.0.0.3, ssh_config: ssh/gpu3}\n", nil},
		{"no hosts", "hosts: []\n", []string{"hosts.yaml", "hosts", "names no engine"}},
		{"no name", "hosts:\n  - {host: tcp://10.0.0.2:2376}\n", []string{"hosts.yaml:2", "hosts[0].name", "is required"}},
		{"same name", "hosts:\n  - {name: a}\n  - {name: a, host: tcp://x:2376}\n", []string{"hosts.yaml:3", "hosts[1].name", "names two engines"}},
		{"bad scheme", "hosts:\n  - {name: a}\n  - {name: b, host: http://x:2376}\n", []string{"hosts.yaml:3", "hosts[1].host", "write tcp://HOST:2376"}},
		{"tls on ssh", "hosts:\n  - name: b\n    host: ssh://me@x\n    tls_dir: certs\n", []string{"hosts.yaml:4", "hosts[0].tls_dir", "tcp:// host only"}},
		{"ssh_config on tcp", "hosts:\n  - name: b\n    host: tcp://x:2376\n    ssh_config: c\n", []string{"hosts.yaml:4", "hosts[0].ssh_config", "ssh:// host only"}},
		{"ssh_config on the default engine", "hosts:\n  - name: b\n    ssh_config: c\n", []string{"hosts.yaml:3", "hosts[0].ssh_config", "default engine needs none"}},
		{"capacity range", "hosts:\n  - {name: a, capacity: -1}\n", []string{"hosts.yaml:2", "capacity", "at least 1"}},
		{"unknown field", "hosts:\n  - {name: a, capacty: 2}\n", []string{"hosts.yaml:2", "capacty", "capacity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "hosts.yaml")
			if err := os.WriteFile(f, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			hosts, err := orchestrator.LoadSandboxHosts(f)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(hosts) != 3 || hosts[0].Capacity != 1 || hosts[1].TLSDir != filepath.Join(dir, "certs/gpu2") || hosts[1].Capacity != 4 || hosts[1].Machine != "m2" || hosts[2].SSHConfig != filepath.Join(dir, "ssh/gpu3") {
					t.Errorf("hosts %+v", hosts)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %v", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
