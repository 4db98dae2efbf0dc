package inspect

import (
	"encoding/json"
	"errors"
	"flag"
	"io"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// ShowRequest is what 'evalctl show' asks for.
type ShowRequest struct {
	Args      []string // ATTEMPT (an id or prefix), or RUN ARM CASE REPEAT
	Run       string   // look ATTEMPT up in this run only; "": in every run under Root
	Root      string   // where runs are looked up by id or prefix
	Reasoning bool     // show the model's reasoning (folded otherwise)
	Full      bool     // never cut long output
	Format    string   // text (or table) or json
}

// Show finds the attempt r names and returns what writes it, readable or
// as JSON. Naming no attempt, or several, is a usage error.
func Show(r ShowRequest) (func(io.Writer) error, error) {
	if r.Format != "text" && r.Format != "table" && r.Format != "json" {
		return nil, evalctl.Usagef("unknown --format %q (want text or json)", r.Format)
	}
	var q Query
	var dirs []string
	switch len(r.Args) {
	case 1:
		q.ID = r.Args[0]
		if r.Run != "" {
			d, err := runstore.Resolve(r.Root, r.Run)
			if err != nil {
				return nil, err
			}
			dirs = []string{d}
		} else {
			list, err := runstore.List(r.Root)
			if err != nil {
				return nil, evalctl.Usagef("look up attempt %q: %v; name its run with --run", q.ID, err)
			}
			for _, s := range list {
				dirs = append(dirs, s.Dir)
			}
		}
	case 4:
		d, err := runstore.Resolve(r.Root, r.Args[0])
		if err != nil {
			return nil, err
		}
		dirs = []string{d}
		q.Arm, q.Case, q.Repeat = r.Args[1], r.Args[2], r.Args[3]
	default:
		return nil, evalctl.Usagef("show takes an attempt id (or prefix), or RUN ARM CASE REPEAT")
	}
	dir, id, err := Find(dirs, q)
	if errors.Is(err, ErrNoAttempt) || errors.Is(err, ErrAmbiguous) {
		return nil, evalctl.Usage(err)
	}
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
	fs.StringVar(&r.Format, "format", "text", "output format: text (or table), json")
}
