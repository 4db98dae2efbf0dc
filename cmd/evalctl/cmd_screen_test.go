package main

import (
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/results/runstore"
)

// screenFixture registers the example scripted screen and records every
// sample by hand (fast mode 60 tok/s, slow 45), so the report commands run
// on a finished screen without starting a server.
func screenFixture(t *testing.T) string {
	t.Helper()
	sc, err := screen.LoadSpec("../../examples/screen-scripted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := screen.Register(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, leg := range sc.Legs() {
		for _, target := range sc.Spec.PromptTargets {
			for _, seed := range sc.Spec.Seeds {
				n := int64(sc.Spec.OutputTokens)
				ms := float64(n) / 60 * 1000
				if leg.Mode == "scripted-slow" {
					ms = float64(n) / 45 * 1000
				}
				wall := ms/1000 + float64(target)/1500
				dec, e2e, prompt := float64(n)/(ms/1000), float64(n)/wall, int64(target)
				s := &screen.Sample{Key: screen.SampleKey(leg, target, seed), Leg: leg.Label, LegIndex: leg.Index, Mode: leg.Mode,
					PromptTarget: target, Seed: seed, State: screen.SampleMeasured, PredictedN: &n, ServerPromptTokens: &prompt,
					Timings: &model.Timings{PredictedN: &n, PredictedMS: &ms}, WallSeconds: &wall, DecodeTPS: &dec, EndToEndTPS: &e2e,
					OutputTokensRequested: int(n), Marks: []string{}}
				if err := runstore.WriteJSON(st.Path(screen.SamplesDir, s.Key+".json"), s); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return st.Dir
}

func TestScreenAndCapacityCommands(t *testing.T) {
	dir := screenFixture(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"table", []string{"screen", "report", dir}, 0, []string{"complete, 12 of 12 measured", "scripted-slow", "-25.00"}, ""},
		{"json compare, flags after the run", []string{"screen", "report", dir, "--format", "json", "--compare", "scripted-slow,scripted-fast"}, 0,
			[]string{`"scripted-slow_tps_change_percent": -25`, `"fixture": "input2K"`, `"completed_measurements": 12`}, ""},
		{"html", []string{"screen", "report", "--format", "html", dir}, 0, []string{"<svg", "baseline_end"}, ""},
		{"evalctl report on a screen, compared", []string{"report", dir, "--format", "json", "--compare", "scripted-slow,scripted-fast"}, 0,
			[]string{`"scripted-slow_tps_change_percent": -25`, `"completed_measurements": 12`}, ""},
		{"evalctl report on a screen, table", []string{"report", dir}, 0, []string{"complete, 12 of 12 measured", "scripted-slow"}, ""},
		{"evalctl report --compare on no screen", []string{"report", t.TempDir(), "--compare", "a,b"}, 2, nil, "--compare applies to screen runs"},
		{"unknown mode", []string{"screen", "report", dir, "--compare", "a,scripted-fast"}, 2, nil, `"a" is neither a mode nor a leg`},
		{"bad compare", []string{"screen", "report", dir, "--compare", "a"}, 2, nil, "two modes"},
		{"bad format", []string{"screen", "report", dir, "--format", "pdf"}, 2, nil, `invalid value "pdf" for --format: want one of text, json, html`},
		{"no spec", []string{"screen"}, 2, nil, "needs --spec"},
		{"bad spec", []string{"screen", "--spec", "../../examples/profiles/scripted-fast.yaml"}, 2, nil, `scripted-fast.yaml:7: unknown field "command"`},
		{"not a screen", []string{"screen", "report", t.TempDir()}, 2, nil, "not a run directory"},
		{"capacity without contexts", []string{"capacity", "--profile", "p.yaml"}, 2, nil, "--contexts"},
		{"capacity bad size", []string{"capacity", "--profile", "p.yaml", "--contexts", "8k"}, 2, nil, `"8k" is not a context size`},
		{"capacity of a screen", []string{"capacity", "report", dir}, 2, nil, `is a "screen" run, not a capacity probe`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout, want) {
					t.Fatalf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
		})
	}
}
