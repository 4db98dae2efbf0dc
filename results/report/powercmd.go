package report

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/power"
)

// This file holds the work of 'evalctl power' on a pilot run: the pilot's
// figures for one pair of arms, and the answer written as text or JSON.

// PowerRequest is what 'evalctl power' asks: the pilot runs (none: the
// figures are stated), the arms compared, what the sizes are for, and
// stated figures (used when no run is given).
type PowerRequest struct {
	Dirs      []string
	Options   Options
	Candidate string
	Request   power.Request
	Stated    power.Figures
	Format    string
}

// Power answers the request and returns what writes the answer.
func Power(ctx context.Context, r PowerRequest) (func(io.Writer) error, error) {
	if r.Format != "text" && r.Format != "json" {
		return nil, evalctl.Usagef("unknown --format %q (want text or json)", r.Format)
	}
	if err := checkPowerRequest(r); err != nil {
		return nil, err
	}
	fig := r.Stated
	fig.Source = "stated figures"
	if len(r.Dirs) > 0 {
		var err error
		if fig, err = pilotFigures(ctx, r); err != nil {
			return nil, err
		}
	} else if fig.LogRatioSD == nil && fig.Discordance == nil {
		return nil, evalctl.Usagef("power needs a pilot run, or stated figures (--sd and/or --discordance, with --task-seconds for GPU hours)")
	}
	ans := power.Plan(fig, r.Request)
	return func(w io.Writer) error {
		if r.Format == "json" {
			return ans.WriteJSON(w)
		}
		return ans.WriteText(w)
	}, nil
}

func pilotFigures(ctx context.Context, r PowerRequest) (power.Figures, error) {
	if err := usageIfNotGraded(CheckGraded(r.Dirs, r.Options.Suite)); err != nil {
		return power.Figures{}, err
	}
	in, err := Load(ctx, r.Dirs, r.Options.Suite)
	if err != nil {
		return power.Figures{}, err
	}
	rep, err := usageIfUnknownArm(Build(in, r.Options))
	if err != nil {
		return power.Figures{}, err
	}
	g := groupRows(in.Rows)
	cand, err := candidateOf(rep, r.Candidate)
	if err != nil {
		return power.Figures{}, err
	}
	p := PilotOf(rep.Baseline, cand, g.byArm[rep.Baseline], g.byArm[cand])
	f := FiguresOf(p)
	names := make([]string, len(rep.Runs))
	for i, ri := range rep.Runs {
		names[i] = ri.Name
		if names[i] == "" {
			names[i] = ri.ID
		}
	}
	f.Source = fmt.Sprintf("pilot run %s, %s against %s", strings.Join(names, ", "), cand, rep.Baseline)
	return f, nil
}

// candidateOf is the named arm, or the first arm other than the baseline.
func candidateOf(rep *Report, name string) (string, error) {
	var others []string
	for _, a := range rep.Arms {
		if a.Arm != rep.Baseline {
			others = append(others, a.Arm)
		}
	}
	if name == "" {
		if len(others) == 0 {
			return "", evalctl.Usagef("the run has one arm (%s); power compares two", rep.Baseline)
		}
		return others[0], nil
	}
	for _, o := range others {
		if o == name {
			return name, nil
		}
	}
	return "", evalctl.Usagef("--candidate %q: no such arm other than the baseline (arms: %s)", name, strings.Join(others, ", "))
}

// FiguresOf turns a pilot into the figures a sample size is computed
// from.
func FiguresOf(p Pilot) power.Figures {
	sp, op, disc := p.SpeedPairs, p.OutcomePairs, p.Improves+p.Regresses
	f := power.Figures{SpeedPairs: &sp, LogRatioSD: p.LogRatioSD, OutcomePairs: &op, Discordant: &disc,
		BaselineTaskSeconds: p.BaselineTaskSeconds, CandidateTaskSeconds: p.CandidateTaskSeconds}
	if op > 0 {
		d := float64(disc) / float64(op)
		f.Discordance = &d
	}
	return f
}

func checkPowerRequest(r PowerRequest) error {
	q, f := r.Request, r.Stated
	bad := func(v *float64, lo, hi float64) bool { return v != nil && !(*v > lo && *v < hi) }
	switch {
	case bad(&q.HalfWidth, 0, 1):
		return evalctl.Usagef("--half-width %v: give a fraction between 0 and 1 (0.02 for ±2%%)", q.HalfWidth)
	case bad(&q.Difference, 0, 1):
		return evalctl.Usagef("--difference %v: give a fraction between 0 and 1 (0.05 for 5 points)", q.Difference)
	case bad(&q.Power, 0, 1):
		return evalctl.Usagef("--power %v: give a probability between 0 and 1 (0.8)", q.Power)
	case f.LogRatioSD != nil && !(*f.LogRatioSD > 0 && *f.LogRatioSD < 10):
		return evalctl.Usagef("--sd %v: give the standard deviation of per-pair log ratios, a positive number (0.04)", *f.LogRatioSD)
	case f.Discordance != nil && !(*f.Discordance > 0 && *f.Discordance <= 1):
		return evalctl.Usagef("--discordance %v: give the share of discordant pairs, above 0 and at most 1 (0.1)", *f.Discordance)
	}
	return nil
}
