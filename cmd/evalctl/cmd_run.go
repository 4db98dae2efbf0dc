package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/sandbox"
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
	if *check {
		if *planFile == "" {
			return usagef("--check goes with --plan")
		}
		_, err := orchestrator.Check(ctx, *planFile, e.stdout)
		var pe *orchestrator.PlanError
		if errors.As(err, &pe) {
			return &exitError{code: 2, msg: err.Error() + " (every plan field: 'evalctl run --help-plan')"}
		}
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
		PlanFile: *planFile, OutDir: *out, ResumeDir: *resumeDir, ReplaceInfra: *replace,
		Engine: eng, SandboxHosts: hosts, GradeConcurrency: *gradeConc, Temperature: &telemetry.Thermal{},
		Progress: e.stderr, Live: live,
	})
	if res != nil {
		printRunEnd(ctx, e, res, err)
	}
	var pe *orchestrator.PlanError
	if errors.As(err, &pe) {
		// A plan mistake is a usage error; what describes plans is the
		// plan reference, not run's flags.
		return &exitError{code: 2, msg: err.Error() + " (every plan field: 'evalctl run --help-plan')"}
	}
	if orchestrator.Resumable(err) {
		return &exitError{code: exitResumable, msg: err.Error()}
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

// printRunEnd ends a run's output with the pooled table and the commands
// that read the run further (a stopped run: the one that resumes it).
func printRunEnd(ctx context.Context, e *env, res *orchestrator.Result, runErr error) {
	fmt.Fprintf(e.stdout, "run directory: %s\n", res.Dir)
	if in, err := report.Load(context.WithoutCancel(ctx), []string{res.Dir}, ""); err == nil {
		if rep, err := report.Build(in, report.Options{}); err == nil {
			fmt.Fprintln(e.stdout)
			report.Write(e.stdout, rep, report.FormatTable)
		}
	}
	fmt.Fprintf(e.stdout, "\nnext:\n")
	if runErr != nil {
		fmt.Fprintf(e.stdout, "  evalctl run --resume %s   # run what is left\n", res.Dir)
	}
	fmt.Fprintf(e.stdout, "  evalctl report %s --format html > report.html\n  evalctl view %s\n  evalctl show ATTEMPT-ID --run %s   # one attempt, by id or prefix\n", res.Dir, filepath.Dir(res.Dir), res.Dir)
}

// exitResumable is the exit status of a run that stopped before its end
// and can be continued (the command to do so is in the message).
const exitResumable = 3
