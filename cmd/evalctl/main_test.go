package main

import (
	"context"
	"strings"
	"testing"
)

// TestCLIConventions: every command answers --help with exit 0, usage
// mistakes exit 2 with one line on stderr naming what to do, work failures
// exit 1.
func TestCLIConventions(t *testing.T) {
	for name := range commands {
		t.Run(name+" --help", func(t *testing.T) {
			var out, errb strings.Builder
			code := run(context.Background(), &env{stdout: &out, stderr: &errb}, []string{name, "--help"})
			if code != 0 || out.Len()+errb.Len() == 0 {
				t.Errorf("exit %d, output %q %q", code, out.String(), errb.String())
			}
		})
	}
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"version"}, 0, ""},
		{[]string{}, 2, ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"version", "extra"}, 2, "takes no arguments"},
		{[]string{"run"}, 2, "give exactly one of --plan and --resume"},
		{[]string{"run", "--plan", "a.yaml", "--resume", "b"}, 2, "give exactly one of --plan and --resume"},
		{[]string{"cases", "list", "--suite", "/nonexistent"}, 1, "/nonexistent/suite.yaml"},
		{[]string{"cases", "check", "--concurrency", "0"}, 2, "--concurrency must be at least 1"},
		{[]string{"image", "--bogus"}, 2, "expected 'image build'"},
		{[]string{"screen", "resume"}, 2, "screen resume needs one run directory"},
		{[]string{"capacity", "resume", "a", "b"}, 2, "capacity resume needs one run directory"},
		{[]string{"capacity", "resume", "/nonexistent"}, 1, "/nonexistent"},
	}
	for _, tt := range tests {
		var out, errb strings.Builder
		code := run(context.Background(), &env{stdout: &out, stderr: &errb}, tt.args)
		if code != tt.code || !strings.Contains(errb.String(), tt.err) {
			t.Errorf("%v: exit %d stderr %q; want %d containing %q", tt.args, code, errb.String(), tt.code, tt.err)
		}
		if tt.code != 0 && strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 && tt.err != "" {
			t.Errorf("%v: error spans several lines: %q", tt.args, errb.String())
		}
	}
	var out strings.Builder
	run(context.Background(), &env{stdout: &out, stderr: &out}, []string{"version"})
	if !strings.HasPrefix(out.String(), "evalctl ") {
		t.Errorf("version printed %q", out.String())
	}
}
