package orchestrator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"sort"

	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/results/runstore"
)

// ArmIdentityOf is the arm's pooling identity: what changes how it behaves
// (model name, output cap, sampling, reasoning, extra request fields,
// budgets, streaming, the server profile's command line, model and
// context size, and what the endpoint said it runs at preflight: its build
// and model; the weights' digests are added at registration, see
// withWeights) and nothing about where it listened (base URL, host, port,
// device label, API-key variable). Two runs' attempts of an arm pool when
// their identities are equal; when they are not, the fields say why.
// check is the arm's preflight (nil when there was none).
func ArmIdentityOf(arm *Arm, check *runstore.EndpointCheck) *runstore.ArmIdentity {
	behaviour := struct {
		Model          string         `json:"model"`
		TimeoutSeconds float64        `json:"request_timeout_seconds,omitempty"`
		MaxTokens      int            `json:"max_tokens"`
		Sampling       Sampling       `json:"sampling"`
		Reasoning      Reasoning      `json:"reasoning"`
		Extra          map[string]any `json:"extra,omitempty"`
		Budgets        Budgets        `json:"budgets"`
		Stream         *bool          `json:"stream,omitempty"`
		ReuseCache     bool           `json:"reuse_server_cache,omitempty"`
	}{arm.Endpoint.Model, arm.Endpoint.TimeoutSeconds, arm.MaxTokens, arm.Sampling, arm.Reasoning, arm.Extra, arm.Budgets, arm.Stream, arm.ReuseServerCache}
	fields := map[string]string{}
	flattenJSON(fields, "", behaviour)
	if arm.Profile != "" {
		if p, err := serving.LoadProfile(arm.Profile); err == nil {
			prof := struct {
				API     serving.API       `json:"api"`
				Command []string          `json:"command"`
				Model   string            `json:"model"`
				CtxSize int               `json:"ctx_size"`
				Env     map[string]string `json:"env,omitempty"`
			}{p.API, p.Command, p.Model, p.CtxSize, p.Env}
			flattenJSON(fields, "profile", prof)
		} else {
			// The profile's digest stands in for what cannot be read.
			fields["profile.sha256"] = arm.ProfileSHA256
		}
	}
	if check != nil && check.Info != nil {
		if b := check.Info.BuildInfo; b != nil {
			fields["server.build_info"] = *b
		}
		if m := check.Info.ModelPath; m != nil {
			fields["server.model_path"] = *m
		}
	}
	return newIdentity(fields)
}

func newIdentity(fields map[string]string) *runstore.ArmIdentity {
	data, _ := json.Marshal(fields) // map keys are sorted
	sum := sha256.Sum256(data)
	return &runstore.ArmIdentity{SHA256: hex.EncodeToString(sum[:]), Fields: fields}
}

// withWeights adds to a profile arm's identity the SHA-256 of every file
// its profile names in hash_files (weights, draft model, chat template) as
// "weights.NAME", read from the per-user digest cache when a file is
// unchanged. Files that cannot be resolved or read are left out: the
// identity holds what is known.
func withWeights(ctx context.Context, id *runstore.ArmIdentity, arm *Arm, cache *serving.HashCache) *runstore.ArmIdentity {
	if arm.Profile == "" {
		return id
	}
	p, err := serving.LoadProfile(arm.Profile)
	if err != nil || len(p.HashFiles) == 0 {
		return id
	}
	// Hash files name weights, never the address: host and port only fill
	// the template.
	_, _, files, err := p.Resolve(serving.Vars{Host: "127.0.0.1", Port: 1, Model: p.Model, CtxSize: max(p.CtxSize, 1), Evalctl: "evalctl", ProfileDir: p.Dir})
	if err != nil {
		return id
	}
	fields := make(map[string]string, len(id.Fields)+len(files))
	for k, v := range id.Fields {
		fields[k] = v
	}
	for _, f := range files {
		d, err := cache.Digest(ctx, f)
		if err != nil {
			continue
		}
		fields["weights."+filepath.Base(f)] = d.SHA256
	}
	return newIdentity(fields)
}

// flattenJSON writes v's JSON form into out as dotted paths to the JSON
// text of each leaf ("sampling.temperature": "0.6").
func flattenJSON(out map[string]string, prefix string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		out[prefix] = err.Error()
		return
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		out[prefix] = string(data)
		return
	}
	flattenTree(out, prefix, tree)
}

func flattenTree(out map[string]string, prefix string, v any) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		data, _ := json.Marshal(v)
		out[prefix] = string(data)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		flattenTree(out, p, m[k])
	}
}

// checkOf returns the preflight of the named arm, or nil.
func checkOf(checks []runstore.EndpointCheck, arm string) *runstore.EndpointCheck {
	for i := range checks {
		if checks[i].Arm == arm {
			return &checks[i]
		}
	}
	return nil
}
