package orchestrator

import (
	"fmt"
	"io"
	"os"

	"github.com/evalctl/evalctl/internal/yamlcheck"
)

// PlanWarning is something a valid plan leaves to chance that its writer
// probably did not mean: a repeat without a seed, an API key variable that
// is not set, a seed in extra that overrides the paired seeds. Each says
// how to silence it.
type PlanWarning struct {
	File, Field, Msg string
	Line             int
	// Silence says what to write (or do) so the warning goes away.
	Silence string
}

func (w PlanWarning) String() string {
	loc := w.File
	if w.Line > 0 {
		loc = fmt.Sprintf("%s:%d", w.File, w.Line)
	}
	return fmt.Sprintf("warning: %s: %s: %s (to silence: %s)", loc, w.Field, w.Msg, w.Silence)
}

// WriteWarnings prints each warning on a line of its own.
func WriteWarnings(w io.Writer, warnings []PlanWarning) {
	for _, x := range warnings {
		fmt.Fprintln(w, x)
	}
}

// planWarnings looks at a loaded plan for what it leaves to chance.
func planWarnings(doc *yamlcheck.Doc, file string, p *Plan, armFields []string) []PlanWarning {
	var out []PlanWarning
	seen := map[string]bool{}
	warn := func(field, silence, format string, a ...any) {
		w := PlanWarning{File: file, Field: field, Line: doc.Line(field), Msg: fmt.Sprintf(format, a...), Silence: silence}
		if !seen[w.String()] {
			seen[w.String()] = true
			out = append(out, w)
		}
	}
	for i, r := range p.Repeats {
		if f := fmt.Sprintf("repeats[%d]", i); !doc.Has(f + ".seed") {
			warn(f+".seed", fmt.Sprintf("write {label: %s, seed: 0} to mean seed 0, or give it a seed of its own", r.Label),
				"repeat %q names no seed, so it runs with seed 0", r.Label)
		}
	}
	for i, a := range p.Arms {
		field := armFields[i]
		if env := a.Endpoint.APIKeyEnv; env != "" {
			if v, ok := os.LookupEnv(env); !ok || v == "" {
				warn(field+".endpoint.api_key_env", fmt.Sprintf("export %s=KEY before running, or leave api_key_env out if the server needs no key", env),
					"names %s, which is not set (or empty) here: requests of arm %s go without an API key", env, a.Name)
			}
		}
		if v, ok := a.Extra["seed"]; ok {
			warn(field+".extra.seed", "remove seed from extra: each repeat's seed (repeats[].seed) is sent with every request already",
				"extra sends seed %v in every request of arm %s, in place of each repeat's seed: its repeats are no longer paired with the other arms' by seed", v, a.Name)
		}
	}
	return out
}
