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
	"orchestrator": {"", "grader", "orchestrator/agent", "results/power", "orchestrator/longctx", "orchestrator/model", "orchestrator/proxy",
		"results/report", "results/runstore", "orchestrator/serving", "orchestrator/telemetry",
		"orchestrator/transcript", "sandbox", "tasks", "internal/yamlcheck"},
	"orchestrator/screen": {"", "orchestrator/model", "results/runstore", "orchestrator/serving",
		"orchestrator/telemetry", "internal/yamlcheck"},
	"orchestrator/agent":               {"", "orchestrator/model", "orchestrator/transcript", "sandbox"},
	"orchestrator/proxy":               {"", "orchestrator/agent", "orchestrator/model", "orchestrator/transcript"},
	"orchestrator/serving":             {"", "orchestrator/model", "results/runstore", "orchestrator/telemetry", "internal/yamlcheck"},
	"orchestrator/serving/servingtest": {},
	"orchestrator/model":               {""},
	"orchestrator/transcript":          {"", "orchestrator/model"},
	"orchestrator/scripted":            {"", "tasks"},
	"orchestrator/telemetry":           {},
	"orchestrator/longctx":             {""},

	// results: the run directory on disk and what reads it.
	"results/view":       {"", "results/inspect", "results/report", "results/runstore"},
	"results/summary":    {"", "results/report", "results/runstore", "orchestrator/screen", "tasks"},
	"results/inspect":    {"", "results/runstore", "orchestrator/transcript", "tasks"},
	"results/report":     {"", "results/power", "results/runstore", "tasks"},
	"results/power":      {},
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
	"internal/poll":       {},
	"":                    {},
}

// A layer is the packages of the module with one role. A package may
// import packages of its own layer (as the table above allows) and of the
// layers below it, never of a layer above: TestImportRules fails on an
// upward edge, naming both layers. docs/architecture.md is generated from
// this list ('go generate .'), one line per package saying what it owns.
type layer struct {
	name, role string
	packages   []owned
}

// owned is one package of a layer and what it owns, in one line.
type owned struct{ pkg, owns string }

// layers, bottom first.
var layers = []layer{
	{"records", "what a run directory holds, as Go types; the standard library only", []owned{
		{"", "the records: plan.json, run.json, attempts, grades, events, regrade records, server identities; scoring (Score); UsageError; the embedded development suite"},
	}},
	{"storage/clients", "what keeps records on disk, reads suites, and talks to the outside (Docker, model servers, the hardware)", []owned{
		{"internal/yamlcheck", "the one strict YAML decoder: field paths, lines, did-you-mean"},
		{"internal/poll", "how tests wait: a condition with a load-stretched deadline, never a fixed sleep"},
		{"tasks", "suites and cases: their types, loader, fingerprint and materialised copies"},
		{"tasks/importer", "outside suites (Exercism's layout) brought in as evalctl suites, without grading"},
		{"sandbox", "Docker: images, containers, exec, snapshots, engines over TCP/TLS and SSH; the only package that links the Docker SDK"},
		{"sandbox/sandboxtest", "tests' connection to the real engine and the sandbox image"},
		{"results/runstore", "the run directory on disk: registration, locking, atomic writes, the event log, listing and resolving runs"},
		{"orchestrator/model", "the one client of llama-server and OpenAI-compatible endpoints (the only importer of go-openai)"},
		{"orchestrator/transcript", "an attempt's transcript.jsonl: its events and their reader"},
		{"orchestrator/telemetry", "what the hardware reports: GPU memory, utilisation, power, temperatures"},
		{"orchestrator/longctx", "how a long-context case's corpus reaches the model: full, cropped or retrieved (BM25)"},
		{"orchestrator/serving", "model servers started from profiles: supervision, readiness, identity, weight digests"},
		{"orchestrator/serving/servingtest", "tests' real model servers: the evalctl binary and profiles that start it"},
		{"orchestrator/scripted", "the scripted model server speaking llama-server's protocol"},
		{"orchestrator/screen", "throughput screens and capacity probes of serving configurations, and their reports (summary reads them, so they sit below it)"},
	}},
	{"grader/results", "what grades answers, and what reads finished runs", []owned{
		{"grader", "grading an answer snapshot in a fresh sandbox: check groups, protected files, test ids; it calls its container through an interface of its own (gradeBox), which gradefake_test.go fakes under -short"},
		{"grader/controls", "negative controls, the fixture gate, and the grading half of 'cases import'"},
		{"grader/regrade", "regrading stored answers under another suite version, and fixture diagnoses"},
		{"results/power", "sample sizes for a paired cohort (speed ratio, pass-rate difference), their GPU hours, and the anytime-valid confidence sequence a stop rule reads"},
		{"results/report", "pooling attempts per arm, comparisons and their statistics, exports and their verification, the HTML report"},
		{"results/reporttest", "synthetic run directories for the report's tests and benchmarks"},
		{"results/inspect", "one attempt read back for a person: record, conversation, grades, diff"},
		{"results/summary", "runs of every kind gathered into one results document"},
		{"results/view", "the live web viewer"},
	}},
	{"orchestrator", "what runs cohorts", []owned{
		{"orchestrator", "plans decoded and validated, registration, the runner (scheduling, attempts, resume, reruns); it calls containers through interfaces of its own (agentBox, boxStarter) and grades through one (grades), which runfake_test.go fakes under -short"},
		{"orchestrator/agent", "the built-in tool-calling loop of one attempt, and its measurements"},
		{"orchestrator/proxy", "the recording proxy of agent-command arms: the agent's model calls made, recorded and budgeted as the built-in loop does"},
		{"orchestrator/demo", "'evalctl demo': the whole job on embedded defaults"},
	}},
	{"cmd", "the binary: flags, building the pieces, printing", []owned{
		{"cmd/evalctl", "the evalctl command: one table of commands"},
		{"cmd/evalctl/internal/cli", "command-line conventions: flags, errors, exit codes, run resolution"},
	}},
}

// layerOf maps each package named in layers to its layer's index.
func layerOf() map[string]int {
	out := map[string]int{}
	for i, l := range layers {
		for _, o := range l.packages {
			out[o.pkg] = i
		}
	}
	return out
}

// layerOrder is the layers top down, for messages.
func layerOrder() string {
	var names []string
	for i := len(layers) - 1; i >= 0; i-- {
		names = append(names, layers[i].name)
	}
	return strings.Join(names, " -> ")
}

// layerViolations lists the packages in no layer (or in two) and every
// import, in the graph or in the table of allowed imports, that points up.
func layerViolations(pkgs map[string]*pkg) []string {
	var out []string
	of := layerOf()
	seen := map[string]bool{}
	for _, l := range layers {
		for _, o := range l.packages {
			if seen[o.pkg] {
				out = append(out, fmt.Sprintf("%s is in two layers (layers in imports_test.go)", show(o.pkg)))
			}
			seen[o.pkg] = true
		}
	}
	up := func(from, to, how string) {
		lf, okf := of[from]
		lt, okt := of[to]
		if okf && okt && lt > lf {
			out = append(out, fmt.Sprintf("%s (layer %s) %s %s (layer %s): an upward edge; the layers, top down: %s", show(from), layers[lf].name, how, show(to), layers[lt].name, layerOrder()))
		}
	}
	for _, path := range ownPackages(pkgs) {
		s := short(path)
		if _, ok := of[s]; !ok {
			out = append(out, fmt.Sprintf("%s: in no layer (layers in imports_test.go); add it to the layer of its role, with what it owns", show(s)))
			continue
		}
		for _, imp := range pkgs[path].Imports {
			if inModule(imp) {
				up(s, short(imp), "imports")
			}
		}
	}
	for from, row := range allowed {
		for _, to := range row {
			if to != anything && !slices.Contains(pkgs[module+strings.TrimSuffix("/"+from, "/")].importsOrNil(), module+strings.TrimSuffix("/"+to, "/")) {
				up(from, to, "may import (table allowed)")
			}
		}
	}
	sort.Strings(out)
	return out
}

func (p *pkg) importsOrNil() []string {
	if p == nil {
		return nil
	}
	return p.Imports
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
	for _, msg := range layerViolations(pkgs) {
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
	for _, l := range layers {
		for _, o := range l.packages {
			if !exists(o.pkg) {
				out = append(out, fmt.Sprintf("layer %s names %s, which is not a package of the module", l.name, show(o.pkg)))
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

// TestLayersCatchUpwardEdges: on a made-up graph, an import from a lower
// layer to a higher one is found and said with both layers, and so is a
// package in no layer; edges down or within a layer are not.
func TestLayersCatchUpwardEdges(t *testing.T) {
	m := func(s string) string { return strings.TrimSuffix(module+"/"+s, "/") }
	p := func(s string, imports ...string) *pkg { return &pkg{ImportPath: m(s), Imports: imports} }
	pkgs := map[string]*pkg{}
	for _, g := range []*pkg{
		p(""),
		p("tasks", m(""), m("grader")),
		p("grader", m(""), m("tasks"), m("orchestrator")),
		p("results/runstore", m(""), m("tasks")),
		p("orchestrator", m(""), m("grader"), m("results/runstore")),
		p("orchestrator/newthing", m("")),
		p("cmd/evalctl", m("orchestrator")),
	} {
		pkgs[g.ImportPath] = g
	}
	got := layerViolations(pkgs)
	want := []string{
		"grader (layer grader/results) imports orchestrator (layer orchestrator): an upward edge; the layers, top down: cmd -> orchestrator -> grader/results -> storage/clients -> records",
		"orchestrator/newthing: in no layer (layers in imports_test.go); add it to the layer of its role, with what it owns",
		"tasks (layer storage/clients) imports grader (layer grader/results): an upward edge; the layers, top down: cmd -> orchestrator -> grader/results -> storage/clients -> records",
	}
	if !slices.Equal(got, want) {
		t.Errorf("layer violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
