package report

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/evalctl/evalctl"
)

// This file holds the work of 'evalctl report', 'export' and 'rerun show'
// on cohort runs: the command line parses flags into these values and calls
// one function; mistakes in the options are *evalctl.UsageError.

// Make builds the report of the cohorts in dirs and returns what writes
// it in format: the HTML page with each arm's settings, and a diagnostic
// rerun's table beside the attempt it reran.
func Make(ctx context.Context, dirs []string, opts Options, format string) (func(io.Writer) error, error) {
	if err := CheckFormat(format); err != nil {
		return nil, err
	}
	rep, err := buildChecked(ctx, dirs, opts)
	if err != nil {
		return nil, err
	}
	if format == FormatHTML {
		setup, err := LoadSetup(dirs)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return WriteHTMLWith(w, rep, setup) }, nil
	}
	var sbs *RerunSideBySide
	if len(dirs) == 1 && format == FormatTable {
		if sbs, err = LoadRerun(dirs[0]); err != nil && !errors.Is(err, ErrNotRerun) {
			return nil, err
		}
	}
	return func(w io.Writer) error {
		if err := Write(w, rep, format); err != nil || sbs == nil {
			return err
		}
		io.WriteString(w, "\n")
		return sbs.WriteTable(w)
	}, nil
}

// CheckFormat refuses a format the report is not written in.
func CheckFormat(format string) error {
	if !ValidFormat(format) {
		return evalctl.Usagef("unknown --format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	return nil
}

func buildChecked(ctx context.Context, dirs []string, opts Options) (*Report, error) {
	if err := usageIfNotGraded(CheckGraded(dirs, opts.Suite)); err != nil {
		return nil, err
	}
	in, err := Load(ctx, dirs, opts.Suite)
	if err != nil {
		return nil, err
	}
	rep, err := usageIfUnknownArm(Build(in, opts))
	if err == nil {
		addStopReport(rep, in)
	}
	return rep, err
}

// ExportTo writes the export of the cohorts in dirs to out and says on
// stdout how to check it.
func ExportTo(ctx context.Context, dirs []string, out string, opts Options, stdout io.Writer) error {
	if err := usageIfNotGraded(CheckGraded(dirs, opts.Suite)); err != nil {
		return err
	}
	rep, err := usageIfUnknownArm(Export(ctx, dirs, out, opts))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %d run(s), %d arm(s) to %s; check it with: evalctl verify %s (or without evalctl: python3 %s)\n", len(rep.Runs), len(rep.Arms), out, out, filepath.Join(out, CheckerPy))
	return nil
}

// ShowRerun returns what writes the diagnostic rerun in dir beside the
// attempt it reran, as a table or JSON.
func ShowRerun(dir, format string) (func(io.Writer) error, error) {
	if format != "table" && format != "json" {
		return nil, evalctl.Usagef("unknown --format %q (want table or json)", format)
	}
	sbs, err := LoadRerun(dir)
	if errors.Is(err, ErrNotRerun) {
		return nil, evalctl.Usage(err)
	}
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error {
		if format == "json" {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(sbs)
		}
		return sbs.WriteTable(w)
	}, nil
}

func usageIfNotGraded(err error) error {
	var ng *NotGradedError
	if errors.As(err, &ng) {
		return evalctl.Usage(err)
	}
	return err
}

func usageIfUnknownArm(rep *Report, err error) (*Report, error) {
	if errors.Is(err, ErrUnknownArm) {
		return nil, evalctl.Usage(err)
	}
	return rep, err
}

// VerifyTo checks the export in dir (see Verify) and says on out what
// held.
func VerifyTo(ctx context.Context, dir string, out io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := Verify(dir); err != nil {
		return fmt.Errorf("verify %s: %w", dir, err)
	}
	fmt.Fprintf(out, "%s: checksums match, every outcome recomputes from its evidence and every aggregate from attempts.json\n", dir)
	return nil
}

// Bind defines the flags of the commands that pool cohorts per arm
// (report, export): suite says what --suite reads, baseline the default
// baseline arm, flagged what --allow-mixed flags.
func (o *Options) Bind(fs *flag.FlagSet, suite, baseline, flagged string) {
	fs.StringVar(&o.Suite, "suite", "", suite)
	fs.StringVar(&o.Baseline, "baseline", "", "arm the others are compared with (default: "+baseline+")")
	fs.BoolVar(&o.AllowMixed, "allow-mixed", false, "pool runs whose suite fingerprint, image or arm hash differ, flagging "+flagged)
}
