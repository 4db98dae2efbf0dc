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
	ps := &promptSearch{ctx: ctx, tok: tok, prefix: prefix, target: target,
		rng: rand.New(rand.NewPCG(uint64(seed), uint64(target))), b: &PromptBuild{}, bestD: math.MaxInt}
	base, ratio, err := ps.calibrate(tolerance)
	if err != nil {
		return nil, err
	}
	if err := ps.wordSearch(base, ratio); err != nil {
		return nil, err
	}
	if err := ps.pad(); err != nil {
		return nil, err
	}
	if abs(ps.bestD) > tolerance {
		return nil, fmt.Errorf("measure prompt: closest to %d tokens was %d, outside the tolerance of %d", target, target-ps.bestD, tolerance)
	}
	ps.b.Text, ps.b.Tokens = ps.bestText, target-ps.bestD
	return ps.b, nil
}

// promptSearch is one BuildPrompt search: the filler drawn so far (the
// same words for the same seed and target, however many are measured),
// the closest prompt yet, and the longest filler measured under the
// target, where padding starts.
type promptSearch struct {
	ctx    context.Context
	tok    Tokenizer
	prefix string
	target int
	rng    *rand.Rand
	words  []string
	b      *PromptBuild

	bestText       string
	bestD          int // target minus the closest prompt's count
	underK, underN int // the longest filler measured below the target
}

// text is the prefix and the first k filler words, drawn as needed.
func (ps *promptSearch) text(k int) string {
	for len(ps.words) < k {
		w := fillerWords[ps.rng.IntN(len(fillerWords))]
		if len(ps.words)%17 == 16 {
			w += ".\n"
		}
		ps.words = append(ps.words, w)
	}
	return ps.prefix + strings.Join(ps.words[:k], " ")
}

// measure counts s's tokens, counting the request.
func (ps *promptSearch) measure(s string) (int, error) {
	ps.b.Requests++
	return ps.tok.CountTokens(ps.ctx, s)
}

// count counts the tokens of the prefix and k filler words.
func (ps *promptSearch) count(k int) (int, error) { return ps.measure(ps.text(k)) }

// calibrate measures the prefix alone (base) and the tokens per filler
// word (ratio) over a probe of up to 512 words.
func (ps *promptSearch) calibrate(tolerance int) (base int, ratio float64, err error) {
	base, err = ps.count(0)
	if err != nil {
		return 0, 0, fmt.Errorf("measure prompt: %w", err)
	}
	if base > ps.target-tolerance {
		return 0, 0, fmt.Errorf("measure prompt: the prefix alone is %d tokens, over the target %d", base, ps.target)
	}
	probe := min(512, ps.target)
	n, err := ps.count(probe)
	if err != nil {
		return 0, 0, fmt.Errorf("measure prompt: %w", err)
	}
	ratio = float64(n-base) / float64(probe) // tokens per word
	if ratio <= 0 {
		return 0, 0, fmt.Errorf("measure prompt: the tokenizer counts no tokens for %d words", probe)
	}
	ps.underN = base
	return base, ratio, nil
}

// wordSearch steps the number of filler words toward the target (at
// most 16 measurements) until exact or under it by less than two words.
func (ps *promptSearch) wordSearch(base int, ratio float64) error {
	k := int(math.Round(float64(ps.target-base) / ratio))
	for range 16 {
		k = max(k, 0)
		n, err := ps.count(k)
		if err != nil {
			return fmt.Errorf("measure prompt: %w", err)
		}
		d := ps.target - n
		if abs(d) < abs(ps.bestD) {
			ps.bestText, ps.bestD = ps.text(k), d
		}
		if d > 0 && k >= ps.underK {
			ps.underK, ps.underN = k, n
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
	return nil
}

// pad is the exact search: it pads the longest filler under the target
// unit by unit, each kind of unit in turn, until a prompt is exact.
func (ps *promptSearch) pad() error {
	for _, unit := range padUnits {
		if ps.bestD == 0 {
			break
		}
		for m := 1; m <= min(4*(ps.target-ps.underN)+4, 64); m++ {
			s := ps.text(ps.underK) + strings.Repeat(unit, m)
			n, err := ps.measure(s)
			if err != nil {
				return fmt.Errorf("measure prompt: %w", err)
			}
			if d := ps.target - n; abs(d) < abs(ps.bestD) {
				ps.bestText, ps.bestD = s, d
			}
			if n >= ps.target {
				break
			}
		}
	}
	return nil
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
