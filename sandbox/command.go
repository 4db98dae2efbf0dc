package sandbox

import (
	"context"
	"fmt"
	"io"
	"time"
)

// This file holds the work of 'evalctl image build' and 'evalctl sandbox
// prune', and the image every grading command starts from.

// ConnectImage connects to the Docker Engine and reuses (or builds, logging
// to log) the image of the default recipe; the caller closes the engine.
func ConnectImage(ctx context.Context, log io.Writer) (*Engine, *BuiltImage, error) {
	return connectImage(ctx, BuildOptions{Log: log})
}

// connectImage is ConnectImage with the build's options (a forced build).
func connectImage(ctx context.Context, opts BuildOptions) (*Engine, *BuiltImage, error) {
	eng, err := Connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	recipe, err := DefaultRecipe()
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	img, err := eng.Build(ctx, recipe, opts)
	if err != nil {
		eng.Close()
		return nil, nil, fmt.Errorf("sandbox image: %w", err)
	}
	return eng, img, nil
}

// BuildImage builds the image of the default recipe, or reuses it unless
// force, and prints its reference and ID on stdout; unless quiet, the
// build's log and how long it took go to log.
func BuildImage(ctx context.Context, force, quiet bool, stdout, log io.Writer) error {
	start := time.Now()
	opts := BuildOptions{Force: force}
	if !quiet {
		opts.Log = log
	}
	eng, img, err := connectImage(ctx, opts)
	if err != nil {
		return err
	}
	defer eng.Close()
	verb := "built"
	if img.Reused {
		verb = "reused"
	}
	fmt.Fprintf(stdout, "%s %s\n", img.Ref, img.ID)
	if !quiet {
		fmt.Fprintf(log, "%s the sandbox image in %.1fs\n", verb, time.Since(start).Seconds())
	}
	return nil
}

// PruneRun removes the sandbox containers of the run with this id (every
// evalctl container when run is ""), naming each on out, and returns how
// many it removed.
func PruneRun(ctx context.Context, run string, out io.Writer) (int, error) {
	eng, err := Connect(ctx)
	if err != nil {
		return 0, err
	}
	defer eng.Close()
	labels := map[string]string{}
	if run != "" {
		labels[LabelRun] = run
	}
	removed, err := eng.Prune(ctx, labels)
	for _, name := range removed {
		fmt.Fprintf(out, "removed %s\n", name)
	}
	fmt.Fprintf(out, "%d container(s) removed\n", len(removed))
	return len(removed), err
}
