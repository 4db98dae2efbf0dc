package scripted

import (
	"flag"
	"io"
	"testing"
)

// TestRealtimeRates: --realtime gives the rates of a real model to the
// rate flags not given, and leaves a given one as the user set it.
func TestRealtimeRates(t *testing.T) {
	for _, tt := range []struct {
		args           []string
		decode, prompt float64
	}{
		{nil, DefaultDecodeTPS, DefaultPromptTPS},
		{[]string{"--realtime"}, 60, 1500},
		{[]string{"--realtime", "--decode-tps", "30"}, 30, 1500},
		{[]string{"--realtime", "--prompt-tps", "700"}, 60, 700},
		{[]string{"--decode-tps", "30"}, 30, DefaultPromptTPS},
	} {
		fs := flag.NewFlagSet("serve-model", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var c Config
		c.Bind(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		c.RealtimeRates(fs)
		if c.DecodeTPS != tt.decode || c.PromptTPS != tt.prompt {
			t.Errorf("%q: decode %v prompt %v, want %v %v", tt.args, c.DecodeTPS, c.PromptTPS, tt.decode, tt.prompt)
		}
	}
}
