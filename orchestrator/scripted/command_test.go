package scripted_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/scripted"
)

// TestServeRefuses: rates the server cannot emulate are usage errors; an
// allocation failure is the work's, and its lines go to the log; so is a
// suite that does not load.
func TestServeRefuses(t *testing.T) {
	ok := scripted.Config{DecodeTPS: 60, PromptTPS: 1500}
	tests := []struct {
		name  string
		cfg   func(c scripted.Config) scripted.Config
		usage bool
		want  string
		suite string
	}{
		{"zero decode rate", func(c scripted.Config) scripted.Config { c.DecodeTPS = 0; return c }, true, "--decode-tps and --prompt-tps must be positive", ""},
		{"negative prompt rate", func(c scripted.Config) scripted.Config { c.PromptTPS = -1; return c }, true, "must be positive", ""},
		{"draft above 1", func(c scripted.Config) scripted.Config { c.DraftAcceptance = 1.5; return c }, true, "--draft-acceptance 1.5 is not in [0, 1]", ""},
		{"allocation", func(c scripted.Config) scripted.Config { c.CtxSize, c.FailAboveCtx = 262144, 225280; return c }, false, "failed to allocate buffer for kv cache", ""},
		{"missing suite", func(c scripted.Config) scripted.Config { return c }, false, "/nonexistent/suite.yaml", "/nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log, out strings.Builder
			cfg := tt.cfg(ok)
			cfg.Log = &log
			err := scripted.Serve(context.Background(), cfg, tt.suite, &out)
			var ue *evalctl.UsageError
			if err == nil || errors.As(err, &ue) != tt.usage || !strings.Contains(err.Error()+log.String(), tt.want) {
				t.Fatalf("error %v (usage %v), log %q; want usage %v and %q", err, errors.As(err, &ue), log.String(), tt.usage, tt.want)
			}
			if out.Len() != 0 {
				t.Fatalf("a refused server said %q", out.String())
			}
		})
	}
	if err := ok.Check(); err != nil {
		t.Fatalf("real rates refused: %v", err)
	}
}
