package importer

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Exercism's JavaScript and TypeScript tracks test with Jest, which the
// sandbox image lacks (and no npm registry is reachable to add it). Rather
// than rewrite each test into node:test at import time, an imported test
// file loads a Jest-compatible layer shipped in the image
// (/opt/evalctl/jest.js, with its types in jest.d.ts): one line is added at
// its top, and the import of the solution is pointed at the workspace. The
// test file stays what its authors wrote, the layer is test-side code, and
// both tracks compile with the image's tsc (JavaScript with allowJs) and run
// under node's test runner like any TypeScript case. What the layer lacks is
// refused here, naming the exercise, the file, the line and the feature.

// JestModule is where the image's Jest-compatible layer is loaded from.
const JestModule = "/opt/evalctl/jest"

// jestNames are the names the layer exports, in the order imported.
var jestNames = []string{"describe", "xdescribe", "test", "it", "xtest", "xit", "fit", "expect", "beforeEach", "afterEach", "beforeAll", "afterAll"}

// jestMatchers are the matchers the layer provides.
var jestMatchers = map[string]bool{
	"toBe": true, "toEqual": true, "toStrictEqual": true, "toThrow": true, "toThrowError": true, "toBeCloseTo": true,
	"toContain": true, "toContainEqual": true, "toHaveLength": true, "toBeTruthy": true, "toBeFalsy": true,
	"toBeNull": true, "toBeUndefined": true, "toBeDefined": true, "toBeNaN": true, "toMatch": true, "toBeInstanceOf": true,
	"toBeGreaterThan": true, "toBeGreaterThanOrEqual": true, "toBeLessThan": true, "toBeLessThanOrEqual": true,
}

var (
	reExpect    = regexp.MustCompile(`(?:^|[^.\w$])expect\s*\(`)
	reMatcher   = regexp.MustCompile(`^\s*((?:\.\s*(?:not|resolves|rejects)\s*)*)\.\s*([A-Za-z_$][\w$]*)\s*\(`)
	reJestObj   = regexp.MustCompile(`\bjest\.(\w+)`)
	reEach      = regexp.MustCompile(`\b(?:describe|test|it|xtest|xit)\.(each|todo|concurrent|failing)\b`)
	reExpectFn  = regexp.MustCompile(`\bexpect\.(\w+)`)
	reImport    = regexp.MustCompile(`(\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"\n]+)(['"])`)
	reGlobalsIm = regexp.MustCompile(`(?m)^\s*import\s*\{[^}]*\}\s*from\s*['"]@jest/globals['"]\s*;?`)
)

// jestTest turns an Exercism test file into one that runs on the image's
// layer: imports of the solution (relative paths naming a workspace file)
// point at /workspace through the same relative path from /checks, which
// also holds in tsc's build tree, and the layer's names the file uses are
// imported from it. It refuses, with file and line, what the layer lacks.
func jestTest(src []byte, file, testDir string, workspace, others map[string][]byte) ([]byte, []string, error) {
	text := string(src)
	lineOf := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
	refuse := func(off int, what string) error {
		return fmt.Errorf("%s:%d: uses %s, which evalctl's Jest layer over node:test does not provide (it has describe, test/it, xtest, the hooks and the matchers %s); the exercise is not imported",
			file, lineOf(off), what, strings.Join(sortedKeys(jestMatchers), ", "))
	}
	if m := reJestObj.FindStringSubmatchIndex(text); m != nil {
		return nil, nil, refuse(m[0], "jest."+text[m[2]:m[3]]+" (Jest's mocks, spies and fake timers)")
	}
	if m := reEach.FindStringSubmatchIndex(text); m != nil {
		return nil, nil, refuse(m[0], text[m[0]:m[1]])
	}
	for _, m := range matcherCalls(text) {
		if !jestMatchers[m.name] {
			return nil, nil, refuse(m.off, "the matcher "+m.name)
		}
	}
	for _, m := range reExpectFn.FindAllStringSubmatchIndex(text, -1) {
		if name := text[m[2]:m[3]]; name != "any" && name != "anything" {
			return nil, nil, refuse(m[0], "expect."+name)
		}
	}
	out, helpers, err := rewriteImports(text, file, testDir, workspace, others)
	if err != nil {
		return nil, nil, err
	}
	if !reGlobalsIm.MatchString(text) {
		var used []string
		for _, n := range jestNames {
			if regexp.MustCompile(`\b` + n + `\b`).MatchString(text) {
				used = append(used, n)
			}
		}
		if len(used) == 0 {
			return nil, nil, fmt.Errorf("%s: no describe, test or expect: not a Jest test file", file)
		}
		out = fmt.Sprintf("import { %s } from %q; // evalctl: Jest-compatible layer over node:test\n", strings.Join(used, ", "), JestModule) + out
	}
	return []byte(out), helpers, nil
}

// rewriteImports points a test file's (or its helper's) imports of the
// solution at the workspace and Jest's globals at the layer. A relative
// import of another file of the exercise (a helper module the tests share)
// stays as it is, and the helper is returned, to travel with the checks
// beside the tests; any other package is not in the image.
func rewriteImports(text, file, testDir string, workspace, others map[string][]byte) (string, []string, error) {
	var rerr error
	var helpers []string
	out := reImport.ReplaceAllStringFunc(text, func(s string) string {
		m := reImport.FindStringSubmatch(s)
		spec := m[3]
		switch {
		case spec == "@jest/globals":
			return m[1] + m[2] + JestModule + m[4]
		case strings.HasPrefix(spec, "node:"):
			return s
		case strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../"):
			target := path.Join(path.Dir(file), spec)
			if hasModule(workspace, target) {
				return m[1] + m[2] + relTo(path.Join(testDir, path.Dir(file)), "workspace/"+target) + m[4]
			}
			if name, ok := moduleFile(others, target); ok {
				helpers = append(helpers, name)
				return s
			}
			if rerr == nil {
				rerr = fmt.Errorf("%s: imports %q, which is neither the solution nor a file of the exercise; the exercise is not imported", file, spec)
			}
			return s
		default:
			if rerr == nil {
				rerr = fmt.Errorf("%s: imports the package %q, which the sandbox image lacks (node's built-in modules and the exercise's own files only); the exercise is not imported", file, spec)
			}
			return s
		}
	})
	return out, helpers, rerr
}

// moduleFile finds the file of files a module path (without or with its
// extension) names.
func moduleFile(files map[string][]byte, target string) (string, bool) {
	for _, name := range sortedNames(files) {
		if name == target || strings.TrimSuffix(name, path.Ext(name)) == target {
			return name, true
		}
	}
	return "", false
}

// hasModule reports whether target, a module path without or with its
// extension, names a file of the workspace.
func hasModule(ws map[string][]byte, target string) bool {
	for name := range ws {
		if name == target || strings.TrimSuffix(name, path.Ext(name)) == target {
			return true
		}
	}
	return false
}

// relTo is the relative module path from directory dir (under the
// filesystem root) to target (also under it): "../../workspace/leap".
func relTo(dir, target string) string {
	up := strings.Repeat("../", strings.Count(strings.Trim(dir, "/"), "/")+1)
	return up + strings.TrimSuffix(target, path.Ext(target))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tsconfig renders the tsconfig.json tsc compiles an imported JavaScript
// or TypeScript exercise with: the whole filesystem as root, so that the
// build tree mirrors /checks and /workspace and the tests' relative imports
// hold in both. JavaScript compiles with allowJs and no type checking.
func tsconfig(files []string, js bool) []byte {
	opts := map[string]any{
		"target": "es2020", "module": "commonjs", "lib": []string{"es2022", "dom"},
		"rootDir": "/", "types": []string{}, "typeRoots": []string{}, "esModuleInterop": true,
		"skipLibCheck": true,
	}
	if js {
		opts["allowJs"], opts["checkJs"] = true, false
	} else {
		opts["strict"] = true
	}
	data, _ := json.MarshalIndent(map[string]any{"compilerOptions": opts, "files": files}, "", "  ")
	return append(data, '\n')
}

type matcherCall struct {
	name string
	off  int // where its expect( begins
}

// matcherCalls finds the matchers by position: the method called on
// expect(...) (after any .not, .resolves, .rejects), so that a method the
// test calls on the value under test, such as expect(x.toString()) or
// list.toArray(), is not taken for one.
func matcherCalls(text string) []matcherCall {
	var out []matcherCall
	for _, loc := range reExpect.FindAllStringIndex(text, -1) {
		open := loc[1] - 1 // the "(" of expect(
		end := closing(text, open)
		if end < 0 {
			continue
		}
		if m := reMatcher.FindStringSubmatch(text[end+1:]); m != nil {
			start := loc[0]
			if start < len(text) && text[start] != 'e' {
				start++
			}
			out = append(out, matcherCall{name: m[2], off: start})
		}
	}
	return out
}

// closing is the index of the bracket closing the one at open, skipping
// string and template literals and comments; -1 if it is not closed.
func closing(text string, open int) int {
	depth := 0
	for i := open; i < len(text); i++ {
		switch c := text[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		case '"', '\'', '`':
			for i++; i < len(text) && text[i] != c; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(text) && text[i+1] == '/' {
				for i < len(text) && text[i] != '\n' {
					i++
				}
			} else if i+1 < len(text) && text[i+1] == '*' {
				if j := strings.Index(text[i+2:], "*/"); j >= 0 {
					i += j + 3
				} else {
					return -1
				}
			}
		}
	}
	return -1
}
