package longctx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/scripted"
)

var facts = []string{
	"The settlement code ZQX-417 rounds half away from zero to four places.",
	"Invoices in currency KRW carry no minor unit: ZQX-417 amounts are whole numbers.",
	"A reversal posting under ZQX-417 must name the original journal line.",
}

// scriptedTokenizer is the scripted model server's /tokenize, the stand-in
// for llama-server's, through the model client.
func scriptedTokenizer(t *testing.T) Tokenizer {
	t.Helper()
	srv, err := scripted.New(scripted.Config{CtxSize: 262144})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return Endpoint{Client: model.New(model.Config{BaseURL: srv.URL() + "/v1", Retry: model.RetryPolicy{MaxRetries: 3, Initial: time.Millisecond, Max: 2 * time.Millisecond}})}
}

// TestStrategiesGiveThreeSizes: full, cropped and retrieved give three
// different input sizes as the endpoint's tokenizer counts them, each
// within its budget; retrieval finds the passages the task needs, which the
// crop (the corpus's first part) does not hold.
func TestStrategiesGiveThreeSizes(t *testing.T) {
	tok := scriptedTokenizer(t)
	docs := GenerateCorpus(1, 30000, 6, facts)
	ctx := context.Background()
	query := "Implement the ZQX-417 settlement rounding, minor units and reversal posting rules."
	res := map[string]*Result{}
	for _, s := range []Strategy{{Name: Full}, {Name: Cropped, Tokens: 6000}, {Name: Retrieved, Tokens: 2000}} {
		r, err := Apply(ctx, s, docs, query, tok)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := tok.CountTokens(ctx, r.Text)
		if n != r.InputTokens {
			t.Errorf("%s: recorded %d input tokens, the endpoint counts %d", s.Name, r.InputTokens, n)
		}
		if s.Tokens > 0 && (r.InputTokens > s.Tokens || r.InputTokens < s.Tokens*9/10) {
			t.Errorf("%s: %d tokens for a budget of %d", s.Name, r.InputTokens, s.Tokens)
		}
		res[s.Name] = r
	}
	f, c, r := res[Full], res[Cropped], res[Retrieved]
	if !(f.InputTokens > c.InputTokens && c.InputTokens > r.InputTokens) || f.InputTokens != f.CorpusTokens {
		t.Fatalf("input tokens full %d, cropped %d, retrieved %d: want three sizes in that order", f.InputTokens, c.InputTokens, r.InputTokens)
	}
	for _, fact := range facts {
		if !strings.Contains(r.Text, strings.TrimSuffix(fact, ".")) {
			t.Errorf("retrieved text lacks %q", fact)
		}
		if strings.Contains(c.Text, fact) {
			t.Errorf("the crop holds %q: the test corpus puts facts past the crop", fact)
		}
	}
	if r.Passages == 0 || r.Passages >= r.PassagesTotal {
		t.Errorf("retrieved %d of %d passages", r.Passages, r.PassagesTotal)
	}
	t.Logf("full %d, cropped %d, retrieved %d tokens (%d of %d passages)", f.InputTokens, c.InputTokens, r.InputTokens, r.Passages, r.PassagesTotal)
}

func TestStrategyValidate(t *testing.T) {
	for _, s := range []Strategy{{Name: "half"}, {Name: Cropped}, {Name: Retrieved, Tokens: -1}, {Name: Full, Tokens: 5}} {
		if s.Validate() == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

// wordCounter counts words: a tokenizer stand-in for the benchmark, which
// times retrieval itself (the endpoint's counting is the server's time).
type wordCounter struct{}

func (wordCounter) CountTokens(_ context.Context, s string) (int, error) {
	return len(strings.Fields(s)), nil
}

// BenchmarkRank180K ranks the passages of a corpus of about 180K tokens
// (126,000 words; the scripted tokenizer counts about 1.43 tokens a word)
// for a task with BM25: chunking, indexing and the search.
func BenchmarkRank180K(b *testing.B) {
	docs := GenerateCorpus(1, 126000, 12, facts)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order, _, err := Rank(docs, "Implement the ZQX-417 settlement rounding, minor units and reversal posting rules.")
		if err != nil || len(order) == 0 {
			b.Fatal(err)
		}
	}
}

// TestTariffCorpus: the development suite's long-context case. Its corpus
// is what its committed script writes; through the scripted tokenizer the
// three strategies give three input sizes; retrieval for the case's task
// finds every tariff code's rule, while the crop to the handbook's start
// holds none (so the case cannot be solved from a crop).
func TestTariffCorpus(t *testing.T) {
	caseDir := filepath.Join("..", "..", "cases", "tariff")
	if py, err := exec.LookPath("python3"); err == nil {
		if out, err := exec.Command(py, filepath.Join(caseDir, "gen_corpus.py"), "--check").CombinedOutput(); err != nil {
			t.Fatalf("the committed corpus is not what gen_corpus.py writes: %v: %s", err, out)
		}
	}
	docs, err := LoadCorpus(filepath.Join(caseDir, "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := os.ReadFile(filepath.Join(caseDir, "prompts", "phase-1.md"))
	if err != nil {
		t.Fatal(err)
	}
	tok := scriptedTokenizer(t)
	ctx := context.Background()
	codes := []string{"HX-101", "HX-205", "KV-310", "KV-344", "QM-402", "QM-477", "TR-588", "TR-613"}
	sizes := map[string]int{}
	for _, s := range []Strategy{{Name: Full}, {Name: Cropped, Tokens: 4000}, {Name: Retrieved, Tokens: 2500}} {
		r, err := Apply(ctx, s, docs, string(prompt), tok)
		if err != nil {
			t.Fatal(err)
		}
		sizes[s.Name] = r.InputTokens
		for _, c := range codes {
			has := strings.Contains(r.Text, "Tariff "+c+".")
			if s.Name != Cropped && !has {
				t.Errorf("%s: the text lacks the rule of %s", s.Name, c)
			}
			if s.Name == Cropped && has {
				t.Errorf("the crop holds the rule of %s", c)
			}
		}
	}
	if !(sizes[Full] > sizes[Cropped] && sizes[Cropped] > sizes[Retrieved]) {
		t.Errorf("input tokens %v: want three sizes, full > cropped > retrieved", sizes)
	}
	t.Logf("tariff corpus: %v tokens", sizes)
}
