package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/agent"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/results/runstore"
)

// ErrPreflight is wrapped by every preflight failure: an endpoint that is
// down, serves another model, or refuses the arm's request. Nothing was
// registered.
var ErrPreflight = errors.New("preflight failed")

// PreflightError says what failed for which arm and URL.
type PreflightError struct {
	Arm, URL string
	// What failed, in words.
	What string
	Err  error
}

func (e *PreflightError) Error() string {
	msg := fmt.Sprintf("preflight: arm %s, endpoint %s: %s", e.Arm, e.URL, e.What)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *PreflightError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrPreflight}
	}
	return []error{ErrPreflight, e.Err}
}

// preflightTimeout bounds the whole check of one arm: the identity calls
// and a one-token chat request.
const preflightTimeout = 60 * time.Second

// Preflight checks every arm that names an endpoint before anything is
// registered: the endpoint answers (/v1/models, /props), the arm's model
// name is one it serves (llama-server ignores the request's model and
// answers with whatever it loaded, so only /v1/models can tell), and a
// one-token chat request with the arm's tools and sampling is accepted.
// Arms with a server profile are checked by the runner once their server is
// healthy. It returns what each endpoint said, in plan order, or the first
// failure as a *PreflightError.
func Preflight(ctx context.Context, plan *Plan, progress io.Writer) ([]runstore.EndpointCheck, error) {
	if progress == nil {
		progress = io.Discard
	}
	var out []runstore.EndpointCheck
	for i := range plan.Arms {
		arm := &plan.Arms[i]
		if arm.Profile != "" {
			continue
		}
		var first map[string]string
		for k, rep := range arm.Replicas() {
			start := time.Now()
			info, err := CheckEndpoint(ctx, arm, rep.BaseURL)
			if err != nil {
				return nil, err
			}
			secs := time.Since(start).Seconds()
			out = append(out, runstore.EndpointCheck{Arm: arm.Name, BaseURL: rep.BaseURL, Device: rep.Device, Info: info, Seconds: secs})
			build := "unknown build"
			if info.BuildInfo != nil {
				build = "build " + *info.BuildInfo
			}
			fmt.Fprintf(progress, "preflight: arm %s: %s serves %s (%s), accepted a one-token request with the arm's tools (%.2f s)\n",
				arm.Name, rep.BaseURL, arm.Endpoint.Model, build, secs)
			// A pool's replicas must be the same server: otherwise a
			// machine's difference passes for the arm's.
			fields := replicaFields(info)
			if k == 0 {
				first = fields
			} else if d := replicaDifference(first, fields); d != "" {
				return nil, &PreflightError{Arm: arm.Name, URL: rep.BaseURL, What: fmt.Sprintf("replica %d differs from replica 0 (%s) in what changes behaviour: %s; a pool's replicas must run the same build, model, weights and settings", k, arm.Replicas()[0].BaseURL, d)}
			}
		}
	}
	return out, nil
}

// CheckEndpoint runs the preflight of one arm against baseURL (the arm's
// endpoint, or the server its profile started) and returns what the
// endpoint said about itself.
func CheckEndpoint(ctx context.Context, arm *Arm, baseURL string) (*evalctl.EndpointInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	fail := func(what string, err error) error {
		return &PreflightError{Arm: arm.Name, URL: baseURL, What: what, Err: err}
	}
	client := model.New(model.Config{BaseURL: baseURL, APIKey: apiKey(arm)})
	info, err := client.Endpoint(ctx, arm.Endpoint.Model)
	if err != nil {
		return nil, fail("unreachable (is the server running at this address?)", err)
	}
	served := ServedModels(info.Models)
	if !contains(served, arm.Endpoint.Model) {
		return nil, fail(fmt.Sprintf("the arm asks for model %q, the endpoint serves %s; llama-server answers any model name with the model it loaded, so name the arm's model as served (or start llama-server with --alias %s)",
			arm.Endpoint.Model, quoteList(served), arm.Endpoint.Model), nil)
	}
	params := armParams(arm, 0)
	params.MaxTokens = 1
	var cmdTimeout time.Duration
	if b := arm.Budgets.CommandTimeoutSeconds; b != nil {
		cmdTimeout = seconds(*b)
	}
	stream := streams(arm)
	_, err = client.Chat(ctx, model.Request{
		Model:    arm.Endpoint.Model,
		Messages: []model.Message{{Role: "user", Content: "Reply with OK."}},
		Tools:    agent.Tools(cmdTimeout), ToolChoice: "auto", Params: params, Stream: stream,
	})
	if err != nil {
		return nil, fail("refused a one-token chat request with the arm's tools and sampling", err)
	}
	return info, nil
}

// ServedModels lists the model names a /v1/models document offers: every
// entry's id and aliases, sorted, without repeats.
func ServedModels(doc map[string]any) []string {
	seen := map[string]bool{}
	data, _ := doc["data"].([]any)
	for _, d := range data {
		m, _ := d.(map[string]any)
		if id, ok := m["id"].(string); ok && id != "" {
			seen[id] = true
		}
		aliases, _ := m["aliases"].([]any)
		for _, a := range aliases {
			if s, ok := a.(string); ok && s != "" {
				seen[s] = true
			}
		}
	}
	// llama-server also lists its model Ollama-style under "models".
	models, _ := doc["models"].([]any)
	for _, d := range models {
		m, _ := d.(map[string]any)
		for _, k := range []string{"name", "model"} {
			if s, ok := m[k].(string); ok && s != "" {
				seen[s] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	if len(list) == 0 {
		return "no model at all"
	}
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
