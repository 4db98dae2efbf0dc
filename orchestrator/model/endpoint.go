package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"

	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/evalctl/evalctl"
)

// get fetches a small document with the identity timeout.
func (c *Client) get(ctx context.Context, url string) ([]byte, error) {
	return c.small(ctx, http.MethodGet, url, nil)
}

func (c *Client) small(parent context.Context, method, url string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeoutCause(parent, c.info, errRequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	var dl delivery
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, dl.trace()), method, url, rd)
	if err != nil {
		return nil, &Error{Kind: KindRequest, Message: "build request", Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if parent.Err() == nil && dl.undelivered(err) {
			return nil, fmt.Errorf("%s %s: %w", method, url, &Error{Kind: KindConnection, Message: "the request did not reach the server", Err: err})
		}
		return nil, fmt.Errorf("%s %s: %w", method, url, transportError(parent, ctx, err, nil))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, transportError(parent, ctx, err, nil))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %w", method, url, statusError(resp.StatusCode, resp.Header, data))
	}
	return data, nil
}

func (c *Client) getMap(ctx context.Context, url string) (map[string]any, error) {
	data, err := c.get(ctx, url)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, &Error{Kind: KindBadResponse, Message: "not a JSON object", Err: err})
	}
	return m, nil
}

// Props returns llama-server's /props document as it came (raw), for the
// attempt's record of what served it.
func (c *Client) Props(ctx context.Context) (map[string]any, error) {
	return c.getMap(ctx, c.root+"/props")
}

// Models returns the /v1/models document as it came.
func (c *Client) Models(ctx context.Context) (map[string]any, error) {
	return c.getMap(ctx, c.api+"/models")
}

// Health returns nil when /health answers 200, a KindLoading *Error while
// llama-server loads its model, and another error when it cannot be reached.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.get(ctx, c.root+"/health")
	return err
}

// Tokenize returns the token ids llama-server's /tokenize gives for content
// (without special tokens added), so a screen can build prompts of an exact
// token length.
func (c *Client) Tokenize(ctx context.Context, content string) ([]int64, error) {
	body, _ := json.Marshal(map[string]any{"content": content, "add_special": false})
	data, err := c.small(ctx, http.MethodPost, c.root+"/tokenize", body)
	if err != nil {
		return nil, err
	}
	return ParseTokenize(data)
}

// ParseTokenize decodes a /tokenize body: ids as numbers, or objects with
// "id" and "piece" when with_pieces was asked.
func ParseTokenize(data []byte) ([]int64, error) {
	var w struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, &Error{Kind: KindBadResponse, Message: "tokenize body is not JSON", Err: err}
	}
	ids := make([]int64, 0, len(w.Tokens))
	for _, t := range w.Tokens {
		var id int64
		if err := json.Unmarshal(t, &id); err != nil {
			var obj struct {
				ID *int64 `json:"id"`
			}
			if err := json.Unmarshal(t, &obj); err != nil || obj.ID == nil {
				return nil, &Error{Kind: KindBadResponse, Message: "tokenize: token is neither an id nor {id, piece}: " + string(t)}
			}
			id = *obj.ID
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Metrics returns llama-server's /metrics as name -> value (the llamacpp:
// counters and gauges; one sample per name, as llama-server exports them).
func (c *Client) Metrics(ctx context.Context) (map[string]float64, error) {
	data, err := c.get(ctx, c.root+"/metrics")
	if err != nil {
		return nil, err
	}
	return ParseMetrics(bytes.NewReader(data))
}

// ParseMetrics decodes Prometheus text exposition into name -> value. A
// family with several samples keeps the sum (llama-server has none).
func ParseMetrics(r io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	out := make(map[string]float64, len(fams))
	for name, f := range fams {
		var sum float64
		for _, m := range f.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetUntyped() != nil:
				sum += m.GetUntyped().GetValue()
			}
		}
		out[name] = sum
	}
	return out, nil
}

// Endpoint records what the endpoint says about itself for an attempt:
// /props (llama-server only; nil elsewhere) and /v1/models raw, plus the
// build, model path and context size read from /props (nil when unknown).
// Only a failing /v1/models is an error: /props is optional.
func (c *Client) Endpoint(ctx context.Context, modelName string) (*evalctl.EndpointInfo, error) {
	info := &evalctl.EndpointInfo{BaseURL: c.root, Model: modelName}
	models, err := c.Models(ctx)
	if err != nil {
		return nil, fmt.Errorf("endpoint identity: %w", err)
	}
	info.Models = models
	if props, err := c.Props(ctx); err == nil {
		info.SetProps(props)
	}
	return info, nil
}
