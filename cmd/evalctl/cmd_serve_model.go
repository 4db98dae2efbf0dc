package main

import (
	"context"
	"flag"

	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/tasks"
)

func cmdServeModel(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve-model", "serve-model [--addr HOST:PORT] [--suite DIR] [flags]")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	suiteDir := fs.String("suite", "", "suite directory the reference and control:<name> scripts solve (none: those scripts answer 400)")
	decode := fs.Float64("decode-tps", scripted.DefaultDecodeTPS, "emulated decode rate, tokens per second (responses are paced at it)")
	prompt := fs.Float64("prompt-tps", scripted.DefaultPromptTPS, "emulated prompt processing rate, tokens per second (responses are paced at it)")
	realtime := fs.Bool("realtime", false, "the rates of a real model on one GPU (60 and 1500 tokens per second) unless --decode-tps/--prompt-tps say otherwise")
	startup := fs.Duration("startup-delay", 0, "answer 503 \"Loading model\" for this long after start")
	ctxSize := fs.Int("ctx-size", 131072, "context capacity n_ctx, reported in /props and enforced")
	failAbove := fs.Int("fail-above-ctx", 0, "exit 1 at start, like an allocation failure, when --ctx-size exceeds this (0: never)")
	draft := fs.Float64("draft-acceptance", 0, "emulate speculative decoding with this draft acceptance rate in (0, 1] (0: off)")
	draftMax := fs.Int("draft-max", 4, "drafted tokens per speculative step")
	if err := parseNone(fs, args, "serve-model takes no arguments"); err != nil {
		return err
	}
	if *realtime {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["decode-tps"] {
			*decode = 60
		}
		if !set["prompt-tps"] {
			*prompt = 1500
		}
	}
	cfg := scripted.Config{Addr: *addr, DecodeTPS: *decode, PromptTPS: *prompt, Realtime: *realtime, StartupDelay: *startup,
		CtxSize: *ctxSize, FailAboveCtx: *failAbove, DraftAcceptance: *draft, DraftMax: *draftMax, Log: e.stderr,
		BuildInfo: "evalctl-scripted-" + runstore.Version()}
	if err := cfg.Check(); err != nil {
		return err
	}
	if *suiteDir != "" {
		s, err := tasks.LoadSuite(*suiteDir)
		if err != nil {
			return err
		}
		cfg.Suite = s
	}
	return scripted.Serve(ctx, cfg, e.stdout)
}
