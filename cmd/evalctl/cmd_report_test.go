package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/cmd/evalctl/internal/cli"
)

// seedRun is the report package's fixed synthetic cohort.
const seedRun = "../../results/report/testdata/dev24"

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestReportCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"json, flags after the run", []string{"report", seedRun, "--format", "json", "--baseline", "original_q4"}, 0,
			[]string{`"decode_tps": 62.357151060397875`, `"decode_tps_gain_percent": 79.82189350695602`}, ""},
		{"table by default", []string{"report", "--baseline=original_q4", seedRun}, 0, []string{"Paired transitions vs original_q4", "62.36"}, ""},
		{"markdown", []string{"report", "--format", "md", seedRun}, 0, []string{"| candidate |"}, ""},
		{"no run", []string{"report"}, 2, nil, "at least one run directory"},
		{"bad format", []string{"report", seedRun, "--format", "pdf"}, 2, nil, `invalid value "pdf" for --format: want one of text, json, md, csv, html`},
		{"unknown baseline", []string{"report", seedRun, "--baseline", "nope"}, 2, nil, "unknown arm"},
		{"not a run", []string{"report", t.TempDir()}, 2, nil, "not a run directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errs)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q", s)
				}
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errs, tt.stderr)
			}
		})
	}
}

func TestReportHTMLToFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := runCLI(t, "report", seedRun, "--format", "html", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(data, []byte("<svg")) {
		t.Fatalf("no HTML report written: %v", err)
	}
}

func TestExportThenVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	if code, out, errs := runCLI(t, "export", seedRun, "--out", dir, "--baseline", "original_q4"); code != 0 || !strings.Contains(out, "evalctl verify") {
		t.Fatalf("export: exit %d: %s %s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "verify", dir); code != 0 || !strings.Contains(out, "recomputes") {
		t.Fatalf("verify of a fresh export: exit %d: %s %s", code, out, errs)
	}
	p := filepath.Join(dir, "aggregates.json")
	data, _ := os.ReadFile(p)
	data[len(data)/2] ^= 1
	os.WriteFile(p, data, 0o644)
	code, _, errs := runCLI(t, "verify", dir)
	if code != 1 || !strings.Contains(errs, "aggregates.json: sha256: expected") {
		t.Fatalf("verify after one changed byte: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := runCLI(t, "export", seedRun); code != 2 {
		t.Errorf("export without --out: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "verify"); code != 2 {
		t.Errorf("verify without a directory: exit %d, want 2", code)
	}
}
