package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
	"github.com/evalctl/evalctl/tasks"
	"github.com/evalctl/evalctl/tasks/importer"
)

func casesImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cases import", "cases import FORMAT SRC --out SUITE [--name NAME] [--version V] [--prompt-template FILE] [--concurrency N] [--max N] [--no-controls]")
	out := fs.String("out", "", "directory of the new suite (must not exist or be empty; required)")
	name := fs.String("name", "", "suite name (default: the base name of --out)")
	version := fs.String("version", "1.0.0", "suite version")
	promptFile := fs.String("prompt-template", "", "text/template file rendering each case's prompt (fields .Name .Language .Instructions .Solution .Files; default: instructions plus the files to change)")
	conc := fs.Int("concurrency", 2, "grades run at once")
	max := fs.Int("max", 24, "mutants graded per case phase when generating controls (spread over all made)")
	noControls := fs.Bool("no-controls", false, "do not generate negative controls (the suite then fails 'cases check' until it has some)")
	pos, err := parseWithPositionals(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("cases import takes FORMAT and SRC (formats: %s)", strings.Join(adapterNames(), ", "))
	}
	ad, ok := importer.Adapters[pos[0]]
	if !ok {
		return usagef("cases import: unknown format %q (formats: %s)", pos[0], strings.Join(adapterNames(), ", "))
	}
	if *out == "" {
		return usagef("cases import: --out SUITE is required")
	}
	if *conc < 1 || *max < 1 {
		return usagef("--concurrency and --max must be at least 1")
	}
	if *name == "" {
		*name = filepath.Base(filepath.Clean(*out))
	}
	var prompt *template.Template
	if *promptFile != "" {
		text, err := os.ReadFile(*promptFile)
		if err != nil {
			return usagef("--prompt-template: %v", err)
		}
		if prompt, err = importer.ParsePrompt(*promptFile, string(text)); err != nil {
			return usagef("--prompt-template: %v", err)
		}
	}
	if st, err := os.Stat(pos[1]); err != nil || !st.IsDir() {
		return usagef("cases import: SRC %s is not a directory", pos[1])
	}
	exs, err := ad.Exercises(pos[1])
	if err != nil {
		return err
	}
	start := time.Now()
	if err := importer.Write(*out, exs, importer.Options{Name: *name, Version: *version, Prompt: prompt}); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %d cases to %s; running each reference in the sandbox image for its test count\n", len(exs), *out)
	gen, done, err := newGenerator(ctx, e, *conc)
	if err != nil {
		return err
	}
	defer done()
	if err := importer.FillCounts(ctx, gen.Grader, *out, exs, grader.Labels{Run: grader.RunLabel("cases-import")}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "imported %d %s exercises into %s in %.1fs\n", len(exs), ad.Name(), *out, time.Since(start).Seconds())
	if *noControls {
		return nil
	}
	return generateControls(ctx, e, gen, *out, nil, controls.Options{Max: *max}, false)
}

// newGenerator connects to the Docker Engine, builds the sandbox image if
// needed, and returns a control generator with its grader.
func newGenerator(ctx context.Context, e *env, conc int) (*controls.Generator, func(), error) {
	eng, img, err := sandboxImage(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	g := grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: conc})
	return &controls.Generator{Engine: eng, Image: img.Ref, Grader: g}, func() { eng.Close() }, nil
}

// casesControls is 'cases controls generate [CASE...]'.
func casesControls(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "generate" {
		return usagef("expected 'cases controls generate [--suite DIR] [CASE...]'")
	}
	fs := newFlags(e, "cases controls generate", "cases controls generate [--suite DIR] [--max N] [--keep N] [--concurrency N] [--dry-run] [CASE...]")
	dir := fs.String("suite", "cases", "suite directory")
	max := fs.Int("max", 24, "mutants graded per case phase (spread over all made)")
	keep := fs.Int("keep", 3, "controls kept per case phase")
	conc := fs.Int("concurrency", 2, "grades run at once")
	dry := fs.Bool("dry-run", false, "report the mutation score and survivors; write nothing")
	pos, err := parseWithPositionals(fs, args[1:])
	if err != nil {
		return err
	}
	if *conc < 1 || *max < 1 || *keep < 1 {
		return usagef("--concurrency, --max and --keep must be at least 1")
	}
	gen, done, err := newGenerator(ctx, e, *conc)
	if err != nil {
		return err
	}
	defer done()
	return generateControls(ctx, e, gen, *dir, pos, controls.Options{Max: *max, Keep: *keep}, *dry)
}

// generateControls generates controls for the named cases of the suite in
// dir (all when none is named) and writes them unless dry.
func generateControls(ctx context.Context, e *env, gen *controls.Generator, dir string, names []string, opt controls.Options, dry bool) error {
	s, err := tasks.LoadSuite(dir)
	if err != nil {
		return err
	}
	err = gen.GenerateSuite(ctx, s, names, controls.SuiteOptions{Options: opt, DryRun: dry, Out: e.stdout, Log: e.stderr})
	var nc *controls.NoCaseError
	if errors.As(err, &nc) {
		return usagef("%v", err)
	}
	if err == nil && !dry {
		fmt.Fprintf(e.stdout, "the suite changed: its fingerprint is new; run 'evalctl cases check --suite %s'\n", dir)
	}
	return err
}

func adapterNames() []string {
	var out []string
	for n := range importer.Adapters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
