package screen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScreenSpecStrict(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("name: a\ncommand: [srv, -c, '{{ctx_size}}']\nctx_size: 4096\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "noctx.yaml"), []byte("name: b\ncommand: [srv, -c, '{{ctx_size}}']\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "vllm.yaml"), []byte("name: v\napi: openai\ncommand: [vllm]\n"), 0o644)
	base := "name: s\nbaseline: a\nprompt_targets: [8192]\nseeds: [1]\noutput_tokens: 64\nmodes:\n  - {name: a, profile: a.yaml}\n"
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"ok", base, ""},
		{"unknown field", base + "seed: [1]\n", `s.yaml:8: unknown field "seed"; did you mean "seeds"?`},
		{"baseline not a mode", strings.Replace(base, "baseline: a", "baseline: z", 1), `s.yaml:2: baseline: "z" is not one of the modes`},
		{"reserved name", base + "  - {name: baseline_end, profile: a.yaml}\n", "s.yaml:8: modes[1].name: \"baseline_end\" is reserved"},
		{"duplicate mode", base + "  - {name: a, profile: a.yaml}\n", `s.yaml:8: modes[1].name: "a" appears twice`},
		{"missing profile", base + "  - {name: b, profile: nope.yaml}\n", "s.yaml:8: modes[1].profile: load profile"},
		{"ctx size unset", base + "  - {name: b, profile: noctx.yaml}\n", "s.yaml:8: modes[1].profile: profile b: command: placeholder {{ctx_size}} has no value"},
		{"ctx size from spec", base + "  - {name: b, profile: noctx.yaml}\nctx_size: 8192\n", ""},
		{"openai api", base + "  - {name: v, profile: vllm.yaml}\n", "s.yaml:8: modes[1].profile: profile v has api openai; screens need llama-server"},
		{"no output", strings.Replace(base, "output_tokens: 64", "output_tokens: 0", 1), "s.yaml:5: output_tokens"},
		{"trailing document", base + "---\nname: t\n", "s.yaml: holds more than one YAML document (a line with ---); keep one"},
		{"wrong type", base + "tolerance_tokens: many\n", `s.yaml:8: tolerance_tokens: expected a whole number, got the text "many"`},
		{"nested unknown field", base + "  - {name: b, profil: a.yaml}\n", `s.yaml:8: modes[1]: unknown field "profil"; did you mean "profile"?`},
		{"duplicate seed", strings.Replace(base, "seeds: [1]", "seeds: [1, 1]", 1), "s.yaml:4: seeds[1]: 1 appears twice"},
		{"mode request fields", base + "  - {name: b, profile: a.yaml, request: {logit_bias: [[50259, 50]]}}\n", ""},
		{"mode request cannot change the sample", base + "  - {name: b, profile: a.yaml, request: {seed: 3}}\n", "s.yaml:8: modes[1].request.seed: is set by the screen itself"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "s.yaml")
			os.WriteFile(path, []byte(tc.yaml), 0o644)
			sc, err := LoadSpec(path)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if sc.Spec.ToleranceTokens != 64 || len(sc.Legs()) != 2+len(sc.Spec.Modes)-1 {
					t.Fatalf("defaults or legs wrong: %+v %v", sc.Spec, sc.Legs())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestExampleScreensLoad(t *testing.T) {
	for _, f := range []string{"../../examples/screen.yaml", "../../examples/screen-scripted.yaml"} {
		sc, err := LoadSpec(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if sc.Planned() == 0 {
			t.Errorf("%s plans nothing", f)
		}
	}
}
