// Package serving supervises model servers: it starts and stops them from
// profiles, watches them, and records what was served (build, model, flags,
// weight digests). Cohorts and screens both start servers through it; what
// a screen or probe measures lives in package screen.
//
// A server is started in its own process group and stopped as a group
// (SIGTERM, then SIGKILL), with the parent-death signal set on Linux, so no
// model server outlives evalctl, whether it ends normally, crashes or is
// interrupted.
package serving

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/yamlcheck"
)

// Restart says when a cohort restarts the model server of an arm.
type Restart string

// Restart policies. never: one server for the whole cohort (arms that share
// a profile share it); per_arm: a fresh server whenever the cohort switches
// to another arm; per_attempt: a fresh server for every attempt, so no
// cache or fragmentation carries over.
const (
	RestartNever      Restart = "never"
	RestartPerArm     Restart = "per_arm"
	RestartPerAttempt Restart = "per_attempt"
)

// API names the server family, which decides where identity comes from.
type API = evalctl.ServerAPI

// Server families. llama-server answers /props, /tokenize and /completion;
// an OpenAI-compatible server (vLLM) only /v1/models.
const (
	APILlamaServer API = "llama-server"
	APIOpenAI      API = "openai"
)

// Defaults for profile fields left out: the fields' default tags, which
// LoadProfile applies.
var (
	DefaultStartupTimeout = time.Duration(yamlcheck.Default[Duration](Profile{}, "startup_timeout"))
	DefaultStopTimeout    = time.Duration(yamlcheck.Default[Duration](Profile{}, "stop_timeout"))
)

// Profile is how to start one model server configuration. Command, Env and
// HashFiles may hold the placeholders {{host}}, {{port}}, {{model}},
// {{ctx_size}}, {{evalctl}} (this evalctl binary) and {{profile_dir}}.
type Profile struct {
	// Name names the server configuration (required).
	Name string `yaml:"name" json:"name"`
	// API is llama-server or openai (vLLM and the like).
	API API `yaml:"api" json:"api" enum:"llama-server,openai" default:"llama-server"`
	// Command is the server's argv, templated.
	Command []string `yaml:"command" json:"command"`
	// Model is the weights path; relative paths are from the profile file.
	Model string `yaml:"model" json:"model"`
	// CtxSize is the context size passed as {{ctx_size}}; a capacity probe
	// overrides it per size.
	CtxSize int `yaml:"ctx_size" json:"ctx_size"`
	// Host is the address the server listens on.
	Host string `yaml:"host" json:"host" default:"127.0.0.1"`
	// Port 0 picks a free port at each start.
	Port int `yaml:"port" json:"port"`
	// HealthPath is polled until the server answers 200.
	HealthPath string `yaml:"health_path" json:"health_path" default:"/health"`
	// StartupTimeout bounds the wait for health.
	StartupTimeout Duration `yaml:"startup_timeout" json:"startup_timeout" default:"10m"`
	// StopTimeout is how long a stop waits before killing.
	StopTimeout Duration `yaml:"stop_timeout" json:"stop_timeout" default:"15s"`
	// Env adds environment variables to the server's, templated.
	Env map[string]string `yaml:"env" json:"env"`
	// WorkDir is the server's working directory; "" means the profile's.
	WorkDir string `yaml:"workdir" json:"workdir"`
	// HashFiles are the files whose SHA-256 the identity records (model
	// weights, draft models, chat templates), templated.
	HashFiles []string `yaml:"hash_files" json:"hash_files"`
	// Restart is when a cohort restarts the server: never, per_arm (on
	// each switch of arm) or per_attempt.
	Restart Restart `yaml:"restart" json:"restart" enum:"never,per_arm,per_attempt" default:"never"`
	// Device names the hardware the server runs on (a cohort runs arms on
	// different devices side by side; see the plan's concurrency).
	Device string `yaml:"device" json:"device,omitempty"`
	// Vars declares the profile's own placeholders with their default
	// values ({{spec_draft_n_max}} in command): a server flag an arm may set
	// (profile_vars) and a sweep may vary.
	Vars map[string]string `yaml:"vars" json:"vars,omitempty"`

	// Dir is the directory of the profile file; SHA256 is the file's digest.
	Dir    string `yaml:"-" json:"dir"`
	SHA256 string `yaml:"-" json:"sha256"`
}

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// placeholders are the names a profile may use.
var placeholders = map[string]bool{
	"host": true, "port": true, "model": true, "ctx_size": true, "evalctl": true, "profile_dir": true,
}

// LoadProfile reads a profile file strictly: unknown fields, bad values and
// unknown placeholders are errors with file:line.
func LoadProfile(file string) (*Profile, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("load profile %s: %w", file, err)
	}
	// One read: the digest is of the bytes that were decoded.
	data, err := yamlcheck.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	var p Profile
	doc, err := yamlcheck.Decode(abs, data, &p)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	sum := sha256.Sum256(data)
	p.SHA256 = hex.EncodeToString(sum[:])
	p.Dir = filepath.Dir(abs)
	if err := p.validate(doc); err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	return &p, nil
}

func (p *Profile) validate(doc *yamlcheck.Doc) error {
	if err := yamlcheck.FillDefaults(p); err != nil {
		return err
	}
	if p.Name == "" {
		return doc.Errorf(yamlcheck.Path("name"), "is required")
	}
	switch p.API {
	case APILlamaServer, APIOpenAI:
	default:
		return doc.Errorf(yamlcheck.Path("api"), "%q is not one of llama-server, openai", p.API)
	}
	if len(p.Command) == 0 || p.Command[0] == "" {
		return doc.Errorf(yamlcheck.Path("command"), "is required (the server's argv)")
	}
	for k, v := range p.Vars {
		if placeholders[k] || !placeholderRE.MatchString("{{"+k+"}}") {
			return doc.Errorf(yamlcheck.Path("vars", k), "%q cannot be a variable name (a built-in placeholder, or not a name)", k)
		}
		if v == "" {
			return doc.Errorf(yamlcheck.Path("vars", k), "needs a default value")
		}
	}
	for i, a := range p.Command {
		if err := p.checkPlaceholders(a); err != nil {
			return doc.Errorf(yamlcheck.Path("command", i), "%v", err)
		}
	}
	for i, a := range p.HashFiles {
		if err := p.checkPlaceholders(a); err != nil {
			return doc.Errorf(yamlcheck.Path("hash_files", i), "%v", err)
		}
	}
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return doc.Errorf(yamlcheck.Path("env"), "%q is not an environment variable name", k)
		}
		if err := p.checkPlaceholders(p.Env[k]); err != nil {
			return doc.Errorf(yamlcheck.Path("env", k), "%v", err)
		}
	}
	if p.Model != "" && !filepath.IsAbs(p.Model) {
		p.Model = filepath.Join(p.Dir, p.Model)
	}
	if p.CtxSize < 0 {
		return doc.Errorf(yamlcheck.Path("ctx_size"), "must be positive")
	}
	if p.Port < 0 || p.Port > 65535 {
		return doc.Errorf(yamlcheck.Path("port"), "%d is not a port (0 picks a free one)", p.Port)
	}
	if !strings.HasPrefix(p.HealthPath, "/") {
		return doc.Errorf(yamlcheck.Path("health_path"), "%q must start with /", p.HealthPath)
	}
	if p.StartupTimeout < 0 {
		return doc.Errorf(yamlcheck.Path("startup_timeout"), "must be positive")
	}
	if p.StopTimeout < 0 {
		return doc.Errorf(yamlcheck.Path("stop_timeout"), "must be positive")
	}
	switch p.Restart {
	case RestartNever, RestartPerArm, RestartPerAttempt:
	default:
		return doc.Errorf(yamlcheck.Path("restart"), "%q is not one of never, per_arm, per_attempt", p.Restart)
	}
	if p.WorkDir != "" && !filepath.IsAbs(p.WorkDir) {
		p.WorkDir = filepath.Join(p.Dir, p.WorkDir)
	}
	return nil
}

func (p *Profile) checkPlaceholders(s string) error {
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		if _, own := p.Vars[m[1]]; !placeholders[m[1]] && !own {
			return fmt.Errorf("unknown placeholder {{%s}} (known: host, port, model, ctx_size, evalctl, profile_dir)", m[1])
		}
	}
	if strings.Count(s, "{{") != len(placeholderRE.FindAllString(s, -1)) {
		return fmt.Errorf("malformed placeholder in %q (write {{name}})", s)
	}
	return nil
}

// Vars are the values placeholders expand to at one start.
type Vars struct {
	Host       string
	Port       int
	Model      string
	CtxSize    int
	Evalctl    string
	ProfileDir string
	// Own are the values of the profile's declared variables (its
	// defaults, overridden by the arm's profile_vars).
	Own map[string]string
}

// expand replaces placeholders in s. A placeholder whose value is unset
// ({{ctx_size}} with no size, {{model}} with no model) is an error rather
// than an empty argument the server would misread.
func (v Vars) expand(s string) (string, error) {
	var err error
	out := placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		name := placeholderRE.FindStringSubmatch(m)[1]
		var val string
		switch name {
		case "host":
			val = v.Host
		case "port":
			if v.Port > 0 {
				val = strconv.Itoa(v.Port)
			}
		case "model":
			val = v.Model
		case "ctx_size":
			if v.CtxSize > 0 {
				val = strconv.Itoa(v.CtxSize)
			}
		case "evalctl":
			val = v.Evalctl
		case "profile_dir":
			val = v.ProfileDir
		default:
			val = v.Own[name]
		}
		if val == "" && err == nil {
			err = fmt.Errorf("placeholder {{%s}} has no value (set %s in the profile)", name, name)
		}
		return val
	})
	return out, err
}

// Resolve expands the profile's command, environment and hash files with
// vars: what Start would run.
func (p *Profile) Resolve(v Vars) (argv []string, env []string, hashFiles []string, err error) {
	if v.Own == nil {
		v.Own = p.Vars
	}
	for _, a := range p.Command {
		s, err := v.expand(a)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("profile %s: command: %w", p.Name, err)
		}
		argv = append(argv, s)
	}
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, err := v.expand(p.Env[k])
		if err != nil {
			return nil, nil, nil, fmt.Errorf("profile %s: env %s: %w", p.Name, k, err)
		}
		env = append(env, k+"="+s)
	}
	for _, h := range p.HashFiles {
		s, err := v.expand(h)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("profile %s: hash_files: %w", p.Name, err)
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(p.Dir, s)
		}
		hashFiles = append(hashFiles, s)
	}
	return argv, env, hashFiles, nil
}

// OwnVars is the profile's declared variables with set's values over the
// defaults; a name the profile does not declare is an error.
func (p *Profile) OwnVars(set map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range p.Vars {
		out[k] = v
	}
	for k, v := range set {
		if _, ok := p.Vars[k]; !ok {
			return nil, fmt.Errorf("profile %s declares no variable %q (vars: %s)", p.Name, k, strings.Join(sortedKeys(p.Vars), ", "))
		}
		if v == "" {
			return nil, fmt.Errorf("profile variable %q set to nothing", k)
		}
		out[k] = v
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
