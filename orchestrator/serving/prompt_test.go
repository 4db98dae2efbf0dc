package serving

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// byteTokenizer counts one token per 4 bytes plus a BOS, like a real
// tokenizer in density, and counts its calls.
type byteTokenizer struct{ calls int }

func (b *byteTokenizer) Tokenize(ctx context.Context, text string) (int, error) {
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
		got, _ := (&byteTokenizer{}).Tokenize(context.Background(), pb.Text)
		if got != pb.Tokens {
			t.Fatalf("reported %d tokens, text has %d", pb.Tokens, got)
		}
		if d := abs(got - target); d > 8 {
			t.Fatalf("target %d: got %d tokens (off by %d; aim is 8)", target, got, d)
		}
		if pb.Requests != tok.calls || pb.Requests > 10 {
			t.Fatalf("target %d: %d tokenize calls", target, tok.calls)
		}
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

func (coarseTokenizer) Tokenize(ctx context.Context, text string) (int, error) {
	return 500 * len(strings.Fields(text)), nil
}

func TestBuildPromptRefusesToMissTolerance(t *testing.T) {
	_, err := BuildPrompt(context.Background(), coarseTokenizer{}, "p ", 1, 8250, 64)
	if err == nil || !strings.Contains(err.Error(), "outside the tolerance") {
		t.Fatalf("err = %v", err)
	}
}
