// Package controls generates negative controls for a case by mutating its
// reference: small, plausible mistakes (an operator swapped, a boundary
// shifted, a constant off by one, a statement or branch dropped) are graded
// in the sandbox image like any answer. A mutant the checks reject on two
// gradings with the same failing groups is a reproducible control and may
// be kept, with the test ids it failed both times as its must_fail; the
// share of mutants the checks reject is the case's mutation score, a
// direct measure of how strong its tests are, and the mutants that survive
// show what they miss.
package controls

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

//go:embed mutate.py
var mutateScript []byte

// Grader grades an answer; *grader.Grader satisfies it.
type Grader interface {
	Grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels grader.Labels) (*evalctl.Grade, error)
}

// Options of Generate.
type Options struct {
	// Max bounds the mutants graded per phase (spread evenly over all the
	// mutants the script makes); 0 means 24.
	Max int
	// Keep is how many controls to keep per phase; 0 means 3.
	Keep int
	// Labels label every container Generate starts.
	Labels grader.Labels
}

// Mutant is one mutated reference and what the checks made of it.
type Mutant struct {
	ID   string `json:"id"`
	File string `json:"file"`
	Line int    `json:"line"`
	Op   string `json:"op"`
	Desc string `json:"desc"`
	// Killed: the first grading did not solve it.
	Killed bool `json:"killed"`
	// Reproducible: a second grading failed the same groups again.
	Reproducible bool `json:"reproducible"`
	// Plausible: it passes the public tests (or, without public tests,
	// part of acceptance); see grader.Plausible.
	Plausible bool `json:"plausible"`
	// MustFail lists, per failed required group, the test ids it failed
	// on both gradings ([] when only the group as a whole failed both).
	MustFail map[string][]string `json:"must_fail,omitempty"`
	Kept     bool                `json:"kept"`
	source   []byte
}

// Report is the outcome for one phase of one case.
type Report struct {
	Case  string `json:"case"`
	Phase int    `json:"phase"`
	// Made is how many distinct mutants the script made; Graded how many
	// of them were graded (at most Options.Max).
	Made   int `json:"made"`
	Graded int `json:"graded"`
	Killed int `json:"killed"`
	// Score is Killed/Graded, null when nothing was graded.
	Score   *float64 `json:"mutation_score"`
	Mutants []Mutant `json:"mutants"`
}

// Survivors are the graded mutants the checks did not reject.
func (r *Report) Survivors() []Mutant {
	var out []Mutant
	for _, m := range r.Mutants {
		if !m.Killed {
			out = append(out, m)
		}
	}
	return out
}

// Kept are the mutants chosen as controls.
func (r *Report) Kept() []Mutant {
	var out []Mutant
	for _, m := range r.Mutants {
		if m.Kept {
			out = append(out, m)
		}
	}
	return out
}

// Generator makes and grades mutants.
type Generator struct {
	Engine grader.Engine
	Image  string
	Grader Grader
}

// Generate mutates the Python reference of every phase of c, grades the
// mutants, and picks controls. It changes no file; see Write.
func (gen *Generator) Generate(ctx context.Context, s *tasks.Suite, c *tasks.Case, opt Options) ([]*Report, error) {
	if c.Language != tasks.Python {
		return nil, fmt.Errorf("controls %s: only Python references are mutated (the case is %s)", c.Name, c.Language)
	}
	if opt.Max <= 0 {
		opt.Max = 24
	}
	if opt.Keep <= 0 {
		opt.Keep = 3
	}
	var out []*Report
	for _, p := range c.Phases {
		r, err := gen.phase(ctx, s, c, p, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (gen *Generator) phase(ctx context.Context, s *tasks.Suite, c *tasks.Case, p *tasks.Phase, opt Options) (*Report, error) {
	start, err := grader.PhaseStart(c, p.Number)
	if err != nil {
		return nil, err
	}
	ref, err := sandbox.DirEntries(p.ReferenceDir, tasks.Ignored)
	if err != nil {
		return nil, fmt.Errorf("controls %s: %w", c.Name, err)
	}
	files := map[string]string{}
	for _, e := range ref {
		if e.Mode.IsRegular() && path.Ext(e.Name) == ".py" {
			files[e.Name] = string(e.Data)
		}
	}
	rep := &Report{Case: c.Name, Phase: p.Number, Mutants: []Mutant{}}
	if len(files) == 0 {
		return rep, nil
	}
	made, err := gen.mutate(ctx, files, opt.Labels)
	if err != nil {
		return nil, fmt.Errorf("controls %s phase %d: %w", c.Name, p.Number, err)
	}
	rep.Made = len(made)
	picked := spread(made, opt.Max)
	base := grader.Overlay(start, ref)
	grade := func(m *Mutant) (*evalctl.Grade, error) {
		snap, err := sandbox.NewSnapshot(grader.Overlay(base, []sandbox.Entry{{Name: m.File, Mode: 0o644, Data: m.source}}))
		if err != nil {
			return nil, err
		}
		return gen.Grader.Grade(ctx, s, c, p.Number, snap, opt.Labels)
	}
	errs := make([]error, len(picked))
	var wg sync.WaitGroup
	for i := range picked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := &picked[i]
			g1, err := grade(m)
			if err != nil {
				errs[i] = fmt.Errorf("mutant %s: %w", m.ID, err)
				return
			}
			if g1.Solved {
				return
			}
			m.Killed = true
			g2, err := grade(m)
			if err != nil {
				errs[i] = fmt.Errorf("mutant %s: %w", m.ID, err)
				return
			}
			m.MustFail, m.Reproducible = sameFailures(g1, g2)
			m.Plausible = m.Reproducible && g1.ProtectedChangesCount == 0 && grader.Plausible(g1) && grader.Plausible(g2)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("controls %s phase %d: %w", c.Name, p.Number, err)
		}
	}
	rep.Graded = len(picked)
	for _, m := range picked {
		if m.Killed {
			rep.Killed++
		}
	}
	if rep.Graded > 0 {
		score := float64(rep.Killed) / float64(rep.Graded)
		rep.Score = &score
	}
	choose(picked, opt.Keep)
	rep.Mutants = picked
	return rep, nil
}

// sameFailures compares two gradings of one mutant: reproducible when the
// same required groups failed both times; must_fail holds, per group, the
// test ids failed both times.
func sameFailures(a, b *evalctl.Grade) (map[string][]string, bool) {
	failed := func(g *evalctl.Grade) map[string][]string {
		out := map[string][]string{}
		for _, gr := range g.Groups {
			if gr.Required && !gr.Success {
				out[gr.Name] = gr.FailedTests
			}
		}
		return out
	}
	fa, fb := failed(a), failed(b)
	if len(fa) == 0 || len(fa) != len(fb) {
		return nil, false
	}
	must := map[string][]string{}
	for g, ids := range fa {
		other, ok := fb[g]
		if !ok {
			return nil, false
		}
		in := map[string]bool{}
		for _, id := range other {
			in[id] = true
		}
		both := []string{}
		for _, id := range ids {
			if in[id] {
				both = append(both, id)
			}
		}
		sort.Strings(both)
		must[g] = both
	}
	return must, true
}

// choose marks up to keep reproducible mutants as controls: plausible ones
// first, one per operator kind before a second of any kind, then others so
// that a case gets at least two.
func choose(ms []Mutant, keep int) {
	kinds := map[string]bool{}
	n := 0
	pass := func(want func(*Mutant) bool) {
		for i := range ms {
			m := &ms[i]
			if n < keep && !m.Kept && m.Reproducible && want(m) {
				m.Kept, kinds[m.Op] = true, true
				n++
			}
		}
	}
	pass(func(m *Mutant) bool { return m.Plausible && !kinds[m.Op] })
	pass(func(m *Mutant) bool { return m.Plausible })
	pass(func(m *Mutant) bool { return !kinds[m.Op] })
	pass(func(m *Mutant) bool { return true })
}

// spread picks at most max items evenly over ms, keeping their order.
func spread(ms []Mutant, max int) []Mutant {
	if len(ms) <= max {
		return ms
	}
	out := make([]Mutant, 0, max)
	for i := 0; i < max; i++ {
		out = append(out, ms[i*len(ms)/max])
	}
	return out
}

// mutate runs the mutation script in a container of the sandbox image.
func (gen *Generator) mutate(ctx context.Context, files map[string]string, labels grader.Labels) ([]Mutant, error) {
	in, err := json.Marshal(files)
	if err != nil {
		return nil, err
	}
	box, err := gen.Engine.Start(ctx, sandbox.Spec{Image: gen.Image, Role: sandbox.RoleGrader, Run: labels.Run, Attempt: labels.Attempt})
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	defer box.Remove(context.WithoutCancel(ctx))
	if err := box.CopyIn(ctx, "/workspace", []sandbox.Entry{{Name: "evalctl_mutate.py", Mode: 0o644, Data: mutateScript}}); err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	res, err := box.Exec(ctx, []string{"python3", "-I", "-B", "/workspace/evalctl_mutate.py"}, sandbox.ExecOptions{
		Timeout: 2 * time.Minute, Dir: "/workspace", Stdin: bytes.NewReader(in), MaxOutput: 256 << 20,
	})
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	if res.ExitCode != 0 || res.StdoutTruncated {
		return nil, fmt.Errorf("mutate: exit %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	var raw []struct {
		File, Op, Desc, Source string
		Line                   int
	}
	if err := json.Unmarshal(res.Stdout, &raw); err != nil {
		return nil, fmt.Errorf("mutate: read mutants: %w", err)
	}
	out := make([]Mutant, len(raw))
	for i, r := range raw {
		stem := strings.TrimSuffix(path.Base(r.File), ".py")
		out[i] = Mutant{ID: fmt.Sprintf("mut-%s-%s-l%d-%d", stem, r.Op, r.Line, i+1), File: r.File, Line: r.Line, Op: r.Op, Desc: r.Desc, source: []byte(r.Source)}
	}
	return out, nil
}
