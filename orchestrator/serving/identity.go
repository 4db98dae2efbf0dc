package serving

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/results/runstore"
)

// Identity is what was served: the exact command, what the server says
// about itself, and the digests of the files it loaded. Two measurements
// are comparable only when their identities say they should be.
type Identity struct {
	Profile       string   `json:"profile"`
	ProfileSHA256 string   `json:"profile_sha256"`
	API           API      `json:"api"`
	BaseURL       string   `json:"base_url"`
	PID           int      `json:"pid"`
	Argv          []string `json:"argv"`
	// Env is the profile's additions to the environment; values of names
	// that look secret (TOKEN, KEY, SECRET, PASSWORD) are redacted.
	Env          []string  `json:"env"`
	CtxSize      int       `json:"ctx_size"`
	StartedAt    time.Time `json:"started_at"`
	ReadySeconds float64   `json:"ready_seconds"`
	// BuildInfo, ModelPath and ContextSize come from llama-server's /props;
	// nil when the server does not say.
	BuildInfo   *string `json:"build_info"`
	ModelPath   *string `json:"model_path"`
	ContextSize *int64  `json:"context_size"`
	// Props and Models are the raw /props and /v1/models bodies.
	Props  map[string]any `json:"props"`
	Models map[string]any `json:"models"`
	// Missing says which parts could not be read, and why.
	Missing []string     `json:"missing,omitempty"`
	Files   []FileDigest `json:"files"`
}

// RecordIdentity writes the server's identity to path. A server that will
// not say who it is does not stop the work: that goes to events as
// identity_failed and ok is false. Only a cancelled context or a file that
// cannot be written is an error.
func (s *Server) RecordIdentity(ctx context.Context, cache *HashCache, path string, events func(runstore.Event) error) (ok bool, err error) {
	id, err := s.Identity(ctx, cache)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		events(runstore.Event{Kind: "identity_failed", Detail: fmt.Sprintf("%s: %v", s.Profile.Name, err)})
		return false, nil
	}
	return true, runstore.WriteJSON(path, id)
}

// Identity asks the running server about itself and digests the profile's
// hash_files (through cache, which may be nil for no caching). A server
// that does not answer /props is recorded with nil fields and a note; an
// unreadable hash file is an error, since the profile asked for it.
func (s *Server) Identity(ctx context.Context, cache *HashCache) (*Identity, error) {
	id := &Identity{
		Profile: s.Profile.Name, ProfileSHA256: s.Profile.SHA256, API: s.Profile.API, BaseURL: s.BaseURL,
		PID: s.PID, Argv: s.Argv, Env: redactEnv(s.Env), CtxSize: s.CtxSize, StartedAt: s.StartedAt, ReadySeconds: s.ReadySeconds,
	}
	c := model.New(model.Config{BaseURL: s.BaseURL, InfoTimeout: 30 * time.Second})
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if s.Profile.API == APILlamaServer {
		props, err := c.Props(cctx)
		if err != nil {
			id.Missing = append(id.Missing, fmt.Sprintf("props: %v", err))
		} else {
			id.Props = props
			id.BuildInfo, id.ModelPath, id.ContextSize = evalctl.PropsFields(props)
		}
	}
	if models, err := c.Models(cctx); err != nil {
		id.Missing = append(id.Missing, fmt.Sprintf("models: %v", err))
	} else {
		id.Models = models
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, f := range s.HashFiles {
		d, err := cache.Digest(ctx, f)
		if err != nil && d.SHA256 == "" {
			return nil, fmt.Errorf("identity of %s: %w", s.Profile.Name, err)
		}
		id.Files = append(id.Files, d)
	}
	return id, nil
}

// redactEnv hides the values of secret-looking variables, so a run
// directory shared with others never carries an API token.
func redactEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		if strings.Contains(u, "TOKEN") || strings.Contains(u, "KEY") || strings.Contains(u, "SECRET") || strings.Contains(u, "PASSWORD") {
			kv = k + "=<redacted>"
		}
		out = append(out, kv)
	}
	return out
}
