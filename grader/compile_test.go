package grader

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestOneCompileProcessChangesNothing is the differential test of the
// grade's one compile process (compileGroups, /opt/evalctl/compile.js):
// for every TypeScript variant of the repository, in a container prepared
// as a grade prepares it, each group's compile as that process records it
// (what it printed, its exit status, every byte it built) is the one the
// group's own command (tsc -p ... --outDir ... --pretty false, or
// typecheck.js) gives in the same container, and each typecheck group's
// result is the same through either. An answer that says // @ts-nocheck
// still fails its typecheck group.
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
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, v := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			compareCompiles(t, v)
		}()
	}
	wg.Wait()
}

func compareCompiles(t *testing.T, v tsVariant) {
	ctx := context.Background()
	box := sandboxtest.Start(t, sandbox.Spec{Volumes: []string{"/checks"}, ReadOnlyWorkspace: true,
		Env: []string{"EVALCTL_WORKSPACE=/workspace", "HOME=/tmp"}})
	checks, err := sandbox.DirEntries(v.c.ChecksDir, tasks.Ignored)
	if err != nil {
		t.Error(err)
		return
	}
	if err := box.CopyInReadOnly(ctx, "/workspace", v.ws); err != nil {
		t.Error(err)
		return
	}
	if err := box.CopyInPrivate(ctx, "/checks", checks, sandbox.HarnessUser); err != nil {
		t.Error(err)
		return
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
			now, err := runCompiledGroup(ctx, box, g, p)
			if err != nil {
				t.Error(err)
				continue
			}
			before, err := runGroup(ctx, box, g)
			if err != nil {
				t.Error(err)
				continue
			}
			if now.ExitCode != before.ExitCode || now.TimedOut != before.TimedOut || now.Success != before.Success || now.Total != before.Total ||
				now.Passed != before.Passed || strings.Join(now.FailedTests, "|") != strings.Join(before.FailedTests, "|") || now.Output != before.Output {
				t.Errorf("%s %s: one process %+v\nits own command %+v", v.name, g.Name, now, before)
			}
			if v.name == "pragma" && (now.Success || !strings.Contains(now.Output, "(2,7): error TS2322")) {
				t.Errorf("pragma case %s: %+v, want a failure naming the switched-off error", g.Name, now)
			}
		case tasks.RunnerNodeTest:
			dir := "/tmp/before-" + randomName()
			own, err := box.Exec(ctx, []string{"sh", "-c", `tsc -p "$1" --outDir "$2" --pretty false; rc=$?; mkdir -p "$2" && printf '{"type": "commonjs"}\n' > "$2/package.json" || exit 9; exit $rc`,
				"tsc", g.TSConfig, dir + "/build"}, sandbox.ExecOptions{Timeout: 5 * time.Minute, User: sandbox.HarnessUser})
			if err != nil {
				t.Error(err)
				continue
			}
			if own.TimedOut || own.ExitCode != p.Status || string(own.Stdout) != p.Stdout || len(own.Stderr) != 0 {
				t.Errorf("%s %s: one process printed %q, status %d; its own tsc %q (stderr %q), status %d", v.name, g.Name, p.Stdout, p.Status, own.Stdout, own.Stderr, own.ExitCode)
			}
			sums := func(d string) string {
				out, err := box.Exec(ctx, []string{"sh", "-c", `cd "$1" && find . -type f -o -type d | sort | while read -r f; do if [ -d "$f" ]; then stat -c "%a %n/" "$f"; else stat -c "%a %n" "$f"; sha256sum "$f"; fi; done`, "sums", d},
					sandbox.ExecOptions{Timeout: time.Minute, User: sandbox.HarnessUser})
				if err != nil || out.ExitCode != 0 {
					t.Errorf("%s %s: list %s: %v %s", v.name, g.Name, d, err, out.Stderr)
					return ""
				}
				return string(out.Stdout)
			}
			if a, b := sums(p.dir), sums(dir); a != b || !strings.Contains(a, ".js") {
				t.Errorf("%s %s: the one process built\n%s\nits own tsc\n%s", v.name, g.Name, a, b)
			}
		}
	}
	t.Logf("%s: %d groups compared", v.name, len(pre))
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
