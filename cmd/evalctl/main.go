// Command evalctl evaluates local coding models: it runs coding cases
// against a model endpoint in a tool-calling loop inside Docker sandboxes,
// grades the answers with frozen checks, and pools the results per arm.
//
// Each command (commands.go) parses its flags into the options value of
// the package that does its work and calls it; the conventions they share
// (flags anywhere, one-line errors, exit codes: 0 success, 1 the work
// failed, 2 usage error, run's 3 stopped and resumable) are in
// internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/evalctl/evalctl/cmd/evalctl/internal/cli"
)

// commands is the table of subcommands. Add one line per command.
var commands = map[string]cli.Command{
	"version":     {Summary: "print the evalctl version and build information", Run: cmdVersion},
	"image":       {Summary: "build the sandbox image (image build [--force])", Run: cmdImage},
	"sandbox":     {Summary: "manage sandbox containers (sandbox prune)", Run: cmdSandbox},
	"cases":       {Summary: "list, fingerprint and check the suite's cases", Run: cmdCases},
	"run":         {Summary: "run a cohort from a plan, or resume one (run --plan FILE | --resume RUNDIR)", Run: cmdRun},
	"demo":        {Summary: "the main job on embedded defaults: scripted model, two arms, the built-in suite", Run: cmdDemo},
	"runs":        {Summary: "list runs newest first: name, id, kind, state, arms, scored/planned (runs [DIR])", Run: cmdRuns},
	"attempts":    {Summary: "list a run's attempts: id prefix, slot, state, outcome, tokens (attempts RUN)", Run: cmdAttempts},
	"show":        {Summary: "one attempt, readable: conversation, tool calls, grades, diff (show ATTEMPT | show RUN ARM CASE REPEAT)", Run: cmdShow},
	"view":        {Summary: "live web viewer of runs, arms, cases and attempts, on loopback (view [DIR] [--addr])", Run: cmdView},
	"report":      {Summary: "pool runs per arm with uncertainty (report RUN... [--format text|md|json|csv|html])", Run: cmdReport},
	"export":      {Summary: "write checkable attempts, aggregates and protocol files (export RUN... --out DIR)", Run: cmdExport},
	"power":       {Summary: "pairs and GPU hours a paired comparison needs, from a pilot run or stated figures (power [RUN...] [--half-width] [--difference] [--power])", Run: cmdPower},
	"verify":      {Summary: "recompute an export's aggregates and check its checksums (verify DIR)", Run: cmdVerify},
	"screen":      {Summary: "throughput screen of server modes (screen --spec FILE | resume RUNDIR | report RUNDIR [--compare A,B])", Run: cmdScreen},
	"serve-model": {Summary: "run the built-in scripted model server (serve-model [--addr] [--suite DIR])", Run: cmdServeModel},
	"capacity":    {Summary: "context-capacity probe (capacity --profile P --contexts 196608,225280 | resume | report)", Run: cmdCapacity},
	"regrade":     {Summary: "grade stored answers again under another suite version, no model called (regrade RUN... --suite DIR)", Run: cmdRegrade},
	"rerun":       {Summary: "diagnostic rerun of one attempt with exactly the named settings changed (rerun ATTEMPT --set FIELD=VALUE [--label NAME] | rerun show RUN)", Run: cmdRerun},
	"summarize":   {Summary: "one results document from runs of every kind, each figure with its run ids (summarize RUN... --out results.json)", Run: cmdSummarize},
	"controls":    {Summary: "fixture diagnosis: answers, reference and controls under two suite versions (controls --case NAME --suite A [--suite B] [--answers RUN...] [--out FILE])", Run: cmdControls},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &cli.Env{Stdout: os.Stdout, Stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *cli.Env, args []string) int {
	return cli.Main(ctx, e, commands, args)
}
