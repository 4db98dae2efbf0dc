package grader

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

// directCommands are the check groups' test commands as one would type them
// in an already-running container (no restore, no report read-back).
func directCommands(g *tasks.Group) [][]string {
	switch g.Runner {
	case tasks.RunnerPytest:
		// pytest as one would run it, answer and tests in one process.
		cmd := []string{"python3", "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
			"--rootdir=/workspace", "-c", "/opt/evalctl/pytest.ini", "--junitxml=/tmp/direct-" + g.Name + ".xml"}
		return [][]string{append(cmd, g.Paths...)}
	case tasks.RunnerPyCompile:
		return [][]string{{"python3", "-I", "-B", "-c", pyCompileScript}}
	case tasks.RunnerTSC:
		return [][]string{{"tsc", "-p", g.TSConfig, "--noEmit"}}
	case tasks.RunnerNodeTest:
		out := "/tmp/direct-" + g.Name
		cmd := []string{"node", "--test"}
		for _, p := range g.Paths {
			cmd = append(cmd, out+"/"+p)
		}
		return [][]string{{"tsc", "-p", g.TSConfig, "--outDir", out}, cmd}
	}
	return nil
}

// BenchmarkGradingOverhead compares, per case of the development suite,
// grading the reference answer with the time the same test commands take
// run directly in an already-running container.
//
//	go test ./grader -run '^$' -bench GradingOverhead -benchtime 3x
func BenchmarkGradingOverhead(b *testing.B) {
	eng, img := sandboxtest.Engine(b)
	suite, err := tasks.LoadSuite("../cases")
	if err != nil {
		b.Fatal(err)
	}
	g := New(eng, img.Ref, img.ID, Options{Concurrency: 1})
	ctx := context.Background()
	var totalGrade, totalDirect time.Duration
	for _, c := range suite.Cases {
		vs, err := Variants(c)
		if err != nil {
			b.Fatal(err)
		}
		ref := vs[0] // phase 1 reference
		snap, _ := sandbox.NewSnapshot(ref.Entries)
		b.Run(c.Name, func(b *testing.B) {
			box := sandboxtest.Start(b, sandbox.Spec{Volumes: []string{"/checks"}})
			checks, _ := sandbox.DirEntries(c.ChecksDir, tasks.Ignored)
			if err := box.CopyIn(ctx, "/workspace", ref.Entries); err != nil {
				b.Fatal(err)
			}
			if err := box.CopyInReadOnly(ctx, "/checks", checks); err != nil {
				b.Fatal(err)
			}
			var gradeT, directT time.Duration
			label := sandboxtest.RunLabel(b)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				gr, err := g.Grade(ctx, suite, c, 1, snap, Labels{Run: label})
				if err != nil || !gr.Solved {
					b.Fatalf("grade: %v solved=%v", err, gr != nil && gr.Solved)
				}
				gradeT += time.Since(t0)
				t0 = time.Now()
				for _, grp := range c.Phases[0].Groups {
					for _, cmd := range directCommands(grp) {
						res, err := box.Exec(ctx, cmd, sandbox.ExecOptions{Timeout: grp.Timeout, Env: []string{"EVALCTL_WORKSPACE=/workspace", "PYTHONPATH=/workspace"}})
						if err != nil {
							b.Fatal(err)
						}
						if res.ExitCode != 0 && cmd[0] != "tsc" {
							b.Fatalf("%s: direct %s exit %d: %s", c.Name, strings.Join(cmd[:2], " "), res.ExitCode, res.Stderr)
						}
					}
				}
				directT += time.Since(t0)
			}
			totalGrade += gradeT
			totalDirect += directT
			b.ReportMetric(gradeT.Seconds()/float64(b.N), "grade-s")
			b.ReportMetric(directT.Seconds()/float64(b.N), "direct-s")
			b.ReportMetric(float64(gradeT)/float64(directT), "overhead-x")
		})
	}
	if totalDirect > 0 {
		fmt.Printf("overall grading overhead: %.2fx (grade %.1fs, direct %.1fs)\n", float64(totalGrade)/float64(totalDirect), totalGrade.Seconds(), totalDirect.Seconds())
	}
}
