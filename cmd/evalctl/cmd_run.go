package main

import (
	"context"
	"fmt"
	"io"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/sandbox"
)

// exitResumable is the exit status of a run that stopped before its end
// and can be continued (the command to do so is in the message).
const exitResumable = 3

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "run", "run --plan PLAN.yaml [--out DIR] [--check] | run --resume RUN [--replace-infra] | run --cancel RUN | run --help-plan (every plan field)\n\n"+
		"exit status: 0 every planned attempt scored; 3 stopped and resumable (guard, Ctrl-C, failing endpoint,\n"+
		"infrastructure failures left: the command to continue is printed); 1 error (nothing registered when a\n"+
		"preflight check failed); 2 usage error")
	var r orchestrator.Request
	fs.StringVar(&r.PlanFile, "plan", "", "plan file to register and run")
	fs.StringVar(&r.Out, "out", "runs", "directory under which the run directory is created")
	fs.StringVar(&r.Resume, "resume", "", "run directory to resume")
	fs.BoolVar(&r.ReplaceInfra, "replace-infra", false, "on resume, re-run infra-failed attempts as registered replacements")
	gradeConc := fs.Int("grade-concurrency", 1, "grades run at once")
	fs.StringVar(&r.Cancel, "cancel", "", "end a stopped run for good: record its attempts not yet run as cancelled")
	helpPlan := fs.Bool("help-plan", false, "print the plan reference: every field of plans, arms, profiles and screen specs, and an annotated example")
	fs.StringVar(&r.HostsFile, "sandbox-hosts", "", "hosts file naming the Docker Engines that run sandboxes (instead of the plan's sandbox_hosts; README \"Sandbox hosts\")")
	fs.BoolVar(&r.Check, "check", false, "with --plan: check the plan and every endpoint, print the attempt order and count, run nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *helpPlan {
		_, err := io.WriteString(e.stdout, evalctl.PlanReference)
		return err
	}
	if fs.NArg() != 0 {
		return usagef("run takes no arguments")
	}
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Cancel != "" {
		dir, err := resolveCohort(r.Cancel)
		if err != nil {
			return err
		}
		n, err := orchestrator.Cancel(ctx, dir, "")
		if err == nil {
			fmt.Fprintf(e.stdout, "%d attempt(s) recorded as cancelled in %s\n", n, dir)
		}
		return err
	}
	plan, suite, err := r.LoadPlan()
	if err != nil {
		return err
	}
	if r.Check {
		_, err := orchestrator.Check(ctx, plan, suite, e.stdout)
		return err
	}
	if r.Resume != "" {
		if r.Resume, err = resolveCohort(r.Resume); err != nil {
			return err
		}
	}
	hosts, err := r.SandboxHosts()
	if err != nil {
		return err
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	res, err := orchestrator.Run(ctx, orchestrator.Options{
		Plan: plan, Suite: suite, OutDir: r.Out, ResumeDir: r.Resume, ReplaceInfra: r.ReplaceInfra,
		Engine: eng, SandboxHosts: hosts, GradeConcurrency: *gradeConc, Temperature: &telemetry.Thermal{},
		Progress: e.stderr, Live: stderrIsTerminal(e),
	})
	if res != nil {
		report.WriteRunEnd(ctx, e.stdout, res.Dir, err != nil)
	}
	if orchestrator.Resumable(err) {
		return &exitError{code: exitResumable, msg: err.Error()}
	}
	return orchestrator.PlanUsage(err)
}

// resolveCohort resolves a run argument that must name a cohort: a screen
// or a capacity probe is resumed by its own command.
func resolveCohort(arg string) (string, error) {
	dir, err := resolveRun(arg)
	if err != nil {
		return "", err
	}
	k, err := runKind(dir)
	if err != nil {
		return "", err
	}
	if k != "" && k != "cohort" {
		return "", usagef("%s is a %s run, not a cohort; see 'evalctl %s --help'", dir, k, k)
	}
	return dir, nil
}
