// Package screen measures serving configurations: throughput screens of
// exact prompt and output sizes across modes (server profiles), and
// context-capacity probes, with their run directories, reports (table,
// JSON, HTML), aggregates and fixed-input fixtures. Servers are started
// through package serving and spoken to through the one llama-server
// client, package model.
package screen

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/orchestrator/telemetry"
	"github.com/evalctl/evalctl/results/runstore"
)

// Layout of a screen's run directory, beside runstore's run.json and
// events.jsonl:
//
//	RUNDIR/screen.json                 Screen: the spec and its profiles as registered
//	RUNDIR/samples/KEY.json            Sample, one per measurement
//	RUNDIR/legs/NN-LABEL/TRY/          one server start: server.log, identity.json,
//	                                   telemetry.jsonl (every reading), telemetry.json (Summary)
const (
	ScreenFile  = "screen.json"
	SamplesDir  = "samples"
	LegsDir     = "legs"
	ServerLog   = "server.log"
	IdentityDoc = "identity.json"
	TelemetryLg = "telemetry.jsonl"
	TelemetryDc = "telemetry.json"
)

// Kinds of run directory written by this package.
const (
	KindScreen   = runstore.KindScreen
	KindCapacity = runstore.KindCapacity
)

// ErrIncomplete is returned by Run when some samples failed; the
// screen can be resumed to measure them again.
var ErrIncomplete = errors.New("screen incomplete")

// Register creates a run directory for sc under out and writes its
// identity and plan. The directory is named NAME-YYYYmmdd-HHMMSS.
func Register(out string, sc *Screen) (*runstore.Store, error) {
	st, _, err := registerRun(out, sc.Spec.Name, KindScreen, ScreenFile, sc)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(st.Path(SamplesDir), 0o755); err != nil {
		return nil, err
	}
	return st, nil
}

// Open opens a screen's run directory and reads what it registered,
// checking the plan against its recorded digest.
func Open(dir string) (*runstore.Store, *runstore.Run, *Screen, error) {
	var sc Screen
	st, run, err := openRun(dir, KindScreen, ScreenFile, &sc)
	if err != nil {
		return nil, nil, nil, err
	}
	return st, run, &sc, nil
}

// Samples reads every sample of a screen's run directory.
func Samples(st *runstore.Store) ([]*Sample, error) {
	entries, err := os.ReadDir(st.Path(SamplesDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Sample
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var s Sample
		if err := runstore.ReadJSON(filepath.Join(st.Path(SamplesDir), e.Name()), &s); err != nil {
			return nil, err
		}
		out = append(out, &s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Options are the machine-side parts of running a screen.
type Options struct {
	// Telemetry is sampled every Interval while each server runs; nil
	// records no telemetry.
	Telemetry telemetry.Source
	Interval  time.Duration
	// Hashes caches weight digests; nil hashes every time.
	Hashes *serving.HashCache
	// Evalctl is {{evalctl}} for profiles that run the scripted server.
	Evalctl string
	// Progress receives one line per sample; nil is silent.
	Progress io.Writer
}

// Run measures every sample of the screen that is not finished yet,
// leg by leg (one server start per leg), and returns ErrIncomplete when
// some sample failed. The caller holds the run's lock.
func Run(ctx context.Context, st *runstore.Store, run *runstore.Run, sc *Screen, o Options) error {
	done, err := Samples(st)
	if err != nil {
		return err
	}
	finished := map[string]bool{}
	for _, s := range done {
		if s.State == SampleMeasured {
			finished[s.Key] = true
		}
	}
	st.Log(runstore.Event{Kind: evalctl.EventScreenStart, Detail: fmt.Sprintf("%d of %d finished", len(finished), sc.Planned())})
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	n := len(finished)
	failed := 0
	for _, leg := range sc.Legs() {
		var todo []sampleSpec
		for _, t := range sc.targets() {
			for _, seed := range sc.Spec.Seeds {
				if k := SampleKey(leg, t, seed); !finished[k] {
					todo = append(todo, sampleSpec{key: k, target: t, seed: seed})
				}
			}
		}
		if len(todo) == 0 {
			continue
		}
		if err := st.EventLogErr(); err != nil {
			return fmt.Errorf("%w; resume the screen once the disk takes writes again", err)
		}
		f, err := runLeg(ctx, st, run, sc, leg, todo, o, progress, &n)
		failed += f
		if err != nil {
			return err
		}
	}
	st.Log(runstore.Event{Kind: evalctl.EventScreenEnd, Detail: fmt.Sprintf("%d failed", failed)})
	if err := st.EventLogErr(); err != nil {
		return fmt.Errorf("%w; resume the screen once the disk takes writes again", err)
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d samples failed; resume to measure them again", ErrIncomplete, failed)
	}
	return nil
}

type sampleSpec struct {
	key    string
	target int
	seed   int64
}

// runLeg starts the leg's server, measures its samples and stops it. A
// server that fails to start or dies fails the leg's remaining samples
// (recorded, to be measured again on resume) without stopping the screen;
// only ctx ending stops everything.
func runLeg(ctx context.Context, st *runstore.Store, run *runstore.Run, sc *Screen, leg Leg, todo []sampleSpec,
	o Options, progress io.Writer, n *int) (failed int, err error) {
	p := sc.Profiles[leg.Mode]
	legDir, rel, err := nextTry(st, LegsDir, fmt.Sprintf("%02d-%s", leg.Index, leg.Label))
	if err != nil {
		return 0, err
	}
	sampler, stopSampler, err := startSampler(ctx, o, legDir)
	if err != nil {
		return 0, err
	}
	sampler.SetStage(leg.Label + "/startup")
	defer func() {
		// The leg's own error, if any, comes first; a telemetry file that
		// could not be written fails an otherwise good leg.
		if _, serr := stopSampler(); serr != nil && err == nil {
			err = fmt.Errorf("telemetry of %s: %w", rel, serr)
		}
	}()
	st.Log(runstore.Event{Kind: evalctl.EventLegStart, Detail: fmt.Sprintf("%s (%s) %s", leg.Label, p.Name, rel)})
	srv, err := serving.Start(ctx, p, serving.StartOptions{LogPath: filepath.Join(legDir, ServerLog), CtxSize: sc.Spec.CtxSize, Evalctl: o.Evalctl})
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		st.Log(runstore.Event{Kind: evalctl.EventLegFailed, Detail: err.Error()})
		fmt.Fprintf(progress, "%s: %v\n", leg.Label, err)
		for _, s := range todo {
			if werr := writeFailed(st, sc, leg, s, rel, err); werr != nil {
				return failed, werr
			}
			failed++
		}
		return failed, nil
	}
	defer srv.Stop(context.Background())
	if _, err := srv.RecordIdentity(ctx, o.Hashes, filepath.Join(legDir, IdentityDoc), st.Log); err != nil {
		return 0, err
	}
	client := newClient(srv.BaseURL)
	for _, s := range todo {
		sampler.SetStage(fmt.Sprintf("%s/%d/s%d", leg.Label, s.target, s.seed))
		smp := measure(ctx, client, run, sc, leg, s, rel)
		if ctx.Err() != nil {
			return failed, ctx.Err() // an interrupted sample is not finished: not recorded
		}
		if smp.State == SampleFailed {
			select {
			case <-srv.Exited():
				smp.Error += fmt.Sprintf(" (server exited: %v; log %s)", srv.ExitErr(), filepath.Join(rel, ServerLog))
			default:
			}
			failed++
		}
		if err := runstore.WriteJSON(st.Path(SamplesDir, s.key+".json"), smp); err != nil {
			return failed, err
		}
		*n++
		fmt.Fprintln(progress, progressLine(*n, sc.Planned(), smp))
		st.Log(runstore.Event{Kind: evalctl.EventSample, Attempt: s.key, Detail: smp.State})
	}
	sampler.SetStage(leg.Label + "/stop")
	if err := srv.Stop(context.Background()); err != nil {
		return failed, err
	}
	st.Log(runstore.Event{Kind: evalctl.EventLegEnd, Detail: leg.Label})
	return failed, nil
}

// measure builds the sample's cold prompt and asks for exactly
// OutputTokens tokens.
func measure(ctx context.Context, c *model.Client, run *runstore.Run, sc *Screen, leg Leg, s sampleSpec, rel string) *Sample {
	now := time.Now().UTC()
	smp := &Sample{Key: s.key, Leg: leg.Label, LegIndex: leg.Index, Mode: leg.Mode, Profile: sc.Profiles[leg.Mode].Name,
		PromptTarget: s.target, Seed: s.seed, OutputTokensRequested: sc.Spec.OutputTokens, Server: rel, StartedAt: &now,
		Marks: []string{}}
	fail := func(err error) *Sample {
		smp.State, smp.Error = SampleFailed, err.Error()
		t := time.Now().UTC()
		smp.FinishedAt = &t
		return smp
	}
	rctx, cancel := context.WithTimeout(ctx, time.Duration(sc.Spec.RequestTimeout))
	defer cancel()
	// The nonce is the leg's try: a sample measured again after a resume
	// gets a prompt no earlier try started with, so nothing of the failed
	// try can be served from a cache.
	smp.Nonce = rel
	prefix := coldPrefix(run.ID, s.key+" "+rel)
	var pb *PromptBuild
	var err error
	if f := sc.fixture(s.target); f != nil {
		smp.Fixture = f.Name
		pb, err = fixturePrompt(rctx, c, prefix, f)
	} else {
		pb, err = BuildPrompt(rctx, c, prefix, s.seed, s.target, sc.Spec.ToleranceTokens)
	}
	if err != nil {
		return fail(err)
	}
	smp.PromptTokens, smp.TokenizeRequests, smp.FixtureTokens = &pb.Tokens, pb.Requests, pb.FixtureTokens
	comp, err := complete(rctx, c, pb.Text, sc.Spec.OutputTokens, s.seed, sc.Spec.Temperature, sc.modeRequest(leg.Mode))
	if err != nil {
		return fail(err)
	}
	t := comp.Timings
	smp.State = SampleMeasured
	smp.Timings, smp.StopType = t, comp.StopType
	smp.WallSeconds = &comp.WallSeconds
	smp.PredictedN = t.PredictedN
	fin := time.Now().UTC()
	smp.FinishedAt = &fin
	if t.PromptN != nil {
		v := *t.PromptN
		if t.CacheN != nil {
			v += *t.CacheN
		}
		smp.ServerPromptTokens = &v
	}
	if t.PredictedN == nil || t.PredictedMS == nil {
		smp.Marks = append(smp.Marks, MarkNoTimings)
		return smp
	}
	smp.DecodeTPS = ratio(float64(*t.PredictedN), *t.PredictedMS/1000)
	smp.EndToEndTPS = ratio(float64(*t.PredictedN), comp.WallSeconds)
	if smp.DecodeTPS == nil || smp.EndToEndTPS == nil {
		smp.Marks = append(smp.Marks, MarkNoTimings)
	}
	if *t.PredictedN != int64(sc.Spec.OutputTokens) {
		smp.Marks = append(smp.Marks, MarkPredictedN)
	}
	if t.CacheN != nil && *t.CacheN > 0 {
		smp.Marks = append(smp.Marks, MarkCacheReused)
	}
	if !sc.Fixed() && smp.ServerPromptTokens != nil && abs(int(*smp.ServerPromptTokens)-s.target) > sc.Spec.ToleranceTokens {
		smp.Marks = append(smp.Marks, MarkPromptSize)
	}
	return smp
}

// coldPrefix starts a sample's prompt with text no other prompt starts
// with: a digest of the run and sample first, so even a server that reuses
// any cached common prefix (whatever cache_prompt says) shares not one token
// with the previous prompt.
func coldPrefix(runID, key string) string {
	sum := sha256.Sum256([]byte(runID + "\x00" + key))
	return fmt.Sprintf("%x Screen %s, sample %s. Continue the text.\n", sum[:8], runID, key)
}

func writeFailed(st *runstore.Store, sc *Screen, leg Leg, s sampleSpec, rel string, cause error) error {
	now := time.Now().UTC()
	smp := &Sample{Key: s.key, Leg: leg.Label, LegIndex: leg.Index, Mode: leg.Mode, Profile: sc.Profiles[leg.Mode].Name,
		PromptTarget: s.target, Seed: s.seed, OutputTokensRequested: sc.Spec.OutputTokens, Server: rel,
		State: SampleFailed, Error: cause.Error(), FinishedAt: &now, Marks: []string{}}
	return runstore.WriteJSON(st.Path(SamplesDir, s.key+".json"), smp)
}

// nextTry makes PARENT/NAME/K for the next start of a leg or a capacity
// size (K = 1, 2, ...), so a resumed one keeps the log and telemetry of its
// earlier tries.
func nextTry(st *runstore.Store, parent, name string) (dir, rel string, err error) {
	for k := 1; ; k++ {
		rel = filepath.Join(parent, name, strconv.Itoa(k))
		dir = st.Path(rel)
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return "", "", err
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, rel, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", "", err
		}
	}
}

// startSampler starts telemetry for one server start, logging every
// reading in dir. stop ends it, writes the summary beside the log and
// returns it; its error says the log or the summary could not be written.
func startSampler(ctx context.Context, o Options, dir string) (s *telemetry.Sampler, stop func() (telemetry.Summary, error), err error) {
	src := o.Telemetry
	if src == nil {
		src = notSampled{}
	}
	f, err := os.Create(filepath.Join(dir, TelemetryLg))
	if err != nil {
		return nil, nil, err
	}
	s = telemetry.NewSampler(src, o.Interval, f)
	s.Start(ctx)
	return s, func() (telemetry.Summary, error) {
		sum := s.Stop()
		cerr := f.Close()
		return sum, errors.Join(cerr, runstore.WriteJSON(filepath.Join(dir, TelemetryDc), sum))
	}, nil
}

// notSampled stands in when the caller asked for no telemetry, so the
// summary says so instead of showing nothing.
type notSampled struct{}

func (notSampled) Read(ctx context.Context) (telemetry.Reading, error) {
	const why = "telemetry not sampled (no source given)"
	return telemetry.Reading{At: time.Now().UTC(), GPUReason: why, CPUReason: why}, ctx.Err()
}

func progressLine(n, planned int, s *Sample) string {
	head := fmt.Sprintf("[%d/%d] %s %d s%d:", n, planned, s.Leg, s.PromptTarget, s.Seed)
	if s.State == SampleFailed {
		return head + " FAILED: " + s.Error
	}
	line := fmt.Sprintf("%s decode %s tok/s, end-to-end %s tok/s, wall %ss, prompt %s tokens",
		head, fmtF(s.DecodeTPS, 2), fmtF(s.EndToEndTPS, 2), fmtF(s.WallSeconds, 2), fmtI(s.ServerPromptTokens))
	if len(s.Marks) > 0 {
		line += " MARKED " + strings.Join(s.Marks, ",")
	}
	return line
}
