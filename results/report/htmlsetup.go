package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/runstore"
)

// Setup is what the HTML report shows beside the figures that is not in
// the report JSON: each arm's registered settings and the identity of the
// server it ran against. It describes, it is never pooled.
type Setup struct {
	Arms []ArmSetup
	// CellLink, when set, is where a grid cell's attempts are listed (the
	// viewer); the cells of a report opened from a file link nowhere.
	CellLink func(caseName, arm string) string
}

// ArmSetup is one arm of one run.
type ArmSetup struct {
	Run, Arm string
	// Settings are "field value" pairs of the registered arm, in a fixed
	// order (model, max_tokens, sampling, reasoning, budgets, profile, extra).
	Settings []string
	// Server is what the server said of itself (build, model path,
	// context) or the profile evalctl started it from; "" when no attempt
	// recorded it.
	Server string
}

// LoadSetup reads the arms of each run's plan.json and, per arm, the
// server identity its first attempt with one recorded.
func LoadSetup(dirs []string) (*Setup, error) {
	s := &Setup{}
	for _, dir := range dirs {
		st, err := runstore.Open(dir)
		if err != nil {
			return nil, err
		}
		run, err := st.ReadRun()
		if err != nil {
			return nil, err
		}
		var plan evalctl.Plan
		if err := runstore.ReadJSON(st.Path(runstore.PlanFile), &plan); err != nil {
			return nil, err
		}
		index := map[string]int{}
		first := len(s.Arms)
		for i := range plan.Arms {
			a := &plan.Arms[i]
			index[a.Name] = len(s.Arms)
			s.Arms = append(s.Arms, ArmSetup{Run: run.ID, Arm: a.Name, Settings: settings(a)})
		}
		missing := len(s.Arms) - first
		entries, _ := os.ReadDir(st.Path(runstore.AttemptsDir))
		for _, e := range entries {
			if missing == 0 {
				break
			}
			var a evalctl.Attempt
			if runstore.ReadJSON(filepath.Join(st.AttemptDir(e.Name()), runstore.AttemptFile), &a) != nil || a.Endpoint == nil {
				continue
			}
			i, ok := index[a.Arm]
			if !ok || s.Arms[i].Server != "" {
				continue
			}
			var parts []string
			if ep := a.Endpoint; ep.BuildInfo != nil {
				parts = append(parts, "build "+*ep.BuildInfo)
			}
			if ep := a.Endpoint; ep.ModelPath != nil {
				parts = append(parts, "model "+*ep.ModelPath)
			}
			if ep := a.Endpoint; ep.ContextSize != nil {
				parts = append(parts, fmt.Sprintf("context %d", *ep.ContextSize))
			}
			if a.Server != "" {
				parts = append(parts, "started by evalctl: "+a.Server)
			}
			if len(parts) == 0 {
				parts = append(parts, "the server did not say (no /props)")
			}
			s.Arms[i].Server = strings.Join(parts, ", ")
			missing--
		}
	}
	return s, nil
}

// setting is one field of a group of settings, as plan.json names it;
// an unset field (left out of plan.json) is not shown.
type setting struct {
	name  string
	value any
	set   bool
}

// opt is the setting of an optional field: unset when p is nil.
func opt[T any](name string, p *T) setting {
	if p == nil {
		return setting{name: name}
	}
	return setting{name, *p, true}
}

// settings flattens an arm's registered settings into "field: value"
// lines, a group's set fields as "field value" pairs in name order.
func settings(a *evalctl.Arm) []string {
	var out []string
	one := func(k string, v any) {
		b, _ := json.Marshal(v)
		out = append(out, k+": "+string(b))
	}
	group := func(k string, fields ...setting) {
		var parts []string
		for _, f := range fields {
			if f.set {
				b, _ := json.Marshal(f.value)
				parts = append(parts, f.name+" "+string(b))
			}
		}
		if len(parts) > 0 {
			out = append(out, k+": "+strings.Join(parts, ", "))
		}
	}
	one("model", a.Endpoint.Model)
	one("max_tokens", a.MaxTokens)
	sm := a.Sampling
	group("sampling", opt("min_p", sm.MinP), opt("repeat_penalty", sm.RepeatPenalty),
		opt("temperature", sm.Temperature), opt("top_k", sm.TopK), opt("top_p", sm.TopP))
	group("reasoning", setting{"effort", a.Reasoning.Effort, a.Reasoning.Effort != ""}, opt("thinking", a.Reasoning.Thinking))
	// Budgets are recorded even when null, and shown so.
	b := a.Budgets
	group("budgets", setting{"command_timeout_seconds", b.CommandTimeoutSeconds, true}, setting{"generated_tokens", b.GeneratedTokens, true},
		setting{"tool_calls", b.ToolCalls, true}, setting{"wall_seconds", b.WallSeconds, true})
	if a.Stream != nil {
		one("stream", *a.Stream)
	}
	if a.Profile != "" {
		one("profile", a.Profile)
	}
	var extra []setting
	for _, k := range slices.Sorted(maps.Keys(a.Extra)) {
		if k != "api_key_env" {
			extra = append(extra, setting{k, a.Extra[k], true})
		}
	}
	group("extra", extra...)
	return out
}

// reportTitle names the report after its runs' plans.
func reportTitle(r *Report) string {
	var names []string
	seen := map[string]bool{}
	for _, ri := range r.Runs {
		if ri.Name != "" && !seen[ri.Name] {
			seen[ri.Name] = true
			names = append(names, ri.Name)
		}
	}
	if len(names) == 0 {
		return "evalctl report"
	}
	return "evalctl report: " + strings.Join(names, ", ")
}

// setupHTML is the arm settings table, or nothing without a setup.
func setupHTML(s *Setup) string {
	if s == nil || len(s.Arms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2>Arms: settings and server</h2><div class="scroll"><table id="arm-setup"><thead><tr><th>arm</th><th>settings</th><th>server</th></tr></thead><tbody>`)
	for _, a := range s.Arms {
		server := a.Server
		if server == "" {
			server = "unknown (no attempt recorded it)"
		}
		fmt.Fprintf(&b, `<tr data-arm="%s"><td>%s</td><td style="text-align:left;white-space:normal">%s</td><td style="text-align:left;white-space:normal">%s</td></tr>`,
			esc(a.Arm), esc(a.Arm), esc(strings.Join(a.Settings, "; ")), esc(server))
	}
	b.WriteString(`</tbody></table></div>`)
	return b.String()
}
