package main

import (
	"context"
	"fmt"

	"github.com/evalctl/evalctl/orchestrator/report"
)

func cmdVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "verify", "verify DIR")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("verify takes one export directory")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := fs.Arg(0)
	if err := report.Verify(dir); err != nil {
		return fmt.Errorf("verify %s: %w", dir, err)
	}
	fmt.Fprintf(e.stdout, "%s: checksums match, every outcome recomputes from its evidence and every aggregate from attempts.json\n", dir)
	return nil
}
