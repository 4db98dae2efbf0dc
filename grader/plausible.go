package grader

// Plausible reports whether a graded wrong answer is of the kind a capable
// model writes: it passes the phase's public tests or, in a phase that shows
// the model no tests (no public group was graded), it passes part of
// acceptance while failing the rest. An answer that fails every test is
// caught by anything and proves nothing about the checks.
func Plausible(g *Grade) bool {
	if g == nil {
		return false
	}
	if pub := g.Group("public"); pub != nil {
		return pub.Success
	}
	acc := g.Group("acceptance")
	return acc != nil && !acc.Success && acc.Passed > 0
}
