package power

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Figures are what a sample size is computed from: read from a pilot run
// (its pair counts set) or stated by a person (counts null). Null means
// unknown.
type Figures struct {
	// Source says where the figures come from ("pilot run NAME" or
	// "stated figures").
	Source string `json:"source"`
	// SpeedPairs is the pilot's complete pairs measured in both arms;
	// LogRatioSD the standard deviation of their log decode-TPS ratios.
	SpeedPairs *int     `json:"speed_pairs"`
	LogRatioSD *float64 `json:"log_ratio_sd"`
	// OutcomePairs is the pilot's pairs scored in both arms, Discordant
	// those on which the arms disagree on functional; Discordance the
	// share of discordant pairs (stated, or Discordant/OutcomePairs).
	OutcomePairs *int     `json:"outcome_pairs"`
	Discordant   *int     `json:"discordant_pairs"`
	Discordance  *float64 `json:"discordance"`
	// Task seconds per attempt of each arm: what an attempt costs.
	BaselineTaskSeconds  *float64 `json:"baseline_task_seconds_per_attempt"`
	CandidateTaskSeconds *float64 `json:"candidate_task_seconds_per_attempt"`
}

// Request is what the sample sizes are for.
type Request struct {
	// HalfWidth is the target reach of the speed ratio's 95% interval
	// above its estimate, as a fraction (0.02: ±2%).
	HalfWidth float64 `json:"half_width"`
	// Difference is the change in functional rate to detect (0.05: five
	// points), with probability Power, by McNemar's test at 5%.
	Difference float64 `json:"difference"`
	Power      float64 `json:"power"`
	// Mixing is the confidence sequence's mixing scale (DefaultMixing).
	Mixing float64 `json:"mixing"`
}

// Need is how many complete pairs a question takes and what they cost.
// Null figures are unknown; Unknown says why.
type Need struct {
	// Pairs is the complete pairs a fixed-size cohort needs; Attempts
	// counts both arms' attempts (2 x Pairs); GPUHours is their task time.
	Pairs    *int     `json:"pairs"`
	Attempts *int     `json:"attempts"`
	GPUHours *float64 `json:"gpu_hours"`
	// SequentialPairs (speed only) is where a stop rule with this target
	// half-width expects to stop if the spread holds, and its GPU hours.
	SequentialPairs    *int     `json:"sequential_pairs,omitempty"`
	SequentialGPUHours *float64 `json:"sequential_gpu_hours,omitempty"`
	// ExactPower (outcome only) is the power of McNemar's exact test, as
	// the report runs it, at Pairs.
	ExactPower *float64 `json:"exact_power,omitempty"`
	Unknown    string   `json:"unknown,omitempty"`
}

// Answer is the output of 'evalctl power'.
type Answer struct {
	Figures     Figures  `json:"figures"`
	Request     Request  `json:"request"`
	Speed       Need     `json:"speed"`
	Outcome     Need     `json:"outcome"`
	Assumptions []string `json:"assumptions"`
}

// Assumptions are what every answer rests on, in words.
var Assumptions = []string{
	"pairs are independent: each is one case and repeat label run in both arms under the same seed",
	"speed: per-pair log decode-TPS ratios share one mean and one spread (the pilot's); the interval is for their mean, the geometric mean of per-pair ratios, which is the pooled ratio when the true ratio does not depend on the case",
	"speed, fixed size: a t interval looked at once, at that number of pairs; looking after every pair needs the sequential figure (an anytime-valid confidence sequence)",
	"outcome: pairs disagree on functional at the pilot's (or stated) rate, at least the difference asked about; sizes by Connor's normal approximation to McNemar's test, two-sided at 5%, with the exact test's power at that size beside it",
	"GPU hours: both arms' attempts at the task seconds per attempt given, attempts run one at a time",
}

// Plan computes the answer for the figures.
func Plan(f Figures, r Request) Answer {
	a := Answer{Figures: f, Request: r, Assumptions: Assumptions}
	a.Speed = speedNeed(f, r)
	a.Outcome = outcomeNeed(f, r)
	return a
}

func speedNeed(f Figures, r Request) Need {
	var n Need
	if f.LogRatioSD == nil {
		n.Unknown = "no spread of the speed ratio: give a pilot run or --sd"
		return n
	}
	if f.SpeedPairs != nil && *f.SpeedPairs < MinPilotPairs {
		n.Unknown = fmt.Sprintf("%v: %d complete pairs measured in both arms; at least %d are needed to estimate the spread of the speed ratio",
			ErrPilotTooSmall, *f.SpeedPairs, MinPilotPairs)
		return n
	}
	fixed, err := FixedPairs(*f.LogRatioSD, r.HalfWidth)
	if err != nil {
		n.Unknown = err.Error()
		return n
	}
	n.setPairs(fixed, f)
	if seq, err := SequentialPairs(*f.LogRatioSD, r.HalfWidth, r.Mixing); err == nil {
		n.SequentialPairs = &seq
		n.SequentialGPUHours = hours(seq, f)
	}
	return n
}

func outcomeNeed(f Figures, r Request) Need {
	var n Need
	if f.Discordance == nil {
		n.Unknown = "no discordance: give a pilot run or --discordance"
		return n
	}
	if f.OutcomePairs != nil && f.Discordant != nil {
		if _, err := Discordance(*f.Discordant, *f.OutcomePairs); err != nil {
			n.Unknown = err.Error()
			return n
		}
	}
	pairs, err := OutcomePairs(*f.Discordance, r.Difference, r.Power)
	if err != nil {
		n.Unknown = err.Error()
		return n
	}
	n.setPairs(pairs, f)
	disc := max(*f.Discordance, r.Difference)
	p := ExactPower(pairs, (disc+r.Difference)/2, (disc-r.Difference)/2)
	n.ExactPower = &p
	return n
}

func (n *Need) setPairs(pairs int, f Figures) {
	att := 2 * pairs
	n.Pairs, n.Attempts, n.GPUHours = &pairs, &att, hours(pairs, f)
}

func hours(pairs int, f Figures) *float64 {
	if f.BaselineTaskSeconds == nil || f.CandidateTaskSeconds == nil {
		return nil
	}
	h := GPUHours(pairs, *f.BaselineTaskSeconds, *f.CandidateTaskSeconds)
	return &h
}

// WriteJSON writes the answer as indented JSON.
func (a *Answer) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}

// WriteText writes the answer for a person.
func (a *Answer) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "From %s.\n\n", a.Figures.Source)
	fmt.Fprintf(&b, "Speed: decode TPS ratio to ±%s (95%% interval)\n", pct(a.Request.HalfWidth))
	fmt.Fprintf(&b, "  spread of per-pair log ratios: %s%s\n", optF(a.Figures.LogRatioSD, 4), overPairs(a.Figures.SpeedPairs))
	writeNeed(&b, a.Speed, "looked at once")
	if a.Speed.SequentialPairs != nil {
		fmt.Fprintf(&b, "  with a stop rule checked after every pair, to this width alone: about %d pairs, %s GPU hours\n",
			*a.Speed.SequentialPairs, optF(a.Speed.SequentialGPUHours, 2))
	}
	fmt.Fprintf(&b, "\nOutcome: a %s-point difference in functional rate with %s power (McNemar, 5%%)\n",
		trimF(100*a.Request.Difference), pct(a.Request.Power))
	fmt.Fprintf(&b, "  discordance: %s%s\n", optF(a.Figures.Discordance, 3), discordantOf(a.Figures))
	writeNeed(&b, a.Outcome, "fixed size")
	if a.Outcome.ExactPower != nil {
		fmt.Fprintf(&b, "  power of the exact test at that size: %s\n", pct(*a.Outcome.ExactPower))
	}
	b.WriteString("\nAssumptions:\n")
	for _, s := range a.Assumptions {
		fmt.Fprintf(&b, "  - %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeNeed(b *strings.Builder, n Need, how string) {
	if n.Pairs == nil {
		fmt.Fprintf(b, "  unknown: %s\n", n.Unknown)
		return
	}
	fmt.Fprintf(b, "  %s: %d complete pairs (%d attempts), %s GPU hours\n", how, *n.Pairs, *n.Attempts, optF(n.GPUHours, 2))
}

func overPairs(p *int) string {
	if p == nil {
		return " (stated)"
	}
	return fmt.Sprintf(" over %d complete pairs", *p)
}

func discordantOf(f Figures) string {
	if f.Discordant == nil || f.OutcomePairs == nil {
		return " (stated)"
	}
	return fmt.Sprintf(" (%d of %d pairs disagree)", *f.Discordant, *f.OutcomePairs)
}

func optF(v *float64, prec int) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

func pct(v float64) string { return trimF(100*v) + "%" }

func trimF(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
