package scripted

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// Check refuses rates and a draft acceptance the server cannot emulate
// (the flags of 'evalctl serve-model').
func (c Config) Check() error {
	if c.DecodeTPS <= 0 || c.PromptTPS <= 0 {
		return evalctl.Usagef("--decode-tps and --prompt-tps must be positive")
	}
	if c.DraftAcceptance < 0 || c.DraftAcceptance > 1 {
		return evalctl.Usagef("--draft-acceptance %v is not in [0, 1]", c.DraftAcceptance)
	}
	return nil
}

// Serve is 'evalctl serve-model': it checks cfg, loads the suite in
// suiteDir ("": none) for the reference and control scripts, starts its
// server, says where on out and serves until ctx ends. A refused
// allocation logs the server's lines to cfg.Log, as llama-server would.
func Serve(ctx context.Context, cfg Config, suiteDir string, out io.Writer) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	if suiteDir != "" {
		s, err := tasks.LoadSuite(suiteDir)
		if err != nil {
			return err
		}
		cfg.Suite = s
	}
	srv, err := New(cfg)
	var ae *AllocError
	if errors.As(err, &ae) && cfg.Log != nil {
		for _, line := range ae.Log {
			fmt.Fprintln(cfg.Log, line)
		}
	}
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	fmt.Fprintf(out, "scripted model server on %s (models: %s)\n", srv.URL(), strings.Join(Models(), ", "))
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}

// Bind defines the flags of 'evalctl serve-model' that fill c; call
// Realtime after parsing.
func (c *Config) Bind(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.Float64Var(&c.DecodeTPS, "decode-tps", DefaultDecodeTPS, "emulated decode rate, tokens per second (responses are paced at it)")
	fs.Float64Var(&c.PromptTPS, "prompt-tps", DefaultPromptTPS, "emulated prompt processing rate, tokens per second (responses are paced at it)")
	fs.BoolVar(&c.Realtime, "realtime", false, "the rates of a real model on one GPU (60 and 1500 tokens per second) unless --decode-tps/--prompt-tps say otherwise")
	fs.DurationVar(&c.StartupDelay, "startup-delay", 0, "answer 503 \"Loading model\" for this long after start")
	fs.IntVar(&c.CtxSize, "ctx-size", 131072, "context capacity n_ctx, reported in /props and enforced")
	fs.IntVar(&c.FailAboveCtx, "fail-above-ctx", 0, "exit 1 at start, like an allocation failure, when --ctx-size exceeds this (0: never)")
	fs.Float64Var(&c.DraftAcceptance, "draft-acceptance", 0, "emulate speculative decoding with this draft acceptance rate in (0, 1] (0: off)")
	fs.IntVar(&c.DraftMax, "draft-max", 4, "drafted tokens per speculative step")
}

// RealtimeRates gives c, when --realtime was set, the rates of a real
// model for the rate flags fs was not given.
func (c *Config) RealtimeRates(fs *flag.FlagSet) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.Realtime && !set["decode-tps"] {
		c.DecodeTPS = 60
	}
	if c.Realtime && !set["prompt-tps"] {
		c.PromptTPS = 1500
	}
}
