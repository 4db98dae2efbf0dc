package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/demo"
	"github.com/evalctl/evalctl/orchestrator/inspect"
	"github.com/evalctl/evalctl/orchestrator/regrade"
	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/runstore"
	"github.com/evalctl/evalctl/orchestrator/screen"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/orchestrator/summary"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/orchestrator/view"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

func init() {
	// The diff of an answer needs the starter; a run made on the built-in
	// suite finds it in the binary when the suite's copy on disk is gone.
	inspect.BuiltinSuite = tasks.Builtin
}

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "run", "run --plan PLAN.yaml [--out DIR] [--check] | run --resume RUN [--replace-infra] | run --cancel RUN | run --help-plan (every plan field)\n\n"+
		"exit status: 0 every planned attempt scored; 3 stopped and resumable (guard, Ctrl-C, failing endpoint,\n"+
		"infrastructure failures left: the command to continue is printed); 1 error (nothing registered when a\n"+
		"preflight check failed); 2 usage error")
	var r orchestrator.Request
	r.Bind(fs)
	gradeConc := fs.Int("grade-concurrency", 1, "grades run at once")
	helpPlan := fs.Bool("help-plan", false, "print the plan reference: every field of plans, arms, profiles and screen specs, and an annotated example")
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
		return orchestrator.CancelRun(ctx, runstore.Root(), r.Cancel, e.stdout)
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
	res, err := orchestrator.Run(ctx, orchestrator.Options{
		Plan: plan, Suite: suite, OutDir: r.Out, ResumeDir: r.Resume, ReplaceInfra: r.ReplaceInfra,
		Engine: eng, SandboxHosts: hosts, GradeConcurrency: *gradeConc, Temperature: &telemetry.Thermal{},
		Progress: e.stderr, Live: stderrIsTerminal(e),
	})
	if res != nil {
		report.WriteRunEnd(ctx, e.stdout, res.Dir, err != nil)
	}
	if orchestrator.Resumable(err) {
		return &exitError{code: 3, msg: err.Error()} // stopped, resumable: the command to continue is in msg
	}
	return orchestrator.PlanUsage(err)
}

func cmdDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "demo [--suite DIR] [--out DIR] [--cases a,b] [--realtime]")
	o := demo.Options{Progress: e.stderr, Stdout: e.stdout, Live: stderrIsTerminal(e)}
	fs.StringVar(&o.SuiteDir, "suite", "", "suite directory (default: the built-in development suite)")
	fs.StringVar(&o.OutDir, "out", "runs", "directory under which the run directory is created")
	cases := fs.String("cases", "", "comma-separated cases (default: all)")
	fs.BoolVar(&o.Realtime, "realtime", false, "pace the scripted model like a real one (60 tokens per second) instead of its fast default")
	if err := parseNone(fs, args, "demo takes no arguments"); err != nil {
		return err
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	if o.Engine = eng; *cases != "" {
		o.Cases = strings.Split(*cases, ",")
	}
	_, err = demo.Run(ctx, o)
	return err
}

func cmdRerun(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "show" {
		fs := newFlags(e, "rerun show", "rerun show RERUNDIR [--format table|json]")
		format := fs.String("format", "table", "table or json")
		pos, err := parseArgs(fs, args[1:], 1, 1, "rerun show takes one rerun's run directory")
		if err != nil {
			return err
		}
		return writeReport(e, "")(report.ShowRerun(pos[0], *format))
	}
	fs := newFlags(e, "rerun", "rerun RUNDIR/attempts/ID --set FIELD=VALUE [--set ...] [--label NAME] [--out DIR]\n       evalctl rerun show RERUNDIR [--format table|json]")
	var sets listFlag
	fs.Var(&sets, "set", "a setting of the arm to change, FIELD=VALUE (max_tokens=65536, sampling.temperature=0.6, extra.n_probs=4, profile=FILE); repeatable")
	label := fs.String("label", "", "name of the rerun's arm (default: the original arm's name + \"-rerun\")")
	out := fs.String("out", "runs", "directory under which the run directory is created")
	pos, err := parseArgs(fs, args, 1, 1, "rerun takes one attempt directory (RUNDIR/attempts/ID)")
	if err != nil {
		return err
	}
	if err := orchestrator.CheckRerun(pos[0], sets, *label); err != nil {
		return err
	}
	eng, err := sandbox.Connect(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	res, err := orchestrator.Rerun(ctx, orchestrator.Options{OutDir: *out, Engine: eng, Temperature: &telemetry.Thermal{},
		Progress: e.stderr, Live: stderrIsTerminal(e)}, pos[0], sets, *label)
	if res == nil {
		return err
	}
	fmt.Fprintf(e.stdout, "run directory: %s\n\n", res.Dir)
	if err != nil {
		return err
	}
	return writeReport(e, "")(report.ShowRerun(res.Dir, "table"))
}

func cmdRuns(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "runs", "runs [DIR] [--format table|json]")
	format := fs.String("format", "table", "output format: table, json")
	pos, err := parseArgs(fs, args, 0, 1, "runs takes at most one directory")
	if err != nil {
		return err
	}
	return writeReport(e, "")(runstore.Listing(append(pos, runstore.Root())[0], *format))
}

func cmdView(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "view", "view [DIR] [--addr 127.0.0.1:8765]")
	addr := fs.String("addr", "127.0.0.1:8765", "address to serve on (loopback by default: runs hold prompts and code)")
	pos, err := parseArgs(fs, args, 0, 1, "view takes at most one directory (a folder of runs or one run)")
	if err != nil {
		return err
	}
	return view.ServeRuns(ctx, runstore.Root(), append(pos, "")[0], *addr, e.stdout, e.stderr)
}

func cmdShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "show", "show ATTEMPT [--run RUN] [--reasoning] [--full] [--format text|json] | show RUN ARM CASE REPEAT")
	r := inspect.ShowRequest{Root: runstore.Root()}
	r.Bind(fs)
	var err error
	if r.Args, err = parseArgs(fs, args, 0, -1, ""); err != nil {
		return err
	}
	return writeReport(e, "")(inspect.Show(r))
}

func cmdReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", "report RUN... [--suite VERSION] [--baseline ARM] [--format table|md|json|csv|html] [--allow-mixed] [--out FILE]")
	o := poolFlags(fs, "read outcomes under this graded suite version (\"2.0.2\" or \"name@2.0.2\"); default: the suite each run ran under",
		"the first arm of the first run's plan", "the report")
	format := fs.String("format", report.FormatTable, "output format: "+strings.Join(report.Formats, ", "))
	out := fs.String("out", "", "write the report to FILE instead of standard output")
	compare := fs.String("compare", "", "screen runs: compare two modes side by side (A,B)")
	dirs, err := parseArgs(fs, args, 1, -1, "report needs at least one run directory")
	if err != nil {
		return err
	}
	// A throughput screen is reported by the screen's own report.
	d, _ := runstore.Resolve(runstore.Root(), dirs[0])
	if k, _ := runstore.Kind(d); len(dirs) == 1 && k == "screen" {
		return cmdScreen(ctx, e, []string{"report", d, "--format", *format, "--compare", *compare, "--out", *out})
	}
	if *compare != "" {
		return usagef("--compare applies to screen runs; for cohorts use --baseline")
	}
	if err := report.CheckFormat(*format); err != nil {
		return err
	}
	if dirs, err = runstore.ResolveAll(runstore.Root(), dirs, true); err != nil {
		return err
	}
	return writeReport(e, *out)(report.Make(ctx, dirs, *o, *format))
}

// poolFlags are the flags of commands that pool cohorts per arm.
func poolFlags(fs *flag.FlagSet, suite, baseline, flagged string) *report.Options {
	o := &report.Options{}
	fs.StringVar(&o.Suite, "suite", "", suite)
	fs.StringVar(&o.Baseline, "baseline", "", "arm the others are compared with (default: "+baseline+")")
	fs.BoolVar(&o.AllowMixed, "allow-mixed", false, "pool runs whose suite fingerprint, image or arm hash differ, flagging "+flagged)
	return o
}

func cmdExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "export RUNDIR... --out DIR [--suite VERSION] [--baseline ARM] [--allow-mixed]")
	out := fs.String("out", "", "directory to write the export to (created; must be empty)")
	o := poolFlags(fs, "read outcomes under this graded suite version (default: the suite each run ran under)", "the first arm", "the aggregates")
	dirs, err := parseArgs(fs, args, 1, -1, "export needs at least one run directory")
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("export needs --out DIR")
	}
	if dirs, err = runstore.ResolveAll(runstore.Root(), dirs, true); err != nil {
		return err
	}
	return report.ExportTo(ctx, dirs, *out, *o, e.stdout)
}

func cmdVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "verify", "verify DIR")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("verify takes one export directory")
	}
	return report.VerifyTo(ctx, fs.Arg(0), e.stdout)
}

func cmdSummarize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "summarize", "summarize RUNDIR|DIAGNOSIS.json... [--out results.json]")
	out := fs.String("out", "", "write the results document to FILE instead of standard output")
	inputs, err := parseArgs(fs, args, 1, -1, "summarize needs at least one run directory (cohort, screen or capacity) or fixture diagnosis file")
	if err != nil {
		return err
	}
	doc, err := summary.Summarize(ctx, inputs)
	if err != nil {
		return err
	}
	return writeReport(e, *out)(doc.WriteJSON, nil)
}

func cmdRegrade(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "regrade", "regrade RUNDIR... --suite DIR [--concurrency N] [--allow-other-suite] [--sandbox-hosts FILE] [--format table|json]")
	var r regrade.Request
	r.Bind(fs)
	hostsFile := fs.String("sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (README \"Sandbox hosts\"); set --concurrency to their total capacity")
	format := jsonFlag(fs)
	dirs, err := parseArgs(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	if r.JSON, err = format(); err != nil {
		return err
	}
	if err := r.Check(dirs); err != nil {
		return err
	}
	if dirs, err = runstore.ResolveAll(runstore.Root(), dirs, false); err != nil {
		return err
	}
	return regrade.Regrade(ctx, dirs, r, graderFor(ctx, e, *hostsFile), e.stdout, e.stderr)
}

func cmdControls(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "controls", "controls --case NAME --suite A [--suite B] [--answers RUNDIR...] [--concurrency N] [--format table|json]")
	var r regrade.DiagnoseRequest
	r.Bind(fs)
	format := jsonFlag(fs)
	rest, err := parseArgs(fs, args, 0, -1, "")
	if err != nil {
		return err
	}
	if r.JSON, err = format(); err != nil {
		return err
	}
	if r.Answers = append(r.Answers, rest...); len(r.Answers) > 0 {
		if r.Answers, err = runstore.ResolveAll(runstore.Root(), r.Answers, false); err != nil {
			return err
		}
	}
	return regrade.DiagnoseCommand(ctx, r, graderFor(ctx, e, ""), e.stdout)
}

// graderFor builds the grader of a command that regrades answers, on the
// engines hostsFile names ("": the local one).
func graderFor(ctx context.Context, e *env, hostsFile string) regrade.NewGrader {
	return func(conc int) (regrade.Grader, func(), error) {
		return orchestrator.ConnectGrader(ctx, hostsFile, conc, e.stderr)
	}
}

func cmdScreen(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "resume" {
		return servingResume(ctx, e, "screen", args[1:], screen.RunDir)
	}
	if len(args) > 0 && args[0] == "report" {
		fs := newFlags(e, "screen report", "screen report RUNDIR [--format table|json|html] [--compare A,B] [--out FILE]")
		var o screen.ReportOptions
		o.Bind(fs)
		out := fs.String("out", "", "write to FILE instead of standard output")
		dir, err := parseRunArg(fs, args[1:], "screen report needs one run directory", o.Check)
		if err != nil {
			return err
		}
		return writeReport(e, *out)(screen.ReportDir(dir, o))
	}
	fs := newFlags(e, "screen", `screen --spec screen.yaml [--out runs]     register and run a throughput screen
       evalctl screen resume RUNDIR                      measure what a stopped screen has not
       evalctl screen report RUNDIR [--format table|json|html] [--compare A,B] [--out FILE]`)
	spec := fs.String("spec", "", "screen spec (YAML)")
	out := fs.String("out", "runs", "directory that receives the run directory")
	var m screen.Machine
	m.Bind(fs)
	if _, err := parseArgs(fs, args, 0, 0, ""); err != nil {
		return err
	}
	return screen.Start(ctx, *spec, *out, m, e.stdout, e.stderr)
}

func cmdCapacity(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "resume" {
		return servingResume(ctx, e, "capacity", args[1:], screen.RunCapacityDir)
	}
	if len(args) > 0 && args[0] == "report" {
		fs := newFlags(e, "capacity report", "capacity report RUNDIR [--format table|json] [--out FILE]")
		format := fs.String("format", "table", "table or json")
		out := fs.String("out", "", "write to FILE instead of standard output")
		dir, err := parseRunArg(fs, args[1:], "capacity report needs one run directory", func() error { return screen.CheckCapacityFormat(*format) })
		if err != nil {
			return err
		}
		return writeReport(e, *out)(screen.CapacityReportDir(dir, *format))
	}
	fs := newFlags(e, "capacity", `capacity --profile P --contexts 196608,225280,262144 [--out runs] [--input-tokens N | --fill 0.9]
       evalctl capacity resume RUNDIR
       evalctl capacity report RUNDIR [--format table|json] [--out FILE]`)
	var r screen.CapacityRequest
	r.Bind(fs)
	var m screen.Machine
	m.Bind(fs)
	if _, err := parseArgs(fs, args, 0, 0, ""); err != nil {
		return err
	}
	return screen.StartCapacity(ctx, r, m, e.stdout, e.stderr)
}

// servingResume runs `evalctl NAME resume RUNDIR`: the stopped screen or
// probe in RUNDIR measures what it has not, under this machine's options.
func servingResume(ctx context.Context, e *env, name string, args []string, run func(context.Context, string, screen.Options, io.Writer) error) error {
	fs := newFlags(e, name+" resume", name+" resume RUNDIR")
	var m screen.Machine
	m.Bind(fs)
	dir, err := parseRunArg(fs, args, name+" resume needs one run directory", nil)
	if err != nil {
		return err
	}
	o, err := m.Options(e.stderr)
	if err != nil {
		return err
	}
	return run(ctx, dir, o, e.stdout)
}

func cmdServeModel(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve-model", "serve-model [--addr HOST:PORT] [--suite DIR] [flags]")
	cfg := scripted.Config{Log: e.stderr, BuildInfo: "evalctl-scripted-" + runstore.Version()}
	cfg.Bind(fs)
	suiteDir := fs.String("suite", "", "suite directory the reference and control:<name> scripts solve (none: those scripts answer 400)")
	if err := parseNone(fs, args, "serve-model takes no arguments"); err != nil {
		return err
	}
	cfg.RealtimeRates(fs)
	if err := cfg.Check(); err != nil {
		return err
	}
	if *suiteDir != "" {
		s, err := tasks.LoadSuite(*suiteDir)
		if err != nil {
			return err
		}
		cfg.Suite = s
	}
	return scripted.Serve(ctx, cfg, e.stdout)
}

func cmdImage(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "build" {
		return subHelp(e, args, "image build", "usage: evalctl image build [--force] [--quiet]\n\nBuild (or reuse) the sandbox image.")
	}
	fs := newFlags(e, "image build", "image build [--force] [--quiet]")
	force := fs.Bool("force", false, "rebuild even when an image for this recipe exists")
	quiet := fs.Bool("quiet", false, "print only the reference and the image ID")
	if err := parseNone(fs, args[1:], "image build takes no arguments"); err != nil {
		return err
	}
	return sandbox.BuildImage(ctx, *force, *quiet, e.stdout, e.stderr)
}

func cmdSandbox(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "prune" {
		return subHelp(e, args, "sandbox prune", "usage: evalctl sandbox prune [--run ID]\n\nRemove sandbox containers left behind by a crashed run. Without --run it removes every\nevalctl container, those of a run still in progress included (a resumed run removes its\nown leftovers by itself).")
	}
	fs := newFlags(e, "sandbox prune", "sandbox prune [--run ID]")
	run := fs.String("run", "", "only the containers of this run id (without it: every evalctl container, runs in progress included)")
	if err := parseNone(fs, args[1:], "sandbox prune takes no arguments"); err != nil {
		return err
	}
	return sandbox.PruneRun(ctx, *run, e.stdout)
}

// subHelp answers a command group called without its one subcommand:
// help on -h, else a usage error.
func subHelp(e *env, args []string, sub, help string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(e.stdout, help)
		return nil
	}
	return usagef("expected '%s'", sub)
}

func cmdCases(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("expected 'cases list', 'cases fingerprint' or 'cases check'")
	}
	switch args[0] {
	case "-h", "--help":
		fmt.Fprintln(e.stdout, `usage: evalctl cases <list|fingerprint|check|import|controls> [flags]

  list         the suite's cases: name, language, phases, controls, summary
  fingerprint  the suite's name, version and SHA-256 fingerprint
  check        the fixture gate: reference solved, starter fails acceptance,
               each negative control fails what it declares (exit 1 if not)
  import       FORMAT SRC --out SUITE: a new suite from an outside one
               (formats: exercism), test counts from the references, controls
               generated
  controls generate [CASE...]
               negative controls from mutants of the reference, and each
               case's mutation score and surviving mutants`)
		return nil
	case "list":
		return casesShow(e, "list", args[1:], (*tasks.Suite).WriteList)
	case "fingerprint":
		return casesShow(e, "fingerprint", args[1:], (*tasks.Suite).WriteFingerprint)
	case "check":
		return casesCheck(ctx, e, args[1:])
	case "import":
		return casesImport(ctx, e, args[1:])
	case "controls":
		return casesControls(ctx, e, args[1:])
	}
	return usagef("unknown subcommand 'cases %s'", args[0])
}

// casesShow is 'cases list' and 'cases fingerprint': write prints the suite.
func casesShow(e *env, sub string, args []string, write func(*tasks.Suite, io.Writer, bool) error) error {
	fs := newFlags(e, "cases "+sub, "cases "+sub+" [--suite DIR] [--format table|json]")
	dir := fs.String("suite", "", controls.SuiteHelp)
	format := jsonFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	asJSON, err := format()
	if err != nil {
		return err
	}
	s, err := tasks.LoadDefault(*dir)
	if err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("cases %s takes no arguments", sub)
	}
	return write(s, e.stdout, asJSON)
}

func casesCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cases check", "cases check [--suite DIR] [--concurrency N] [--retries N] [--sandbox-hosts FILE] [--format table|json] [CASE...]")
	var o controls.CheckOptions
	o.Bind(fs)
	hostsFile := fs.String("sandbox-hosts", "", "hosts file naming the Docker Engines to grade on (README \"Sandbox hosts\")")
	format := jsonFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if o.JSON, err = format(); err != nil {
		return err
	}
	o.Cases = fs.Args()
	return controls.Check(ctx, o, func(conc int) (*grader.Grader, func(), error) {
		return orchestrator.ConnectGrader(ctx, *hostsFile, conc, e.stderr)
	}, e.stdout, e.stderr)
}

func casesImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cases import", "cases import FORMAT SRC --out SUITE [--name NAME] [--version V] [--prompt-template FILE] [--concurrency N] [--max N] [--no-controls]")
	var r importer.Request
	r.Bind(fs)
	max := fs.Int("max", 24, "mutants graded per case phase when generating controls (spread over all made)")
	noControls := fs.Bool("no-controls", false, "do not generate negative controls (the suite then fails 'cases check' until it has some)")
	var err error
	if r.Args, err = parseArgs(fs, args, 0, -1, ""); err != nil {
		return err
	}
	if *max < 1 {
		return usagef("--max must be at least 1")
	}
	im, err := importer.Prepare(r)
	if err != nil {
		return err
	}
	if err := im.Write(e.stderr); err != nil {
		return err
	}
	gen, done, err := newGenerator(ctx, e, r.Concurrency)
	if err != nil {
		return err
	}
	defer done()
	if err := im.Count(ctx, gen.Grader, e.stdout); err != nil || *noControls {
		return err
	}
	return gen.GenerateDir(ctx, r.Out, nil, controls.SuiteOptions{Options: controls.Options{Max: *max}, Out: e.stdout, Log: e.stderr})
}

// casesControls is 'cases controls generate [CASE...]'.
func casesControls(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "generate" {
		return usagef("expected 'cases controls generate [--suite DIR] [CASE...]'")
	}
	fs := newFlags(e, "cases controls generate", "cases controls generate [--suite DIR] [--max N] [--keep N] [--concurrency N] [--dry-run] [CASE...]")
	o := controls.SuiteOptions{Out: e.stdout, Log: e.stderr}
	o.Bind(fs)
	dir := fs.String("suite", "cases", "suite directory")
	conc := fs.Int("concurrency", 2, "grades run at once")
	pos, err := parseArgs(fs, args[1:], 0, -1, "")
	if err != nil {
		return err
	}
	if err := controls.CheckLimits(*conc, o.Options); err != nil {
		return err
	}
	gen, done, err := newGenerator(ctx, e, *conc)
	if err != nil {
		return err
	}
	defer done()
	return gen.GenerateDir(ctx, *dir, pos, o)
}

// newGenerator connects to the Docker Engine, builds the sandbox image if
// needed, and returns a control generator with its grader.
func newGenerator(ctx context.Context, e *env, conc int) (*controls.Generator, func(), error) {
	eng, img, err := sandbox.ConnectImage(ctx, e.stderr)
	if err != nil {
		return nil, nil, err
	}
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: conc})
	return &controls.Generator{Engine: eng, Image: img.Ref, Grader: g}, func() { eng.Close() }, nil
}
