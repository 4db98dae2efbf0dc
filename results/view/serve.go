package view

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// Public reports whether addr ("host:port") may be reachable from other
// machines: any host but loopback. Runs hold prompts, code and
// transcripts, so serving them there deserves a warning.
func Public(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	ip := net.ParseIP(host)
	return host != "localhost" && (ip == nil || !ip.IsLoopback()), nil
}

// Serve serves the viewer of the runs under root on addr until ctx ends,
// saying where on w once it listens, then shuts down gracefully.
func Serve(ctx context.Context, root, addr string, w io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: New(root).Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(w, "evalctl view: serving %s on http://%s/ (Ctrl-C stops)\n", root, ln.Addr())
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

// ServeRuns is 'evalctl view [DIR]': it serves the folder of runs dir, or
// the one run it names (a directory, or an id or prefix under root), or
// root when dir is "". A folder that is not there or an address that does
// not parse is a usage error; a non-loopback address is warned about on
// warn.
func ServeRuns(ctx context.Context, root, dir, addr string, w, warn io.Writer) error {
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			if dir, err = runstore.Resolve(root, dir); err != nil {
				return err
			}
		}
		root = dir
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return evalctl.Usagef("%s is not a directory of runs", root)
	}
	public, err := Public(addr)
	if err != nil {
		return evalctl.Usagef("--addr %q: %v", addr, err)
	}
	if public {
		fmt.Fprintf(warn, "warning: serving on %s, reachable from other machines: runs hold prompts, code and transcripts\n", addr)
	}
	return Serve(ctx, root, addr, w)
}
