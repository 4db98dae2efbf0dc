package screen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/runstore"
)

// Layout of a capacity probe's run directory:
//
//	RUNDIR/capacity.json          CapacityPlan as registered
//	RUNDIR/results/CTX.json       CapacityResult per context size
//	RUNDIR/sizes/CTX/TRY/         server.log, identity.json, telemetry.jsonl, telemetry.json
const (
	CapacityFile = "capacity.json"
	ResultsDir   = "results"
	SizesDir     = "sizes"
)

// Capacity result states.
const (
	CapacityComplete    = "complete"
	CapacityStartFailed = "startup_failed"
	CapacityShortFailed = "short_generation_failed"
	CapacityLongFailed  = "long_input_failed"
	capacityDefaultFill = 0.9
	capacityShortPrompt = 256
	capacityShortOutput = 64
	capacityLongOutput  = 128
	capacityReqTimeout  = 60 * time.Minute
	capacityTolerance   = 64
)

// CapacityPlan is a context-capacity probe: one server start per context
// size, a short generation, then a near-capacity input.
type CapacityPlan struct {
	Profile  *serving.Profile `json:"profile"`
	Contexts []int            `json:"contexts"`
	// InputTokens is the near-capacity input size for every context; 0
	// means Fill x the context size.
	InputTokens int     `json:"input_tokens"`
	Fill        float64 `json:"fill"`
	// ShortOutput and LongOutput are the exact generated tokens of the two
	// requests.
	ShortOutput    int              `json:"short_output"`
	LongOutput     int              `json:"long_output"`
	RequestTimeout serving.Duration `json:"request_timeout"`
}

// Normalize fills defaults and checks the plan.
func (p *CapacityPlan) Normalize() error {
	if p.Profile == nil {
		return errors.New("capacity: no profile")
	}
	if p.Profile.API != serving.APILlamaServer {
		return fmt.Errorf("capacity: profile %s has api %s; probes need llama-server's /tokenize and /completion", p.Profile.Name, p.Profile.API)
	}
	if len(p.Contexts) == 0 {
		return errors.New("capacity: no context size")
	}
	seen := map[int]bool{}
	for _, c := range p.Contexts {
		if c < 1024 {
			return fmt.Errorf("capacity: context size %d is too small", c)
		}
		if seen[c] {
			return fmt.Errorf("capacity: context size %d given twice", c)
		}
		seen[c] = true
	}
	if _, _, _, err := p.Profile.Resolve(serving.Vars{Host: p.Profile.Host, Port: 1, Model: p.Profile.Model, CtxSize: p.Contexts[0],
		Evalctl: "evalctl", ProfileDir: p.Profile.Dir}); err != nil {
		return fmt.Errorf("capacity: %w", err)
	}
	if p.Fill == 0 {
		p.Fill = capacityDefaultFill
	}
	if p.Fill <= 0 || p.Fill > 1 {
		return fmt.Errorf("capacity: fill %v is not in (0, 1]", p.Fill)
	}
	if p.InputTokens < 0 {
		return fmt.Errorf("capacity: input tokens %d is negative", p.InputTokens)
	}
	if p.ShortOutput == 0 {
		p.ShortOutput = capacityShortOutput
	}
	if p.LongOutput == 0 {
		p.LongOutput = capacityLongOutput
	}
	if p.ShortOutput < 0 || p.LongOutput < 0 {
		return errors.New("capacity: output tokens must be positive")
	}
	if p.RequestTimeout == 0 {
		p.RequestTimeout = serving.Duration(capacityReqTimeout)
	}
	return nil
}

// InputFor is the near-capacity input size probed at one context size.
func (p *CapacityPlan) InputFor(ctxSize int) int {
	if p.InputTokens > 0 {
		return p.InputTokens
	}
	return int(p.Fill * float64(ctxSize))
}

// CapacityResult is one context size's outcome, in the results file's
// context_capacity shape. Figures of steps never reached are null.
type CapacityResult struct {
	State           string `json:"state"`
	ContextCapacity int    `json:"context_capacity"`
	// ShortGenerationPassed is nil when the short generation never ran.
	ShortGenerationPassed   *bool                 `json:"short_generation_passed"`
	ShortGenerationTimings  *model.Timings        `json:"short_generation_timings"`
	NearCapacityInputTarget int                   `json:"near_capacity_input_target"`
	NearCapacityInputTokens *int64                `json:"near_capacity_input_tokens"`
	LongInputTimings        *model.Timings        `json:"long_input_timings"`
	LongInputWallSeconds    *float64              `json:"long_input_wall_seconds"`
	MemoryPeak              *telemetry.MemoryPeak `json:"memory_peak_200ms"`
	MemoryReason            string                `json:"memory_reason,omitempty"`
	PowerMeanWatts          *float64              `json:"power_mean_watts"`
	CPUPeakC                *float64              `json:"cpu_peak_c"`
	ReadySeconds            *float64              `json:"ready_seconds"`
	Error                   *string               `json:"error"`
	// ServerLog is kept for every size, relative to the run directory;
	// LogTail holds its end when the start failed.
	ServerLog  string    `json:"server_log"`
	LogTail    string    `json:"log_tail,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
}

// RegisterCapacity creates a run directory for plan under out, named
// capacity-PROFILE-YYYYmmdd-HHMMSS.
func RegisterCapacity(out string, plan *CapacityPlan) (*runstore.Store, *runstore.Run, error) {
	return registerRun(out, "capacity-"+plan.Profile.Name, KindCapacity, CapacityFile, plan)
}

// OpenCapacity opens a capacity probe's run directory.
func OpenCapacity(dir string) (*runstore.Store, *runstore.Run, *CapacityPlan, error) {
	var plan CapacityPlan
	st, run, err := openRun(dir, KindCapacity, CapacityFile, &plan)
	if err != nil {
		return nil, nil, nil, err
	}
	return st, run, &plan, nil
}

// CapacityResults reads the results recorded so far, by context size.
func CapacityResults(st *runstore.Store) (map[int]*CapacityResult, error) {
	files, _ := filepath.Glob(st.Path(ResultsDir, "*.json"))
	out := map[int]*CapacityResult{}
	for _, f := range files {
		var r CapacityResult
		if err := runstore.ReadJSON(f, &r); err != nil {
			return nil, err
		}
		out[r.ContextCapacity] = &r
	}
	return out, nil
}

// RunCapacity probes every context size without a recorded result. A size
// whose server fails to start is a result (startup_failed, log kept), not
// an error; only ctx ending stops the probe.
func RunCapacity(ctx context.Context, st *runstore.Store, run *runstore.Run, plan *CapacityPlan, o Options) error {
	done, err := CapacityResults(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.Path(ResultsDir), 0o755); err != nil {
		return err
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	for _, size := range plan.Contexts {
		if done[size] != nil {
			continue
		}
		if err := st.EventLogErr(); err != nil {
			return fmt.Errorf("%w; resume the probe once the disk takes writes again", err)
		}
		res, err := probeSize(ctx, st, run, plan, size, o)
		if err != nil {
			return err
		}
		if err := runstore.WriteJSON(st.Path(ResultsDir, strconv.Itoa(size)+".json"), res); err != nil {
			return err
		}
		st.Log(runstore.Event{Kind: evalctl.EventCapacity, Detail: fmt.Sprintf("%d: %s", size, res.State)})
		fmt.Fprintln(progress, capacityLine(res))
	}
	if err := st.EventLogErr(); err != nil {
		return fmt.Errorf("%w; resume the probe once the disk takes writes again", err)
	}
	return nil
}

// probeSize probes one context size: the server starts with it, then a
// short generation and one near capacity must each produce exactly the
// tokens asked for. A failed stage is the result's state, not an error.
func probeSize(ctx context.Context, st *runstore.Store, run *runstore.Run, plan *CapacityPlan, size int, o Options) (*CapacityResult, error) {
	dir, rel, err := nextTry(st, SizesDir, strconv.Itoa(size))
	if err != nil {
		return nil, err
	}
	res := &CapacityResult{ContextCapacity: size, NearCapacityInputTarget: plan.InputFor(size),
		ServerLog: filepath.Join(rel, ServerLog), StartedAt: time.Now().UTC()}
	sampler, stopSampler, err := startSampler(ctx, o, dir)
	if err != nil {
		return nil, err
	}
	// stopped ends telemetry on the paths that return an error of their
	// own (a cancelled context or an identity that cannot be written); a
	// failure to write the telemetry files is joined to it.
	stopped := func(err error) error {
		if _, serr := stopSampler(); serr != nil {
			return errors.Join(err, fmt.Errorf("telemetry of %s: %w", rel, serr))
		}
		return err
	}
	finish := func() (*CapacityResult, error) { return finishProbe(res, stopSampler, rel) }
	fail := func(state string, err error) (*CapacityResult, error) {
		res.State = state
		msg := err.Error()
		res.Error = &msg
		return finish()
	}
	sampler.SetStage("startup")
	st.Log(runstore.Event{Kind: evalctl.EventCapacityStart, Detail: strconv.Itoa(size)})
	srv, err := serving.Start(ctx, plan.Profile, serving.StartOptions{LogPath: filepath.Join(dir, ServerLog), CtxSize: size, Evalctl: o.Evalctl})
	if err != nil {
		if ctx.Err() != nil {
			return nil, stopped(ctx.Err())
		}
		reason := err.Error()
		var se *serving.StartError
		if errors.As(err, &se) {
			res.LogTail, reason = se.LogTail, se.Reason
		}
		return fail(CapacityStartFailed, fmt.Errorf("%dK startup failed: %s; retained %s", size/1024, reason, res.ServerLog))
	}
	defer srv.Stop(context.Background())
	ready := srv.ReadySeconds
	res.ReadySeconds = &ready
	if _, err := srv.RecordIdentity(ctx, o.Hashes, filepath.Join(dir, IdentityDoc), st.Log); err != nil {
		return nil, stopped(err)
	}
	c := newClient(srv.BaseURL)
	rctx, cancel := context.WithTimeout(ctx, time.Duration(plan.RequestTimeout))
	defer cancel()

	sampler.SetStage("short-generation")
	passed := false
	res.ShortGenerationPassed = &passed
	err = shortGeneration(rctx, c, run.ID, plan, size, res)
	if ctx.Err() != nil {
		return nil, stopped(ctx.Err())
	}
	if err != nil {
		return fail(CapacityShortFailed, serverNote(err, srv))
	}
	passed = true

	input := plan.InputFor(size)
	sampler.SetStage(fmt.Sprintf("%dK-input-generation", input/1000))
	err = nearCapacityGeneration(rctx, c, run.ID, plan, size, input, res)
	if ctx.Err() != nil {
		return nil, stopped(ctx.Err())
	}
	if err != nil {
		return fail(CapacityLongFailed, serverNote(err, srv))
	}
	sampler.SetStage("stop")
	srv.Stop(context.Background())
	res.State = CapacityComplete
	return finish()
}

// finishProbe ends the probe's telemetry and records its peaks and the
// finish time on res.
func finishProbe(res *CapacityResult, stopSampler func() (telemetry.Summary, error), rel string) (*CapacityResult, error) {
	sum, err := stopSampler()
	if err != nil {
		return nil, fmt.Errorf("telemetry of %s: %w", rel, err)
	}
	res.MemoryPeak, res.MemoryReason, res.PowerMeanWatts = sum.MemoryPeak, sum.MemoryReason, sum.PowerMeanWatts
	if sum.CPUTempPeak != nil {
		v := sum.CPUTempPeak.Value
		res.CPUPeakC = &v
	}
	res.FinishedAt = time.Now().UTC()
	return res, nil
}

// shortGeneration: a short cold prompt must generate exactly
// plan.ShortOutput tokens; its timings go on res.
func shortGeneration(ctx context.Context, c *model.Client, runID string, plan *CapacityPlan, size int, res *CapacityResult) error {
	short, err := BuildPrompt(ctx, c, coldPrefix(runID, fmt.Sprintf("context %d, short", size)), 1, capacityShortPrompt, capacityTolerance)
	if err != nil {
		return err
	}
	comp, err := complete(ctx, c, short.Text, plan.ShortOutput, 1, nil, nil)
	if err != nil {
		return err
	}
	t := comp.Timings
	res.ShortGenerationTimings = t
	if t.PredictedN == nil || *t.PredictedN != int64(plan.ShortOutput) {
		return fmt.Errorf("short generation produced %s tokens, not %d", fmtI(t.PredictedN), plan.ShortOutput)
	}
	return nil
}

// nearCapacityGeneration: a cold prompt of input tokens must generate
// exactly plan.LongOutput tokens; its timings, wall time and the input
// the server counted (prompt plus cache) go on res.
func nearCapacityGeneration(ctx context.Context, c *model.Client, runID string, plan *CapacityPlan, size, input int, res *CapacityResult) error {
	long, err := BuildPrompt(ctx, c, coldPrefix(runID, fmt.Sprintf("context %d, near capacity", size)), 2, input, capacityTolerance)
	if err != nil {
		return err
	}
	comp, err := complete(ctx, c, long.Text, plan.LongOutput, 2, nil, nil)
	if err != nil {
		return err
	}
	t := comp.Timings
	res.LongInputTimings = t
	res.LongInputWallSeconds = &comp.WallSeconds
	if t.PromptN != nil {
		n := *t.PromptN
		if t.CacheN != nil {
			n += *t.CacheN
		}
		res.NearCapacityInputTokens = &n
	}
	if t.PredictedN == nil || *t.PredictedN != int64(plan.LongOutput) {
		return fmt.Errorf("near-capacity generation produced %s tokens, not %d", fmtI(t.PredictedN), plan.LongOutput)
	}
	return nil
}

// serverNote adds to a request error that the server died, when it did.
func serverNote(err error, srv *serving.Server) error {
	select {
	case <-srv.Exited():
		return fmt.Errorf("%w (server exited: %v; log %s)", err, srv.ExitErr(), srv.LogPath)
	default:
		return err
	}
}

func capacityLine(r *CapacityResult) string {
	line := fmt.Sprintf("context %d: %s", r.ContextCapacity, r.State)
	if r.LongInputTimings != nil {
		line += fmt.Sprintf(", %s-token input: prompt %s ms, decode %s tok/s", fmtI(r.NearCapacityInputTokens),
			fmtF(r.LongInputTimings.PromptMS, 0), fmtF(r.LongInputTimings.PredictedPerSecond, 2))
	}
	if r.MemoryPeak != nil {
		line += fmt.Sprintf(", GPU memory peak %.2f GiB (%s)", gib(r.MemoryPeak.UsedBytes), r.MemoryPeak.Stage)
	}
	if r.Error != nil {
		line += ": " + *r.Error
	}
	return line
}

// CapacityReport is a probe's results keyed like the results file's
// context_capacity ("192", "220", "256": the size in units of 1024).
type CapacityReport struct {
	RunID   string                     `json:"run_id"`
	Profile string                     `json:"profile"`
	State   string                     `json:"state"`
	Sizes   map[string]*CapacityResult `json:"context_capacity"`
	order   []int
}

// BuildCapacityReport reads a probe's run directory into its report.
func BuildCapacityReport(st *runstore.Store, run *runstore.Run, plan *CapacityPlan) (*CapacityReport, error) {
	res, err := CapacityResults(st)
	if err != nil {
		return nil, err
	}
	r := &CapacityReport{RunID: run.ID, Profile: plan.Profile.Name, Sizes: map[string]*CapacityResult{}, State: "complete"}
	sizes := append([]int(nil), plan.Contexts...)
	sort.Ints(sizes)
	for _, s := range sizes {
		if res[s] == nil {
			r.State = "incomplete"
			continue
		}
		r.Sizes[sizeKey(s)] = res[s]
		r.order = append(r.order, s)
	}
	return r, nil
}

func sizeKey(size int) string {
	if size%1024 == 0 {
		return strconv.Itoa(size / 1024)
	}
	return strconv.Itoa(size)
}

// WriteJSON writes the report as indented JSON.
func (r *CapacityReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as aligned text.
func (r *CapacityReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "capacity probe of %s (run %s): %s\n\n", r.Profile, r.RunID, r.State)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "context\tstate\tready s\tshort ok\tinput tokens\tprompt ms\tprompt tok/s\tdecode tok/s\tGPU peak GiB\tfree MiB\tpeak stage\terror")
	for _, s := range r.order {
		x := r.Sizes[sizeKey(s)]
		short := "-"
		if x.ShortGenerationPassed != nil {
			short = strconv.FormatBool(*x.ShortGenerationPassed)
		}
		var pms, pps, dps *float64
		if t := x.LongInputTimings; t != nil {
			pms, pps, dps = t.PromptMS, t.PromptPerSecond, t.PredictedPerSecond
		}
		peak, free, stage := "-", "-", "-"
		if m := x.MemoryPeak; m != nil {
			peak, free, stage = fmt.Sprintf("%.2f", gib(m.UsedBytes)), fmt.Sprintf("%.0f", float64(m.FreeBytes)/(1<<20)), m.Stage
		}
		errText := ""
		if x.Error != nil {
			errText = *x.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s, x.State, fmtF(x.ReadySeconds, 1), short,
			fmtI(x.NearCapacityInputTokens), fmtF(pms, 0), fmtF(pps, 1), fmtF(dps, 2), peak, free, stage, strings.TrimSpace(errText))
	}
	return tw.Flush()
}
