package main

import (
	"context"
	"fmt"
	"time"

	"github.com/evalctl/evalctl/sandbox"
)

func cmdImage(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "build" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(e.stdout, "usage: evalctl image build [--force] [--quiet]\n\nBuild (or reuse) the sandbox image.")
			return nil
		}
		return usagef("expected 'image build'")
	}
	fs := newFlags(e, "image build", "image build [--force] [--quiet]")
	force := fs.Bool("force", false, "rebuild even when an image for this recipe exists")
	quiet := fs.Bool("quiet", false, "print only the reference and the image ID")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("image build takes no arguments")
	}
	start := time.Now()
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	recipe, err := sandbox.DefaultRecipe()
	if err != nil {
		return err
	}
	opts := sandbox.BuildOptions{Force: *force}
	if !*quiet {
		opts.Log = e.stderr
	}
	img, err := eng.Build(ctx, recipe, opts)
	if err != nil {
		return err
	}
	verb := "built"
	if img.Reused {
		verb = "reused"
	}
	fmt.Fprintf(e.stdout, "%s %s\n", img.Ref, img.ID)
	if !*quiet {
		fmt.Fprintf(e.stderr, "%s the sandbox image in %.1fs\n", verb, time.Since(start).Seconds())
	}
	return nil
}

func cmdSandbox(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "prune" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(e.stdout, "usage: evalctl sandbox prune [--run ID]\n\nRemove sandbox containers left behind by a crashed run. Without --run it removes every\nevalctl container, those of a run still in progress included (a resumed run removes its\nown leftovers by itself).")
			return nil
		}
		return usagef("expected 'sandbox prune'")
	}
	fs := newFlags(e, "sandbox prune", "sandbox prune [--run ID]")
	run := fs.String("run", "", "only the containers of this run id (without it: every evalctl container, runs in progress included)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("sandbox prune takes no arguments")
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	labels := map[string]string{}
	if *run != "" {
		labels[sandbox.LabelRun] = *run
	}
	removed, err := eng.Prune(ctx, labels)
	for _, name := range removed {
		fmt.Fprintf(e.stdout, "removed %s\n", name)
	}
	fmt.Fprintf(e.stdout, "%d container(s) removed\n", len(removed))
	return err
}
