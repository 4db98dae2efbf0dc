package evalctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

const module = "github.com/evalctl/evalctl"

// anything marks a package that may import every library package of the
// module (a command: nothing imports it).
const anything = "*"

// allowed is the package graph: for every package of the module (its path
// under the module, "" for the root), the packages of the module it may
// import. Dependencies point one way, from the commands down to the
// records; a package missing here, or an import not listed in its row,
// fails TestImportRules. Add a row or an edge only if it points down.
// Tests may import more (a test of a package sits above it); the rules
// below say what they may not.
var allowed = map[string][]string{
	// The commands: nothing imports them.
	"cmd/evalctl":              {anything},
	"cmd/evalctl/internal/cli": {"", "results/runstore", "internal/yamlcheck"},

	// orchestrator: runs cohorts and screens, talks to model servers.
	"orchestrator/demo": {"", "orchestrator", "results/report", "orchestrator/scripted", "sandbox", "tasks"},
	"orchestrator": {"", "grader", "orchestrator/agent", "orchestrator/longctx", "orchestrator/model",
		"results/report", "results/runstore", "orchestrator/serving", "orchestrator/telemetry",
		"orchestrator/transcript", "sandbox", "tasks", "internal/yamlcheck"},
	"orchestrator/screen": {"", "orchestrator/model", "results/runstore", "orchestrator/serving",
		"orchestrator/telemetry", "internal/yamlcheck"},
	"orchestrator/agent":               {"", "orchestrator/model", "orchestrator/transcript", "sandbox"},
	"orchestrator/serving":             {"", "orchestrator/model", "results/runstore", "orchestrator/telemetry", "internal/yamlcheck"},
	"orchestrator/serving/servingtest": {},
	"orchestrator/model":               {""},
	"orchestrator/transcript":          {"", "orchestrator/model"},
	"orchestrator/scripted":            {"", "tasks"},
	"orchestrator/telemetry":           {},
	"orchestrator/longctx":             {},

	// results: the run directory on disk and what reads it.
	"results/view":       {"", "results/inspect", "results/report", "results/runstore"},
	"results/summary":    {"", "results/report", "results/runstore", "orchestrator/screen", "tasks"},
	"results/inspect":    {"", "results/runstore", "orchestrator/transcript", "tasks"},
	"results/report":     {"", "results/runstore", "tasks"},
	"results/reporttest": {"", "results/runstore", "tasks"},
	"results/runstore":   {"", "tasks", "internal/yamlcheck"},

	// grader: grades answers in the sandbox.
	"grader/regrade":  {"", "grader", "results/runstore", "sandbox", "tasks"},
	"grader/controls": {"", "grader", "sandbox", "tasks", "tasks/importer"},
	"grader":          {"", "sandbox", "tasks"},

	// tasks: suites and their formats.
	"tasks/importer": {"", "tasks"},
	"tasks":          {"", "internal/yamlcheck"},

	"sandbox/sandboxtest": {"sandbox"},
	"sandbox":             {},
	"internal/yamlcheck":  {},
	"":                    {},
}

// A rule every package of the module obeys, tests included where
// withTests says so. Packages are paths under the module; a trailing
// "/..." takes in the package and everything under it.
type rule struct {
	name string
	// who the rule applies to, and the exceptions.
	applies, except []string
	// forbid matches an imported path the rule forbids.
	forbid func(path string) bool
	// deps checks every package linked (go list -deps), not only direct
	// imports.
	deps      bool
	withTests bool
}

var dockerSDK = []string{"github.com/docker/", "github.com/moby/", "github.com/containerd/"}

func isDocker(p string) bool {
	for _, pre := range dockerSDK {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

func under(pre string) func(string) bool {
	return func(p string) bool { return p == module+"/"+pre || strings.HasPrefix(p, module+"/"+pre+"/") }
}

var rules = []rule{
	{
		name:    "only sandbox imports the Docker SDK (github.com/docker, moby, containerd)",
		applies: []string{"..."}, except: []string{"sandbox/..."},
		forbid: isDocker, withTests: true,
	},
	{
		name:    "only orchestrator/model imports go-openai",
		applies: []string{"..."}, except: []string{"orchestrator/model"},
		forbid: func(p string) bool { return strings.HasPrefix(p, "github.com/sashabaranov/go-openai") }, withTests: true,
	},
	{
		name:    "the root package (the records) imports only the standard library",
		applies: []string{""},
		forbid:  func(p string) bool { return !isStd(p) },
	},
	{
		name:    "tasks imports nothing of the module but the root package, the YAML decoder and tasks/...",
		applies: []string{"tasks/..."},
		forbid: func(p string) bool {
			return strings.HasPrefix(p, module+"/") && !under("tasks")(p) && p != module+"/internal/yamlcheck"
		}, withTests: true,
	},
	{
		name:    "grader and sandbox never import orchestrator/...",
		applies: []string{"grader/...", "sandbox/..."}, except: []string{"grader/regrade"},
		forbid: under("orchestrator"), withTests: true,
	},
	{
		// regrade's tests run a cohort to have answers to regrade.
		name:    "grader/regrade never imports orchestrator/... (its tests may, to make runs)",
		applies: []string{"grader/regrade"},
		forbid:  under("orchestrator"),
	},
	{
		name:    "sandbox never imports grader or tasks",
		applies: []string{"sandbox/..."},
		forbid:  func(p string) bool { return under("grader")(p) || under("tasks")(p) }, withTests: true,
	},
	{
		name: "the records, their storage, the transcript, the model client, reports, the screens and the readers of stored runs link no Docker package",
		applies: []string{"", "tasks", "results/runstore", "orchestrator/transcript", "orchestrator/model",
			"results/report", "results/reporttest", "orchestrator/serving", "orchestrator/screen",
			"results/summary", "results/inspect", "results/view", "internal/yamlcheck"},
		forbid: isDocker, deps: true,
	},
}

func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// listPackages runs 'go list -deps -json ./...' in the module root: every
// package of the module and everything they link.
func listPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the import rules need the go command: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "list", "-e", "-deps", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

// short is a module package's path under the module ("" for the root).
func short(p string) string {
	if p == module {
		return ""
	}
	return strings.TrimPrefix(p, module+"/")
}

func inModule(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }

// show names a package for a message: "the root package" for "".
func show(s string) string {
	if s == "" {
		return "the root package"
	}
	return s
}

// matches reports whether the module package s is one of patterns.
func matches(s string, patterns []string) bool {
	for _, pat := range patterns {
		if pat == "..." {
			return true
		}
		if base, ok := strings.CutSuffix(pat, "/..."); ok {
			if s == base || strings.HasPrefix(s, base+"/") {
				return true
			}
			continue
		}
		if s == pat {
			return true
		}
	}
	return false
}

// chain is the import path from one package to the first package linked
// that want matches, for a message ("a -> b -> c"); nil when none.
func chain(pkgs map[string]*pkg, from string, want func(string) bool) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != from && want(p) {
			var path []string
			for q := p; q != ""; q = prev[q] {
				path = append(path, q)
			}
			slices.Reverse(path)
			return path
		}
		if pkgs[p] == nil {
			continue
		}
		imports := slices.Clone(pkgs[p].Imports)
		sort.Strings(imports)
		for _, next := range imports {
			if _, seen := prev[next]; !seen {
				prev[next] = p
				queue = append(queue, next)
			}
		}
	}
	return nil
}

func shortChain(path []string) string {
	var out []string
	for _, p := range path {
		if inModule(p) {
			p = show(short(p))
		}
		out = append(out, p)
	}
	return strings.Join(out, " -> ")
}

// TestImportRules pins the package graph: the edges between the module's
// packages are those of the table above, and the rules hold (who may
// import the Docker SDK and go-openai, which packages must not link
// Docker).
func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	if n := len(ownPackages(pkgs)); n < len(allowed)/2 {
		t.Fatalf("go list found %d packages of the module; run the test from the module root", n)
	}
	for _, msg := range unknownNames(pkgs) {
		t.Error(msg)
	}
	for _, msg := range violations(pkgs) {
		t.Error(msg)
	}
}

func ownPackages(pkgs map[string]*pkg) []string {
	var own []string
	for path := range pkgs {
		if inModule(path) {
			own = append(own, path)
		}
	}
	sort.Strings(own)
	return own
}

// unknownNames lists the packages the table and the rules name that do
// not exist (a rename would silently lift a rule).
func unknownNames(pkgs map[string]*pkg) []string {
	exists := func(s string) bool { return pkgs[module+strings.TrimSuffix("/"+s, "/")] != nil }
	var out []string
	for s, row := range allowed {
		for _, to := range append([]string{s}, row...) {
			if to != anything && !exists(to) {
				out = append(out, fmt.Sprintf("the table of allowed imports names %s, which is not a package of the module", show(to)))
			}
		}
	}
	for _, r := range rules {
		for _, pat := range append(slices.Clone(r.applies), r.except...) {
			if base := strings.TrimSuffix(strings.TrimSuffix(pat, "..."), "/"); !exists(base) {
				out = append(out, fmt.Sprintf("rule %q names %s, which is not a package of the module", r.name, show(base)))
			}
		}
	}
	sort.Strings(out)
	return out
}

// violations lists every import of the module's packages that the table
// or a rule forbids, in words that name the edge and the rule.
func violations(pkgs map[string]*pkg) []string {
	var out []string
	own := ownPackages(pkgs)
	for _, path := range own {
		s := short(path)
		row, ok := allowed[s]
		if !ok {
			out = append(out, fmt.Sprintf("%s: no row in the table of allowed imports (allowed in imports_test.go); add one listing what it may import, pointing down only", show(s)))
			continue
		}
		if slices.Contains(row, anything) {
			continue
		}
		for _, imp := range pkgs[path].Imports {
			if inModule(imp) && !slices.Contains(row, short(imp)) {
				out = append(out, fmt.Sprintf("%s imports %s: not an allowed edge (table allowed in imports_test.go); dependencies point one way, down to the records", show(s), show(short(imp))))
			}
		}
	}
	for _, r := range rules {
		for _, path := range own {
			s := short(path)
			if !matches(s, r.applies) || matches(s, r.except) {
				continue
			}
			p := pkgs[path]
			if r.deps {
				if c := chain(pkgs, path, r.forbid); c != nil {
					out = append(out, fmt.Sprintf("%s links %s (%s): breaks the rule %q", show(s), c[len(c)-1], shortChain(c), r.name))
				}
				continue
			}
			imports := map[string]string{}
			for _, imp := range p.Imports {
				imports[imp] = "imports"
			}
			if r.withTests {
				for _, imp := range append(slices.Clone(p.TestImports), p.XTestImports...) {
					if _, ok := imports[imp]; !ok {
						imports[imp] = "has a test that imports"
					}
				}
			}
			var bad []string
			for imp := range imports {
				if r.forbid(imp) {
					bad = append(bad, imp)
				}
			}
			sort.Strings(bad)
			for _, imp := range bad {
				name := imp
				if inModule(imp) {
					name = show(short(imp))
				}
				out = append(out, fmt.Sprintf("%s %s %s: breaks the rule %q", show(s), imports[imp], name, r.name))
			}
		}
	}
	return out
}

// TestImportRulesCatchUpwardEdges: on a made-up graph that breaks every
// rule once, each break is found and said with its edge and its rule, and
// nothing else is.
func TestImportRulesCatchUpwardEdges(t *testing.T) {
	m := func(s string) string { return strings.TrimSuffix(module+"/"+s, "/") }
	p := func(s string, imports ...string) *pkg { return &pkg{ImportPath: m(s), Imports: imports} }
	graph := []*pkg{
		p("", "embed", "gopkg.in/yaml.v3"),
		p("tasks", m(""), m("grader")),
		p("grader", m(""), m("sandbox"), m("tasks")),
		{ImportPath: m("sandbox"), Imports: []string{"github.com/docker/docker/client"}, TestImports: []string{m("orchestrator/agent")}},
		p("results/runstore", m(""), m("grader")),
		p("orchestrator/model", m(""), m("results/runstore"), "github.com/sashabaranov/go-openai"),
		{ImportPath: m("results/report"), Imports: []string{m("results/runstore")}, XTestImports: []string{"github.com/sashabaranov/go-openai"}},
		p("orchestrator/newthing", m("")),
		p("cmd/evalctl", m("orchestrator/newthing"), m("results/report")),
		{ImportPath: "github.com/docker/docker/client"},
	}
	pkgs := map[string]*pkg{}
	for _, g := range graph {
		pkgs[g.ImportPath] = g
	}
	got := violations(pkgs)
	want := []string{
		`orchestrator/newthing: no row in the table of allowed imports`,
		`results/runstore imports grader: not an allowed edge`,
		`orchestrator/model imports results/runstore: not an allowed edge`,
		`tasks imports grader: not an allowed edge`,
		`results/report has a test that imports github.com/sashabaranov/go-openai: breaks the rule "only orchestrator/model imports go-openai"`,
		`the root package imports gopkg.in/yaml.v3: breaks the rule "the root package (the records) imports only the standard library"`,
		`tasks imports grader: breaks the rule "tasks imports nothing of the module but the root package, the YAML decoder and tasks/..."`,
		`sandbox has a test that imports orchestrator/agent: breaks the rule "grader and sandbox never import orchestrator/..."`,
		`tasks links github.com/docker/docker/client (tasks -> grader -> sandbox -> github.com/docker/docker/client): breaks the rule "the records`,
		`results/runstore links github.com/docker/docker/client (results/runstore -> grader -> sandbox -> github.com/docker/docker/client)`,
		`orchestrator/model links github.com/docker/docker/client (orchestrator/model -> results/runstore -> grader -> sandbox -> github.com/docker/docker/client)`,
		`results/report links github.com/docker/docker/client (results/report -> results/runstore -> grader -> sandbox -> github.com/docker/docker/client)`,
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("missing: %s", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, tt := range []struct {
		s        string
		patterns []string
		want     bool
	}{
		{"sandbox/sandboxtest", []string{"sandbox/..."}, true},
		{"sandbox", []string{"sandbox/..."}, true},
		{"sandboxes", []string{"sandbox/..."}, false},
		{"", []string{"..."}, true},
		{"", []string{"tasks"}, false},
	} {
		if got := matches(tt.s, tt.patterns); got != tt.want {
			t.Errorf("matches(%q, %v) = %v, want %v", tt.s, tt.patterns, got, tt.want)
		}
	}
}
