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
	reMatcher   = regexp.MustCompile(`\.(to[A-Z]\w*)\s*\(`)
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
func jestTest(src []byte, file, testDir string, workspace map[string][]byte) ([]byte, error) {
	text := string(src)
	lineOf := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
	refuse := func(off int, what string) error {
		return fmt.Errorf("%s:%d: uses %s, which evalctl's Jest layer over node:test does not provide (it has describe, test/it, xtest, the hooks and the matchers %s); the exercise is not imported",
			file, lineOf(off), what, strings.Join(sortedKeys(jestMatchers), ", "))
	}
	if m := reJestObj.FindStringSubmatchIndex(text); m != nil {
		return nil, refuse(m[0], "jest."+text[m[2]:m[3]]+" (Jest's mocks, spies and fake timers)")
	}
	if m := reEach.FindStringSubmatchIndex(text); m != nil {
		return nil, refuse(m[0], text[m[0]:m[1]])
	}
	for _, m := range reMatcher.FindAllStringSubmatchIndex(text, -1) {
		if name := text[m[2]:m[3]]; !jestMatchers[name] {
			return nil, refuse(m[0], "the matcher "+name)
		}
	}
	for _, m := range reExpectFn.FindAllStringSubmatchIndex(text, -1) {
		if name := text[m[2]:m[3]]; name != "any" && name != "anything" {
			return nil, refuse(m[0], "expect."+name)
		}
	}
	// Imports: the solution's module moves to the workspace; Jest's own
	// globals module is the layer; any other package is not in the image.
	var rerr error
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
				return m[1] + m[2] + relTo(testDir, "workspace/"+target) + m[4]
			}
			return s // another test file, beside this one under checks
		default:
			if rerr == nil {
				rerr = fmt.Errorf("%s: imports the package %q, which the sandbox image lacks (node's built-in modules and the exercise's own files only); the exercise is not imported", file, spec)
			}
			return s
		}
	})
	if rerr != nil {
		return nil, rerr
	}
	if !reGlobalsIm.MatchString(text) {
		var used []string
		for _, n := range jestNames {
			if regexp.MustCompile(`\b` + n + `\b`).MatchString(text) {
				used = append(used, n)
			}
		}
		if len(used) == 0 {
			return nil, fmt.Errorf("%s: no describe, test or expect: not a Jest test file", file)
		}
		out = fmt.Sprintf("import { %s } from %q; // evalctl: Jest-compatible layer over node:test\n", strings.Join(used, ", "), JestModule) + out
	}
	return []byte(out), nil
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
