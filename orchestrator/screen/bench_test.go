package screen

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/serving/servingtest"
	"github.com/evalctl/evalctl/results/runstore"
)

// BenchmarkScreenClientOverhead measures what a screen request costs beyond
// the server's own timings: against the scripted server in real time,
// end_to_end_tps is compared with tokens / (server prompt_ms +
// predicted_ms). overhead_% is sum(wall) / sum(server seconds) - 1 over the
// iterations; it holds the HTTP exchange and the scripted server's own
// handling, a few milliseconds a request. The seed_rates case runs at the
// rates of the results file's Q4 screens (1500 prompt, 50 decode tok/s).
//
//	go test -run '^$' -bench ScreenClientOverhead -benchtime 10x ./orchestrator/screen
func BenchmarkScreenClientOverhead(b *testing.B) {
	bin := servingtest.EvalctlBinary(b)
	for _, c := range []struct {
		name              string
		target, out       int
		promptTPS, decode string
	}{
		{"fast", 2048, 128, "20000", "1000"},
		{"fast", 8192, 256, "20000", "1000"},
		{"fast", 32768, 512, "20000", "1000"},
		{"seed_rates", 2048, 64, "1500", "50"},
	} {
		b.Run(fmt.Sprintf("%s_prompt%d_out%d", c.name, c.target, c.out), func(b *testing.B) {
			dir := b.TempDir()
			p, err := serving.LoadProfile(servingtest.ScriptedProfile(b, dir, "bench", "--realtime", "--decode-tps", c.decode, "--prompt-tps", c.promptTPS))
			if err != nil {
				b.Fatal(err)
			}
			srv, err := serving.Start(context.Background(), p, serving.StartOptions{LogPath: filepath.Join(dir, "server.log"), Evalctl: bin, CtxSize: 65536})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Stop(context.Background())
			client := newClient(srv.BaseURL)
			sc := &Screen{Spec: Spec{OutputTokens: c.out, ToleranceTokens: 64, RequestTimeout: serving.Duration(time.Minute)},
				Profiles: map[string]*serving.Profile{"m": p}}
			run := &runstore.Run{ID: "bench"}
			var wall, server float64
			var tokens int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := measure(context.Background(), client, run, sc, Leg{Label: "m", Mode: "m"},
					sampleSpec{key: fmt.Sprintf("s%d", i), target: c.target, seed: int64(i)}, "")
				if !s.Counted() {
					b.Fatalf("sample not counted: %s %v %s", s.State, s.Marks, s.Error)
				}
				wall += *s.WallSeconds
				server += (*s.Timings.PromptMS + *s.Timings.PredictedMS) / 1000
				tokens += *s.PredictedN
			}
			b.ReportMetric((wall/server-1)*100, "overhead_%")
			b.ReportMetric(float64(tokens)/wall, "e2e_tok/s")
			b.ReportMetric(float64(tokens)/server, "server_tok/s")
		})
	}
}
