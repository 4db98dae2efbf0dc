package regrade

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/evalctl/evalctl/results/runstore"
)

// WriteText prints a regrade for a person: per arm the before/after counts,
// each attempt whose outcome changed, what was skipped or refused, and what
// was added to the run directories.
func WriteText(w io.Writer, r *Result) error {
	fp := r.SuiteFingerprint
	if len(fp) > 16 {
		fp = fp[:16]
	}
	fmt.Fprintf(w, "regrade under %s (fingerprint %s), concurrency %d; no model was called\n\n", r.Suite, fp, r.Concurrency)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range r.Arms {
		line := fmt.Sprintf("%s\tfunctional %s\tdelivered %s", a.Arm,
			arrow(a.Before.Functional, a.Before.Of, a.After.Functional, a.After.Of),
			arrow(a.Before.Delivered, a.Before.Of, a.After.Delivered, a.After.Of))
		if a.Before.Ungraded > 0 || a.After.Ungraded > 0 {
			line += fmt.Sprintf("\tungraded %d -> %d", a.Before.Ungraded, a.After.Ungraded)
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\noutcome changed: %d attempts\n", len(r.Changed))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Changed {
		fmt.Fprintf(tw, "  %s\t%s\t%s\tfunctional %s -> %s\tdelivered %s -> %s\trun %s attempt %s\n", c.Arm, c.Case, c.Repeat,
			boolText(c.FunctionalBefore), boolText(c.FunctionalAfter), boolText(c.DeliveredBefore), boolText(c.DeliveredAfter), c.RunID, c.AttemptID)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nattempts: %d graded, %d skipped (already graded under %s, nothing written), %d not completed (no outcome), %d refused, %d failed\n",
		r.Graded, r.Skipped, r.Suite, r.NotScored, r.Refused, r.Failed)
	for _, a := range r.Attempts {
		switch a.Action {
		case Refused, Failed, CompletedPartial:
			fmt.Fprintf(w, "  %s: %s\n", a.Action, a.Reason)
		}
	}
	fmt.Fprintln(w)
	for _, run := range r.Runs {
		added := "nothing added"
		n := 0
		for _, a := range r.Attempts {
			if a.RunID == run.RunID {
				n += len(a.Phases)
			}
		}
		if n > 0 {
			added = fmt.Sprintf("added %d grade files under attempts/*/%s/%s/", n, runstore.GradesDir, r.Suite)
		}
		if run.Record != "" {
			added += fmt.Sprintf(" and the record %s", filepath.Join(run.Dir, run.Record))
		}
		fmt.Fprintf(w, "run %s (%s, ran under %s): %s\n", run.RunID, run.Dir, run.From, added)
	}
	if r.OriginalResultsUnchanged {
		fmt.Fprintln(w, "original results unchanged: every completed attempt record and earlier grade hashes the same as before")
	}
	return nil
}

func arrow(k0, n0, k1, n1 int) string {
	return fmt.Sprintf("%s -> %s", frac(k0, n0), frac(k1, n1))
}

// frac is k/n, or "-" with no denominator (zero of zero is not 0%).
func frac(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", k, n)
}

func boolText(b *bool) string {
	if b == nil {
		return "-"
	}
	return strings.ToLower(fmt.Sprint(*b))
}

// WriteDiagnosisText prints a fixture diagnosis as a table: per candidate
// tests passed/total under each suite, whether it changed between the two
// gradings, the per-group counts, and whether controls were rejected.
func WriteDiagnosisText(w io.Writer, d *Diagnosis) error {
	fmt.Fprintf(w, "fixture diagnosis of case %s\n  original:  %s (fingerprint %.16s)\n", d.Case, d.Original.ID, d.Original.Fingerprint)
	if d.Corrected != nil {
		fmt.Fprintf(w, "  corrected: %s (fingerprint %.16s)\n", d.Corrected.ID, d.Corrected.Fingerprint)
	} else {
		fmt.Fprintf(w, "  corrected: - (one suite given)\n")
	}
	fmt.Fprintf(w, "  no model was called\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tKIND\tPHASE\tORIGINAL\tCORRECTED\tCHANGED\tREJECTED\tGROUPS (original -> corrected)")
	for _, r := range d.Results {
		rej := "-"
		if r.Kind != KindAnswer && r.Kind != "reference" {
			rej = yesNo(sideRejected(r.Original))
			if d.Corrected != nil {
				rej += "/" + yesNo(sideRejected(r.Corrected))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Candidate, r.Kind, r.Phase,
			passed(r.Original), passed(r.Corrected), yesNo(r.CandidateChanged), rej, groupsText(r.Original, r.Corrected))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	ref := "reference solved: original " + yesNo(d.ReferenceSolvedOriginal)
	if d.Corrected != nil {
		ref += ", corrected " + yesNo(d.ReferenceSolvedCorrected)
	}
	fmt.Fprintln(w, ref)
	for _, v := range d.Controls {
		line := fmt.Sprintf("negative control %s (phase %d) rejected: original %s", v.Name, v.Phase, yesNo(v.OriginalRejected))
		if d.Corrected != nil {
			line += ", corrected " + yesNo(v.CorrectedRejected)
		}
		fmt.Fprintln(w, line)
	}
	if d.Corrected != nil {
		fmt.Fprintf(w, "stored answers changed between the two gradings: %d (must be 0)\n", d.AnswersChanged)
		var differ []string
		for _, r := range d.Results {
			if r.Kind != KindAnswer && r.CandidateChanged != nil && *r.CandidateChanged {
				differ = append(differ, fmt.Sprintf("%s (phase %d)", r.Candidate, r.Phase))
			}
		}
		if len(differ) > 0 {
			fmt.Fprintf(w, "case variants that differ between the two versions: %s\n", strings.Join(differ, ", "))
		}
	}
	fmt.Fprintln(w, "(! marks a group that failed)")
	return nil
}

func sideRejected(s *Side) *bool {
	if s == nil {
		return nil
	}
	return s.Rejected
}

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "-"
	case *b:
		return "yes"
	default:
		return "no"
	}
}

func passed(s *Side) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", s.Passed, s.Total)
}

// groupsText is "acceptance 3/4 -> 4/4, regression 1/1, ...": one figure
// where both gradings agree, an arrow where they differ.
func groupsText(a, b *Side) string {
	one := func(g *GroupCount) string {
		switch {
		case g == nil:
			return "-"
		case !g.Success:
			return fmt.Sprintf("%d/%d!", g.Passed, g.Total)
		}
		return fmt.Sprintf("%d/%d", g.Passed, g.Total)
	}
	find := func(s *Side, name string) *GroupCount {
		if s == nil {
			return nil
		}
		for i := range s.Groups {
			if s.Groups[i].Name == name {
				return &s.Groups[i]
			}
		}
		return nil
	}
	var names []string
	for _, s := range []*Side{a, b} {
		if s == nil {
			continue
		}
		for _, g := range s.Groups {
			if !contains(names, g.Name) {
				names = append(names, g.Name)
			}
		}
	}
	var parts []string
	for _, n := range names {
		x, y := one(find(a, n)), one(find(b, n))
		switch {
		case b == nil:
			parts = append(parts, n+" "+x)
		case x == y:
			parts = append(parts, n+" "+x)
		default:
			parts = append(parts, n+" "+x+" -> "+y)
		}
	}
	return strings.Join(parts, ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
