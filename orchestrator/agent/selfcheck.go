package agent

import (
	"regexp"
	"strings"
)

// A self-check is a test run or type check the agent made itself with bash.
// Whether its last one passed is part of "delivered". A command
// line is split into simple commands (at ;, &&, ||, |, newlines and
// parentheses); one whose program, after environment assignments and
// wrappers such as time or timeout, runs tests or tsc counts.
var (
	testProgramRE = regexp.MustCompile(`^(` +
		`python[0-9.]*\s+(-\S+\s+)*-m\s+(pytest|unittest)(\s|$)|` +
		`(\S*/)?(pytest|py\.test)(\s|$)|` +
		`node\s+(\S+\s+)*--test(\s|=|$)|` +
		`(npm|pnpm|yarn|bun)\s+(run\s+)?(test|t)(\s|$|:)|` +
		`(npx\s+)?(\S*/)?(jest|vitest|mocha)(\s|$)|` +
		`tox(\s|$)` +
		`)`)
	typecheckProgramRE = regexp.MustCompile(`^(` +
		`(npx\s+)?(\S*/)?tsc(\s|$)|` +
		`(npm|pnpm|yarn|bun)\s+run\s+(typecheck|type-check|tsc)(\s|$)` +
		`)`)
	commandSplitRE = regexp.MustCompile(`&&|\|\||[;|\n()]`)
	assignmentRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=\S*\s+`)
	wrapperRE      = regexp.MustCompile(`^(time|env|exec|command|nice|sudo|timeout\s+(-\S+\s+)*\S+)\s+`)
)

// classifyCommand reports whether a bash command runs tests and whether it
// type-checks. One command may do both (tsc -p . && node --test build/).
func classifyCommand(cmd string) (test, typecheck bool) {
	for _, seg := range commandSplitRE.Split(cmd, -1) {
		s := strings.TrimSpace(seg)
		for {
			t := assignmentRE.ReplaceAllString(s, "")
			t = wrapperRE.ReplaceAllString(t, "")
			if t == s {
				break
			}
			s = t
		}
		test = test || testProgramRE.MatchString(s)
		typecheck = typecheck || typecheckProgramRE.MatchString(s)
	}
	return test, typecheck
}
