package inspect

import (
	"encoding/json"
	"flag"
	"io"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// ShowRequest is what 'evalctl show' asks for.
type ShowRequest struct {
	// Args name the attempt in any form runstore.FindAttempt takes: an
	// id, a unique prefix, RUNDIR/attempts/ID, or RUN ARM CASE REPEAT.
	Args      []string
	Run       string // look an id or prefix up in this run only; "": in every run under Root
	Root      string // where runs are looked up by name, id or prefix
	Reasoning bool   // show the model's reasoning (folded otherwise)
	Full      bool   // never cut long output
	Format    string // text (or table) or json
}

// Show finds the attempt r names and returns what writes it, readable or
// as JSON. Naming no attempt, or several, is a usage error.
func Show(r ShowRequest) (func(io.Writer) error, error) {
	if r.Format != "text" && r.Format != "table" && r.Format != "json" {
		return nil, evalctl.Usagef("unknown --format %q (want text or json)", r.Format)
	}
	dir, id, err := runstore.FindAttempt(runstore.AttemptQuery{Args: r.Args, Run: r.Run, Root: r.Root})
	if err != nil {
		return nil, err
	}
	d, err := Load(dir, id)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		if r.Format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(d)
		}
		o := TextOptions{Reasoning: r.Reasoning}
		if r.Full {
			o.MaxBytes = -1
		}
		return WriteText(w, d, o)
	}, nil
}

// Bind defines the flags of 'evalctl show' that fill r.
func (r *ShowRequest) Bind(fs *flag.FlagSet) {
	fs.StringVar(&r.Run, "run", "", "look the attempt up in this run only (a directory, id or unique prefix)")
	fs.BoolVar(&r.Reasoning, "reasoning", false, "show the model's reasoning (folded by default)")
	fs.BoolVar(&r.Full, "full", false, "never cut long output (default: 2000 bytes a block, with the true size)")
}
