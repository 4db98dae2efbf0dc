package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mistake in a hosts file is a usage error (exit 2) naming the file, the
// line and the field, before any engine is contacted, for every command
// that takes --sandbox-hosts.
func TestSandboxHostsFlag(t *testing.T) {
	hosts := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(hosts, []byte("hosts:\n  - name: gpu-a\n    host: http://gpu-a:2376\n    capacity: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--plan", "../../examples/scripted24.yaml", "--sandbox-hosts", hosts}},
		{"cases check", []string{"cases", "check", "--suite", "../../cases", "--sandbox-hosts", hosts, "wallet"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCmd(tt.args...)
			want := hosts + ":3: hosts[0].host"
			if code != 2 || !strings.Contains(errs, want) || !strings.Contains(errs, "tcp://") {
				t.Errorf("exit %d, stderr %q; want 2 and %q with the address forms", code, errs, want)
			}
		})
	}
}
