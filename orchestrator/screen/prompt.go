package screen

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Tokenizer counts tokens the way the server will: a *model.Client made
// with AddSpecial is one.
type Tokenizer interface {
	CountTokens(ctx context.Context, text string) (int, error)
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
	// FixtureTokens is a fixed input's own token count (without the cold
	// prefix), the same in every mode served by the same tokenizer.
	FixtureTokens *int
}

// padUnits are what the exact search appends to the filler, one unit at a
// time: small pieces most tokenizers count as one token each.
var padUnits = []string{" a", "x", " ."}

// BuildPrompt makes a prompt of exactly target tokens as counted by tok
// where the tokenizer allows it, else the closest within tolerance. The
// body is filler text fixed by seed, so every mode of a screen sees the
// same fixture for one (target, seed); prefix, which must be unique per
// sample, comes first so no prompt cache can reuse any of it. A word
// search comes within a word's width; then the filler is padded unit by
// unit until the count is exact (tolerance is the fallback, never the aim).
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
	measure := func(s string) (int, error) {
		b.Requests++
		return tok.CountTokens(ctx, s)
	}
	count := func(k int) (int, error) { return measure(text(k)) }
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
	bestText, bestD := "", math.MaxInt
	underK, underN := 0, base // the longest filler measured below the target
	for range 16 {
		k = max(k, 0)
		n, err := count(k)
		if err != nil {
			return nil, fmt.Errorf("measure prompt: %w", err)
		}
		d := target - n
		if abs(d) < abs(bestD) {
			bestText, bestD = text(k), d
		}
		if d > 0 && k >= underK {
			underK, underN = k, n
		}
		if d == 0 || (d > 0 && n-base > 0 && float64(d) < 2*ratio) {
			break // exact, or under by less than two words: pad from here
		}
		step := int(math.Round(float64(d) / ratio))
		if step == 0 {
			step = sign(d)
		}
		k += step
	}
	// Exact search: pad the longest filler under the target unit by unit.
	for _, unit := range padUnits {
		if bestD == 0 {
			break
		}
		for m := 1; m <= min(4*(target-underN)+4, 64); m++ {
			s := text(underK) + strings.Repeat(unit, m)
			n, err := measure(s)
			if err != nil {
				return nil, fmt.Errorf("measure prompt: %w", err)
			}
			if d := target - n; abs(d) < abs(bestD) {
				bestText, bestD = s, d
			}
			if n >= target {
				break
			}
		}
	}
	if abs(bestD) > tolerance {
		return nil, fmt.Errorf("measure prompt: closest to %d tokens was %d, outside the tolerance of %d", target, target-bestD, tolerance)
	}
	b.Text, b.Tokens = bestText, target-bestD
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
