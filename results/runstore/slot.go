package runstore

import "github.com/evalctl/evalctl"

// Current returns, per slot, the attempt that says where the slot stands:
// the end of its replacement chain, followed from its original record
// (a record whose predecessor is missing counts as one; of several, the
// first) through each replacement — not the record with the greatest id,
// as ids follow the clock, which can step back. Two replacements of one
// record (never written by the runner): the earlier one continues the
// chain.
func Current(all []*evalctl.Attempt) map[int]*evalctl.Attempt {
	byID := map[string]*evalctl.Attempt{}
	next := map[string]*evalctl.Attempt{} // predecessor id -> its replacement
	for _, a := range all {
		byID[a.ID] = a
	}
	for _, a := range all {
		if a.ReplacementOf == "" {
			continue
		}
		if cur, ok := next[a.ReplacementOf]; !ok || a.ID < cur.ID {
			next[a.ReplacementOf] = a
		}
	}
	root := map[int]*evalctl.Attempt{}
	for _, a := range all {
		if _, ok := byID[a.ReplacementOf]; a.ReplacementOf != "" && ok {
			continue
		}
		if cur, ok := root[a.Slot]; !ok || a.ID < cur.ID {
			root[a.Slot] = a
		}
	}
	current := make(map[int]*evalctl.Attempt, len(root))
	for slot, end := range root {
		for seen := map[string]bool{end.ID: true}; ; {
			n, ok := next[end.ID]
			if !ok || seen[n.ID] {
				break
			}
			seen[n.ID] = true
			end = n
		}
		current[slot] = end
	}
	return current
}
