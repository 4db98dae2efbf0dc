package report

import (
	"fmt"
	"strings"

	"github.com/evalctl/evalctl/results/runstore"
)

// NotGradedError is a suite version a run was never graded under: its
// report would be all "ungraded", which reads like a result.
type NotGradedError struct {
	Dir, Suite string
	// Graded are the versions the run was graded under.
	Graded []string
}

var _ error = (*NotGradedError)(nil)

func (e *NotGradedError) Error() string {
	list := "none"
	if len(e.Graded) > 0 {
		list = strings.Join(e.Graded, ", ")
	}
	return fmt.Sprintf("run %s was never graded under %s (graded: %s); 'evalctl regrade' grades it under another suite version", e.Dir, e.Suite, list)
}

// CheckGraded refuses (with a *NotGradedError) a suite version some
// cohort of dirs was never graded under; "" is the version each ran under.
func CheckGraded(dirs []string, version string) error {
	if version == "" {
		return nil
	}
	for _, d := range dirs {
		st, err := runstore.Open(d)
		if err != nil {
			return err
		}
		run, err := st.ReadRun()
		if err != nil {
			return err
		}
		if run.Kind != "" && run.Kind != runstore.KindCohort {
			continue
		}
		want := SuiteID(run, version)
		graded, err := runstore.GradedSuites(d)
		if err != nil {
			return err
		}
		found := false
		for _, g := range graded {
			found = found || g == want
		}
		if !found {
			return &NotGradedError{Dir: d, Suite: want, Graded: graded}
		}
	}
	return nil
}

// ValidFormat reports whether f is one of Formats.
func ValidFormat(f string) bool {
	for _, x := range Formats {
		if f == x {
			return true
		}
	}
	return false
}
