package main

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/serving"
)

// convention is one command (or subcommand) as the conventions test
// drives it.
type convention struct {
	cmd []string
	// results are arguments with which the command prints results; then
	// --format json must print JSON, the same as --json. nil: the command
	// prints no results and takes no --format.
	results []string
	// engine is set when printing results needs the Docker Engine (the
	// JSON check is left to the command's own tests).
	engine bool
	// missing names a run that does not exist, in the command's own
	// syntax; nil for a command that takes no run.
	missing []string
}

// conventions lists every command and subcommand; TestConventions fails
// when one is missing. RUN and ATTEMPT stand for a fixture run and one of
// its attempts, SCREEN and CAPACITY for a screen and a probe.
var conventions = []convention{
	{cmd: []string{"version"}, results: []string{}},
	{cmd: []string{"image", "build"}},
	{cmd: []string{"sandbox", "prune"}, missing: []string{"--run", "nosuchrun"}},
	{cmd: []string{"cases", "list"}, results: []string{}},
	{cmd: []string{"cases", "fingerprint"}, results: []string{}},
	{cmd: []string{"cases", "check"}, results: []string{}, engine: true},
	{cmd: []string{"cases", "import"}},
	{cmd: []string{"cases", "controls", "generate"}},
	{cmd: []string{"run"}, missing: []string{"--resume", "nosuchrun"}},
	{cmd: []string{"run"}, missing: []string{"--cancel", "nosuchrun"}},
	{cmd: []string{"demo"}},
	{cmd: []string{"runs"}, results: []string{"RUNS"}, missing: []string{"nosuchdir"}},
	{cmd: []string{"attempts"}, results: []string{"RUN"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"show"}, results: []string{"ATTEMPT"}, missing: []string{"nosuchrun", "reference", "adder", "repeat-1"}},
	{cmd: []string{"show"}, results: []string{"RUN", "reference", "adder", "repeat-1"}, missing: []string{"--run", "nosuchrun", "01a230a6"}},
	{cmd: []string{"view"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"report"}, results: []string{"RUN"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"export"}, missing: []string{"nosuchrun", "--out", "OUT"}},
	{cmd: []string{"power"}, results: []string{"RUN"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"verify"}, missing: []string{"/nonexistent/export"}},
	{cmd: []string{"screen"}, missing: []string{"--spec", "/nonexistent/spec.yaml"}},
	{cmd: []string{"screen", "resume"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"screen", "report"}, results: []string{"SCREEN"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"serve-model"}},
	{cmd: []string{"capacity"}, missing: []string{"--profile", "/nonexistent/p.yaml", "--contexts", "4096"}},
	{cmd: []string{"capacity", "resume"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"capacity", "report"}, results: []string{"CAPACITY"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"regrade"}, results: []string{"RUN", "--suite", "SUITE"}, engine: true, missing: []string{"nosuchrun", "--suite", "SUITE"}},
	{cmd: []string{"rerun"}, results: []string{"ATTEMPT", "--set", "max_tokens=1"}, engine: true, missing: []string{"nosuchrun", "a", "b", "c", "--set", "max_tokens=1"}},
	{cmd: []string{"rerun", "show"}, results: []string{"RERUN"}, engine: true, missing: []string{"nosuchrun"}},
	{cmd: []string{"summarize"}, results: []string{"RUN"}, missing: []string{"nosuchrun"}},
	{cmd: []string{"controls"}, results: []string{"--case", "adder", "--suite", "SUITE"}, engine: true,
		missing: []string{"--case", "adder", "--suite", "SUITE", "--answers", "nosuchrun"}},
}

// TestConventions: every command follows one set of conventions. --help
// and -h print the help on stdout and exit 0; an unknown flag is one line
// on stderr spelling it with two dashes, exit 2; a command that prints
// results takes --format json (valid JSON, the same as --json) and one
// that prints none takes no --format; a run (or file) that does not exist
// is exit 2 naming it.
func TestConventions(t *testing.T) {
	root := copyRecorded(t)
	t.Setenv("EVALCTL_RUNS", root)
	run := filepath.Join(root, filepath.Base(recordedRun))
	suite, _ := filepath.Abs("../../grader/testdata/suite")
	subst := map[string]string{
		"RUNS": root, "RUN": run, "ATTEMPT": "01a230a6-ae9a", "SCREEN": screenFixture(t), "CAPACITY": capacityFixture(t),
		"SUITE": suite, "OUT": filepath.Join(t.TempDir(), "out"), "RERUN": run,
	}
	fill := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = a
			if v, ok := subst[a]; ok {
				out[i] = v
			}
		}
		return out
	}
	covered := map[string]bool{}
	for _, c := range conventions {
		name := strings.Join(c.cmd, " ")
		covered[c.cmd[0]] = true
		t.Run(name, func(t *testing.T) {
			for _, help := range []string{"--help", "-h"} {
				code, out, errs := runCLI(t, append(append([]string{}, c.cmd...), help)...)
				if code != 0 || !strings.HasPrefix(out, "usage: evalctl "+name) || errs != "" {
					t.Errorf("%s %s: exit %d, stdout %.80q, stderr %q; want the help on stdout, exit 0", name, help, code, out, errs)
				}
				if oneDash.MatchString(out) {
					t.Errorf("%s %s lists a flag with one dash:\n%s", name, help, out)
				}
			}
			code, out, errs := runCLI(t, append(append([]string{}, c.cmd...), "--no-such-flag")...)
			if code != 2 || out != "" || !strings.HasPrefix(errs, "evalctl "+c.cmd[0]+": unknown flag --no-such-flag (see 'evalctl ") ||
				strings.Count(errs, "\n") != 1 {
				t.Errorf("unknown flag: exit %d stdout %q stderr %q; want exit 2 and one line naming --no-such-flag", code, out, errs)
			}
			switch {
			case c.results == nil:
				code, _, errs := runCLI(t, append(append([]string{}, c.cmd...), "--format", "json")...)
				if code != 2 || !strings.Contains(errs, "unknown flag --format") {
					t.Errorf("--format json on a command that prints no results: exit %d %q; want unknown flag, exit 2", code, errs)
				}
			case !c.engine:
				args := append(append([]string{}, c.cmd...), fill(c.results)...)
				code, out, errs := runCLI(t, append(args, "--format", "json")...)
				if code != 0 || !json.Valid([]byte(out)) || !strings.HasPrefix(strings.TrimSpace(out), "{") && !strings.HasPrefix(strings.TrimSpace(out), "[") {
					t.Errorf("--format json: exit %d, stderr %q, not JSON: %.200q", code, errs, out)
				}
				code2, out2, _ := runCLI(t, append(args, "--json")...)
				if code2 != 0 || out2 != out {
					t.Errorf("--json differs from --format json: exit %d %.200q", code2, out2)
				}
				if code, _, errs := runCLI(t, append(args, "--format", "nosuch")...); code != 2 || !strings.Contains(errs, `invalid value "nosuch" for --format: want one of `) {
					t.Errorf("--format nosuch: exit %d %q", code, errs)
				}
			}
			if c.missing != nil {
				code, _, errs := runCLI(t, append(append([]string{}, c.cmd...), fill(c.missing)...)...)
				if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "nosuch") && !strings.Contains(errs, "/nonexistent/") {
					t.Errorf("missing input %v: exit %d stderr %q; want exit 2, one line naming it", c.missing, code, errs)
				}
			}
		})
	}
	var missed []string
	for n := range commands {
		if !covered[n] {
			missed = append(missed, n)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("commands the conventions test does not drive: %v", missed)
	}
}

// capacityFixture registers a capacity probe (nothing measured yet).
func capacityFixture(t *testing.T) string {
	t.Helper()
	p, err := serving.LoadProfile("../../examples/profiles/scripted-fast.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan := &screen.CapacityPlan{Profile: p, Contexts: []int{4096}}
	if err := plan.Normalize(); err != nil {
		t.Fatal(err)
	}
	st, _, err := screen.RegisterCapacity(t.TempDir(), plan)
	if err != nil {
		t.Fatal(err)
	}
	return st.Dir
}
