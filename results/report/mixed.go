package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/evalctl/evalctl/results/runstore"
)

// mixedProblems says what differs between rows that are about to be
// pooled: the fingerprint of the suite that graded them, the sandbox image,
// and the registered hash of an arm with the same name.
func mixedProblems(in *Input) []string {
	var out []string
	fps := orderedSet{}
	for i := range in.Rows {
		if fp := in.Rows[i].SuiteFingerprint; fp != nil && *fp != "" {
			fps.add(*fp, in.Rows[i].RunID)
		}
	}
	if len(fps.keys) > 1 {
		out = append(out, "suite fingerprints differ: "+fps.describe())
	}
	imgs := orderedSet{}
	for _, r := range in.Runs {
		if r.ImageID != "" {
			imgs.add(r.ImageID, r.ID)
		}
	}
	for i := range in.Rows {
		if img := in.Rows[i].ImageID; img != "" {
			imgs.add(img, in.Rows[i].RunID)
		}
	}
	if len(imgs.keys) > 1 {
		out = append(out, "image IDs differ: "+imgs.describe())
	}
	idOut, byIdentity := identityProblems(in)
	out = append(out, idOut...)
	arms := map[string]*orderedSet{}
	var armOrder []string
	for i := range in.Rows {
		r := &in.Rows[i]
		if r.ArmHash == "" || byIdentity[r.Arm] {
			continue
		}
		if arms[r.Arm] == nil {
			arms[r.Arm] = &orderedSet{}
			armOrder = append(armOrder, r.Arm)
		}
		arms[r.Arm].add(r.ArmHash, r.RunID)
	}
	for _, a := range armOrder {
		if len(arms[a].keys) > 1 {
			out = append(out, fmt.Sprintf("arm %s has different hashes: %s", a, arms[a].describe()))
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// identityProblems compares the pooling identities of each arm across the
// runs that recorded one (see runstore.ArmIdentity: what changes behaviour,
// not where the server listened). It returns, per arm whose identities
// differ, the fields that differ run by run, and the arms it decided (every
// run holding the arm recorded its identity); the others are compared by
// arm hash.
func identityProblems(in *Input) ([]string, map[string]bool) {
	type seen struct {
		run string
		id  *runstore.ArmIdentity
	}
	per := map[string][]seen{}
	var order []string
	missing := map[string]bool{}
	armsOf := map[string]map[string]bool{}
	for i := range in.Rows {
		r := &in.Rows[i]
		if armsOf[r.RunID] == nil {
			armsOf[r.RunID] = map[string]bool{}
		}
		armsOf[r.RunID][r.Arm] = true
	}
	for _, ri := range in.Runs {
		for arm := range armsOf[ri.ID] {
			id := ri.ArmIdentities[arm]
			if id == nil {
				missing[arm] = true
				continue
			}
			if _, ok := per[arm]; !ok {
				order = append(order, arm)
			}
			per[arm] = append(per[arm], seen{ri.ID, id})
		}
	}
	sort.Strings(order)
	decided := map[string]bool{}
	var out []string
	for _, arm := range order {
		if missing[arm] {
			continue
		}
		decided[arm] = true
		first := per[arm][0]
		for _, other := range per[arm][1:] {
			if other.id.SHA256 == first.id.SHA256 {
				continue
			}
			out = append(out, fmt.Sprintf("arm %s differs between run %s and run %s in %s", arm, first.run, other.run,
				strings.Join(DiffFields(first.id.Fields, other.id.Fields), "; ")))
		}
	}
	return out, decided
}

// DiffFields lists, as "field a vs b", the fields in which two arm
// identities differ ("unset" where one lacks the field), sorted by field.
func DiffFields(a, b map[string]string) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "unset"
		}
		if !okb {
			vb = "unset"
		}
		out = append(out, k+" "+va+" vs "+vb)
	}
	sort.Strings(out)
	if len(out) == 0 {
		out = []string{"their identity digests (no field differs: the digests were computed differently)"}
	}
	return out
}

// orderedSet keeps distinct values in first-seen order with the runs that
// hold each.
type orderedSet struct {
	keys []string
	runs map[string][]string
}

func (s *orderedSet) add(v, run string) {
	if s.runs == nil {
		s.runs = map[string][]string{}
	}
	rs, ok := s.runs[v]
	if !ok {
		s.keys = append(s.keys, v)
	}
	for _, r := range rs {
		if r == run {
			return
		}
	}
	s.runs[v] = append(rs, run)
}

func (s *orderedSet) describe() string {
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = fmt.Sprintf("%s in run %s", short(k), strings.Join(s.runs[k], ", "))
	}
	return strings.Join(parts, " vs ")
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}

func distinct(rows []*Row, f func(*Row) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		v := f(r)
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}
