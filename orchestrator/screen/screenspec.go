package screen

import (
	"fmt"
	"path/filepath"

	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/orchestrator/serving"
)

// Leg labels of the baseline runs that bracket a screen.
const (
	BaselineStart = "baseline_start"
	BaselineEnd   = "baseline_end"
)

// modeRequest is the extra request fields of the named mode.
func (sc *Screen) modeRequest(mode string) map[string]any {
	for _, m := range sc.Spec.Modes {
		if m.Name == mode {
			return m.Request
		}
	}
	return nil
}

// Spec is a throughput screen: every mode (a server profile) is
// measured at every prompt target with every seed, and the baseline mode is
// measured before and after all others so drift shows.
type Spec struct {
	// Name names the screen and its run directory (required).
	Name string `yaml:"name" json:"name"`
	// Baseline names the mode run as baseline_start and baseline_end.
	Baseline string `yaml:"baseline" json:"baseline"`
	// Modes are the server configurations measured (required).
	Modes []ModeSpec `yaml:"modes" json:"modes"`
	// PromptTargets are input sizes in tokens (e.g. 8192, 32768): one cold
	// prompt of each size per mode and seed.
	PromptTargets []int `yaml:"prompt_targets" json:"prompt_targets"`
	// Seeds: one sample per seed per mode and target.
	Seeds []int64 `yaml:"seeds" json:"seeds"`
	// OutputTokens is the exact number of tokens each sample generates.
	OutputTokens int `yaml:"output_tokens" json:"output_tokens"`
	// ToleranceTokens bounds |actual prompt tokens - target|.
	ToleranceTokens int `yaml:"tolerance_tokens" json:"tolerance_tokens" default:"64"`
	// CtxSize, when set, overrides every profile's ctx_size.
	CtxSize int `yaml:"ctx_size" json:"ctx_size"`
	// RequestTimeout bounds one generation.
	RequestTimeout serving.Duration `yaml:"request_timeout" json:"request_timeout" default:"30m"`
	// Temperature is sent with every request when set.
	Temperature *float64 `yaml:"temperature" json:"temperature"`
	// Fixtures, instead of prompt_targets, are fixed input files every
	// mode is measured on.
	Fixtures []Fixture `yaml:"fixtures" json:"fixtures,omitempty"`
}

// ModeSpec is one server configuration of a screen.
type ModeSpec struct {
	// Name names the mode in the screen's report (required).
	Name string `yaml:"name" json:"name"`
	// Profile is the profile file, relative to the spec file.
	Profile string `yaml:"profile" json:"profile"`
	// Request holds fields added to every /completion request of the
	// mode (e.g. logit_bias), after evalctl's own; the fields a sample is
	// defined by (prompt, n_predict, ignore_eos, seed, cache_prompt,
	// stream) cannot be changed.
	Request map[string]any `yaml:"request" json:"request,omitempty"`
}

// screenFields are the request fields a throughput sample is defined by.
var screenFields = []string{"prompt", "n_predict", "ignore_eos", "seed", "cache_prompt", "stream"}

// Screen is a loaded spec with its profiles, as stored in the run directory:
// a resumed screen runs what was registered, not what the files say now.
type Screen struct {
	Spec     Spec                        `json:"spec"`
	Profiles map[string]*serving.Profile `json:"profiles"`
}

// Leg is one server run of a screen: a mode under a label.
type Leg struct {
	Index int    `json:"index"`
	Label string `json:"label"`
	Mode  string `json:"mode"`
}

// LoadSpec reads a screen spec strictly and loads every profile it
// names.
func LoadSpec(file string) (*Screen, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	var s Spec
	doc, err := yamlcheck.DecodeFile(abs, &s)
	if err != nil {
		return nil, fmt.Errorf("load screen: %w", err)
	}
	sc := &Screen{Spec: s, Profiles: map[string]*serving.Profile{}}
	if err := sc.validate(doc, filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("load screen: %w", err)
	}
	return sc, nil
}

// validate checks the spec (modes and their profiles, baseline, inputs,
// numbers), loading each mode's profile; the first error names its field.
func (sc *Screen) validate(doc *yamlcheck.Doc, dir string) error {
	s := &sc.Spec
	if err := yamlcheck.FillDefaults(s); err != nil {
		return err
	}
	if s.Name == "" {
		return doc.Errorf(yamlcheck.Path("name"), "is required")
	}
	if err := sc.validateModes(doc, dir); err != nil {
		return err
	}
	if s.Baseline == "" {
		return doc.Errorf(yamlcheck.Path("baseline"), "is required (the mode that brackets the others)")
	}
	if sc.Profiles[s.Baseline] == nil {
		return doc.Errorf(yamlcheck.Path("baseline"), "%q is not one of the modes", s.Baseline)
	}
	if len(s.Fixtures) > 0 {
		if err := sc.validateFixtures(doc, dir); err != nil {
			return err
		}
	} else if len(s.PromptTargets) == 0 {
		return doc.Errorf(yamlcheck.Path("prompt_targets"), "lists no target (or give fixtures: fixed input files)")
	}
	if err := validateTargetsAndSeeds(doc, s); err != nil {
		return err
	}
	if s.OutputTokens <= 0 {
		return doc.Errorf(yamlcheck.Path("output_tokens"), "must be a positive number of tokens")
	}
	if s.ToleranceTokens < 0 {
		return doc.Errorf(yamlcheck.Path("tolerance_tokens"), "must not be negative")
	}
	if s.CtxSize < 0 {
		return doc.Errorf(yamlcheck.Path("ctx_size"), "must be positive")
	}
	if s.RequestTimeout < 0 {
		return doc.Errorf(yamlcheck.Path("request_timeout"), "must be positive")
	}
	return sc.validateModeProfiles(doc)
}

// validateModes checks each mode (a free, safe, unique name; a profile;
// no request field the screen sets itself) and loads its profile.
func (sc *Screen) validateModes(doc *yamlcheck.Doc, dir string) error {
	s := &sc.Spec
	if len(s.Modes) == 0 {
		return doc.Errorf(yamlcheck.Path("modes"), "lists no mode")
	}
	for i, m := range s.Modes {
		switch {
		case m.Name == "":
			return doc.Errorf(yamlcheck.Path("modes", i, "name"), "is required")
		case m.Name == BaselineStart || m.Name == BaselineEnd:
			return doc.Errorf(yamlcheck.Path("modes", i, "name"), "%q is reserved for the baseline runs", m.Name)
		case !safeName(m.Name):
			return doc.Errorf(yamlcheck.Path("modes", i, "name"), "%q: use letters, digits, '.', '_' and '-'", m.Name)
		case sc.Profiles[m.Name] != nil:
			return doc.Errorf(yamlcheck.Path("modes", i, "name"), "%q appears twice", m.Name)
		case m.Profile == "":
			return doc.Errorf(yamlcheck.Path("modes", i, "profile"), "is required")
		}
		for _, f := range screenFields {
			if _, ok := m.Request[f]; ok {
				return doc.Errorf(yamlcheck.Path("modes", i, "request", f), "is set by the screen itself (every sample sends the same %s)", f)
			}
		}
		path := m.Profile
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		p, err := serving.LoadProfile(path)
		if err != nil {
			return doc.Errorf(yamlcheck.Path("modes", i, "profile"), "%v", err)
		}
		sc.Profiles[m.Name] = p
	}
	return nil
}

// validateTargetsAndSeeds: prompt targets are distinct and large enough
// to be a prompt; seeds are given and distinct.
func validateTargetsAndSeeds(doc *yamlcheck.Doc, s *Spec) error {
	seen := map[int]bool{}
	for i, t := range s.PromptTargets {
		if t < 16 {
			return doc.Errorf(yamlcheck.Path("prompt_targets", i), "%d tokens is too small a prompt", t)
		}
		if seen[t] {
			return doc.Errorf(yamlcheck.Path("prompt_targets", i), "%d appears twice", t)
		}
		seen[t] = true
	}
	if len(s.Seeds) == 0 {
		return doc.Errorf(yamlcheck.Path("seeds"), "lists no seed")
	}
	seeds := map[int64]bool{}
	for i, v := range s.Seeds {
		if seeds[v] {
			return doc.Errorf(yamlcheck.Path("seeds", i), "%d appears twice", v)
		}
		seeds[v] = true
	}
	return nil
}

// validateModeProfiles: every mode's profile is a llama-server one whose
// command resolves now (every placeholder has a value), not at the leg's
// start.
func (sc *Screen) validateModeProfiles(doc *yamlcheck.Doc) error {
	s := &sc.Spec
	for i, m := range s.Modes {
		p := sc.Profiles[m.Name]
		if p.API != serving.APILlamaServer {
			return doc.Errorf(yamlcheck.Path("modes", i, "profile"), "profile %s has api %s; screens need llama-server's /tokenize and /completion", p.Name, p.API)
		}
		ctxSize := p.CtxSize
		if s.CtxSize > 0 {
			ctxSize = s.CtxSize
		}
		if _, _, _, err := p.Resolve(serving.Vars{Host: p.Host, Port: 1, Model: p.Model, CtxSize: ctxSize, Evalctl: "evalctl", ProfileDir: p.Dir}); err != nil {
			return doc.Errorf(yamlcheck.Path("modes", i, "profile"), "%v", err)
		}
	}
	return nil
}

// Legs returns the server runs in order: baseline_start, every other mode
// in the spec's order, baseline_end.
func (sc *Screen) Legs() []Leg {
	legs := []Leg{{Label: BaselineStart, Mode: sc.Spec.Baseline}}
	for _, m := range sc.Spec.Modes {
		if m.Name != sc.Spec.Baseline {
			legs = append(legs, Leg{Label: m.Name, Mode: m.Name})
		}
	}
	legs = append(legs, Leg{Label: BaselineEnd, Mode: sc.Spec.Baseline})
	for i := range legs {
		legs[i].Index = i
	}
	return legs
}

// SampleKey names one planned measurement; it is also its file name.
func SampleKey(leg Leg, target int, seed int64) string {
	return fmt.Sprintf("%02d-%s-%d-s%d", leg.Index, leg.Label, target, seed)
}

// Planned is the number of measurements the screen plans.
func (sc *Screen) Planned() int {
	return len(sc.Legs()) * len(sc.targets()) * len(sc.Spec.Seeds)
}

func safeName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}
