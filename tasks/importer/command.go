package importer

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/grader/controls"
)

// Request is what 'evalctl cases import FORMAT SRC' asks for.
type Request struct {
	Args        []string // FORMAT SRC
	Concurrency int      // grades at once, at least 1
	Out         string   // directory of the new suite (required)
	Name        string   // suite name; "": the base name of Out
	Version     string
	PromptFile  string // text/template of each case's prompt; "": DefaultPrompt
	Max         int    // mutants graded per case phase when generating controls, at least 1
	NoControls  bool   // generate no negative controls
}

// Run is 'evalctl cases import': it writes the new suite, fills in each
// case's test count by running its reference in the sandbox image on the
// local engine, and generates the negative controls (unless r.NoControls).
func Run(ctx context.Context, r Request, stdout, stderr io.Writer) error {
	if r.Max < 1 {
		return evalctl.Usagef("--max must be at least 1")
	}
	im, err := Prepare(r)
	if err != nil {
		return err
	}
	if err := im.Write(stderr); err != nil {
		return err
	}
	gen, done, err := controls.Connect(ctx, r.Concurrency, stderr)
	if err != nil {
		return err
	}
	defer done()
	if err := im.Count(ctx, gen.Grader, stdout); err != nil || r.NoControls {
		return err
	}
	return gen.GenerateDir(ctx, r.Out, nil, controls.SuiteOptions{Options: controls.Options{Max: r.Max}, Out: stdout, Log: stderr})
}

// Import is a checked request and the exercises found in its source.
type Import struct {
	Adapter   Adapter
	Exercises []*Exercise
	Out       string
	opt       Options
	start     time.Time
}

// Prepare checks r (mistakes are *evalctl.UsageError) and reads the
// exercises under its source.
func Prepare(r Request) (*Import, error) {
	names := strings.Join(adapterNames(), ", ")
	if len(r.Args) != 2 {
		return nil, evalctl.Usagef("cases import takes FORMAT and SRC (formats: %s)", names)
	}
	format, src := r.Args[0], r.Args[1]
	ad, ok := Adapters[format]
	if !ok {
		return nil, evalctl.Usagef("cases import: unknown format %q (formats: %s)", format, names)
	}
	if r.Out == "" {
		return nil, evalctl.Usagef("cases import: --out SUITE is required")
	}
	if r.Concurrency < 1 {
		return nil, evalctl.Usagef("--concurrency must be at least 1")
	}
	im := &Import{Adapter: ad, Out: r.Out, opt: Options{Name: r.Name, Version: r.Version}, start: time.Now()}
	if im.opt.Name == "" {
		im.opt.Name = filepath.Base(filepath.Clean(r.Out))
	}
	if r.PromptFile != "" {
		text, err := os.ReadFile(r.PromptFile)
		if err != nil {
			return nil, evalctl.Usagef("--prompt-template: %v", err)
		}
		var prompt *template.Template
		if prompt, err = ParsePrompt(r.PromptFile, string(text)); err != nil {
			return nil, evalctl.Usagef("--prompt-template: %v", err)
		}
		im.opt.Prompt = prompt
	}
	if st, err := os.Stat(src); err != nil || !st.IsDir() {
		return nil, evalctl.Usagef("cases import: SRC %s is not a directory", src)
	}
	exs, err := ad.Exercises(src)
	if err != nil {
		return nil, err
	}
	im.Exercises = exs
	return im, nil
}

// Write writes the suite (its test counts still unknown) and says so on
// log.
func (im *Import) Write(log io.Writer) error {
	if err := Write(im.Out, im.Exercises, im.opt); err != nil {
		return err
	}
	fmt.Fprintf(log, "wrote %d cases to %s; running each reference in the sandbox image for its test count\n", len(im.Exercises), im.Out)
	return nil
}

// Count fills in the test counts by running each reference with g, then
// reports the import on out.
func (im *Import) Count(ctx context.Context, g Grader, out io.Writer) error {
	if err := FillCounts(ctx, g, im.Out, im.Exercises, grader.Labels{Run: grader.RunLabel("cases-import")}); err != nil {
		return err
	}
	fmt.Fprintf(out, "imported %d %s exercises into %s in %.1fs\n", len(im.Exercises), im.Adapter.Name(), im.Out, time.Since(im.start).Seconds())
	return nil
}

// adapterNames are the names of Adapters, sorted.
func adapterNames() []string {
	var out []string
	for n := range Adapters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Bind defines the flags of 'evalctl cases import' that fill r.
func (r *Request) Bind(fs *flag.FlagSet) {
	fs.StringVar(&r.Out, "out", "", "directory of the new suite (must not exist or be empty; required)")
	fs.StringVar(&r.Name, "name", "", "suite name (default: the base name of --out)")
	fs.StringVar(&r.Version, "version", "1.0.0", "suite version")
	fs.StringVar(&r.PromptFile, "prompt-template", "", "text/template file rendering each case's prompt (fields .Name .Language .Instructions .Solution .Files; default: instructions plus the files to change)")
	fs.IntVar(&r.Concurrency, "concurrency", 2, "grades run at once")
	fs.IntVar(&r.Max, "max", 24, "mutants graded per case phase when generating controls (spread over all made)")
	fs.BoolVar(&r.NoControls, "no-controls", false, "do not generate negative controls (the suite then fails 'cases check' until it has some)")
}
