package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/cmd/evalctl/internal/cli"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestSummarizeAndRerunCommands(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results.json")
	if code, _, errs := runCmd("summarize", seedRun, "--out", results); code != 0 {
		t.Fatalf("summarize: exit %d: %s", code, errs)
	}
	data, _ := os.ReadFile(results)
	if !strings.Contains(string(data), `"decode_tps": 62.357151060397875`) || !strings.Contains(string(data), `"dev24-quant"`) {
		t.Errorf("results document lacks the seed's decode TPS or its run id")
	}
	attempts, _ := filepath.Glob(filepath.Join(seedRun, "attempts", "*"))
	// Ids and prefixes are looked up under the runs root.
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "dev24"), os.DirFS(seedRun)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EVALCTL_RUNS", root)
	// A run by its name or a prefix, as every command takes one.
	for _, name := range []string{"dev24", "dev2"} {
		code, out, errs := runCmd("summarize", name)
		if code != 0 || !strings.Contains(out, `"decode_tps": 62.357151060397875`) {
			t.Errorf("summarize %s: exit %d %s", name, code, errs)
		}
	}
	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"summarize"}, 2, "needs at least one run"},
		{[]string{"summarize", "/nonexistent"}, 2, "/nonexistent: no such run"},
		{[]string{"rerun"}, 2, "rerun takes one attempt"},
		{[]string{"rerun", seedRun, "--set", "max_tokens=1"}, 2, "is a run, not an attempt"},
		{[]string{"rerun", attempts[1]}, 2, "--set FIELD=VALUE"},
		{[]string{"rerun", attempts[1], "--set", "max_tokens=1"}, 2, "does not hold as registered"},
		{[]string{"rerun", filepath.Base(attempts[1]), "--set", "max_tokens=1"}, 2, "does not hold as registered"},
		{[]string{"rerun", "dev24-quant-a0000", "--set", "max_tokens=1"}, 2, "matches 10 attempts: dev24-quant-a00000 (candidate cache repeat-1, infra_failed), "},
		{[]string{"rerun", "dev24", "candidate", "cache", "repeat-1", "--set", "max_tokens=1"}, 2, "does not hold as registered"},
		{[]string{"rerun", seedRun, "quant-q4", "nosuchcase", "repeat-1", "--set", "max_tokens=1"}, 2, `the run has no case "nosuchcase"`},
		{[]string{"rerun", "show", seedRun}, 2, "not a diagnostic rerun"},
	} {
		code, _, errs := runCmd(tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.err) {
			t.Errorf("%v: exit %d stderr %q; want %d containing %q", tt.args, code, errs, tt.code, tt.err)
		}
	}
}
