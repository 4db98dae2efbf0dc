package scripted

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
)

// Check refuses rates and a draft acceptance the server cannot emulate
// (the flags of 'evalctl serve-model').
func (c Config) Check() error {
	if c.DecodeTPS <= 0 || c.PromptTPS <= 0 {
		return evalctl.Usagef("--decode-tps and --prompt-tps must be positive")
	}
	if c.DraftAcceptance < 0 || c.DraftAcceptance > 1 {
		return evalctl.Usagef("--draft-acceptance %v is not in [0, 1]", c.DraftAcceptance)
	}
	return nil
}

// Serve is 'evalctl serve-model': it checks cfg, starts its server, says
// where on out and serves until ctx ends. A refused allocation logs the
// server's lines to cfg.Log, as llama-server would.
func Serve(ctx context.Context, cfg Config, out io.Writer) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	srv, err := New(cfg)
	var ae *AllocError
	if errors.As(err, &ae) && cfg.Log != nil {
		for _, line := range ae.Log {
			fmt.Fprintln(cfg.Log, line)
		}
	}
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	fmt.Fprintf(out, "scripted model server on %s (models: %s)\n", srv.URL(), strings.Join(Models(), ", "))
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
