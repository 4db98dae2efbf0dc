package runstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/yamlcheck"
)

// ErrNoAttempt is returned by FindAttempt when nothing matches.
var ErrNoAttempt = errors.New("no such attempt")

// ErrAmbiguousAttempt is returned by FindAttempt when a prefix matches
// several attempts.
var ErrAmbiguousAttempt = errors.New("ambiguous attempt")

// AttemptQuery is how a person names one attempt, in any of the forms
// 'evalctl show' and 'evalctl rerun' accept alike.
type AttemptQuery struct {
	// Args is one of: an attempt id, a unique prefix of one, an attempt
	// directory (RUNDIR/attempts/ID), or RUN ARM CASE REPEAT (a slot: the
	// attempt that says where the slot stands, see Current).
	Args []string
	// Run, when set, looks an id or prefix up in this run only.
	Run string
	// Root is where runs are looked up by name, id or prefix.
	Root string
}

// FindAttempt returns the run directory and the id of the attempt q names.
// Naming none, or several, is the user's mistake (an *evalctl.UsageError
// wrapping ErrNoAttempt or ErrAmbiguousAttempt, or the run's ErrNoRun):
// an ambiguous prefix lists the attempts it matches with their slots, and a
// slot with a misspelt arm, case or repeat says which name was meant.
func FindAttempt(q AttemptQuery) (dir, id string, err error) {
	switch len(q.Args) {
	case 1:
		if dir, id, ok, err := attemptPath(q.Args[0]); ok || err != nil {
			return dir, id, err
		}
		return findByID(q)
	case 4:
		return findBySlot(q)
	}
	return "", "", evalctl.Usagef("name one attempt: its id (or a unique prefix), its directory RUNDIR/%s/ID, or RUN ARM CASE REPEAT", AttemptsDir)
}

// attemptPath takes arg as an attempt directory when it is a path (holds
// a separator, or exists); ok is false for anything else.
func attemptPath(arg string) (dir, id string, ok bool, err error) {
	if _, statErr := os.Stat(arg); statErr != nil && !strings.ContainsRune(arg, os.PathSeparator) {
		return "", "", false, nil
	}
	clean := filepath.Clean(arg)
	dir, id = filepath.Dir(filepath.Dir(clean)), filepath.Base(clean)
	if filepath.Base(filepath.Dir(clean)) != AttemptsDir || !IsRunDir(dir) {
		if IsRunDir(clean) {
			return "", "", true, evalctl.Usagef("%s is a run, not an attempt: name an attempt of it (RUN ARM CASE REPEAT, or an id from 'evalctl attempts %s')", arg, arg)
		}
		return "", "", true, evalctl.Usage(fmt.Errorf("%s: %w: not an attempt directory (RUNDIR/%s/ID)", arg, ErrNoAttempt, AttemptsDir))
	}
	if _, err := os.Stat(filepath.Join(clean, AttemptFile)); err != nil {
		return "", "", true, evalctl.Usage(fmt.Errorf("%s: %w: it holds no %s (the attempt never started)", arg, ErrNoAttempt, AttemptFile))
	}
	return dir, id, true, nil
}

type attemptHit struct{ dir, id string }

func findByID(q AttemptQuery) (string, string, error) {
	prefix := q.Args[0]
	var dirs []string
	if q.Run != "" {
		d, err := Resolve(q.Root, q.Run)
		if err != nil {
			return "", "", err
		}
		dirs = []string{d}
	} else {
		list, err := List(q.Root)
		if err != nil {
			return "", "", evalctl.Usagef("look up attempt %q: %v; name its run with --run, or give its directory", prefix, err)
		}
		for _, s := range list {
			dirs = append(dirs, s.Dir)
		}
	}
	var hits []attemptHit
	for _, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(d, AttemptsDir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
				continue
			}
			if e.Name() == prefix {
				return d, prefix, nil
			}
			hits = append(hits, attemptHit{d, e.Name()})
		}
	}
	switch len(hits) {
	case 0:
		where := fmt.Sprintf("%d run(s) under %s", len(dirs), q.Root)
		if q.Run != "" {
			where = "run " + dirs[0]
		}
		return "", "", evalctl.Usage(fmt.Errorf("attempt %q: %w in %s ('evalctl attempts RUN' lists a run's attempts with their ids)", prefix, ErrNoAttempt, where))
	case 1:
		return hits[0].dir, hits[0].id, nil
	}
	return "", "", evalctl.Usage(fmt.Errorf("attempt %q: %w: it matches %d attempts: %s; give more of the id, or the slot (RUN ARM CASE REPEAT)",
		prefix, ErrAmbiguousAttempt, len(hits), describeHits(hits, len(dirs) > 1)))
}

// describeHits lists matched attempts with their slots, the first ten.
func describeHits(hits []attemptHit, withRun bool) string {
	var parts []string
	for i, h := range hits {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(hits)-10))
			break
		}
		var a evalctl.Attempt
		desc := h.id
		if err := ReadJSON(filepath.Join(h.dir, AttemptsDir, h.id, AttemptFile), &a); err == nil {
			desc += fmt.Sprintf(" (%s %s %s, %s)", a.Arm, a.Case, a.Repeat, a.State)
		}
		if withRun {
			desc += " in " + filepath.Base(h.dir)
		}
		parts = append(parts, desc)
	}
	return strings.Join(parts, ", ")
}

func findBySlot(q AttemptQuery) (string, string, error) {
	dir, err := Resolve(q.Root, q.Args[0])
	if err != nil {
		return "", "", err
	}
	arm, cas, rep := q.Args[1], q.Args[2], q.Args[3]
	st, err := Open(dir)
	if err != nil {
		return "", "", err
	}
	all, err := st.Attempts()
	if err != nil {
		return "", "", err
	}
	for _, a := range Current(all) {
		if a.Arm == arm && a.Case == cas && a.Repeat == rep {
			return dir, a.ID, nil
		}
	}
	slots, err := planSlots(st)
	if err != nil {
		return "", "", err
	}
	what := fmt.Sprintf("attempt %q of run %s", arm+" "+cas+" "+rep, dir)
	var arms, cases, reps []string
	for _, s := range slots {
		arms, cases, reps = appendNew(arms, s.Arm), appendNew(cases, s.Case), appendNew(reps, s.Repeat)
	}
	var wrong []string
	for _, n := range []struct {
		kind, got string
		known     []string
	}{{"arm", arm, arms}, {"case", cas, cases}, {"repeat", rep, reps}} {
		if slices.Contains(n.known, n.got) {
			continue
		}
		msg := fmt.Sprintf("the run has no %s %q", n.kind, n.got)
		if s := yamlcheck.Suggest(n.got, n.known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += " (its " + n.kind + "s: " + strings.Join(n.known, ", ") + ")"
		}
		wrong = append(wrong, msg)
	}
	if len(wrong) > 0 {
		return "", "", evalctl.Usage(fmt.Errorf("%s: %w: %s", what, ErrNoAttempt, strings.Join(wrong, "; ")))
	}
	for _, s := range slots {
		if s.Arm == arm && s.Case == cas && s.Repeat == rep {
			return "", "", evalctl.Usage(fmt.Errorf("%s: %w: the slot is planned but has not run yet", what, ErrNoAttempt))
		}
	}
	return "", "", evalctl.Usage(fmt.Errorf("%s: %w: the plan never pairs these (see 'evalctl attempts %s')", what, ErrNoAttempt, dir))
}

// slot is one planned attempt as plan.json records it.
type slot struct {
	Index             int
	Arm, Case, Repeat string
}

// planSlots reads the realised order of a cohort's plan.
func planSlots(st *Store) ([]slot, error) {
	var p struct {
		Slots []slot `json:"slots"`
	}
	if err := ReadJSON(st.Path(PlanFile), &p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return p.Slots, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	list = append(list, s)
	sort.Strings(list)
	return list
}
