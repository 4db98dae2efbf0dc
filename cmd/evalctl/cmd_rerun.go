package main

import (
	"context"
	"fmt"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/report"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/sandbox"
)

const rerunSynopsis = `rerun RUNDIR/attempts/ID --set FIELD=VALUE [--set ...] [--label NAME] [--out DIR]
       evalctl rerun show RERUNDIR [--format table|json]`

func cmdRerun(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "show" {
		return rerunShow(e, args[1:])
	}
	fs := newFlags(e, "rerun", rerunSynopsis)
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
	sbs, err := report.LoadRerun(res.Dir)
	if err != nil {
		return err
	}
	return sbs.WriteTable(e.stdout)
}

func rerunShow(e *env, args []string) error {
	fs := newFlags(e, "rerun show", "rerun show RERUNDIR [--format table|json]")
	format := fs.String("format", "table", "table or json")
	pos, err := parseArgs(fs, args, 1, 1, "rerun show takes one rerun's run directory")
	if err != nil {
		return err
	}
	return writeReport(e, "")(report.ShowRerun(pos[0], *format))
}
