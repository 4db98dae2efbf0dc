package screen

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// byteTokenizer counts one token per 4 bytes plus a BOS, like a real
// tokenizer in density, and counts its calls.
type byteTokenizer struct{ calls int }

func (b *byteTokenizer) CountTokens(ctx context.Context, text string) (int, error) {
	b.calls++
	return 1 + (utf8.RuneCountInString(text)+3)/4, ctx.Err()
}

func TestBuildPromptHitsTarget(t *testing.T) {
	for _, target := range []int{512, 8192, 32768, 179532} {
		tok := &byteTokenizer{}
		pb, err := BuildPrompt(context.Background(), tok, "Screen run-1, sample 00-a-1. ", 7, target, 64)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := (&byteTokenizer{}).CountTokens(context.Background(), pb.Text)
		if got != pb.Tokens {
			t.Fatalf("reported %d tokens, text has %d", pb.Tokens, got)
		}
		if got != target {
			t.Fatalf("target %d: got %d tokens; the tokenizer allows the exact count", target, got)
		}
		if pb.Requests != tok.calls || pb.Requests > 24 {
			t.Fatalf("target %d: %d tokenize calls", target, tok.calls)
		}
	}
}

// wordTokenizer counts three tokens a word: a prompt of every count is not
// possible, so the closest within tolerance is taken.
type wordTokenizer struct{}

func (wordTokenizer) CountTokens(ctx context.Context, text string) (int, error) {
	return 3 * len(strings.Fields(text)), nil
}

func TestBuildPromptExactWhereTheTokenizerAllows(t *testing.T) {
	pb, err := BuildPrompt(context.Background(), wordTokenizer{}, "p. ", 3, 1000, 64)
	if err != nil {
		t.Fatal(err)
	}
	if d := abs(pb.Tokens - 1000); d > 2 || pb.Requests > 200 {
		t.Errorf("coarse tokenizer: %d tokens after %d calls, want within a word of 1000", pb.Tokens, pb.Requests)
	}
}

func TestBuildPromptFixturesAreSharedAcrossModes(t *testing.T) {
	ctx := context.Background()
	a, _ := BuildPrompt(ctx, &byteTokenizer{}, "mode A prefix. ", 1, 4096, 64)
	b, _ := BuildPrompt(ctx, &byteTokenizer{}, "mode B prefix. ", 1, 4096, 64)
	c, _ := BuildPrompt(ctx, &byteTokenizer{}, "mode A prefix. ", 2, 4096, 64)
	if !strings.HasPrefix(a.Text, "mode A prefix. ") {
		t.Fatal("the unique prefix must come first so no cached prefix can be reused")
	}
	bodyA := strings.TrimPrefix(a.Text, "mode A prefix. ")
	bodyB := strings.TrimPrefix(b.Text, "mode B prefix. ")
	if bodyA[:1000] != bodyB[:1000] {
		t.Fatal("same (target, seed) must give the same fixture text in every mode")
	}
	if bodyA[:1000] == strings.TrimPrefix(c.Text, "mode A prefix. ")[:1000] {
		t.Fatal("another seed must give another fixture")
	}
}

// coarseTokenizer counts 500 tokens per word: no prompt can land within a
// 64-token tolerance of most targets.
type coarseTokenizer struct{}

func (coarseTokenizer) CountTokens(ctx context.Context, text string) (int, error) {
	return 500 * len(strings.Fields(text)), nil
}

func TestBuildPromptRefusesToMissTolerance(t *testing.T) {
	_, err := BuildPrompt(context.Background(), coarseTokenizer{}, "p ", 1, 8250, 64)
	if err == nil || !strings.Contains(err.Error(), "outside the tolerance") {
		t.Fatalf("err = %v", err)
	}
}
