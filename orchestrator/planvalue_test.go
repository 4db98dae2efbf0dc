package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/tasks"
)

// TestNewPlanMatchesLoadPlan: a plan built as a Go value resolves to the
// same plan.json, byte for byte, as the same plan written as a file.
func TestNewPlanMatchesLoadPlan(t *testing.T) {
	fromFile, suite, err := LoadPlan(writePlan(t, goodPlan, armB))
	if err != nil {
		t.Fatal(err)
	}
	temp, topK := 0.6, 20
	value, err := NewPlan(Plan{
		Name: "t", Cases: []string{"adder", "tsadd"},
		Repeats: []Repeat{{Label: "repeat-1", Seed: 101}, {Label: "repeat-2", Seed: 202}},
		Arms: []Arm{
			{Name: "a", Endpoint: Endpoint{BaseURL: "http://127.0.0.1:1", Model: "reference"}, MaxTokens: 1024},
			{Name: "b", Endpoint: Endpoint{BaseURL: "http://127.0.0.1:1", Model: "noop"}, Sampling: Sampling{Temperature: &temp, TopK: &topK}, Budgets: Budgets{WallSeconds: ptr(60.0)}},
		},
		Order: Order{Policy: "interleaved", Seed: 3},
	}, suite)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := fromFile.Encode()
	b, _ := value.Encode()
	if !bytes.Equal(a, b) {
		t.Errorf("plan value resolves to\n%s\nthe plan file to\n%s", b, a)
	}
}

func TestNewPlanRejects(t *testing.T) {
	suite, err := tasks.LoadSuite("../grader/testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	arm := Arm{Name: "a", Endpoint: Endpoint{BaseURL: "http://127.0.0.1:1", Model: "m"}}
	one := []Repeat{{Label: "r", Seed: 1}}
	for _, tt := range []struct {
		name string
		plan Plan
		want string
	}{
		{"no name", Plan{Repeats: one, Arms: []Arm{arm}}, "name: is required"},
		{"unknown case", Plan{Name: "x", Cases: []string{"nope"}, Repeats: one, Arms: []Arm{arm}}, `cases[0]: suite graderfixture@`},
		{"no arms", Plan{Name: "x", Repeats: one}, "arms: lists no arm"},
		{"no repeats", Plan{Name: "x", Arms: []Arm{arm}}, "repeats: lists no repeat label"},
		{"bad arm", Plan{Name: "x", Repeats: one, Arms: []Arm{{Name: "a b"}}}, "arms[0].name"},
		{"changed suite", Plan{Name: "x", SuiteFingerprint: "abc", Repeats: one, Arms: []Arm{arm}}, "suite_fingerprint: the suite's fingerprint is"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPlan(tt.plan, suite)
			var pe *PlanError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a plan error containing %q", err, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestRunRefusesAPlanOfAChangedSuite: a plan value resolved against a
// suite that changed before the run registers it is refused; nothing is
// registered.
func TestRunRefusesAPlanOfAChangedSuite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	if err := os.CopyFS(dir, os.DirFS("../grader/testdata/suite")); err != nil {
		t.Fatal(err)
	}
	suite, err := tasks.LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(Plan{Name: "x", Repeats: []Repeat{{Label: "r", Seed: 1}},
		Arms: []Arm{{Name: "a", Endpoint: Endpoint{BaseURL: "http://127.0.0.1:1", Model: "m"}}}}, suite)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "adder", "checks", "acceptance", "test_acc.py"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("#")
	f.Close()
	out := t.TempDir()
	_, err = register(context.Background(), Options{Plan: p, OutDir: out, knobs: testKnobs{NoPreflight: true}})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("got %v, want ErrChanged naming the fingerprint", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused plan left %d entries in %s", len(entries), out)
	}
}
