package view

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
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
