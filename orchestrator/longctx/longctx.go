// Package longctx decides how a case's corpus (the files its prompt must
// draw on) reaches the model: the whole corpus, the corpus cropped to a
// token budget, or the passages most relevant to the task, ranked with
// Okapi BM25 (bleve's BM25 scoring model) and taken up to a token budget.
// Tokens are counted by the endpoint's own tokenizer (llama-server's
// /tokenize), never estimated.
package longctx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"

	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/evalctl/evalctl"
)

// Strategies.
const (
	Full      = evalctl.ContextFull
	Cropped   = evalctl.ContextCropped
	Retrieved = evalctl.ContextRetrieved
)

// Strategy is an arm's choice of how the corpus reaches the model (a
// record of the plan, in the root package).
type Strategy = evalctl.ContextStrategy

// Tokenizer counts tokens as the endpoint does.
type Tokenizer interface {
	CountTokens(ctx context.Context, text string) (int, error)
}

// Endpoint counts tokens with a client of the endpoint's /tokenize
// (*model.Client is one).
type Endpoint struct {
	Client interface {
		Tokenize(ctx context.Context, content string) ([]int64, error)
	}
}

// CountTokens is the number of tokens the endpoint makes of text.
func (e Endpoint) CountTokens(ctx context.Context, text string) (int, error) {
	ids, err := e.Client.Tokenize(ctx, text)
	return len(ids), err
}

// Document is one file of a corpus.
type Document struct {
	Path string
	Text string
}

// LoadCorpus reads every regular file under dir, in path order.
func LoadCorpus(dir string) ([]Document, error) {
	var docs []Document
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		docs = append(docs, Document{Path: filepath.ToSlash(rel), Text: string(data)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("corpus %s holds no file", dir)
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].Path < docs[j].Path })
	return docs, nil
}

// Result is what a strategy produced: the text to put into the prompt and
// its size as the endpoint counts it.
type Result struct {
	Strategy string `json:"strategy"`
	Budget   int    `json:"budget_tokens,omitempty"`
	Text     string `json:"-"`
	// InputTokens is the endpoint's count of Text.
	InputTokens int `json:"input_tokens"`
	// CorpusTokens is the endpoint's count of the whole corpus text.
	CorpusTokens int `json:"corpus_tokens"`
	// Passages is how many passages retrieval chose (of PassagesTotal).
	Passages      int `json:"passages,omitempty"`
	PassagesTotal int `json:"passages_total,omitempty"`
}

// render is the corpus as the model sees it: each file under a header.
func render(docs []Document) string {
	var b strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&b, "=== file: %s ===\n%s", d.Path, d.Text)
		if !strings.HasSuffix(d.Text, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Apply runs the strategy over the corpus for the task described by query.
func Apply(ctx context.Context, s Strategy, docs []Document, query string, tok Tokenizer) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	full := render(docs)
	n, err := tok.CountTokens(ctx, full)
	if err != nil {
		return nil, fmt.Errorf("count corpus tokens: %w", err)
	}
	res := &Result{Strategy: s.Name, Budget: s.Tokens, CorpusTokens: n}
	switch s.Name {
	case Full:
		res.Text, res.InputTokens = full, n
		return res, nil
	case Cropped:
		if n <= s.Tokens {
			res.Text, res.InputTokens = full, n
			return res, nil
		}
		res.Text, res.InputTokens, err = crop(ctx, full, s.Tokens, tok)
		return res, err
	default:
		return retrieve(ctx, res, docs, query, s.Tokens, tok)
	}
}

// crop is the longest prefix of text, cut at a word boundary, whose count
// is within budget: a binary search over word boundaries.
func crop(ctx context.Context, text string, budget int, tok Tokenizer) (string, int, error) {
	cuts := []int{0}
	for i := 1; i < len(text); i++ {
		if (text[i] == ' ' || text[i] == '\n') && text[i-1] != ' ' && text[i-1] != '\n' {
			cuts = append(cuts, i)
		}
	}
	lo, hi := 0, len(cuts)-1 // cuts[lo] fits (the empty prefix does)
	best := 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		n, err := tok.CountTokens(ctx, text[:cuts[mid]])
		if err != nil {
			return "", 0, err
		}
		if n <= budget {
			lo, best = mid, n
		} else {
			hi = mid - 1
		}
	}
	return text[:cuts[lo]], best, nil
}

// maxMisses is how many passages in a row may not fit before retrieval
// stops trying less relevant ones.
const maxMisses = 8

// passage is a piece of one corpus file.
type passage struct {
	doc, seq int
	text     string
}

// passageWords is the size passages are cut to (at paragraph breaks, else
// at this many words).
const passageWords = 120

func split(docs []Document) []passage {
	var out []passage
	for di, d := range docs {
		seq := 0
		for _, para := range strings.Split(d.Text, "\n\n") {
			words := strings.Fields(para)
			for len(words) > 0 {
				n := min(len(words), passageWords)
				if strings.TrimSpace(para) != "" {
					out = append(out, passage{doc: di, seq: seq, text: strings.Join(words[:n], " ")})
					seq++
				}
				words = words[n:]
			}
		}
	}
	return out
}

// Rank orders the corpus's passages by BM25 relevance to query (ties and
// passages that match no term in corpus order). It is the retrieval step
// alone, without token counting.
func Rank(docs []Document, query string) ([]int, []string, error) {
	ps := split(docs)
	// One analysed text field, nothing stored: the index only ranks.
	field := mapping.NewTextFieldMapping()
	field.Store, field.IncludeTermVectors, field.IncludeInAll, field.DocValues = false, false, false, false
	doc := mapping.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("text", field)
	im := mapping.NewIndexMapping()
	im.DefaultMapping = doc
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	im.ScoringModel = index.BM25Scoring
	idx, err := bleve.NewMemOnly(im)
	if err != nil {
		return nil, nil, fmt.Errorf("retrieval index: %w", err)
	}
	defer idx.Close()
	b := idx.NewBatch()
	for i, p := range ps {
		if err := b.Index(strconv.Itoa(i), map[string]any{"text": p.text}); err != nil {
			return nil, nil, err
		}
	}
	if err := idx.Batch(b); err != nil {
		return nil, nil, fmt.Errorf("retrieval index: %w", err)
	}
	q := bleve.NewMatchQuery(query)
	q.SetField("text")
	req := bleve.NewSearchRequestOptions(q, len(ps), 0, false)
	req.SortBy([]string{"-_score", "_id"})
	hits, err := idx.Search(req)
	if err != nil {
		return nil, nil, fmt.Errorf("retrieval search: %w", err)
	}
	order := make([]int, 0, len(ps))
	seen := make([]bool, len(ps))
	for _, h := range hits.Hits {
		i, _ := strconv.Atoi(h.ID)
		order = append(order, i)
		seen[i] = true
	}
	for i := range ps {
		if !seen[i] {
			order = append(order, i)
		}
	}
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.text
	}
	return order, texts, nil
}

// retrieve takes passages in BM25 order while the rendered selection stays
// within budget, and renders them in corpus order under their files.
func retrieve(ctx context.Context, res *Result, docs []Document, query string, budget int, tok Tokenizer) (*Result, error) {
	order, _, err := Rank(docs, query)
	if err != nil {
		return nil, err
	}
	ps := split(docs)
	res.PassagesTotal = len(ps)
	chosen := map[int]bool{}
	text, used := "", 0
	misses := 0
	for _, i := range order {
		chosen[i] = true
		cand := renderPassages(docs, ps, chosen)
		n, err := tok.CountTokens(ctx, cand)
		if err != nil {
			return nil, err
		}
		if n > budget {
			// The budget is nearly spent: after a run of passages that
			// do not fit, the rest (less relevant) are not tried.
			delete(chosen, i)
			if misses++; misses == maxMisses {
				break
			}
			continue
		}
		misses = 0
		text, used = cand, n
	}
	res.Text, res.InputTokens, res.Passages = text, used, len(chosen)
	return res, nil
}

func renderPassages(docs []Document, ps []passage, chosen map[int]bool) string {
	var b strings.Builder
	last := -1
	for i, p := range ps {
		if !chosen[i] {
			continue
		}
		if p.doc != last {
			fmt.Fprintf(&b, "=== file: %s (retrieved passages) ===\n", docs[p.doc].Path)
			last = p.doc
		}
		b.WriteString(p.text)
		b.WriteString("\n\n")
	}
	return b.String()
}
