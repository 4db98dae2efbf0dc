package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/cmd/evalctl/internal/cli"
)

// TestCLIConventions: every command answers --help with exit 0, usage
// mistakes exit 2 with one line on stderr naming what to do, work failures
// exit 1.
func TestCLIConventions(t *testing.T) {
	for name := range commands {
		t.Run(name+" --help", func(t *testing.T) {
			var out, errb strings.Builder
			code := run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb}, []string{name, "--help"})
			if code != 0 || out.Len()+errb.Len() == 0 {
				t.Errorf("exit %d, output %q %q", code, out.String(), errb.String())
			}
		})
	}
	// -h and --version work on every command, and flag lists spell flags
	// with two dashes, as the usage lines do.
	for name := range commands {
		t.Run(name+" -h, --version", func(t *testing.T) {
			var out, errb strings.Builder
			code := run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb}, []string{name, "-h"})
			if code != 0 || out.Len()+errb.Len() == 0 {
				t.Errorf("-h: exit %d, output %q %q", code, out.String(), errb.String())
			}
			if oneDash.MatchString(errb.String()) {
				t.Errorf("-h lists a flag with one dash:\n%s", errb.String())
			}
			out.Reset()
			code = run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb}, []string{name, "--version"})
			if code != 0 || !strings.HasPrefix(out.String(), "evalctl ") {
				t.Errorf("--version: exit %d, output %q", code, out.String())
			}
		})
	}
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"version"}, 0, ""},
		{[]string{"--version"}, 0, ""},
		{[]string{"-h"}, 0, ""},
		{[]string{"cases", "check", "--json", "--format", "text"}, 2, "--json and --format text disagree"},
		{[]string{"regrade", "x", "--suite", "y", "--format", "csv"}, 2, `invalid value "csv" for --format`},
		{[]string{}, 2, ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"version", "extra"}, 2, "takes no arguments"},
		{[]string{"run"}, 2, "give exactly one of --plan and --resume"},
		{[]string{"run", "--plan", "a.yaml", "--resume", "b"}, 2, "give exactly one of --plan and --resume"},
		{[]string{"cases", "list", "--suite", "/nonexistent"}, 2, "/nonexistent/suite.yaml"},
		{[]string{"cases", "check", "--concurrency", "0"}, 2, "--concurrency must be at least 1"},
		{[]string{"image", "--bogus"}, 2, "expected 'image build'"},
		{[]string{"screen", "resume"}, 2, "screen resume needs one run directory"},
		{[]string{"capacity", "resume", "a", "b"}, 2, "capacity resume needs one run directory"},
		{[]string{"capacity", "resume", "/nonexistent"}, 2, "/nonexistent: no such run"},
	}
	for _, tt := range tests {
		var out, errb strings.Builder
		code := run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb}, tt.args)
		if code != tt.code || !strings.Contains(errb.String(), tt.err) {
			t.Errorf("%v: exit %d stderr %q; want %d containing %q", tt.args, code, errb.String(), tt.code, tt.err)
		}
		if tt.code != 0 && strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 && tt.err != "" {
			t.Errorf("%v: error spans several lines: %q", tt.args, errb.String())
		}
	}
	var out strings.Builder
	run(context.Background(), &cli.Env{Stdout: &out, Stderr: &out}, []string{"version"})
	if !strings.HasPrefix(out.String(), "evalctl ") {
		t.Errorf("version printed %q", out.String())
	}
}

var oneDash = regexp.MustCompile(`\n  -[a-z]`)

// TestSuiteDefaults: outside a checkout the cases commands use the suite
// built into the binary; a suite version a run was never graded under is
// an error listing the versions that were.
func TestSuiteDefaults(t *testing.T) {
	seed, _ := filepath.Abs(seedRun)
	t.Chdir(t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	code, out, errs := runCLI(t, "cases", "list")
	if code != 0 || !strings.Contains(out, "ledger") {
		t.Errorf("cases list outside a checkout: exit %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI(t, "cases", "fingerprint", "--format", "json")
	if code != 0 || !strings.Contains(out, `"name": "dev"`) {
		t.Errorf("cases fingerprint --format json: exit %d %q %q", code, out, errs)
	}
	code, _, errs = runCLI(t, "report", seed, "--suite", "9.9.9")
	if code != 2 || !strings.Contains(errs, "was never graded under dev@9.9.9 (graded: dev@1.0.0)") {
		t.Errorf("report --suite 9.9.9: exit %d %q", code, errs)
	}
	code, _, errs = runCLI(t, "export", seed, "--suite", "9.9.9", "--out", filepath.Join(t.TempDir(), "x"))
	if code != 2 || !strings.Contains(errs, "was never graded under dev@9.9.9") {
		t.Errorf("export --suite 9.9.9: exit %d %q", code, errs)
	}
}

// TestPlanErrorPointsAtReference: a plan mistake exits 2 with the field,
// the line and where plans are described (not run's flags).
func TestPlanErrorPointsAtReference(t *testing.T) {
	suite, _ := filepath.Abs("../../grader/testdata/suite")
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	data := "name: x\nsuite: " + suite + "\nrepeats: [{label: r1, seed: 1}]\narms:\n  - name: a\n    endpoint: {base_url: \"http://127.0.0.1:1\", model: m}\n    sampling: {temperature: 6}\n"
	if err := os.WriteFile(plan, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "run", "--plan", plan)
	want := plan + ":7: arms[0].sampling.temperature: 6 is out of range: from 0 to 2 (every plan field: 'evalctl run --help-plan')\n"
	if code != 2 || errs != "evalctl run: "+want {
		t.Errorf("exit %d stderr %q; want 2 and %q", code, errs, want)
	}
	// Every mistake at once, one line each, the pointer to the reference
	// once at the end.
	data = strings.Replace(data, "temperature: 6}", "temperature: 6, top_k: -1}\n    max_token: 3", 1)
	if err := os.WriteFile(plan, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "run", "--plan", plan, "--check")
	want = "evalctl run: " + plan + ":7: arms[0].sampling.temperature: 6 is out of range: from 0 to 2\n" +
		"evalctl run: " + plan + ":7: arms[0].sampling.top_k: -1 is out of range: at least 0\n" +
		"evalctl run: " + plan + ":8: arms[0]: unknown field \"max_token\"; did you mean \"max_tokens\"? (every plan field: 'evalctl run --help-plan')\n"
	if code != 2 || errs != want {
		t.Errorf("exit %d stderr\n%s\nwant 2 and\n%s", code, errs, want)
	}
	code, out, _ := runCLI(t, "run", "--help-plan")
	if code != 0 || !strings.Contains(out, "| `sampling.temperature` | number | from 0 to 2 |") {
		t.Errorf("--help-plan: exit %d, %.200q", code, out)
	}
}
