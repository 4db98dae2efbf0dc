package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/sandbox"
)

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "run", "run --plan PLAN.yaml [--out DIR] [--check] | run --resume RUNDIR [--replace-infra] | run --cancel RUNDIR\n\n"+
		"exit status: 0 every planned attempt scored; 3 stopped and resumable (guard, Ctrl-C, failing endpoint,\n"+
		"infrastructure failures left: the command to continue is printed); 1 error (nothing registered when a\n"+
		"preflight check failed); 2 usage error")
	planFile := fs.String("plan", "", "plan file to register and run")
	out := fs.String("out", "runs", "directory under which the run directory is created")
	resumeDir := fs.String("resume", "", "run directory to resume")
	replace := fs.Bool("replace-infra", false, "on resume, re-run infra-failed attempts as registered replacements")
	gradeConc := fs.Int("grade-concurrency", 1, "grades run at once")
	cancelDir := fs.String("cancel", "", "end a stopped run for good: record its attempts not yet run as cancelled")
	check := fs.Bool("check", false, "with --plan: check the plan and every endpoint, print the attempt order and count, run nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("run takes no arguments")
	}
	if *cancelDir != "" {
		if *planFile != "" || *resumeDir != "" {
			return usagef("--cancel goes alone")
		}
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
	if *check {
		if *planFile == "" {
			return usagef("--check goes with --plan")
		}
		_, err := orchestrator.Check(ctx, *planFile, e.stdout)
		var pe *orchestrator.PlanError
		if errors.As(err, &pe) {
			return usagef("%v", err)
		}
		return err
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	live := false
	if f, ok := e.stderr.(*os.File); ok {
		live = term.IsTerminal(int(f.Fd()))
	}
	res, err := orchestrator.Run(ctx, orchestrator.Options{
		PlanFile: *planFile, OutDir: *out, ResumeDir: *resumeDir, ReplaceInfra: *replace,
		Engine: eng, GradeConcurrency: *gradeConc, Temperature: &telemetry.Thermal{},
		Progress: e.stderr, Live: live,
	})
	if res != nil {
		fmt.Fprintf(e.stdout, "run directory: %s\n", res.Dir)
	}
	var pe *orchestrator.PlanError
	if errors.As(err, &pe) {
		return usagef("%v", err)
	}
	if orchestrator.Resumable(err) {
		return &exitError{code: exitResumable, msg: err.Error()}
	}
	return err
}

// exitResumable is the exit status of a run that stopped before its end
// and can be continued (the command to do so is in the message).
const exitResumable = 3
