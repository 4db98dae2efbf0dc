package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Counters are the server's cumulative generation counters as one /metrics
// read gave them. A counter the server does not export is nil. Read
// before and after an attempt, their difference is what the server itself
// generated meanwhile, failed and retried responses included.
type Counters struct {
	// Start and End bracket the read: the counters hold at some instant
	// between them.
	Start, End       time.Time
	GeneratedTokens  *float64
	GeneratedSeconds *float64
	PromptTokens     *float64
	PromptSeconds    *float64
	// Steps are the printed precision of each figure: the value of one
	// unit in its last printed digit (see Step); 0 when unknown.
	GeneratedTokensStep, GeneratedSecondsStep, PromptTokensStep, PromptSecondsStep float64
}

// Step is the precision a counter's printed text carries: one unit of
// its last significant digit, counting at least six significant digits
// (llama-server prints its counters as C++ streams do, with six:
// "1.03364e+06" is 1033640 give or take 5, a step of 10, see
// orchestrator/model/testdata/llama-server/README.md, "Counters past a
// million"). A printer that gives more digits gets the finer step.
func Step(text string) float64 {
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	mant := strings.TrimLeft(text, "+-")
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	digits := strings.TrimLeft(strings.ReplaceAll(mant, ".", ""), "0")
	sig := max(len(digits), 6)
	return math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-float64(sig)+1)
}

// samples maps each sample line's metric name to its value's text.
func samples(data []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && !strings.HasPrefix(f[0], "#") {
			out[baseName(f[0])] = f[1]
		}
	}
	return out
}

// setSteps fills in the figures' printed precision from the raw body.
func (out *Counters) setSteps(data []byte) {
	text := samples(data)
	step := func(key string) float64 {
		for _, n := range counterNames[key] {
			if t, ok := text[n]; ok {
				return Step(t)
			}
		}
		return 0
	}
	out.GeneratedTokensStep, out.GeneratedSecondsStep = step("generated_tokens"), step("generated_seconds")
	out.PromptTokensStep, out.PromptSecondsStep = step("prompt_tokens"), step("prompt_seconds")
}

// counterNames are the names each counter has had across llama-server
// builds, after the namespace ("llamacpp:", "llamacpp_") is taken off. The
// per-scrape rate gauges (predicted_tokens_seconds, prompt_tokens_seconds)
// are deliberately absent: they are reset by every read.
var counterNames = map[string][]string{
	"generated_tokens":  {"tokens_predicted_total", "n_tokens_predicted_total", "predicted_tokens_total", "tokens_predicted"},
	"generated_seconds": {"tokens_predicted_seconds_total", "predicted_seconds_total", "tokens_predicted_seconds"},
	"prompt_tokens":     {"prompt_tokens_total", "n_prompt_tokens_processed_total", "prompt_tokens_processed_total"},
	"prompt_seconds":    {"prompt_seconds_total", "prompt_tokens_seconds_total"},
}

// baseName strips a metric name's namespace: "llamacpp:tokens_predicted_total"
// and "llamacpp_tokens_predicted_total" both become "tokens_predicted_total".
func baseName(name string) string {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return strings.TrimPrefix(name, "llamacpp_")
}

// CountersFrom picks the generation counters out of a parsed /metrics.
func CountersFrom(m map[string]float64) Counters {
	byBase := make(map[string]float64, len(m))
	for name, v := range m {
		byBase[baseName(name)] = v
	}
	pick := func(key string) *float64 {
		for _, n := range counterNames[key] {
			if v, ok := byBase[n]; ok {
				return &v
			}
		}
		return nil
	}
	return Counters{
		GeneratedTokens: pick("generated_tokens"), GeneratedSeconds: pick("generated_seconds"),
		PromptTokens: pick("prompt_tokens"), PromptSeconds: pick("prompt_seconds"),
	}
}

// Counters reads /metrics once (bounded by the identity timeout). An
// endpoint without /metrics (llama-server without --metrics, vLLM without
// its exporter, a hosted API) gives an error: the caller records null.
func (c *Client) Counters(ctx context.Context) (*Counters, error) {
	start := time.Now()
	data, err := c.get(ctx, c.root+"/metrics")
	if err != nil {
		return nil, err
	}
	m, err := ParseMetrics(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("GET %s/metrics: %w", c.root, err)
	}
	out := CountersFrom(m)
	out.setSteps(data)
	out.Start, out.End = start, time.Now()
	if out.GeneratedTokens == nil {
		return nil, fmt.Errorf("GET %s/metrics: no generated-token counter (looked for %s)", c.root, strings.Join(counterNames["generated_tokens"], ", "))
	}
	return &out, nil
}

// Busy returns how many requests the server is processing: the slots
// with is_processing in /slots (as in
// orchestrator/model/testdata/llama-server/responses/slots_after.json), or, on a server
// without /slots (llama-server without --slots), the requests_processing
// gauge of /metrics. Neither: an error, whether it is settled is unknown.
func (c *Client) Busy(ctx context.Context) (int, error) {
	n, err := c.slotsBusy(ctx)
	if err == nil || ctx.Err() != nil {
		return n, err
	}
	m, merr := c.Metrics(ctx)
	if merr != nil {
		return 0, err
	}
	for name, v := range m {
		if baseName(name) == "requests_processing" {
			return int(v), nil
		}
	}
	return 0, err
}

// slotsBusy reads /slots once (bounded by the identity timeout).
func (c *Client) slotsBusy(ctx context.Context) (int, error) {
	data, err := c.get(ctx, c.root+"/slots")
	if err != nil {
		return 0, err
	}
	var slots []struct {
		IsProcessing *bool `json:"is_processing"`
	}
	if err := json.Unmarshal(data, &slots); err != nil {
		return 0, fmt.Errorf("GET %s/slots: %w", c.root, err)
	}
	busy := 0
	for i, s := range slots {
		if s.IsProcessing == nil {
			return 0, fmt.Errorf("GET %s/slots: slot %d has no is_processing", c.root, i)
		}
		if *s.IsProcessing {
			busy++
		}
	}
	return busy, nil
}
