package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("serve-model takes no arguments")
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
	if *decode <= 0 || *prompt <= 0 {
		return usagef("--decode-tps and --prompt-tps must be positive")
	}
	if *draft < 0 || *draft > 1 {
		return usagef("--draft-acceptance %v is not in [0, 1]", *draft)
	}
	cfg := scripted.Config{Addr: *addr, DecodeTPS: *decode, PromptTPS: *prompt, Realtime: *realtime, StartupDelay: *startup,
		CtxSize: *ctxSize, FailAboveCtx: *failAbove, DraftAcceptance: *draft, DraftMax: *draftMax, Log: e.stderr,
		BuildInfo: "evalctl-scripted-" + runstore.Version()}
	if *suiteDir != "" {
		s, err := tasks.LoadSuite(*suiteDir)
		if err != nil {
			return err
		}
		cfg.Suite = s
	}
	srv, err := scripted.New(cfg)
	var ae *scripted.AllocError
	if errors.As(err, &ae) {
		for _, line := range ae.Log {
			fmt.Fprintln(e.stderr, line)
		}
	}
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "scripted model server on %s (models: %s)\n", srv.URL(), strings.Join(scripted.Models(), ", "))
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
