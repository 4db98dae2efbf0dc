package importer

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"text/template"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// Request is what 'evalctl cases import FORMAT SRC' asks of the suite
// side: where the exercises are and how to lay them out. Grading the
// references (their test counts) and generating controls is the grader's
// part (grader/controls.ImportRequest).
type Request struct {
	Args       []string // FORMAT SRC
	Out        string   // directory of the new suite (required)
	Name       string   // suite name; "": the base name of Out
	Version    string
	PromptFile string // text/template of each case's prompt; "": DefaultPrompt
}

// Import is a checked request and the exercises found in its source.
type Import struct {
	Adapter   Adapter
	Exercises []*Exercise
	// Refused are the exercises the import does not take, and why.
	Refused []*Refusal
	Out     string
	opt     Options
	// Start is when the import began (for the closing line's time).
	Start time.Time
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
	im := &Import{Adapter: ad, Out: r.Out, opt: Options{Name: r.Name, Version: r.Version}, Start: time.Now()}
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
	refused, other := Refusals(err)
	if other != nil || len(exs) == 0 {
		return nil, err
	}
	im.Exercises, im.Refused = exs, refused
	return im, nil
}

// Refusal is an exercise an import does not take, and why: the adapter
// cannot convert it, or its reference does not pass.
type Refusal struct {
	Name, Source string
	Err          error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Refusals splits an adapter's error into the exercises it refused and
// what else went wrong (nil if nothing).
func Refusals(err error) ([]*Refusal, error) {
	if err == nil {
		return nil, nil
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	var out []*Refusal
	var other []error
	for _, e := range list {
		var r *Refusal
		if errors.As(e, &r) {
			out = append(out, r)
		} else {
			other = append(other, e)
		}
	}
	return out, errors.Join(other...)
}

// Drop takes the refused exercises out of the written suite (their case
// directories and their names in suite.yaml): the import keeps what it
// could take.
func (im *Import) Drop(refused []*Refusal) error {
	gone := map[string]bool{}
	for _, r := range refused {
		gone[r.Name] = true
		if err := os.RemoveAll(filepath.Join(im.Out, r.Name)); err != nil {
			return fmt.Errorf("import: drop %s: %w", r.Name, err)
		}
	}
	kept := im.Exercises[:0:0]
	var names []string
	for _, ex := range im.Exercises {
		if !gone[ex.Name] {
			kept = append(kept, ex)
			names = append(names, ex.Name)
		}
	}
	im.Exercises = kept
	im.Refused = append(im.Refused, refused...)
	suite := fmt.Sprintf("name: %s\nversion: %s\ncases: [%s]\n", im.opt.Name, im.opt.Version, strings.Join(names, ", "))
	return os.WriteFile(filepath.Join(im.Out, tasks.SuiteFile), []byte(suite), 0o644)
}

// WriteTable prints what the import took (with each case's test count,
// from counts) and what it did not, and why, one exercise a row, sorted
// by name.
func (im *Import) WriteTable(w io.Writer, counts map[string]int) {
	type row struct{ name, result, why string }
	var rows []row
	for _, ex := range im.Exercises {
		n := "unknown"
		if c, ok := counts[ex.Name]; ok {
			n = fmt.Sprint(c)
		}
		rows = append(rows, row{ex.Name, "imported", ex.Track + ", " + n + " tests"})
	}
	for _, r := range im.Refused {
		rows = append(rows, row{r.Name, "not imported", oneLine(r.Err.Error())})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EXERCISE\tRESULT\tDETAIL")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, r.result, r.why)
	}
	tw.Flush()
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
}
