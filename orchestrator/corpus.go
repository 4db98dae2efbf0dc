package orchestrator

import (
	"context"
	"fmt"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/longctx"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/tasks"
)

// corpusInput applies the arm's context strategy (full when it names none)
// to the case's corpus, for the task the first prompt states, counting
// tokens with the endpoint's tokenizer. It returns the record and the text
// appended to the first prompt. A failure here is the infrastructure's
// (the endpoint could not count, the corpus could not be read): no token
// was generated yet.
func corpusInput(ctx context.Context, arm *Arm, c *tasks.Case, prompt string, client *model.Client) (*evalctl.InputRecord, string, error) {
	s := longctx.Strategy{Name: longctx.Full}
	if arm.Context != nil {
		s = *arm.Context
	}
	docs, err := longctx.LoadCorpus(c.CorpusDir)
	if err != nil {
		return nil, "", err
	}
	res, err := longctx.Apply(ctx, s, docs, prompt, longctx.Endpoint{Client: client})
	if err != nil {
		return nil, "", fmt.Errorf("corpus of %s (%s): %w", c.Name, s.Name, err)
	}
	in := &evalctl.InputRecord{Strategy: res.Strategy, BudgetTokens: res.Budget, InputTokens: res.InputTokens,
		CorpusTokens: res.CorpusTokens, Passages: res.Passages, PassagesTotal: res.PassagesTotal}
	how := map[string]string{
		longctx.Full:      "the whole corpus",
		longctx.Cropped:   fmt.Sprintf("the corpus cropped to its first %d tokens", res.Budget),
		longctx.Retrieved: fmt.Sprintf("passages of the corpus retrieved for this task (up to %d tokens)", res.Budget),
	}[res.Strategy]
	return in, fmt.Sprintf("\n\nThe documents this task draws on follow (%s).\n\n%s", how, res.Text), nil
}
