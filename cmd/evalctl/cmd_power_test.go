package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/power"
)

func TestPowerCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"pilot, text", []string{"power", seedRun, "--baseline", "current_iq3"}, 0,
			[]string{"over 24 complete pairs", "(2 of 24 pairs disagree)", "GPU hours", "Assumptions:"}, ""},
		{"stated", []string{"power", "--sd", "0.04", "--task-seconds", "450"}, 0,
			[]string{"0.0400 (stated)", "unknown: no discordance"}, ""},
		{"stated, json", []string{"power", "--discordance", "0.1", "--format", "json"}, 0,
			[]string{`"gpu_hours": null`, `"pairs": 312`}, ""},
		{"nothing to go on", []string{"power"}, 2, nil, "power needs a pilot run, or stated figures"},
		{"run and stated", []string{"power", seedRun, "--sd", "0.04"}, 2, nil, "give a run or the figures, not both"},
		{"bad task seconds", []string{"power", "--sd", "0.04", "--task-seconds", "1,2,3"}, 2, nil, "--task-seconds"},
		{"bad half-width", []string{"power", "--sd", "0.04", "--half-width", "0"}, 2, nil, "--half-width 0: give a fraction"},
		{"bad discordance", []string{"power", "--discordance", "1.5"}, 2, nil, "--discordance 1.5"},
		{"unknown candidate", []string{"power", seedRun, "--candidate", "nope"}, 2, nil, `--candidate "nope"`},
		{"not a run", []string{"power", t.TempDir()}, 2, nil, "not a run directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errs)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errs, tt.stderr)
			}
		})
	}
}

// The pilot's spread is recomputed here from the attempt records
// themselves, paired by case and repeat, and the sample size from it.
func TestPowerPilotFromRecords(t *testing.T) {
	code, out, errs := runCLI(t, "power", seedRun, "--baseline", "current_iq3", "--candidate", "candidate", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var ans power.Answer
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatal(err)
	}
	tps := map[string]map[string]float64{}
	files, _ := filepath.Glob(filepath.Join(seedRun, "attempts", "*", "attempt.json"))
	for _, f := range files {
		var a struct {
			Arm, Case, Repeat string
			Measurements      *struct {
				Tokens  float64 `json:"native_output_tokens"`
				Seconds float64 `json:"decode_seconds"`
			}
		}
		data, err := os.ReadFile(f)
		if err != nil || json.Unmarshal(data, &a) != nil {
			t.Fatal(f, err)
		}
		if a.Measurements != nil && a.Measurements.Seconds > 0 {
			if tps[a.Arm] == nil {
				tps[a.Arm] = map[string]float64{}
			}
			tps[a.Arm][a.Case+"/"+a.Repeat] = a.Measurements.Tokens / a.Measurements.Seconds
		}
	}
	var logs []float64
	for k, c := range tps["candidate"] {
		if b, ok := tps["current_iq3"][k]; ok {
			logs = append(logs, math.Log(c/b))
		}
	}
	_, sd, _ := power.Spread(logs)
	if ans.Figures.SpeedPairs == nil || *ans.Figures.SpeedPairs != len(logs) || math.Abs(*ans.Figures.LogRatioSD-sd) > 1e-12 {
		t.Fatalf("pilot: %v pairs, sd %v; records: %d pairs, sd %v", ans.Figures.SpeedPairs, ans.Figures.LogRatioSD, len(logs), sd)
	}
	want, _ := power.FixedPairs(sd, 0.02)
	if ans.Speed.Pairs == nil || *ans.Speed.Pairs != want || ans.Speed.GPUHours == nil {
		t.Errorf("speed need %+v, want %d pairs with GPU hours", ans.Speed, want)
	}
}
