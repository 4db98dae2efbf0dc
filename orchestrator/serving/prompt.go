package serving

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Tokenizer counts tokens the way the server will. *Client is one.
type Tokenizer interface {
	Tokenize(ctx context.Context, text string) (int, error)
}

// fillerWords is the vocabulary of cold prompts: ordinary words, so the
// tokenizer sees text of typical density rather than one repeated token.
var fillerWords = strings.Fields(`the of and to in is that for it as was with be by on not he this are or his
from at which but have an they you were her she there been one all we their has would when if so no will
more can out up about who them some could him into its then two time may only other new these any first
after like most over such where also did many before must through back years much way well down should
because each just those people how too little state good very make world still own see men work long get
here between both life being under never day same another know while last might great old year off come
since against go came right used take three states himself few house use during without again place around
however home small found thought went say part once general high upon school every does got united left number
course war until always away something fact though water less public put think almost hand enough far took
head yet government system better set told nothing night end why called side open case whole along river
garden lantern copper harbor meadow signal engine ledger wallet cache parser socket kernel thread buffer
stream vector matrix orbit glacier canyon forest island valley summit beacon compass anchor`)

// PromptBuild is a cold prompt and what measuring it cost.
type PromptBuild struct {
	Text   string
	Tokens int
	// Requests is the number of /tokenize calls it took.
	Requests int
}

// BuildPrompt makes a prompt of target tokens (within tolerance) as
// counted by tok. The body is filler text fixed by seed, so every mode of a
// screen sees the same fixture for one (target, seed); prefix, which must
// be unique per sample, comes first so no prompt cache can reuse any of it.
func BuildPrompt(ctx context.Context, tok Tokenizer, prefix string, seed int64, target, tolerance int) (*PromptBuild, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(target)))
	var words []string
	text := func(k int) string {
		for len(words) < k {
			w := fillerWords[rng.IntN(len(fillerWords))]
			if len(words)%17 == 16 {
				w += ".\n"
			}
			words = append(words, w)
		}
		return prefix + strings.Join(words[:k], " ")
	}
	b := &PromptBuild{}
	count := func(k int) (int, error) {
		b.Requests++
		return tok.Tokenize(ctx, text(k))
	}
	base, err := count(0)
	if err != nil {
		return nil, fmt.Errorf("measure prompt: %w", err)
	}
	if base > target-tolerance {
		return nil, fmt.Errorf("measure prompt: the prefix alone is %d tokens, over the target %d", base, target)
	}
	probe := min(512, target)
	n, err := count(probe)
	if err != nil {
		return nil, fmt.Errorf("measure prompt: %w", err)
	}
	ratio := float64(n-base) / float64(probe) // tokens per word
	if ratio <= 0 {
		return nil, fmt.Errorf("measure prompt: the tokenizer counts no tokens for %d words", probe)
	}
	k := int(math.Round(float64(target-base) / ratio))
	bestK, bestD := -1, math.MaxInt
	// Aim well inside the tolerance; each step corrects by the measured
	// density, and a few steps reach a word's width of the target.
	aim := min(tolerance, 8)
	for range 16 {
		k = max(k, 0)
		n, err := count(k)
		if err != nil {
			return nil, fmt.Errorf("measure prompt: %w", err)
		}
		d := target - n
		if abs(d) < abs(bestD) {
			bestK, bestD = k, d
		}
		if abs(d) <= aim {
			break
		}
		step := int(math.Round(float64(d) / ratio))
		if step == 0 {
			step = sign(d)
		}
		k += step
	}
	if abs(bestD) > tolerance {
		return nil, fmt.Errorf("measure prompt: closest to %d tokens was %d, outside the tolerance of %d", target, target-bestD, tolerance)
	}
	b.Text, b.Tokens = text(bestK), target-bestD
	return b, nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	if v < 0 {
		return -1
	}
	return 1
}
