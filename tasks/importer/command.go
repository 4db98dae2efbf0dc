package importer

import (
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
	Out       string
	opt       Options
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
