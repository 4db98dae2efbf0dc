package orchestrator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/runstore"
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
	HostsFile string
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

// LoadPlan loads the request's plan and suite (none when it resumes); a
// mistake in the plan is a usage error (see PlanUsage).
func (r Request) LoadPlan() (*Plan, *tasks.Suite, error) {
	if r.PlanFile == "" {
		return nil, nil, nil
	}
	plan, suite, err := LoadPlan(r.PlanFile)
	return plan, suite, PlanUsage(err)
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
	fs.StringVar(&r.HostsFile, "sandbox-hosts", "", "hosts file naming the Docker Engines that run sandboxes (instead of the plan's sandbox_hosts; README \"Sandbox hosts\")")
	fs.BoolVar(&r.Check, "check", false, "with --plan: check the plan and every endpoint, print the attempt order and count, run nothing")
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
