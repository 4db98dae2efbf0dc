package evalctl

// Score computes an attempt's outcome under one suite version from its turns
// and the grades of its phase snapshots (grades[i] is phase i+1's grade; a
// phase never reached has no grade). It returns nil for an unscored attempt:
// unscored means unknown, never a failure.
//
// functional = every phase grade solved, the final grade solved, and the arm
// unchanged during the attempt. delivered = functional, the expected number
// of turns, and every turn completed normally with non-empty final text and a
// passing last self-run test (TypeScript: and a passing last typecheck).
//
// A completed attempt that only tests the grading boundary cannot
// represent keep from functional is not scored (BlockedByBoundary).
//
// A completed attempt whose arm_unchanged is unknown (null) is not scored
// either: functional needs it, so its outcome is unknown, never false.
// An agent command's configuration files count as part of the arm: changed
// at the end, the attempt is not functional; unknown, it is not scored.
func Score(a *Attempt, grades []*Grade) *Outcome {
	if a.State != Completed || a.ArmUnchanged == nil || a.Agent != nil && a.Agent.ConfigUnchanged == nil {
		return nil
	}
	o := &Outcome{}
	allSolved := len(grades) > 0 && len(grades) == a.ExpectedTurns
	for _, g := range grades {
		if g == nil {
			allSolved = false
			o.PhaseSolved = append(o.PhaseSolved, false)
			continue
		}
		o.Suite, o.SuiteVersion = g.Suite, g.SuiteVersion
		o.PhaseSolved = append(o.PhaseSolved, g.Solved)
		allSolved = allSolved && g.Solved
	}
	final := len(grades) > 0 && grades[len(grades)-1] != nil && grades[len(grades)-1].Solved
	armOK := *a.ArmUnchanged && (a.Agent == nil || *a.Agent.ConfigUnchanged)
	o.Functional = allSolved && final && armOK
	if !o.Functional && BlockedByBoundary(a, grades) {
		return nil
	}
	o.Delivered = o.Functional && len(a.Turns) == a.ExpectedTurns
	for _, t := range a.Turns {
		ok := t.Termination == TermCompleted && t.AgentFinished && t.FinalText &&
			t.LastTest != nil && t.LastTest.Passed
		if a.Language == "typescript" {
			ok = ok && t.LastTypecheck != nil && t.LastTypecheck.Passed
		}
		o.Delivered = o.Delivered && ok
	}
	return o
}

// ScoreGraded is Score for readers of stored grades (report, regrade): a
// completed attempt whose grade cannot be computed from its stored records
// has an unknown outcome, ungraded, never a failure: a phase snapshot not
// graded under the suite version asked for (nil), or records that do not
// match up: every turn of a completed attempt ends with a snapshot, so a
// turn without a snapshot record (or a grade of a phase no snapshot record
// names, which runstore's Grades reports as a trailing nil) leaves the
// grade unknown. Only an attempt graded in full is scored.
func ScoreGraded(a *Attempt, grades []*Grade) (o *Outcome, ungraded bool) {
	if a.State != Completed {
		return nil, false
	}
	if len(grades) == 0 || len(grades) != len(a.Turns) {
		return nil, true
	}
	for _, g := range grades {
		if g == nil {
			return nil, true
		}
	}
	if BlockedByBoundary(a, grades) {
		return nil, true
	}
	return Score(a, grades), false
}

// BlockedByBoundary reports whether only tests the grading boundary cannot
// represent stand between a completed attempt and functional: the arm
// unchanged, every phase graded, each grade solved or short of it only by
// such tests (Grade.BlockedByBoundary), one at least. Its outcome is then
// unknown (ungraded), never a failure: the boundary, not the answer,
// failed those tests. An answer gains nothing by it: it is never scored
// functional so, and any other failure keeps it not functional.
func BlockedByBoundary(a *Attempt, grades []*Grade) bool {
	if a.State != Completed || a.ArmUnchanged == nil || !*a.ArmUnchanged ||
		a.Agent != nil && (a.Agent.ConfigUnchanged == nil || !*a.Agent.ConfigUnchanged) ||
		len(grades) == 0 || len(grades) != a.ExpectedTurns {
		return false
	}
	blocked := false
	for _, g := range grades {
		switch {
		case g == nil:
			return false
		case g.Solved:
		case g.BlockedByBoundary():
			blocked = true
		default:
			return false
		}
	}
	return blocked
}
