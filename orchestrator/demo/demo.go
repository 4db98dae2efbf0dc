// Package demo is evalctl's main job on embedded defaults: it builds the
// sandbox image if missing, starts the scripted model server in-process,
// runs the suite under two arms (a reference agent and a flawed one that
// writes negative controls on some cases) x 1 repeat, grades every attempt
// and prints the pooled per-arm table and the paired transitions.
package demo

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/evalctl/evalctl/orchestrator"
	"github.com/evalctl/evalctl/orchestrator/scripted"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Options configure the demo.
type Options struct {
	// SuiteDir is the suite to run; empty means the built-in development
	// suite, written once to the user's cache directory.
	SuiteDir string
	// OutDir receives the run directory (default "runs").
	OutDir string
	// Cases limits the run to some cases (default all).
	Cases []string
	// Realtime paces the scripted model at a real model's rates (60 tokens
	// per second), so the demo feels like one; otherwise it is paced at the
	// scripted server's fast default rates.
	Realtime bool
	Engine   *sandbox.Engine // nil: the local engine
	// Progress receives progress; Stdout the final tables.
	Progress, Stdout io.Writer
	Live             bool
}

// loadSuite loads dir, or with no dir the built-in development suite.
func loadSuite(dir string) (*tasks.Suite, error) {
	if dir != "" {
		return tasks.LoadSuite(dir)
	}
	return tasks.Builtin()
}

// Run runs the demo and returns the run directory.
func Run(ctx context.Context, opts Options) (string, error) {
	if opts.Engine == nil {
		eng, err := sandbox.Connect(ctx)
		if err != nil {
			return "", err
		}
		defer eng.Close()
		opts.Engine = eng
	}
	if opts.OutDir == "" {
		opts.OutDir = "runs"
	}
	suite, err := loadSuite(opts.SuiteDir)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(opts.Progress, "suite %s (%s) from %s\n", suite.ID(), suite.Fingerprint, suite.Dir)
	recipe, err := sandbox.DefaultRecipe()
	if err != nil {
		return "", err
	}
	img, err := opts.Engine.Build(ctx, recipe, sandbox.BuildOptions{Log: opts.Progress})
	if err != nil {
		return "", err
	}
	// The scripted model is paced at the rates it reports (so decode
	// seconds never exceed task seconds): fast by default, a real model's
	// pace with Realtime.
	cfg := scripted.Config{Suite: suite, Realtime: opts.Realtime}
	if opts.Realtime {
		cfg.DecodeTPS, cfg.PromptTPS = 60, 1500
	}
	srv, err := scripted.New(cfg)
	if err != nil {
		return "", err
	}
	if err := srv.Start(); err != nil {
		return "", err
	}
	defer srv.Close()
	fmt.Fprintf(opts.Progress, "scripted model server at %s (models: reference, flawed)\n", srv.URL())
	plan, err := Plan(suite, srv.URL(), opts.Cases)
	if err != nil {
		return "", err
	}
	res, err := orchestrator.Run(ctx, orchestrator.Options{
		Plan: plan, Suite: suite, OutDir: opts.OutDir, Engine: opts.Engine, Image: img,
		GradeConcurrency: 2, Progress: opts.Progress, Live: opts.Live,
	})
	if err != nil {
		if res != nil {
			return res.Dir, err
		}
		return "", err
	}
	in, err := report.Load(ctx, []string{res.Dir}, "")
	if err != nil {
		return res.Dir, err
	}
	rep, err := report.Build(in, report.Options{})
	if err != nil {
		return res.Dir, err
	}
	if err := report.Write(opts.Stdout, rep, "table"); err != nil {
		return res.Dir, err
	}
	fmt.Fprintf(opts.Stdout, "\nrun directory: %s\n  report again: evalctl report %s --format html > report.html\n", res.Dir, res.Dir)
	return res.Dir, nil
}

// Plan is the demo's plan, built as a value (no YAML text, so a suite
// path holding ": " or "#" is just a path): the reference and flawed arms
// of the scripted server at url, one repeat, the given cases (none: all).
func Plan(suite *tasks.Suite, url string, cases []string) (*orchestrator.Plan, error) {
	arm := func(name string) orchestrator.Arm {
		return orchestrator.Arm{Name: name, Endpoint: orchestrator.Endpoint{BaseURL: url, Model: name}, MaxTokens: 32768}
	}
	return orchestrator.NewPlan(orchestrator.Plan{
		Name:    "demo",
		Cases:   cases,
		Repeats: []orchestrator.Repeat{{Label: "repeat-1", Seed: 1}},
		Arms:    []orchestrator.Arm{arm("reference"), arm("flawed")},
		Order:   orchestrator.Order{Policy: "interleaved", Seed: 20261130},
	}, suite)
}

// Bind defines the flags of 'evalctl demo' that fill o.
func (o *Options) Bind(fs *flag.FlagSet) {
	fs.StringVar(&o.SuiteDir, "suite", "", "suite directory (default: the built-in development suite)")
	fs.StringVar(&o.OutDir, "out", "runs", "directory under which the run directory is created")
	fs.Func("cases", "comma-separated `list` of cases (default: all)", func(v string) error {
		o.Cases = strings.Split(v, ",")
		return nil
	})
	fs.BoolVar(&o.Realtime, "realtime", false, "pace the scripted model like a real one (60 tokens per second) instead of its fast default")
}
