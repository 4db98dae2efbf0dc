package main

import (
	"context"
	"fmt"
	"os"

	"github.com/evalctl/evalctl/orchestrator/view"
)

func cmdView(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "view", "view [DIR] [--addr 127.0.0.1:8765]")
	addr := fs.String("addr", "127.0.0.1:8765", "address to serve on (loopback by default: runs hold prompts and code)")
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("view takes at most one directory (a folder of runs or one run)")
	}
	root := runsRoot()
	if len(pos) == 1 {
		root = pos[0]
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			d, rerr := resolveRun(root)
			if rerr != nil {
				return rerr
			}
			root = d
		}
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return usagef("%s is not a directory of runs", root)
	}
	public, err := view.Public(*addr)
	if err != nil {
		return usagef("--addr %q: %v", *addr, err)
	}
	if public {
		fmt.Fprintf(e.stderr, "warning: serving on %s, reachable from other machines: runs hold prompts, code and transcripts\n", *addr)
	}
	return view.Serve(ctx, root, *addr, e.stdout)
}
