package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
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
	if err := importer.FillCounts(ctx, gen.Grader, *out, exs, grader.Labels{Run: gateRunLabel("cases-import")}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "imported %d %s exercises into %s in %.1fs\n", len(exs), ad.Name(), *out, time.Since(start).Seconds())
	if *noControls {
		return nil
	}
	return generateControls(ctx, e, gen, *out, nil, controls.Options{Max: *max})
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
	opt := controls.Options{Max: *max, Keep: *keep}
	if *dry {
		opt.Keep = -1
	}
	return generateControls(ctx, e, gen, *dir, pos, opt)
}

// generateControls generates controls for the named cases of the suite in
// dir (all when none is named), prints each case's mutation score as it
// finishes, and writes the kept controls unless opt.Keep < 0. Every case
// that fails is reported; the others still get their controls.
func generateControls(ctx context.Context, e *env, gen *controls.Generator, dir string, names []string, opt controls.Options) error {
	s, err := tasks.LoadSuite(dir)
	if err != nil {
		return err
	}
	var cases []*tasks.Case
	if len(names) > 0 {
		for _, n := range names {
			c := s.Case(n)
			if c == nil {
				return usagef("suite %s has no case %q", s.ID(), n)
			}
			cases = append(cases, c)
		}
	} else {
		// All cases: those the generator cannot mutate are named and
		// skipped; named explicitly, they are an error.
		for _, c := range s.Cases {
			if !controls.Mutates(c.Language) {
				fmt.Fprintf(e.stderr, "%s: skipped: references in %s are not mutated\n", c.Name, c.Language)
				continue
			}
			cases = append(cases, c)
		}
	}
	write := opt.Keep >= 0
	if !write {
		opt.Keep = 0
	}
	opt.Labels = grader.Labels{Run: gateRunLabel("cases-controls")}
	// Cases run at once (the grader bounds the grades in flight), so the
	// container that makes one case's mutants overlaps another's grades;
	// each case is printed as it finishes.
	var failed []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps, err := gen.Generate(ctx, s, c, opt)
			if err == nil && write {
				err = controls.Write(c, reps)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fmt.Fprintf(e.stderr, "%s: %v\n", c.Name, err)
				failed = append(failed, c.Name)
				return
			}
			for _, r := range reps {
				fmt.Fprintln(e.stdout, controls.Summary(r))
				var kept, plausible []string
				for _, m := range r.Kept() {
					kept = append(kept, m.ID)
					if m.Plausible {
						plausible = append(plausible, m.ID)
					}
				}
				if write {
					fmt.Fprintf(e.stdout, "  controls written: %s (plausible: %s)\n", orNone(kept), orNone(plausible))
				}
			}
		}()
	}
	wg.Wait()
	sort.Strings(failed)
	if len(failed) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("control generation failed for %d of %d cases: %s", len(failed), len(cases), strings.Join(failed, ", "))}
	}
	if write {
		fmt.Fprintf(e.stdout, "the suite changed: its fingerprint is new; run 'evalctl cases check --suite %s'\n", dir)
	}
	return nil
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

func adapterNames() []string {
	var out []string
	for n := range importer.Adapters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// gateRunLabel is a container run label unique to one invocation, so that
// two gates running at once never prune or count each other's containers.
func gateRunLabel(kind string) string {
	return fmt.Sprintf("%s-%d-%d", kind, os.Getpid(), time.Now().UnixNano())
}

// loadSuitePartial loads the suite as 'cases check' needs it: every case
// that does not load is returned, the others are checked.
func loadSuitePartial(dir string) (*tasks.Suite, []*tasks.CaseError, error) {
	if dir == "" {
		if _, err := os.Stat(filepath.Join("cases", "suite.yaml")); err != nil {
			s, err := builtinSuite()
			return s, nil, err
		}
		dir = "cases"
	}
	return tasks.LoadSuitePartial(dir)
}

// mutationReports are the recorded mutation reports of the cases, by case.
func mutationReports(cases []*tasks.Case) map[string][]*controls.Report {
	out := map[string][]*controls.Report{}
	for _, c := range cases {
		if reps, err := controls.ReadReports(c); err == nil && reps != nil {
			out[c.Name] = reps
		}
	}
	return out
}

// printMutation prints the mutation score and survivors 'cases controls
// generate' recorded for each case.
func printMutation(e *env, cases []*tasks.Case) {
	first := true
	for _, c := range cases {
		reps, err := controls.ReadReports(c)
		if err != nil {
			fmt.Fprintf(e.stdout, "%s: %v\n", c.Name, err)
			continue
		}
		for _, r := range reps {
			if first {
				fmt.Fprintln(e.stdout, "\nmutation scores (recorded by 'cases controls generate'):")
				first = false
			}
			fmt.Fprintln(e.stdout, "  "+controls.Summary(r))
		}
	}
}
