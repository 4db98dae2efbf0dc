package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestImageBuildAgentUsage: 'image build --agent' wants a Dockerfile and a
// tag; each mistake is a usage error (exit 2) saying what to give, found
// before any engine is asked.
func TestImageBuildAgentUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no tag", []string{"image", "build", "--agent", filepath.Join(dir, "Dockerfile")}, "--agent needs --tag NAME"},
		{"tag alone", []string{"image", "build", "--tag", "x"}, "--tag names an agent image: give the Dockerfile with --agent"},
		{"missing Dockerfile", []string{"image", "build", "--agent", filepath.Join(dir, "nope"), "--tag", "x"}, "--agent: stat " + filepath.Join(dir, "nope") + ": no such file"},
		{"a directory", []string{"image", "build", "--agent", dir, "--tag", "x"}, "is a directory: name the Dockerfile in it"},
		{"force", []string{"image", "build", "--agent", dir, "--tag", "x", "--force"}, "--force rebuilds the sandbox image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.stderr)
			}
		})
	}
}
