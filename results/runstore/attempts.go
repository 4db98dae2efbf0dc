package runstore

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// AttemptRow is one line of a run's attempt listing ('evalctl attempts').
// What the records do not say is null, never 0 or false.
type AttemptRow struct {
	// ID is the attempt's id, empty for a planned slot not yet started;
	// Prefix is its shortest prefix no other attempt of the run shares
	// (what 'evalctl show --run RUN PREFIX' needs).
	ID     string `json:"id"`
	Prefix string `json:"prefix"`
	Slot   int    `json:"slot"`
	Arm    string `json:"arm"`
	Case   string `json:"case"`
	Repeat string `json:"repeat"`
	State  string `json:"state"`
	// ReplacementOf is the id of the infrastructure failure this attempt
	// replaces; Replaced is whether a later attempt replaced this one.
	ReplacementOf string `json:"replacement_of,omitempty"`
	Replaced      bool   `json:"replaced"`
	// Functional and Delivered are the outcome under Suite, null where the
	// attempt is unscored or ungraded.
	Functional *bool  `json:"functional"`
	Delivered  *bool  `json:"delivered"`
	Ungraded   bool   `json:"ungraded"`
	Suite      string `json:"suite"`
	// Tokens is the attempt's generated tokens as the server counted them.
	Tokens *int64 `json:"native_output_tokens"`
}

// Attempts lists the attempts of the run in dir in slot order (a
// replacement after what it replaces), scored under the run's own suite,
// then the planned slots that have no attempt yet.
func Attempts(dir string) ([]AttemptRow, error) {
	st, err := Open(dir)
	if err != nil {
		return nil, err
	}
	run, err := st.ReadRun()
	if err != nil {
		return nil, err
	}
	all, err := st.Attempts()
	if err != nil {
		return nil, err
	}
	suite := tasks.Label(run.Suite.Name, run.Suite.Version)
	ids := make([]string, len(all))
	replaced := map[string]bool{}
	for i, a := range all {
		ids[i] = a.ID
		replaced[a.ReplacementOf] = true
	}
	prefixes := UniquePrefixes(ids)
	rows := []AttemptRow{}
	seen := map[int]bool{}
	for i, a := range all {
		row := AttemptRow{ID: a.ID, Prefix: prefixes[i], Slot: a.Slot, Arm: a.Arm, Case: a.Case, Repeat: a.Repeat,
			State: string(evalctl.StateOf(a)), ReplacementOf: a.ReplacementOf, Replaced: replaced[a.ID], Suite: suite}
		gs, err := st.Grades(a, suite)
		if err != nil {
			return nil, err
		}
		if o, ungraded := evalctl.ScoreGraded(a, gs); o != nil {
			row.Functional, row.Delivered = &o.Functional, &o.Delivered
		} else {
			row.Ungraded = ungraded
		}
		if a.Measurements != nil {
			row.Tokens = a.Measurements.NativeOutputTokens
		}
		rows = append(rows, row)
		seen[a.Slot] = true
	}
	slots, err := planSlots(st)
	if err != nil {
		return nil, err
	}
	for _, s := range slots {
		if !seen[s.Index] {
			rows = append(rows, AttemptRow{Slot: s.Index, Arm: s.Arm, Case: s.Case, Repeat: s.Repeat, State: string(evalctl.Planned), Suite: suite})
		}
	}
	return rows, nil
}

// UniquePrefixes gives each id the shortest prefix that no other id of
// the list starts with (ids of one run share their time prefix, so this is
// often 13 characters or more). A prefix never ends in '-'.
func UniquePrefixes(ids []string) []string {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ids[order[a]] < ids[order[b]] })
	common := func(a, b string) int {
		k := 0
		for k < len(a) && k < len(b) && a[k] == b[k] {
			k++
		}
		return k
	}
	out := make([]string, len(ids))
	for pos, i := range order {
		id, n := ids[i], 1
		// In sorted order the ids sharing the longest prefix with id are
		// its neighbours.
		if pos > 0 && ids[order[pos-1]] != id {
			n = max(n, common(id, ids[order[pos-1]])+1)
		}
		if pos+1 < len(order) && ids[order[pos+1]] != id {
			n = max(n, common(id, ids[order[pos+1]])+1)
		}
		n = min(n, len(id))
		for n < len(id) && id[n-1] == '-' {
			n++
		}
		out[i] = id[:n]
	}
	return out
}

// AttemptListing returns what writes the attempts of the run in dir as a
// table (format "text") or JSON ('evalctl attempts').
func AttemptListing(dir, format string) (func(io.Writer) error, error) {
	rows, err := Attempts(dir)
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		if format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rows)
		}
		return writeAttempts(w, rows)
	}, nil
}

func writeAttempts(w io.Writer, rows []AttemptRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PREFIX\tSLOT\tARM\tCASE\tREPEAT\tSTATE\tFUNCTIONAL\tDELIVERED\tTOKENS\tID")
	for _, r := range rows {
		state := r.State
		switch {
		case r.Replaced:
			state += " (replaced)"
		case r.ReplacementOf != "":
			state += " (replacement)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", orDash(r.Prefix), r.Slot, r.Arm, r.Case, r.Repeat, state,
			outcome(r.Functional, r.Ungraded), outcome(r.Delivered, r.Ungraded), tokens(r.Tokens), orDash(r.ID))
	}
	if len(rows) == 0 {
		fmt.Fprintln(tw, "(no attempts)")
	}
	return tw.Flush()
}

func outcome(b *bool, ungraded bool) string {
	switch {
	case b == nil && ungraded:
		return "ungraded"
	case b == nil:
		return "-"
	case *b:
		return "yes"
	}
	return "no"
}

func tokens(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}
