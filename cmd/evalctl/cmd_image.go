package main

import (
	"context"
	"fmt"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/sandbox"
)

func cmdImage(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "build" {
		return subHelp(e, args, "image build", "usage: evalctl image build [--force] [--quiet]\n\nBuild (or reuse) the sandbox image.")
	}
	fs := newFlags(e, "image build", "image build [--force] [--quiet]")
	force := fs.Bool("force", false, "rebuild even when an image for this recipe exists")
	quiet := fs.Bool("quiet", false, "print only the reference and the image ID")
	if err := parseNone(fs, args[1:], "image build takes no arguments"); err != nil {
		return err
	}
	return sandbox.BuildImage(ctx, *force, *quiet, e.stdout, e.stderr)
}

func cmdSandbox(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "prune" {
		return subHelp(e, args, "sandbox prune", "usage: evalctl sandbox prune [--run ID]\n\nRemove sandbox containers left behind by a crashed run. Without --run it removes every\nevalctl container, those of a run still in progress included (a resumed run removes its\nown leftovers by itself).")
	}
	fs := newFlags(e, "sandbox prune", "sandbox prune [--run ID]")
	run := fs.String("run", "", "only the containers of this run id (without it: every evalctl container, runs in progress included)")
	if err := parseNone(fs, args[1:], "sandbox prune takes no arguments"); err != nil {
		return err
	}
	return sandbox.PruneRun(ctx, *run, e.stdout)
}

// subHelp answers a command group called without its one subcommand:
// help on -h, else a usage error.
func subHelp(e *env, args []string, sub, help string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(e.stdout, help)
		return nil
	}
	return usagef("expected '%s'", sub)
}

// newGraderOn is newGrader on the engines a hosts file names (the local
// engine alone when file is "").
func newGraderOn(ctx context.Context, e *env, conc int, file string) (*grader.Grader, func(), error) {
	if file == "" {
		return newGrader(ctx, e, conc)
	}
	hosts, err := orchestrator.Request{HostsFile: file}.SandboxHosts()
	if err != nil {
		return nil, nil, err
	}
	eng, img, err := sandbox.ConnectImage(ctx, e.stderr)
	if err != nil {
		return nil, nil, err
	}
	pool, err := orchestrator.ConnectSandboxHosts(ctx, eng, hosts, e.stderr)
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	pool.UseImage(img)
	return grader.New(pool, img.Ref, img.ID, grader.Options{Concurrency: conc}), func() { pool.Close(); eng.Close() }, nil
}

// newGrader connects to Docker and reuses (or builds) the sandbox image.
func newGrader(ctx context.Context, e *env, conc int) (*grader.Grader, func(), error) {
	eng, img, err := sandbox.ConnectImage(ctx, e.stderr)
	if err != nil {
		return nil, nil, err
	}
	return grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: conc}), func() { eng.Close() }, nil
}
