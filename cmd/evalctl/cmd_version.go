package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/evalctl/evalctl/orchestrator/runstore"
)

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "version")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("version takes no arguments")
	}
	fmt.Fprintf(e.stdout, "evalctl %s (%s, %s/%s)\n", runstore.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
