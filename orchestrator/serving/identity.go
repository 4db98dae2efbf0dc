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
// about itself, and the digests of the files it loaded (a record of the
// run directory, in the root package).
type Identity = evalctl.ServerIdentity

// RecordIdentity writes the server's identity to path. A server that will
// not say who it is does not stop the work: that goes to events as
// identity_failed and ok is false. Only a cancelled context or a file that
// cannot be written is an error.
func (s *Server) RecordIdentity(ctx context.Context, cache *HashCache, path string, events func(runstore.Event)) (ok bool, err error) {
	id, err := s.Identity(ctx, cache)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		events(runstore.Event{Kind: evalctl.EventIdentityFailed, Detail: fmt.Sprintf("%s: %v", s.Profile.Name, err)})
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
