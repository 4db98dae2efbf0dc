package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

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
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usagef("--addr %q: %v", *addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(e.stderr, "warning: serving on %s, reachable from other machines: runs hold prompts, code and transcripts\n", *addr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: view.New(root).Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "evalctl view: serving %s on http://%s/ (Ctrl-C stops)\n", root, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
