package serving

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadProfileStrict(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring, with file:line
	}{
		{name: "unknown field", yaml: "name: a\ncommand: [x]\nctx-size: 8\n", wantErr: `p.yaml:3: unknown field "ctx-size"; did you mean "ctx_size"?`},
		{name: "no name", yaml: "command: [x]\n", wantErr: "p.yaml:1: name: is required"},
		{name: "no command", yaml: "name: a\n", wantErr: "p.yaml:1: command: is required"},
		{name: "unknown placeholder", yaml: "name: a\ncommand:\n  - llama-server\n  - --port\n  - '{{prot}}'\n",
			wantErr: "p.yaml:5: command[2]: unknown placeholder {{prot}}"},
		{name: "malformed placeholder", yaml: "name: a\ncommand: [x, '{{port']\n", wantErr: "p.yaml:2: command[1]: malformed placeholder"},
		{name: "bad restart", yaml: "name: a\ncommand: [x]\nrestart: per_case\n", wantErr: "p.yaml:3: restart: \"per_case\" is not one of never, per_arm, per_attempt"},
		{name: "bad duration", yaml: "name: a\ncommand: [x]\nstartup_timeout: 10 minutes\n", wantErr: "p.yaml:3: startup_timeout: \"10 minutes\" is not a duration (90s, 10m, or a number of seconds)"},
		{name: "duration as a list", yaml: "name: a\ncommand: [x]\nstartup_timeout: [30]\n", wantErr: "p.yaml:3: startup_timeout: expected a duration (90s, 10m, or a number of seconds), got a list"},
		{name: "bad api", yaml: "name: a\ncommand: [x]\napi: tgi\n", wantErr: "p.yaml:3: api:"},
		{name: "bad health path", yaml: "name: a\ncommand: [x]\nhealth_path: health\n", wantErr: "p.yaml:3: health_path"},
		{name: "bad env placeholder", yaml: "name: a\ncommand: [x]\nenv:\n  A: ok\n  B: '{{nope}}'\n", wantErr: "p.yaml:5: env.B: unknown placeholder"},
		{name: "port range", yaml: "name: a\ncommand: [x]\nport: 70000\n", wantErr: "p.yaml:3: port: 70000 is not a port (0 picks a free one)"},
		{name: "two documents", yaml: "name: a\ncommand: [x]\n---\nname: b\n", wantErr: "p.yaml: holds more than one YAML document (a line with ---); keep one"},
		{name: "wrong type", yaml: "name: a\ncommand: [x]\nctx_size: big\n", wantErr: `p.yaml:3: ctx_size: expected a whole number, got the text "big"`},
		{name: "nested wrong type", yaml: "name: a\ncommand: x\n", wantErr: `p.yaml:2: command: expected a list (- item lines, or [a, b]), got the text "x"`},
		{name: "empty", yaml: "", wantErr: "empty file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.yaml")
			os.WriteFile(path, []byte(tc.yaml), 0o644)
			_, err := LoadProfile(path)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestLoadProfileDefaultsAndResolve(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "q4.yaml")
	os.WriteFile(path, []byte(`name: q4-mtp4
command: [llama-server, -m, "{{model}}", --host, "{{host}}", --port, "{{port}}", -c, "{{ctx_size}}", --spec-draft-n-max, "4"]
model: models/q4.gguf
ctx_size: 65536
env: {CUDA_VISIBLE_DEVICES: "0", LOG_DIR: "{{profile_dir}}/logs"}
hash_files: ["{{model}}"]
restart: per_arm
`), 0o644)
	p, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.API != APILlamaServer || p.Host != "127.0.0.1" || p.HealthPath != "/health" || p.Restart != RestartPerArm ||
		time.Duration(p.StartupTimeout) != DefaultStartupTimeout || time.Duration(p.StopTimeout) != DefaultStopTimeout {
		t.Fatalf("defaults not applied: %+v", p)
	}
	if p.Model != filepath.Join(dir, "models/q4.gguf") {
		t.Fatalf("model %q not resolved against the profile's directory", p.Model)
	}
	if len(p.SHA256) != 64 {
		t.Fatalf("profile digest %q", p.SHA256)
	}
	argv, env, files, err := p.Resolve(Vars{Host: "127.0.0.1", Port: 8081, Model: p.Model, CtxSize: 225280, ProfileDir: p.Dir})
	if err != nil {
		t.Fatal(err)
	}
	want := "llama-server -m " + p.Model + " --host 127.0.0.1 --port 8081 -c 225280 --spec-draft-n-max 4"
	if got := strings.Join(argv, " "); got != want {
		t.Fatalf("argv = %q\nwant   %q", got, want)
	}
	if strings.Join(env, ";") != "CUDA_VISIBLE_DEVICES=0;LOG_DIR="+dir+"/logs" {
		t.Fatalf("env = %q", env)
	}
	if len(files) != 1 || files[0] != p.Model {
		t.Fatalf("hash files = %q", files)
	}
	// A placeholder without a value must not become an empty argument.
	if _, _, _, err := p.Resolve(Vars{Host: "h", Port: 1, Model: p.Model}); err == nil || !strings.Contains(err.Error(), "{{ctx_size}} has no value") {
		t.Fatalf("missing ctx size: err = %v", err)
	}
}

func TestExampleProfilesLoad(t *testing.T) {
	files, _ := filepath.Glob("../../examples/profiles/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example profiles found")
	}
	for _, f := range files {
		if _, err := LoadProfile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestProfileDurations: a duration is written as the reference says, Go
// duration text or a number of seconds (startup_timeout: 30 is 30 s).
func TestProfileDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"30": 30 * time.Second, "2.5": 2500 * time.Millisecond, "90s": 90 * time.Second, "10m": 10 * time.Minute} {
		path := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(path, []byte("name: a\ncommand: [x]\nstartup_timeout: "+in+"\nstop_timeout: "+in+"\n"), 0o644)
		p, err := LoadProfile(path)
		if err != nil || time.Duration(p.StartupTimeout) != want || time.Duration(p.StopTimeout) != want {
			t.Errorf("%s: %v %v, want %v", in, p, err, want)
		}
	}
}
