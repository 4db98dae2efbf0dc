package report

import (
	"strconv"
	"strings"
)

// LongContextArm is one arm's long-context attempts (those whose case sent
// a corpus): the input tokens the strategy produced, the output tokens,
// the tests passed of the tests run (every group of the final grade, test
// counts rather than verdicts) and the server's prefill and decode
// seconds. Each sum is over Attempts scored attempts and is null when one
// of them lacks the figure: a partial sum is not a sum.
type LongContextArm struct {
	Arm                     string   `json:"arm"`
	Strategies              []string `json:"strategies"`
	Attempts                int      `json:"attempts"`
	InputTokens             *int64   `json:"input_tokens"`
	OutputTokens            *int64   `json:"output_tokens"`
	PassedChecks            *int     `json:"passed_checks"`
	TotalChecks             *int     `json:"total_checks"`
	PrefillSeconds          *float64 `json:"prefill_seconds"`
	DecodeSeconds           *float64 `json:"decode_seconds"`
	PrefillAndDecodeSeconds *float64 `json:"server_processing_and_decode_seconds"`
}

func longContext(arms []string, byArm map[string][]*Row) []LongContextArm {
	var out []LongContextArm
	for _, name := range arms {
		la := LongContextArm{Arm: name, Strategies: []string{}}
		var in, outTok int64
		var passed, total int
		var pre, dec float64
		okOut, okChecks, okPre, okDec := true, true, true, true
		for _, r := range byArm[name] {
			if !r.inPlan() || r.Status != Scored || r.InputTokens == nil {
				continue
			}
			la.Attempts++
			if r.InputStrategy != nil && !contains(la.Strategies, *r.InputStrategy) {
				la.Strategies = append(la.Strategies, *r.InputStrategy)
			}
			in += *r.InputTokens
			if r.NativeOutputTokens != nil {
				outTok += *r.NativeOutputTokens
			} else {
				okOut = false
			}
			if p, t, ok := finalChecks(r); ok {
				passed += p
				total += t
			} else {
				okChecks = false
			}
			if r.PromptSeconds != nil {
				pre += *r.PromptSeconds
			} else {
				okPre = false
			}
			if r.DecodeSeconds != nil {
				dec += *r.DecodeSeconds
			} else {
				okDec = false
			}
		}
		if la.Attempts == 0 {
			continue
		}
		la.InputTokens = &in
		if okOut {
			la.OutputTokens = &outTok
		}
		if okChecks {
			la.PassedChecks, la.TotalChecks = &passed, &total
		}
		if okPre {
			la.PrefillSeconds = &pre
		}
		if okDec {
			la.DecodeSeconds = &dec
		}
		if okPre && okDec {
			s := pre + dec
			la.PrefillAndDecodeSeconds = &s
		}
		out = append(out, la)
	}
	return out
}

// finalChecks sums the tests passed and run over the groups of the final
// phase grade; ok is false when some group's counts are unknown.
func finalChecks(r *Row) (passed, total int, ok bool) {
	if r.Evidence == nil || len(r.Evidence.Phases) == 0 {
		return 0, 0, false
	}
	last := r.Evidence.Phases[len(r.Evidence.Phases)-1]
	if !last.Graded {
		return 0, 0, false
	}
	for _, g := range last.Groups {
		if g.Passed == nil || g.Total == nil {
			return 0, 0, false // counts unknown: a partial sum is not a sum
		}
		passed += *g.Passed
		total += *g.Total
	}
	return passed, total, true
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func longContextTables(r *Report) []table {
	if len(r.LongContext) == 0 {
		return nil
	}
	t := table{Title: "Long-context input per arm (sums over scored attempts whose case sent a corpus)",
		Header: []string{"arm", "strategy", "attempts", "input tokens", "output tokens", "checks passed", "prefill s", "decode s", "prefill + decode s"}}
	for _, a := range r.LongContext {
		checks := dash
		if a.PassedChecks != nil {
			checks = strconv.Itoa(*a.PassedChecks) + "/" + strconv.Itoa(*a.TotalChecks)
		}
		t.Rows = append(t.Rows, []string{a.Arm, strings.Join(a.Strategies, ", "), strconv.Itoa(a.Attempts), fmtI(a.InputTokens),
			fmtI(a.OutputTokens), checks, fmtF(a.PrefillSeconds, 1), fmtF(a.DecodeSeconds, 1), fmtF(a.PrefillAndDecodeSeconds, 1)})
	}
	return []table{t}
}
