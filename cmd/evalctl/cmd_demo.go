package main

import (
	"context"
	"strings"

	"github.com/evalctl/evalctl/orchestrator/demo"
	"github.com/evalctl/evalctl/sandbox"
)

func cmdDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "demo [--suite DIR] [--out DIR] [--cases a,b] [--realtime]")
	suite := fs.String("suite", "", "suite directory (default: the built-in development suite)")
	out := fs.String("out", "runs", "directory under which the run directory is created")
	cases := fs.String("cases", "", "comma-separated cases (default: all)")
	realtime := fs.Bool("realtime", false, "pace the scripted model like a real one (60 tokens per second) instead of its fast default")
	if err := parseNone(fs, args, "demo takes no arguments"); err != nil {
		return err
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	var list []string
	if *cases != "" {
		list = strings.Split(*cases, ",")
	}
	_, err = demo.Run(ctx, demo.Options{SuiteDir: *suite, OutDir: *out, Cases: list, Realtime: *realtime, Engine: eng, Progress: e.stderr, Stdout: e.stdout, Live: stderrIsTerminal(e)})
	return err
}
