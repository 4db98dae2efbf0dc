package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/cmd/evalctl/internal/cli"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/grader/regrade"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/demo"
	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/inspect"
	"github.com/evalctl/evalctl/results/power"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/results/summary"
	"github.com/evalctl/evalctl/results/view"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

func init() {
	// The diff of an answer needs the starter; a run made on the built-in
	// suite finds it in the binary when the suite's copy on disk is gone.
	inspect.BuiltinSuite = tasks.Builtin
}

func cmdVersion(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "version", "version [--format text|json]")
	format := cli.Format(fs, "text")
	if err := cli.ParseNone(fs, args, "version takes no arguments"); err != nil {
		return err
	}
	b := runstore.BuildInfo()
	if *format == "json" {
		return json.NewEncoder(e.Stdout).Encode(b)
	}
	fmt.Fprintf(e.Stdout, "evalctl %s (%s, %s/%s)\n", b.Version, b.Go, b.OS, b.Arch)
	return nil
}

func cmdRun(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "run", "run --plan PLAN.yaml [--out DIR] [--check] | run --resume RUN [--replace-infra] | run --cancel RUN | run --help-plan (every plan field)\n\n"+
		"exit status: 0 every planned attempt scored; 3 stopped and resumable (guard, Ctrl-C, failing endpoint,\n"+
		"infrastructure failures left: the command to continue is printed); 1 error (nothing registered when a\n"+
		"preflight check failed); 2 usage error")
	var r orchestrator.Request
	r.Bind(fs)
	if err := cli.ParseNone(fs, args, "run takes no arguments"); err != nil {
		return err
	}
	err := r.Do(ctx, e.Console())
	if orchestrator.Resumable(err) {
		return &cli.Exit{Code: 3, Msg: err.Error()} // the command to continue is in the message
	}
	return err
}

func cmdDemo(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "demo", "demo [--suite DIR] [--out DIR] [--cases a,b] [--realtime]")
	o := demo.Options{Progress: e.Stderr, Stdout: e.Stdout, Live: e.Live()}
	o.Bind(fs)
	if err := cli.ParseNone(fs, args, "demo takes no arguments"); err != nil {
		return err
	}
	_, err := demo.Run(ctx, o)
	return err
}

func cmdRerun(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) > 0 && args[0] == "show" {
		fs := cli.Flags(e, "rerun show", "rerun show RERUN [--format text|json]")
		format := cli.Format(fs, "table")
		dir, err := cli.Run(fs, args[1:], "rerun show takes one rerun (its directory, name, id or prefix)", nil)
		if err != nil {
			return err
		}
		return cli.Write(e, "")(report.ShowRerun(dir, *format))
	}
	fs := cli.Flags(e, "rerun", "rerun ATTEMPT --set FIELD=VALUE [--set ...] [--label NAME] [--out DIR] [--format text|json]\n"+
		"       (ATTEMPT: an id, a unique prefix, RUNDIR/attempts/ID, or RUN ARM CASE REPEAT)\n       evalctl rerun show RERUN [--format text|json]")
	r := orchestrator.RerunRequest{Root: runstore.Root()}
	r.Bind(fs)
	format := cli.Format(fs, "table")
	var err error
	if r.Attempt, err = cli.Args(fs, args, 1, 4, "rerun takes one attempt: an id, a prefix, RUNDIR/attempts/ID, or RUN ARM CASE REPEAT"); err != nil {
		return err
	}
	r.Format = *format
	return r.Do(ctx, e.Console())
}

func cmdRuns(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "runs", "runs [DIR] [--format text|json]")
	format := cli.Format(fs, "table")
	pos, err := cli.Args(fs, args, 0, 1, "runs takes at most one directory (a folder of runs; 'evalctl attempts RUN' lists one run's attempts)")
	if err != nil {
		return err
	}
	return cli.Write(e, "")(runstore.Listing(append(pos, runstore.Root())[0], *format))
}

func cmdAttempts(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "attempts", "attempts RUN [--format text|json]")
	format := cli.Format(fs, "text")
	dir, err := cli.Run(fs, args, "attempts takes one run (its directory, name, id or prefix)", nil)
	if err != nil {
		return err
	}
	return cli.Write(e, "")(runstore.AttemptListing(dir, *format))
}

func cmdView(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "view", "view [DIR] [--addr 127.0.0.1:8765]")
	addr := fs.String("addr", "127.0.0.1:8765", "address to serve on (loopback by default: runs hold prompts and code)")
	pos, err := cli.Args(fs, args, 0, 1, "view takes at most one directory (a folder of runs or one run)")
	if err != nil {
		return err
	}
	return view.ServeRuns(ctx, runstore.Root(), append(pos, "")[0], *addr, e.Stdout, e.Stderr)
}

func cmdShow(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "show", "show ATTEMPT [--run RUN] [--reasoning] [--full] [--format text|json]\n"+
		"       (ATTEMPT: an id, a unique prefix, RUNDIR/attempts/ID, or RUN ARM CASE REPEAT)")
	r := inspect.ShowRequest{Root: runstore.Root()}
	r.Bind(fs)
	format := cli.Format(fs, "text")
	var err error
	if r.Args, err = cli.Args(fs, args, 1, 4, "show takes one attempt: an id, a prefix, RUNDIR/attempts/ID, or RUN ARM CASE REPEAT"); err != nil {
		return err
	}
	r.Format = *format
	return cli.Write(e, "")(inspect.Show(r))
}

func cmdReport(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "report", "report RUN... [--suite VERSION] [--baseline ARM] [--format text|md|json|csv|html] [--allow-mixed] [--out FILE]")
	var o report.Options
	o.Bind(fs, "read outcomes under this graded suite version (\"2.0.2\" or \"name@2.0.2\"); default: the suite each run ran under",
		"the first arm of the first run's plan", "the report")
	format := cli.Format(fs, report.FormatTable, report.FormatMarkdown, report.FormatCSV, report.FormatHTML)
	out := fs.String("out", "", "write the report to FILE instead of standard output")
	compare := fs.String("compare", "", "screen runs: compare two modes side by side (A,B)")
	dirs, err := cli.Args(fs, args, 1, -1, "report needs at least one run directory")
	if err != nil {
		return err
	}
	// A throughput screen is reported by the screen's own report.
	d, _ := runstore.Resolve(runstore.Root(), dirs[0])
	if k, _ := runstore.Kind(d); len(dirs) == 1 && k == "screen" {
		return cmdScreen(ctx, e, []string{"report", d, "--format", *format, "--compare", *compare, "--out", *out})
	}
	if *compare != "" {
		return evalctl.Usagef("--compare applies to screen runs; for cohorts use --baseline")
	}
	if dirs, err = runstore.ResolveAll(runstore.Root(), dirs, true); err != nil {
		return err
	}
	return cli.Write(e, *out)(report.Make(ctx, dirs, o, *format))
}

func cmdExport(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "export", "export RUNDIR... --out DIR [--suite VERSION] [--baseline ARM] [--allow-mixed]")
	out := fs.String("out", "", "directory to write the export to (created; must be empty)")
	var o report.Options
	o.Bind(fs, "read outcomes under this graded suite version (default: the suite each run ran under)", "the first arm", "the aggregates")
	dirs, err := cli.Args(fs, args, 1, -1, "export needs at least one run directory")
	if err != nil {
		return err
	}
	if *out == "" {
		return evalctl.Usagef("export needs --out DIR")
	}
	if dirs, err = runstore.ResolveAll(runstore.Root(), dirs, true); err != nil {
		return err
	}
	return report.ExportTo(ctx, dirs, *out, o, e.Stdout)
}

func cmdVerify(ctx context.Context, e *cli.Env, args []string) error {
	pos, err := cli.Args(cli.Flags(e, "verify", "verify DIR"), args, 1, 1, "verify takes one export directory")
	if err != nil {
		return err
	}
	if fi, err := os.Stat(pos[0]); err != nil || !fi.IsDir() {
		return evalctl.Usagef("%s: no such export directory", pos[0])
	}
	return report.VerifyTo(ctx, pos[0], e.Stdout)
}

func cmdSummarize(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "summarize", "summarize RUN|DIAGNOSIS.json... [--out results.json] [--format json]")
	out := fs.String("out", "", "write the results document to FILE instead of standard output")
	cli.Format(fs, "")
	inputs, err := cli.Args(fs, args, 1, -1, "summarize needs at least one run (cohort, screen or capacity: its directory, name, id or prefix) or fixture diagnosis file")
	if err != nil {
		return err
	}
	if inputs, err = runstore.ResolveInputs(runstore.Root(), inputs); err != nil {
		return err
	}
	doc, err := summary.Summarize(ctx, inputs)
	if err != nil {
		return err
	}
	return cli.Write(e, *out)(doc.WriteJSON, nil)
}

func cmdRegrade(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "regrade", "regrade RUN... --suite DIR [--concurrency N] [--allow-other-suite] [--sandbox-hosts FILE] [--format text|json]")
	var r regrade.Request
	r.Bind(fs)
	format := cli.Format(fs, "table")
	dirs, err := cli.Args(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	r.JSON = *format == "json"
	if err := r.Check(dirs); err != nil {
		return err
	}
	if dirs, err = runstore.ResolveAll(runstore.Root(), dirs, false); err != nil {
		return err
	}
	return regrade.Regrade(ctx, dirs, r, graderFor(ctx, e, r.HostsFile), e.Stdout, e.Stderr)
}

func cmdControls(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "controls", "controls --case NAME --suite A [--suite B] [--answers RUN...] [--concurrency N] [--format text|json] [--out DIAGNOSIS.json]")
	var r regrade.DiagnoseRequest
	r.Bind(fs)
	format := cli.Format(fs, "table")
	rest, err := cli.Args(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	r.JSON, r.Log = *format == "json", e.Stderr
	if r.Answers = append(r.Answers, rest...); len(r.Answers) > 0 {
		if r.Answers, err = runstore.ResolveAll(runstore.Root(), r.Answers, false); err != nil {
			return err
		}
	}
	return regrade.DiagnoseCommand(ctx, r, graderFor(ctx, e, ""), e.Stdout)
}

// graderFor builds the grader of a command that regrades answers, on the
// engines hostsFile names ("": the local one).
func graderFor(ctx context.Context, e *cli.Env, hostsFile string) regrade.NewGrader {
	return func(conc int) (regrade.Grader, func(), error) {
		return orchestrator.ConnectGrader(ctx, hostsFile, conc, e.Stderr)
	}
}

func cmdScreen(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) > 0 && args[0] == "resume" {
		return servingResume(ctx, e, "screen", args[1:], screen.RunDir)
	}
	if len(args) > 0 && args[0] == "report" {
		fs := cli.Flags(e, "screen report", "screen report RUN [--format text|json|html] [--compare A,B] [--out FILE]")
		var o screen.ReportOptions
		o.Bind(fs)
		format := cli.Format(fs, "table", "html")
		out := fs.String("out", "", "write to FILE instead of standard output")
		dir, err := cli.Run(fs, args[1:], "screen report needs one run directory", func() error { o.Format = *format; return o.Check() })
		if err != nil {
			return err
		}
		return cli.Write(e, *out)(screen.ReportDir(dir, o))
	}
	fs := cli.Flags(e, "screen", `screen --spec screen.yaml [--out runs]     register and run a throughput screen
       evalctl screen resume RUNDIR                      measure what a stopped screen has not
       evalctl screen report RUN [--format text|json|html] [--compare A,B] [--out FILE]`)
	spec := fs.String("spec", "", "screen spec (YAML)")
	out := fs.String("out", "runs", "directory that receives the run directory")
	var m screen.Machine
	m.Bind(fs)
	if err := cli.ParseNone(fs, args, ""); err != nil {
		return err
	}
	return screen.Start(ctx, *spec, *out, m, e.Stdout, e.Stderr)
}

func cmdCapacity(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) > 0 && args[0] == "resume" {
		return servingResume(ctx, e, "capacity", args[1:], screen.RunCapacityDir)
	}
	if len(args) > 0 && args[0] == "report" {
		fs := cli.Flags(e, "capacity report", "capacity report RUN [--format text|json] [--out FILE]")
		format := cli.Format(fs, "table")
		out := fs.String("out", "", "write to FILE instead of standard output")
		dir, err := cli.Run(fs, args[1:], "capacity report needs one run directory", func() error { return screen.CheckCapacityFormat(*format) })
		if err != nil {
			return err
		}
		return cli.Write(e, *out)(screen.CapacityReportDir(dir, *format))
	}
	fs := cli.Flags(e, "capacity", `capacity --profile P --contexts 196608,225280,262144 [--out runs] [--input-tokens N | --fill 0.9]
       evalctl capacity resume RUNDIR
       evalctl capacity report RUN [--format text|json] [--out FILE]`)
	var r screen.CapacityRequest
	r.Bind(fs)
	var m screen.Machine
	m.Bind(fs)
	if err := cli.ParseNone(fs, args, ""); err != nil {
		return err
	}
	return screen.StartCapacity(ctx, r, m, e.Stdout, e.Stderr)
}

// servingResume runs `evalctl NAME resume RUNDIR`: the stopped screen or
// probe in RUNDIR measures what it has not, under this machine's options.
func servingResume(ctx context.Context, e *cli.Env, name string, args []string, run func(context.Context, string, screen.Options, io.Writer) error) error {
	fs := cli.Flags(e, name+" resume", name+" resume RUNDIR")
	var m screen.Machine
	m.Bind(fs)
	dir, err := cli.Run(fs, args, name+" resume needs one run directory", nil)
	if err != nil {
		return err
	}
	o, err := m.Options(e.Stderr)
	if err != nil {
		return err
	}
	return run(ctx, dir, o, e.Stdout)
}

func cmdServeModel(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "serve-model", "serve-model [--addr HOST:PORT] [--suite DIR] [flags]")
	cfg := scripted.Config{Log: e.Stderr, BuildInfo: "evalctl-scripted-" + runstore.Version()}
	cfg.Bind(fs)
	suiteDir := fs.String("suite", "", "suite directory the reference and control:<name> scripts solve (none: those scripts answer 400)")
	if err := cli.ParseNone(fs, args, "serve-model takes no arguments"); err != nil {
		return err
	}
	cfg.RealtimeRates(fs)
	return scripted.Serve(ctx, cfg, *suiteDir, e.Stdout)
}

func cmdImage(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) == 0 || args[0] != "build" {
		return cli.Help(e, args, "image build", "usage: evalctl image build [--force] [--quiet]\n       evalctl image build --agent DOCKERFILE --tag NAME [--quiet]\n\n"+
			"Build (or reuse) the sandbox image; with --agent, build an agent image on it (the Dockerfile\n"+
			"starts 'ARG BASE' / 'FROM ${BASE}') that an arm names as agent.image (docs/agents.md).")
	}
	fs := cli.Flags(e, "image build", "image build [--force] [--quiet] | image build --agent DOCKERFILE --tag NAME [--quiet]")
	force := fs.Bool("force", false, "rebuild even when an image for this recipe exists")
	quiet := fs.Bool("quiet", false, "print only the reference and the image ID")
	agentFile := fs.String("agent", "", "build an agent image from this Dockerfile (its directory is the build context; the sandbox image is the build argument BASE)")
	tag := fs.String("tag", "", "the agent image's name, as an arm's agent.image gives it (with --agent)")
	if err := cli.ParseNone(fs, args[1:], "image build takes no arguments"); err != nil {
		return err
	}
	switch {
	case *agentFile == "" && *tag != "":
		return evalctl.Usagef("--tag names an agent image: give the Dockerfile with --agent")
	case *agentFile == "":
		return sandbox.BuildImage(ctx, *force, *quiet, e.Stdout, e.Stderr)
	case *tag == "":
		return evalctl.Usagef("--agent needs --tag NAME: the name an arm's agent.image gives, e.g. --tag evalctl-agent-opencode")
	case *force:
		return evalctl.Usagef("--force rebuilds the sandbox image; run it without --agent first")
	}
	if st, err := os.Stat(*agentFile); err != nil {
		return evalctl.Usage(fmt.Errorf("--agent: %w", err))
	} else if st.IsDir() {
		return evalctl.Usagef("--agent %s is a directory: name the Dockerfile in it", *agentFile)
	}
	err := sandbox.BuildAgentImage(ctx, *agentFile, *tag, *quiet, e.Stdout, e.Stderr)
	if errors.Is(err, sandbox.ErrNotDerived) {
		return evalctl.Usage(err)
	}
	return err
}

func cmdSandbox(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) == 0 || args[0] != "prune" {
		return cli.Help(e, args, "sandbox prune", "usage: evalctl sandbox prune [--run RUN]\n\nRemove sandbox containers left behind by a crashed run. Without --run it removes every\nevalctl container, those of a run still in progress included (a resumed run removes its\nown leftovers by itself).")
	}
	fs := cli.Flags(e, "sandbox prune", "sandbox prune [--run RUN]")
	run := fs.String("run", "", "only the containers of this run: its directory, name, id or prefix (without it: every evalctl container, runs in progress included)")
	if err := cli.ParseNone(fs, args[1:], "sandbox prune takes no arguments"); err != nil {
		return err
	}
	id, known, err := runstore.ResolveID(runstore.Root(), *run)
	if err != nil {
		return err
	}
	n, err := sandbox.PruneRun(ctx, id, e.Stdout)
	if err == nil && n == 0 && !known {
		return evalctl.Usagef("no run %s under %s, and no sandbox container carries its id", id, runstore.Root())
	}
	return err
}

const casesHelp = `usage: evalctl cases <list|fingerprint|check|import|controls> [flags]

  list         the suite's cases: name, language, phases, controls, summary
  fingerprint  the suite's name, version and SHA-256 fingerprint
  check        the fixture gate: reference solved, starter fails acceptance,
               each negative control fails what it declares (exit 1 if not)
  import       FORMAT SRC --out SUITE: a new suite from an outside one
               (formats: exercism), test counts from the references, controls
               generated
  controls generate [CASE...]
               negative controls from mutants of the reference, and each
               case's mutation score and surviving mutants`

func cmdCases(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) == 0 {
		return evalctl.Usagef("expected 'cases list', 'cases fingerprint' or 'cases check'")
	}
	switch args[0] {
	case "-h", "--help":
		return cli.Help(e, args, "", casesHelp)
	case "list":
		return casesShow(e, "list", args[1:], (*tasks.Suite).WriteList)
	case "fingerprint":
		return casesShow(e, "fingerprint", args[1:], (*tasks.Suite).WriteFingerprint)
	case "check":
		fs := cli.Flags(e, "cases check", "cases check [--suite DIR] [--concurrency N] [--retries N] [--sandbox-hosts FILE] [--format text|json] [CASE...]")
		var o controls.CheckOptions
		o.Bind(fs)
		format := cli.Format(fs, "table")
		var err error
		if o.Cases, err = cli.Args(fs, args[1:], 0, -1, ""); err != nil {
			return err
		}
		o.JSON = *format == "json"
		return controls.Check(ctx, o, func(conc int) (*grader.Grader, func(), error) {
			return orchestrator.ConnectGrader(ctx, o.HostsFile, conc, e.Stderr)
		}, e.Stdout, e.Stderr)
	case "import":
		fs := cli.Flags(e, "cases import", "cases import FORMAT SRC --out SUITE [--name NAME] [--version V] [--prompt-template FILE] [--concurrency N] [--max N] [--no-controls]")
		var r controls.ImportRequest
		r.Bind(fs)
		var err error
		if r.Args, err = cli.Args(fs, args[1:], 0, -1, ""); err != nil {
			return err
		}
		return controls.Import(ctx, r, e.Stdout, e.Stderr)
	case "controls":
		return casesControls(ctx, e, args[1:])
	}
	return evalctl.Usagef("unknown subcommand 'cases %s'", args[0])
}

// casesShow is 'cases list' and 'cases fingerprint': write prints the suite.
func casesShow(e *cli.Env, sub string, args []string, write func(*tasks.Suite, io.Writer, bool) error) error {
	fs := cli.Flags(e, "cases "+sub, "cases "+sub+" [--suite DIR] [--format text|json]")
	dir := fs.String("suite", "", controls.SuiteHelp)
	format := cli.Format(fs, "table")
	if err := cli.ParseNone(fs, args, "cases "+sub+" takes no arguments"); err != nil {
		return err
	}
	s, err := tasks.LoadDefault(*dir)
	if err != nil {
		return err
	}
	return write(s, e.Stdout, *format == "json")
}

// casesControls is 'cases controls generate [CASE...]'.
func casesControls(ctx context.Context, e *cli.Env, args []string) error {
	if len(args) == 0 || args[0] != "generate" {
		return evalctl.Usagef("expected 'cases controls generate [--suite DIR] [CASE...]'")
	}
	fs := cli.Flags(e, "cases controls generate", "cases controls generate [--suite DIR] [--max N] [--keep N] [--concurrency N] [--dry-run] [CASE...]")
	o := controls.SuiteOptions{Out: e.Stdout, Log: e.Stderr}
	o.Bind(fs)
	dir := fs.String("suite", "cases", "suite directory")
	conc := fs.Int("concurrency", 2, "grades run at once")
	pos, err := cli.Args(fs, args[1:], 0, -1, "")
	if err != nil {
		return err
	}
	if err := controls.CheckLimits(*conc, o.Options); err != nil {
		return err
	}
	gen, done, err := controls.Connect(ctx, *conc, e.Stderr)
	if err != nil {
		return err
	}
	defer done()
	return gen.GenerateDir(ctx, *dir, pos, o)
}

func cmdPower(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "power", "power [RUN...] [--baseline ARM] [--candidate ARM] [--half-width 0.02] [--difference 0.05] [--power 0.8] [--format text|json]\n"+
		"       power --sd 0.04 [--discordance 0.1] [--task-seconds 450[,460]] [--half-width ...] (stated figures, no pilot)\n\n"+
		"pairs, attempts and GPU hours a paired comparison of two arms needs: the decode TPS ratio to a half-width,\n"+
		"and a difference in functional rate with a given power, from a pilot run's figures or stated ones")
	r := report.PowerRequest{Request: power.Request{Mixing: power.DefaultMixing}}
	r.Options.Bind(fs, "read outcomes under this graded suite version (default: the suite each run ran under)", "the first arm", "the answer")
	fs.StringVar(&r.Candidate, "candidate", "", "arm compared with the baseline (default: the first other arm)")
	fs.Float64Var(&r.Request.HalfWidth, "half-width", 0.02, "target half-width of the speed ratio's 95% interval, a fraction (0.02: ±2%)")
	fs.Float64Var(&r.Request.Difference, "difference", 0.05, "difference in functional rate to detect, a fraction (0.05: 5 points)")
	fs.Float64Var(&r.Request.Power, "power", 0.8, "probability of detecting that difference")
	fs.Var(optFloat{&r.Stated.LogRatioSD}, "sd", "stated: standard deviation of per-pair log decode-TPS ratios")
	fs.Var(optFloat{&r.Stated.Discordance}, "discordance", "stated: share of pairs on which the arms disagree on functional")
	fs.Var(taskSeconds{&r.Stated}, "task-seconds", "stated: task seconds per attempt, one figure for both arms or BASE,CAND")
	format := cli.Format(fs, "text")
	dirs, err := cli.Args(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	r.Format = *format
	if len(dirs) > 0 && (r.Stated.LogRatioSD != nil || r.Stated.Discordance != nil || r.Stated.BaselineTaskSeconds != nil) {
		return evalctl.Usagef("stated figures (--sd, --discordance, --task-seconds) are for planning without a pilot; give a run or the figures, not both")
	}
	if len(dirs) > 0 {
		if r.Dirs, err = runstore.ResolveAll(runstore.Root(), dirs, true); err != nil {
			return err
		}
	}
	return cli.Write(e, "")(report.Power(ctx, r))
}

// optFloat is a float flag that stays null unless given.
type optFloat struct{ p **float64 }

func (o optFloat) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatFloat(**o.p, 'g', -1, 64)
}

func (o optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("want a number")
	}
	*o.p = &v
	return nil
}

// taskSeconds sets both arms' task seconds per attempt: one figure, or
// BASE,CAND.
type taskSeconds struct{ f *power.Figures }

func (t taskSeconds) String() string { return "" }

func (t taskSeconds) Set(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return errors.New("want one figure or BASE,CAND")
	}
	var vs []float64
	for _, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) {
			return errors.New("want positive seconds: one figure or BASE,CAND")
		}
		vs = append(vs, v)
	}
	b, c := vs[0], vs[len(vs)-1]
	t.f.BaselineTaskSeconds, t.f.CandidateTaskSeconds = &b, &c
	return nil
}
