package screen

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/runstore"
)

// Fixture is a fixed input of a screen: a file sent as the prompt body in
// every mode (after the sample's cold prefix), instead of generated filler
// of a token target. Its token count is measured on the server.
type Fixture struct {
	// Name labels the fixture in the report (one row per mode and fixture).
	Name string `yaml:"name" json:"name"`
	// File is the input file, relative to the spec file (absolute once
	// loaded).
	File string `yaml:"file" json:"file"`
	// SHA256 and Bytes identify the content registered; a sample refuses
	// a file that changed since.
	SHA256 string `yaml:"-" json:"sha256"`
	Bytes  int    `yaml:"-" json:"bytes"`
}

// Fixed reports whether the screen measures fixed input files.
func (sc *Screen) Fixed() bool { return len(sc.Spec.Fixtures) > 0 }

// targets are the sample grid's second axis: the prompt targets, or for a
// fixed-input screen the fixtures' numbers 1..n (the samples' and
// aggregates' prompt_target; their fixture field names the fixture).
func (sc *Screen) targets() []int {
	if !sc.Fixed() {
		return sc.Spec.PromptTargets
	}
	out := make([]int, len(sc.Spec.Fixtures))
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// fixture returns the fixture of a fixed-input screen's target number.
func (sc *Screen) fixture(target int) *Fixture {
	if !sc.Fixed() || target < 1 || target > len(sc.Spec.Fixtures) {
		return nil
	}
	return &sc.Spec.Fixtures[target-1]
}

// validateFixtures resolves and hashes the fixture files.
func (sc *Screen) validateFixtures(doc *yamlcheck.Doc, dir string) error {
	s := &sc.Spec
	if len(s.PromptTargets) > 0 {
		return doc.Errorf(yamlcheck.Path("fixtures"), "a screen takes prompt_targets or fixtures, not both")
	}
	seen := map[string]bool{}
	for i := range s.Fixtures {
		f := &s.Fixtures[i]
		switch {
		case f.Name == "":
			return doc.Errorf(yamlcheck.Path("fixtures", i, "name"), "is required")
		case !safeName(f.Name):
			return doc.Errorf(yamlcheck.Path("fixtures", i, "name"), "%q: use letters, digits, '.', '_' and '-'", f.Name)
		case seen[f.Name]:
			return doc.Errorf(yamlcheck.Path("fixtures", i, "name"), "%q appears twice", f.Name)
		case f.File == "":
			return doc.Errorf(yamlcheck.Path("fixtures", i, "file"), "is required")
		}
		seen[f.Name] = true
		if !filepath.IsAbs(f.File) {
			f.File = filepath.Join(dir, f.File)
		}
		data, err := os.ReadFile(f.File)
		if err != nil {
			return doc.Errorf(yamlcheck.Path("fixtures", i, "file"), "%v", err)
		}
		if len(data) == 0 {
			return doc.Errorf(yamlcheck.Path("fixtures", i, "file"), "%s is empty", f.File)
		}
		sum := sha256.Sum256(data)
		f.SHA256, f.Bytes = hex.EncodeToString(sum[:]), len(data)
	}
	return nil
}

// fixtureText reads a fixture as registered: a file whose bytes changed
// since is refused, never measured as if it were the same input.
func fixtureText(f *Fixture) (string, error) {
	data, err := os.ReadFile(f.File)
	if err != nil {
		return "", fmt.Errorf("fixture %s: %w", f.Name, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
		return "", fmt.Errorf("fixture %s: %s changed since the screen was registered (SHA-256 %x, registered %s)", f.Name, f.File, sum, f.SHA256)
	}
	return string(data), nil
}

// fixturePrompt is a fixed-input sample's prompt: the cold prefix, then
// the fixture; its token count as the server counts it.
func fixturePrompt(ctx context.Context, tok Tokenizer, prefix string, f *Fixture) (*PromptBuild, error) {
	text, err := fixtureText(f)
	if err != nil {
		return nil, err
	}
	n, err := tok.CountTokens(ctx, prefix+text)
	if err != nil {
		return nil, fmt.Errorf("fixture %s: tokenize: %w", f.Name, err)
	}
	alone, err := tok.CountTokens(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("fixture %s: tokenize: %w", f.Name, err)
	}
	return &PromptBuild{Text: prefix + text, Tokens: n, Requests: 2, FixtureTokens: &alone}, nil
}

// FixtureTelemetry is what the 200 ms sampler saw while one leg measured
// one fixture: the whole-GPU memory peak (with the free memory at it) and
// the CPU temperature peak, each null when not measured (no GPU, no
// sensor), never 0.
type FixtureTelemetry struct {
	Leg        string                `json:"leg"`
	Mode       string                `json:"mode"`
	Fixture    string                `json:"fixture"`
	Readings   int                   `json:"readings"`
	MemoryPeak *telemetry.MemoryPeak `json:"memory_peak_200ms"`
	CPUPeakC   *float64              `json:"cpu_peak_c"`
}

// fixtureTelemetry reads the legs' telemetry logs and takes the peaks of
// the readings made while each fixture was measured (the sampler's stage
// names the leg, the target (the fixture's number) and the seed).
func fixtureTelemetry(st *runstore.Store, sc *Screen, legs []Leg) ([]FixtureTelemetry, error) {
	var out []FixtureTelemetry
	for _, l := range legs {
		byTarget := map[int]*FixtureTelemetry{}
		logs, _ := filepath.Glob(st.Path(LegsDir, fmt.Sprintf("%02d-%s", l.Index, l.Label), "*", TelemetryLg))
		for _, lg := range logs {
			f, err := os.Open(lg)
			if err != nil {
				return nil, err
			}
			sc2 := bufio.NewScanner(f)
			sc2.Buffer(make([]byte, 1<<16), 1<<22)
			for sc2.Scan() {
				var r struct {
					Stage string `json:"stage"`
					telemetry.Reading
				}
				if json.Unmarshal(sc2.Bytes(), &r) != nil {
					continue
				}
				var target int
				var seed int64
				if n, _ := fmt.Sscanf(strings.TrimPrefix(r.Stage, l.Label+"/"), "%d/s%d", &target, &seed); n != 2 || !strings.HasPrefix(r.Stage, l.Label+"/") {
					continue
				}
				fx := sc.fixture(target)
				if fx == nil {
					continue
				}
				ft := byTarget[target]
				if ft == nil {
					ft = &FixtureTelemetry{Leg: l.Label, Mode: l.Mode, Fixture: fx.Name}
					byTarget[target] = ft
				}
				ft.Readings++
				if used, free, total, ok := r.Memory(); ok && (ft.MemoryPeak == nil || used > ft.MemoryPeak.UsedBytes) {
					ft.MemoryPeak = &telemetry.MemoryPeak{At: r.At, Stage: r.Stage, UsedBytes: used, FreeBytes: free, TotalBytes: total}
				}
				if r.CPUTempC != nil && (ft.CPUPeakC == nil || *r.CPUTempC > *ft.CPUPeakC) {
					v := *r.CPUTempC
					ft.CPUPeakC = &v
				}
			}
			err = sc2.Err()
			f.Close()
			if err != nil {
				return nil, err
			}
		}
		for t := range sc.Spec.Fixtures {
			if ft := byTarget[t+1]; ft != nil {
				out = append(out, *ft)
			}
		}
	}
	return out, nil
}
