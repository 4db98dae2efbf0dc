package report

import (
	"fmt"
	"strconv"
	"strings"
)

// pairKey matches attempts across arms: same case, same repeat label (same
// seed) and, when several runs hold the same pair, the same occurrence.
type pairKey struct {
	Case, Repeat string
	N            int
}

func pairIndex(rows []*Row) map[pairKey]*Row {
	out := map[pairKey]*Row{}
	seen := map[[2]string]int{}
	for _, r := range rows {
		if !r.inPlan() {
			continue
		}
		k := [2]string{r.Case, r.Repeat}
		out[pairKey{r.Case, r.Repeat, seen[k]}] = r
		seen[k]++
	}
	return out
}

func compare(baseName, candName string, baseRows, candRows []*Row, cases []string) Comparison {
	c := Comparison{Baseline: baseName, Candidate: candName}
	bi, ci := pairIndex(baseRows), pairIndex(candRows)
	keys := map[pairKey]bool{}
	for k := range bi {
		keys[k] = true
	}
	for k := range ci {
		keys[k] = true
	}
	for k := range keys {
		b, cand := bi[k], ci[k]
		if b == nil || cand == nil || b.Status != Scored || cand.Status != Scored {
			c.Functional.Unpaired++
			c.Delivered.Unpaired++
			continue
		}
		c.Functional.add(*b.Functional, *cand.Functional)
		c.Delivered.add(*b.Delivered, *cand.Delivered)
	}
	c.Functional.finish("functional", baseName, candName)
	c.Delivered.finish("delivered", baseName, candName)
	c.DecodeTPSRatio = ratioInterval(baseName, candName, baseRows, candRows, cases)
	return c
}

func (t *Transitions) add(base, cand bool) {
	t.Pairs++
	switch {
	case base && cand:
		t.BothPass++
	case !base && !cand:
		t.BothFail++
	case cand:
		t.CandidateImproves++
	default:
		t.CandidateRegresses++
	}
}

func (t *Transitions) finish(what, base, cand string) {
	if t.Pairs == 0 {
		t.Words = fmt.Sprintf("%s vs %s: no paired scored attempts, so %s cannot be compared", cand, base, what)
		return
	}
	p := McNemarExact(t.CandidateImproves, t.CandidateRegresses)
	t.McNemarP = &p
	candPass := t.BothPass + t.CandidateImproves
	basePass := t.BothPass + t.CandidateRegresses
	counts := fmt.Sprintf("%d/%d vs %d/%d", candPass, t.Pairs, basePass, t.Pairs)
	switch {
	case t.CandidateImproves+t.CandidateRegresses == 0:
		t.Words = fmt.Sprintf("%s vs %s: %s (%s) agrees on every one of %d pairs; no difference to test", cand, base, what, counts, t.Pairs)
	case p >= 0.05:
		t.Words = fmt.Sprintf("%s vs %s: the difference in %s (%s; %s improves on %d, regresses on %d) is inside the noise (McNemar exact p = %s)",
			cand, base, what, counts, cand, t.CandidateImproves, t.CandidateRegresses, formatP(p))
	default:
		t.Words = fmt.Sprintf("%s vs %s: the difference in %s (%s; %s improves on %d, regresses on %d) is unlikely to be noise (McNemar exact p = %s)",
			cand, base, what, counts, cand, t.CandidateImproves, t.CandidateRegresses, formatP(p))
	}
	if t.Unpaired > 0 {
		t.Words += fmt.Sprintf("; %d unpaired not counted", t.Unpaired)
	}
}

func formatP(p float64) string {
	if p >= 0.1 {
		return strconv.FormatFloat(p, 'f', 2, 64)
	}
	if p < 0.0001 {
		return "< 0.0001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

func ratioInterval(baseName, candName string, baseRows, candRows []*Row, cases []string) RatioInterval {
	ri := RatioInterval{Resamples: BootstrapResamples, Seed: BootstrapSeed}
	sums := map[string]*caseSums{}
	get := func(c string) *caseSums {
		if sums[c] == nil {
			sums[c] = &caseSums{}
		}
		return sums[c]
	}
	for _, r := range baseRows {
		if r.inPlan() && r.measured() {
			s := get(r.Case)
			s.baseTok += float64(*r.NativeOutputTokens)
			s.baseSec += *r.DecodeSeconds
		}
	}
	for _, r := range candRows {
		if r.inPlan() && r.measured() {
			s := get(r.Case)
			s.candTok += float64(*r.NativeOutputTokens)
			s.candSec += *r.DecodeSeconds
		}
	}
	var cs []caseSums
	for _, c := range cases {
		if s := sums[c]; s != nil && s.baseSec > 0 && s.candSec > 0 && s.baseTok > 0 {
			cs = append(cs, *s)
		}
	}
	ri.Cases = len(cs)
	head := fmt.Sprintf("%s vs %s: decode TPS ratio", candName, baseName)
	r, ok := ratioOf(cs, nil)
	if !ok {
		ri.Words = head + ": no case with measured attempts in both arms"
		return ri
	}
	ri.Ratio = &r
	lo, hi, ok := bootstrapRatio(cs, ri.Resamples, ri.Seed)
	if !ok {
		ri.Words = fmt.Sprintf("%s %.3f over %d case; too few cases for an interval", head, r, ri.Cases)
		return ri
	}
	ri.Low, ri.High = &lo, &hi
	verdict := "excludes 1: the speed difference is outside the noise"
	if lo <= 1 && hi >= 1 {
		verdict = "includes 1: the speed difference is inside the noise"
	}
	ri.Words = fmt.Sprintf("%s %.3f (95%% paired bootstrap interval %.3f to %.3f over %d cases, %d resamples) %s",
		head, r, lo, hi, ri.Cases, ri.Resamples, verdict)
	return ri
}

// repeatLess orders repeat labels by their number ("repeat-2" before
// "repeat-10"), falling back to text.
func repeatLess(a, b string) bool {
	na, oka := repeatNumber(a)
	nb, okb := repeatNumber(b)
	if oka && okb && na != nb {
		return na < nb
	}
	return a < b
}

func repeatNumber(s string) (int, bool) {
	i := strings.LastIndexByte(s, '-')
	n, err := strconv.Atoi(s[i+1:])
	return n, err == nil
}
