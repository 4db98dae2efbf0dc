package orchestrator_test

import (
	"context"
	"testing"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// TestAttemptsStartCold: the scripted server carries its prompt cache from
// request to request, as llama-server does (the preflight's request, then
// each attempt's, share the tools' prefix). By default an attempt's first
// request reuses none of it (first_cached_tokens 0, also after an attempt
// that did reuse); an arm with reuse_server_cache: true reuses it.
func TestAttemptsStartCold(t *testing.T) {
	eng, img := sandboxtest.Engine(t)
	srv := startServer(t)
	f := adderPlan(t, "", []string{
		`{name: cold1, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`,
		`{name: warm, endpoint: {base_url: "` + srv.URL() + `", model: reference}, reuse_server_cache: true}`,
		`{name: cold2, endpoint: {base_url: "` + srv.URL() + `", model: reference}}`,
	}, "concurrency: 1\n")
	res, err := orchestrator.Run(context.Background(), orchestrator.Options{Plan: loadPlan(t, f), OutDir: t.TempDir(), Engine: eng, Image: img})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Attempts {
		m := a.Measurements
		if m == nil || m.FirstCachedTokens == nil {
			t.Fatalf("%s: no first_cached_tokens recorded (%+v)", a.Arm, m)
		}
		got := *m.FirstCachedTokens
		if warm := a.Arm == "warm"; warm && got == 0 || !warm && got != 0 {
			t.Errorf("%s: first request reused %d cached tokens; want 0 for a cold start, more for the warm arm", a.Arm, got)
		}
		if m.CachedTokens == nil || *m.CachedTokens <= got {
			t.Errorf("%s: %v cached in all, %d at the first request; want reuse from step to step", a.Arm, m.CachedTokens, got)
		}
	}
}
