package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "run", "run --plan PLAN.yaml [--out DIR] [--check] | run --resume RUN [--replace-infra] | run --cancel RUN | run --help-plan (every plan field)\n\n"+
		"exit status: 0 every planned attempt scored; 3 stopped and resumable (guard, Ctrl-C, failing endpoint,\n"+
		"infrastructure failures left: the command to continue is printed); 1 error (nothing registered when a\n"+
		"preflight check failed); 2 usage error")
	planFile := fs.String("plan", "", "plan file to register and run")
	out := fs.String("out", "runs", "directory under which the run directory is created")
	resumeDir := fs.String("resume", "", "run directory to resume")
	replace := fs.Bool("replace-infra", false, "on resume, re-run infra-failed attempts as registered replacements")
	gradeConc := fs.Int("grade-concurrency", 1, "grades run at once")
	cancelDir := fs.String("cancel", "", "end a stopped run for good: record its attempts not yet run as cancelled")
	helpPlan := fs.Bool("help-plan", false, "print the plan reference: every field of plans, arms, profiles and screen specs, and an annotated example")
	hostsFile := fs.String("sandbox-hosts", "", "hosts file naming the Docker Engines that run sandboxes (instead of the plan's sandbox_hosts; README \"Sandbox hosts\")")
	check := fs.Bool("check", false, "with --plan: check the plan and every endpoint, print the attempt order and count, run nothing")
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
	if *cancelDir != "" {
		if *planFile != "" || *resumeDir != "" {
			return usagef("--cancel goes alone")
		}
		dir, err := resolveCohort(*cancelDir)
		if err != nil {
			return err
		}
		*cancelDir = dir
		n, err := orchestrator.Cancel(ctx, *cancelDir, "")
		if err == nil {
			fmt.Fprintf(e.stdout, "%d attempt(s) recorded as cancelled in %s\n", n, *cancelDir)
		}
		return err
	}
	if (*planFile == "") == (*resumeDir == "") {
		return usagef("give exactly one of --plan and --resume")
	}
	if *replace && *resumeDir == "" {
		return usagef("--replace-infra goes with --resume")
	}
	if *check && *planFile == "" {
		return usagef("--check goes with --plan")
	}
	var plan *orchestrator.Plan
	var suite *tasks.Suite
	if *planFile != "" {
		var err error
		if plan, suite, err = orchestrator.LoadPlan(*planFile); err != nil {
			return planErr(err)
		}
	}
	if *check {
		_, err := orchestrator.Check(ctx, plan, suite, e.stdout)
		return err
	}
	if *resumeDir != "" {
		dir, err := resolveCohort(*resumeDir)
		if err != nil {
			return err
		}
		*resumeDir = dir
	}
	var hosts []orchestrator.SandboxHost
	if *hostsFile != "" {
		h, err := orchestrator.LoadSandboxHosts(*hostsFile)
		if err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
		hosts = h
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	live := stderrIsTerminal(e)
	res, err := orchestrator.Run(ctx, orchestrator.Options{
		Plan: plan, Suite: suite, OutDir: *out, ResumeDir: *resumeDir, ReplaceInfra: *replace,
		Engine: eng, SandboxHosts: hosts, GradeConcurrency: *gradeConc, Temperature: &telemetry.Thermal{},
		Progress: e.stderr, Live: live,
	})
	if res != nil {
		report.WriteRunEnd(ctx, e.stdout, res.Dir, err != nil)
	}
	if orchestrator.Resumable(err) {
		return &exitError{code: exitResumable, msg: err.Error()}
	}
	return planErr(err)
}

// planErr makes a plan mistake a usage error; what describes plans is the
// plan reference, not run's flags.
func planErr(err error) error {
	var pe *orchestrator.PlanError
	if errors.As(err, &pe) {
		return &exitError{code: 2, msg: err.Error() + " (every plan field: 'evalctl run --help-plan')"}
	}
	return err
}

// resolveCohort resolves a run argument that must name a cohort: a screen
// or a capacity probe is resumed by its own command.
func resolveCohort(arg string) (string, error) {
	dir, err := resolveRun(arg)
	if err != nil {
		return "", err
	}
	st, err := runstore.Open(dir)
	if err != nil {
		return "", err
	}
	r, err := st.ReadRun()
	if err != nil {
		return "", err
	}
	if r.Kind != "" && r.Kind != "cohort" {
		return "", usagef("%s is a %s run, not a cohort; see 'evalctl %s --help'", dir, r.Kind, r.Kind)
	}
	return dir, nil
}

// exitResumable is the exit status of a run that stopped before its end
// and can be continued (the command to do so is in the message).
const exitResumable = 3
