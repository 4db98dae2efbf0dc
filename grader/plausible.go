package grader

import (
	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Plausible reports whether a graded wrong answer is of the kind a capable
// model writes: it passes the phase's public tests or, in a phase that shows
// the model no tests (no public group was graded), it passes part of
// acceptance while failing the rest. An answer that fails every test is
// caught by anything and proves nothing about the checks.
func Plausible(g *evalctl.Grade) bool {
	if g == nil {
		return false
	}
	if pub := g.Group("public"); pub != nil {
		return pub.Success
	}
	acc := g.Group("acceptance")
	return acc != nil && !acc.Success && acc.Passed > 0
}

// shadowed lists the answer's Python files that a standard-library or
// image module of the same name hides while grading.
func shadowed(c *tasks.Case, ws []sandbox.Entry) []string {
	if c.Language != tasks.Python {
		return nil
	}
	var files []string
	for _, e := range ws {
		if e.Mode.IsRegular() {
			files = append(files, e.Name)
		}
	}
	return tasks.Shadowed(files)
}
