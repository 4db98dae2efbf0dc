package grader

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

// tsVariant is one TypeScript answer of the repository with its groups.
type tsVariant struct {
	name   string
	c      *tasks.Case
	groups []*tasks.Group
	ws     []sandbox.Entry
}

// tsVariants are every TypeScript variant of the repository: the
// development cases' references, starters and controls of every phase,
// testdata/suite's tsadd, and the imported Exercism JavaScript and
// TypeScript fixtures (reference and starter).
func tsVariants(t *testing.T) []tsVariant {
	t.Helper()
	var out []tsVariant
	add := func(s *tasks.Suite) {
		for _, c := range s.Cases {
			if c.Language != tasks.TypeScript {
				continue
			}
			vs, err := Variants(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				pristine, err := Pristine(c, v.Phase)
				if err != nil {
					t.Fatal(err)
				}
				ws, _ := Prepare(c, pristine, v.Entries)
				out = append(out, tsVariant{name: s.Name + "/" + c.Name + "/" + v.Name + "/" + string(rune('0'+v.Phase)), c: c, groups: v.Groups, ws: ws})
			}
		}
	}
	for _, dir := range []string{"../cases", "testdata/suite"} {
		s, err := tasks.LoadSuite(dir)
		if err != nil {
			t.Fatal(err)
		}
		add(s)
	}
	for _, track := range []string{"exercism-ts", "exercism-js"} {
		exs, err := importer.Exercism{}.Exercises("../tasks/importer/testdata/" + track)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), track)
		if err := importer.Write(dir, exs, importer.Options{Name: track, Version: "1.0.0"}); err != nil {
			t.Fatal(err)
		}
		s, err := tasks.LoadSuite(dir)
		if err != nil {
			t.Fatal(err)
		}
		add(s)
	}
	return out
}

var scratchName = regexp.MustCompile(`/tmp/evalctl-[0-9a-f]{16}`)

var update = flag.Bool("update", false, "rewrite testdata/compile/golden.json from each group's own compile command")

// goldenCompiles holds, per TypeScript variant and group, what the group's
// own compile command gave (TestOneCompileProcessChangesNothing -update).
const goldenCompiles = "testdata/compile/golden.json"

// compileRecord is what one group's compile gave: for a node-test group
// what tsc printed, its exit status and its build (each file's and
// directory's mode, each file's SHA-256); for a typecheck group its result.
type compileRecord struct {
	Status      int      `json:"status"`
	Stdout      string   `json:"stdout,omitempty"`
	Build       string   `json:"build,omitempty"`
	TimedOut    bool     `json:"timed_out,omitempty"`
	Success     bool     `json:"success,omitempty"`
	Total       int      `json:"total,omitempty"`
	Passed      int      `json:"passed,omitempty"`
	FailedTests []string `json:"failed_tests,omitempty"`
	Output      string   `json:"output,omitempty"`
}

// TestOneCompileProcessChangesNothing is the differential test of the
// grade's one compile process (compileGroups, /opt/evalctl/compile.js):
// for every TypeScript variant of the repository, in a container prepared
// as a grade prepares it, each group's compile as that process records it
// (what it printed, its exit status, every byte it built) is the one the
// group's own command (tsc -p ... --outDir ... --pretty false, or
// typecheck.js) gives, and each typecheck group's result is the same
// through either. An answer that says // @ts-nocheck still fails its
// typecheck group.
//
// The own commands' results are golden (testdata/compile/golden.json):
// -update runs every variant's own commands in the same container as the
// one process, compares the two and writes what the commands gave. Without
// it, the one process is compared with the golden results, and the own
// commands run for the fixture's tsadd reference and the pragma case only
// (they stay a grade's path when the one process does not finish).
func TestOneCompileProcessChangesNothing(t *testing.T) {
	sandboxtest.Long(t)
	sandboxtest.Engine(t)
	vs := tsVariants(t)
	if len(vs) < 20 {
		t.Fatalf("%d TypeScript variants, want every one of the repository", len(vs))
	}
	// The pragma case: tsadd's reference with a type error the answer
	// switches off.
	for _, v := range vs {
		if strings.HasSuffix(v.name, "/tsadd/reference/1") {
			ws := append([]sandbox.Entry(nil), v.ws...)
			for i, e := range ws {
				if strings.HasSuffix(e.Name, ".ts") && strings.HasPrefix(e.Name, "src/") {
					ws[i].Data = append([]byte("// @ts-nocheck\nconst pragmaCase: number = \"not a number\";\n"), e.Data...)
				}
			}
			vs = append(vs, tsVariant{name: "pragma", c: v.c, groups: v.groups, ws: ws})
		}
	}
	if vs[len(vs)-1].name != "pragma" {
		t.Fatal("no tsadd reference for the pragma case")
	}
	golden := map[string]map[string]compileRecord{}
	if !*update {
		data, err := os.ReadFile(goldenCompiles)
		if err != nil {
			t.Fatalf("%v: run the test with -update to record the own commands' results", err)
		}
		if err := json.Unmarshal(data, &golden); err != nil {
			t.Fatalf("%s: %v", goldenCompiles, err)
		}
		if len(golden) != len(vs) {
			t.Errorf("%s holds %d variants, the repository %d: run the test with -update", goldenCompiles, len(golden), len(vs))
		}
	}
	got := make([]map[string]compileRecord, len(vs))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			own := *update || v.name == "pragma" || strings.HasSuffix(v.name, "/tsadd/reference/1")
			got[i] = compareCompiles(t, v, own)
		}()
	}
	wg.Wait()
	if *update {
		for i, v := range vs {
			golden[v.name] = got[i]
		}
		data, err := json.MarshalIndent(golden, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(goldenCompiles), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenCompiles, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for i, v := range vs {
		want, ok := golden[v.name]
		if !ok {
			t.Errorf("%s: not in %s: run the test with -update", v.name, goldenCompiles)
			continue
		}
		for name, w := range want {
			if g, ok := got[i][name]; !ok || !reflect.DeepEqual(g, w) {
				t.Errorf("%s %s: the one process gave\n%+v\nits own command (%s)\n%+v", v.name, name, g, goldenCompiles, w)
			}
		}
		if len(got[i]) != len(want) {
			t.Errorf("%s: %d groups compiled, %s has %d", v.name, len(got[i]), goldenCompiles, len(want))
		}
	}
}

// compareCompiles compiles v's groups through the one process and returns
// what each group's compile gave; with own, it also runs each group's own
// command in the same container and requires the same.
func compareCompiles(t *testing.T, v tsVariant, own bool) map[string]compileRecord {
	ctx := context.Background()
	box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}, ReadOnlyWorkspace: true,
		Env: []string{"EVALCTL_WORKSPACE=/workspace", "HOME=/tmp"}})
	recs := map[string]compileRecord{}
	checks, err := sandbox.DirEntries(v.c.ChecksDir, tasks.Ignored)
	if err != nil {
		t.Error(err)
		return recs
	}
	if err := box.CopyInReadOnly(ctx, "/workspace", v.ws); err != nil {
		t.Error(err)
		return recs
	}
	if err := box.CopyInPrivate(ctx, "/checks", checks, sandbox.HarnessUser); err != nil {
		t.Error(err)
		return recs
	}
	sums := func(g *tasks.Group, d string) string {
		out, err := box.Exec(ctx, []string{"sh", "-c", `cd "$1" && find . -type f -o -type d | sort | while read -r f; do if [ -d "$f" ]; then stat -c "%a %n/" "$f"; else stat -c "%a %n" "$f"; sha256sum "$f"; fi; done`, "sums", d},
			sandbox.ExecOptions{Timeout: time.Minute, User: sandbox.HarnessUser})
		if err != nil || out.ExitCode != 0 {
			t.Errorf("%s %s: list %s: %v %s", v.name, g.Name, d, err, out.Stderr)
			return ""
		}
		return string(out.Stdout)
	}
	order := orderGroups(v.groups)
	pre := compileGroups(ctx, box, order)
	for _, g := range order {
		if g.Runner != tasks.RunnerNodeTest && g.Runner != tasks.RunnerTSC {
			continue
		}
		p := pre[g]
		if p == nil {
			t.Errorf("%s %s: not compiled by the one process", v.name, g.Name)
			continue
		}
		switch g.Runner {
		case tasks.RunnerTSC:
			res, err := runCompiledGroup(ctx, box, g, p)
			if err != nil {
				t.Error(err)
				continue
			}
			now := checkRecord(res)
			recs[g.Name] = now
			if v.name == "pragma" && (now.Success || !strings.Contains(now.Output, "(2,7): error TS2322")) {
				t.Errorf("pragma case %s: %+v, want a failure naming the switched-off error", g.Name, now)
			}
			if !own {
				continue
			}
			res, err = runGroup(ctx, box, g)
			if err != nil {
				t.Error(err)
				continue
			}
			if before := checkRecord(res); !reflect.DeepEqual(now, before) {
				t.Errorf("%s %s: one process %+v\nits own command %+v", v.name, g.Name, now, before)
			}
		case tasks.RunnerNodeTest:
			now := compileRecord{Status: p.Status, Stdout: scratchName.ReplaceAllString(p.Stdout, "/tmp/evalctl-SCRATCH"), Build: sums(g, p.dir)}
			if !strings.Contains(now.Build, ".js") {
				t.Errorf("%s %s: the one process built no JavaScript:\n%s", v.name, g.Name, now.Build)
			}
			recs[g.Name] = now
			if !own {
				continue
			}
			dir := "/tmp/before-" + randomName()
			out, err := box.Exec(ctx, ownCompile(g, dir+"/build"), sandbox.ExecOptions{Timeout: 5 * time.Minute, User: sandbox.HarnessUser})
			if err != nil {
				t.Error(err)
				continue
			}
			if out.TimedOut || len(out.Stderr) != 0 {
				t.Errorf("%s %s: its own tsc timed out (%v) or wrote to stderr: %q", v.name, g.Name, out.TimedOut, out.Stderr)
			}
			before := compileRecord{Status: out.ExitCode, Stdout: scratchName.ReplaceAllString(string(out.Stdout), "/tmp/evalctl-SCRATCH"), Build: sums(g, dir)}
			if !reflect.DeepEqual(now, before) {
				t.Errorf("%s %s: the one process gave\n%+v\nits own tsc\n%+v", v.name, g.Name, now, before)
			}
		}
	}
	t.Logf("%s: %d groups compiled", v.name, len(pre))
	return recs
}

// checkRecord is what a typecheck group's result says of its compile.
func checkRecord(res *evalctl.GroupResult) compileRecord {
	failed := res.FailedTests
	if len(failed) == 0 {
		failed = nil // as the golden file reads it back
	}
	return compileRecord{Status: res.ExitCode, TimedOut: res.TimedOut, Success: res.Success, Total: res.Total, Passed: res.Passed,
		FailedTests: failed, Output: scratchName.ReplaceAllString(res.Output, "/tmp/evalctl-SCRATCH")}
}

// TestCompiledBuildsOutOfAnswersReach: what the grade's one compile
// process built is out of reach of the answer's user (uid 1000) until its
// group's turn: it can neither list, read nor write there; each group then
// runs from its build as before (tsadd's reference passes every group).
func TestCompiledBuildsOutOfAnswersReach(t *testing.T) {
	sandboxtest.Long(t)
	sandboxtest.Engine(t)
	var v *tsVariant
	for _, x := range tsVariants(t) {
		if strings.HasSuffix(x.name, "/tsadd/reference/1") {
			v = &x
		}
	}
	if v == nil {
		t.Fatal("no tsadd reference")
	}
	ctx := context.Background()
	box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}, ReadOnlyWorkspace: true,
		Env: []string{"EVALCTL_WORKSPACE=/workspace", "HOME=/tmp"}})
	checks, err := sandbox.DirEntries(v.c.ChecksDir, tasks.Ignored)
	if err != nil {
		t.Fatal(err)
	}
	if err := box.CopyInReadOnly(ctx, "/workspace", v.ws); err != nil {
		t.Fatal(err)
	}
	if err := box.CopyInPrivate(ctx, "/checks", checks, sandbox.HarnessUser); err != nil {
		t.Fatal(err)
	}
	order := orderGroups(v.groups)
	pre := compileGroups(ctx, box, order)
	for _, g := range order {
		p := pre[g]
		if p == nil {
			t.Fatalf("%s: not compiled by the one process", g.Name)
		}
		root := filepath.Dir(p.dir)
		for _, script := range []string{`ls "$1"`, `cat "$2/build/package.json"`, `ls "$2/build"`, `touch "$1/x"`, `touch "$2/build/x.js"`, `mv "$2" /tmp/stolen`} {
			out, err := box.Exec(ctx, []string{"sh", "-c", script, "probe", root, p.dir}, sandbox.ExecOptions{Timeout: time.Minute, User: sandbox.CommandUser})
			if err != nil {
				t.Fatal(err)
			}
			if out.ExitCode == 0 {
				t.Errorf("as the answer's user, %q on %s succeeded: %s", script, p.dir, out.Stdout)
			}
		}
	}
	for _, g := range order {
		res, err := runCompiledGroup(ctx, box, g, pre[g])
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || res.Total == 0 {
			t.Errorf("%s: %+v, want the reference to pass", g.Name, res)
		}
	}
}
