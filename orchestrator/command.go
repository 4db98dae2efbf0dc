package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Request is what 'evalctl run' asks for: a plan to register and run, a
// stopped run to resume, or one to cancel.
type Request struct {
	PlanFile     string
	Out          string // directory under which a new run directory is created
	Resume       string
	Cancel       string
	ReplaceInfra bool // on resume, re-run infra-failed attempts as registered replacements
	Check        bool // check the plan and its endpoints, run nothing
	// HostsFile names the Docker Engines that run sandboxes, instead of
	// the plan's sandbox_hosts ("": the plan's, or the local engine).
	HostsFile        string
	GradeConcurrency int  // grades at once
	HelpPlan         bool // print the plan reference, do nothing else
}

// Do carries out r: prints the plan reference, cancels a stopped run,
// checks a plan, or runs (or resumes) a cohort on the local engine or the
// sandbox hosts, ending with the run's pooled table. The error of a run
// that stopped and can be continued satisfies Resumable.
func (r Request) Do(ctx context.Context, c evalctl.Console) error {
	if r.HelpPlan {
		_, err := io.WriteString(c.Stdout, evalctl.PlanReference)
		return err
	}
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Cancel != "" {
		return CancelRun(ctx, runstore.Root(), r.Cancel, c.Stdout)
	}
	plan, suite, warnings, err := r.LoadPlan()
	if err != nil {
		return err
	}
	if r.Check {
		WriteWarnings(c.Stdout, warnings)
		if err := checkAgentImages(ctx, plan, c.Stdout); err != nil {
			return PlanUsage(err)
		}
		_, err := Check(ctx, plan, suite, c.Stdout)
		return err
	}
	WriteWarnings(c.Stderr, warnings)
	if r.Resume != "" {
		if r.Resume, err = runstore.ResolveCohort(runstore.Root(), r.Resume); err != nil {
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
	res, err := Run(ctx, Options{
		Plan: plan, Suite: suite, OutDir: r.Out, ResumeDir: r.Resume, ReplaceInfra: r.ReplaceInfra,
		Engine: eng, SandboxHosts: hosts, GradeConcurrency: r.GradeConcurrency, Temperature: &telemetry.Thermal{},
		Progress: c.Stderr, Live: c.Live,
	})
	if res != nil {
		report.WriteRunEnd(ctx, c.Stdout, res.Dir, err != nil)
	}
	return PlanUsage(err)
}

// RerunRequest is what 'evalctl rerun' asks for: one attempt run again
// with exactly the named settings of its arm changed.
type RerunRequest struct {
	// Attempt names the attempt in any form runstore.FindAttempt takes
	// (an id, a unique prefix, RUNDIR/attempts/ID, RUN ARM CASE REPEAT),
	// looked up under Root.
	Attempt []string
	Root    string
	Sets    []string // FIELD=VALUE
	Label   string   // the rerun arm's name ("": the original's + "-rerun")
	Out     string   // directory under which the run directory is created
	Format  string   // of the side-by-side: table or json
}

// Do runs the rerun on the local engine and prints its directory and
// its comparison with the original.
func (r RerunRequest) Do(ctx context.Context, c evalctl.Console) error {
	dir, id, err := runstore.FindAttempt(runstore.AttemptQuery{Args: r.Attempt, Root: r.Root})
	if err != nil {
		return err
	}
	attempt := filepath.Join(dir, runstore.AttemptsDir, id)
	if err := CheckRerun(attempt, r.Sets, r.Label); err != nil {
		return err
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	res, err := Rerun(ctx, Options{OutDir: r.Out, Engine: eng, Temperature: &telemetry.Thermal{},
		Progress: c.Stderr, Live: c.Live}, attempt, r.Sets, r.Label)
	if res == nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "run directory: %s\n\n", res.Dir)
	if err != nil {
		return err
	}
	fill, err := report.ShowRerun(res.Dir, cmp.Or(r.Format, "table"))
	if err != nil {
		return err
	}
	return fill(c.Stdout)
}

// Bind defines the flags of 'evalctl rerun' that fill r.
func (r *RerunRequest) Bind(fs *flag.FlagSet) {
	fs.Func("set", "a setting of the arm to change, FIELD=VALUE (max_tokens=65536, sampling.temperature=0.6, extra.n_probs=4, profile=FILE); repeatable",
		func(v string) error { r.Sets = append(r.Sets, v); return nil })
	fs.StringVar(&r.Label, "label", "", "name of the rerun's arm (default: the original arm's name + \"-rerun\")")
	fs.StringVar(&r.Out, "out", "runs", "directory under which the run directory is created")
}

// SandboxHosts loads HostsFile (nil when there is none); a mistake in it
// is a usage error naming the file, line and field.
func (r Request) SandboxHosts() ([]SandboxHost, error) {
	if r.HostsFile == "" {
		return nil, nil
	}
	h, err := LoadSandboxHosts(r.HostsFile)
	return h, evalctl.Usage(err)
}

// Validate refuses options that do not go together.
func (r Request) Validate() error {
	switch {
	case r.Cancel != "" && (r.PlanFile != "" || r.Resume != ""):
		return evalctl.Usagef("--cancel goes alone")
	case r.Cancel != "":
		return nil
	case (r.PlanFile == "") == (r.Resume == ""):
		return evalctl.Usagef("give exactly one of --plan and --resume")
	case r.ReplaceInfra && r.Resume == "":
		return evalctl.Usagef("--replace-infra goes with --resume")
	case r.Check && r.PlanFile == "":
		return evalctl.Usagef("--check goes with --plan")
	}
	return nil
}

// LoadPlan loads the request's plan and suite (none when it resumes) and
// says what the plan leaves to chance; a mistake in the plan is a usage
// error (see PlanUsage).
func (r Request) LoadPlan() (*Plan, *tasks.Suite, []PlanWarning, error) {
	if r.PlanFile == "" {
		return nil, nil, nil, nil
	}
	plan, suite, warnings, err := loadPlan(r.PlanFile)
	return plan, suite, warnings, PlanUsage(err)
}

// PlanUsage marks a mistake in a plan (*PlanError) as a usage error whose
// help is the plan reference, not run's flags.
func PlanUsage(err error) error {
	var pe *PlanError
	if errors.As(err, &pe) {
		return &evalctl.UsageError{Err: err, See: "every plan field: 'evalctl run --help-plan'"}
	}
	return err
}

// CheckRerun refuses, before anything runs, a rerun that cannot be made
// as asked (a usage error wrapping ErrRerun).
func CheckRerun(attemptDir string, sets []string, label string) error {
	_, _, err := RerunPlan(attemptDir, sets, label)
	if errors.Is(err, ErrRerun) {
		return evalctl.Usage(err)
	}
	return err
}

// Bind defines the flags of 'evalctl run' that fill r.
func (r *Request) Bind(fs *flag.FlagSet) {
	fs.StringVar(&r.PlanFile, "plan", "", "plan file to register and run")
	fs.StringVar(&r.Out, "out", "runs", "directory under which the run directory is created")
	fs.StringVar(&r.Resume, "resume", "", "run directory to resume")
	fs.BoolVar(&r.ReplaceInfra, "replace-infra", false, "on resume, re-run infra-failed attempts as registered replacements")
	fs.StringVar(&r.Cancel, "cancel", "", "end a stopped run for good: record its attempts not yet run as cancelled")
	fs.StringVar(&r.HostsFile, "sandbox-hosts", "", "hosts file naming the Docker Engines that run sandboxes (instead of the plan's sandbox_hosts; docs/sandbox-hosts.md)")
	fs.BoolVar(&r.Check, "check", false, "with --plan: check the plan and every endpoint, print the attempt order and count, run nothing")
	fs.IntVar(&r.GradeConcurrency, "grade-concurrency", 1, "grades run at once")
	fs.BoolVar(&r.HelpPlan, "help-plan", false, "print the plan reference: every field of plans, arms, profiles and screen specs, and an annotated example")
}

// CancelRun ends for good the stopped cohort that arg names under root
// (see runstore.ResolveCohort): its attempts not yet run are recorded as
// cancelled, and stdout is told how many.
func CancelRun(ctx context.Context, root, arg string, stdout io.Writer) error {
	dir, err := runstore.ResolveCohort(root, arg)
	if err != nil {
		return err
	}
	n, err := Cancel(ctx, dir, "")
	if err == nil {
		fmt.Fprintf(stdout, "%d attempt(s) recorded as cancelled in %s\n", n, dir)
	}
	return err
}
