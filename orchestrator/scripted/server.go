// Package scripted is the built-in scripted model server: a real HTTP
// server speaking llama-server's protocol (chat completions streamed or
// not, tool calls, reasoning_content, timings, /health, /props, /metrics,
// /tokenize, /v1/models), whose "model" is a script chosen by the request's
// model name. It is the embedded default endpoint of a cohort and the test
// double of the agent loop and the model client: nothing in it is faked at
// the Go level, every byte crosses a socket.
//
// Generated tokens are counted by a fixed rule (see Pieces) and timed by an
// emulated decode and prompt rate, so every figure it reports is exact and
// reproducible: usage.completion_tokens equals timings.predicted_n, and the
// /metrics counters move by exactly the timings it returned. Responses are
// paced at those rates, so the timings are also true: a response never
// arrives sooner than its prompt_ms + predicted_ms.
package scripted

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evalctl/evalctl/tasks"
)

// Config sets up a scripted server.
type Config struct {
	// Addr is where Start listens; default "127.0.0.1:0" (a free port).
	Addr string
	// Suite is what the reference and control scripts solve; nil leaves
	// those scripts unavailable (they answer 400).
	Suite *tasks.Suite
	// DecodeTPS and PromptTPS are the emulated generation and prompt
	// processing rates in tokens per second (defaults DefaultDecodeTPS and
	// DefaultPromptTPS). Every response is paced at them: it takes as long
	// as the timings it reports say, so a client's decode seconds never
	// exceed the time it really waited. Set 60 and 1500 for a demo that
	// feels like a real model.
	DecodeTPS float64
	PromptTPS float64
	// Realtime is kept so that existing configurations compile and show in
	// /props; responses are always paced now (see DecodeTPS).
	Realtime bool
	// StartupDelay emulates model loading: /health and every endpoint
	// answer 503 "Loading model" until it has passed.
	StartupDelay time.Duration
	// CtxSize is the context capacity (n_ctx) reported in /props and
	// enforced with exceed_context_size_error; default 131072.
	CtxSize int
	// FailAboveCtx, when positive, makes New fail like llama-server's
	// allocation failure when CtxSize exceeds it (capacity probes).
	FailAboveCtx int
	// DraftAcceptance in (0, 1] emulates speculative decoding: responses
	// carry draft_n and draft_n_accepted; DraftMax drafts per step
	// (default 4).
	DraftAcceptance float64
	DraftMax        int
	// StallDelay is how long each response of the stall script takes
	// (default 300ms).
	StallDelay time.Duration
	// Log receives a line per request; nil discards.
	Log io.Writer
	// BuildInfo is reported as /props build_info (default
	// "evalctl-scripted"); evalctl passes its version.
	BuildInfo string
	// DropAfterStream reproduces llama-server's keep-alive behaviour
	// (orchestrator/model/testdata/llama-server/responses/keepalive_probe.txt): a
	// connection that carried a streamed response is dead, and a request
	// sent on it gets EOF without a response byte. The scripted server
	// keeps such a connection open until the next request arrives, so the
	// client deterministically reuses it.
	DropAfterStream bool
	// DieMidStream, when set, is asked after each token a response
	// streams, with the count so far; true kills the server there, as
	// kill -9 would: the stream breaks and nothing answers any more.
	DieMidStream func(tokens int) bool
	// CancelDelay reproduces how late llama-server notices a client that
	// went away (orchestrator/model/testdata/llama-server/README.md, "A cancelled request is
	// counted late": 0.40 to 0.98 s): the slot keeps generating and stays
	// busy (/slots is_processing) that long, the next request waits for
	// it, and the cut response's tokens reach /metrics only at release.
	// Zero: noticed at once.
	CancelDelay time.Duration
	// CountersFrom is where the prompt and generated token counters of
	// /metrics start, as on a server that has run for a while: past 10^6
	// they print with six significant digits only, as llama-server's do.
	CountersFrom int64
	// NoJinja emulates llama-server started without --jinja: a chat
	// request that carries tools is refused with HTTP 500 "tools param
	// requires --jinja flag".
	NoJinja bool
}

// Default emulated rates: fast, so that tests and the demo take little
// time, and still honest: responses are paced at them.
const (
	DefaultDecodeTPS = 4000
	DefaultPromptTPS = 100000
)

// ModelPath is what /props and /v1/models report as the loaded model.
const ModelPath = "scripted"

// AllocError is the emulated allocation failure at start (FailAboveCtx).
type AllocError struct {
	CtxSize, Limit int
	// Log holds the lines llama-server would print before exiting.
	Log []string
}

func (e *AllocError) Error() string {
	return fmt.Sprintf("failed to allocate the context: n_ctx %d exceeds what fits (%d)", e.CtxSize, e.Limit)
}

// Server is a scripted model server.
type Server struct {
	cfg     Config
	started time.Time
	log     *log.Logger
	starter map[string]map[string]bool // case name -> starter files

	mu    sync.Mutex
	slot  []string // pieces of the cached sequence (prompt + output)
	m     counters
	flaky map[string]int
	// cancelling counts cut responses whose slot is not yet released
	// (CancelDelay).
	cancelling int

	seq      atomic.Uint64
	inflight atomic.Int64

	ln   net.Listener
	http *http.Server
}

// counters are the /metrics totals. Times are kept in integer microseconds,
// the resolution of llama-server's timings, so that sums are exact.
type counters struct {
	promptTokens, promptCached, predicted int64
	promptMicros, predictedMicros         int64
	nDecode, nTokensMax                   int64
	draftTokens, draftAccepted, drafts    int64
	decodes                               bool
}

// New validates cfg and returns a server (not yet listening).
func New(cfg Config) (*Server, error) {
	if cfg.DecodeTPS <= 0 {
		cfg.DecodeTPS = DefaultDecodeTPS
	}
	if cfg.PromptTPS <= 0 {
		cfg.PromptTPS = DefaultPromptTPS
	}
	if cfg.CtxSize <= 0 {
		cfg.CtxSize = 131072
	}
	if cfg.DraftMax <= 0 {
		cfg.DraftMax = 4
	}
	if cfg.BuildInfo == "" {
		cfg.BuildInfo = "evalctl-scripted"
	}
	if cfg.StallDelay <= 0 {
		cfg.StallDelay = 300 * time.Millisecond
	}
	if cfg.DraftAcceptance < 0 || cfg.DraftAcceptance > 1 {
		return nil, fmt.Errorf("scripted server: draft acceptance %v is not in [0, 1]", cfg.DraftAcceptance)
	}
	if cfg.FailAboveCtx > 0 && cfg.CtxSize > cfg.FailAboveCtx {
		kv := float64(cfg.CtxSize) * 0.125 // MiB, a plausible KV cache size
		return nil, &AllocError{CtxSize: cfg.CtxSize, Limit: cfg.FailAboveCtx, Log: []string{
			fmt.Sprintf("llama_context: n_ctx         = %d", cfg.CtxSize),
			fmt.Sprintf("ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device 0: cudaMalloc failed: out of memory", kv),
			"alloc_tensor_range: failed to allocate CUDA0 buffer of size " + fmt.Sprint(int64(kv*1024*1024)),
			"llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
			"common_init_from_params: failed to create context with model '" + ModelPath + "'",
			"srv    load_model: failed to load model, '" + ModelPath + "'",
			"main: exiting due to model loading error",
		}}
	}
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	s := &Server{cfg: cfg, started: time.Now(), log: log.New(out, "", log.LstdFlags|log.Lmicroseconds), flaky: map[string]int{}, starter: map[string]map[string]bool{}}
	s.m.promptTokens, s.m.predicted = cfg.CountersFrom, cfg.CountersFrom
	if cfg.Suite != nil {
		for _, c := range cfg.Suite.Cases {
			files, err := tasks.ListFiles(c.WorkspaceDir)
			if err != nil {
				return nil, fmt.Errorf("scripted server: case %s: %w", c.Name, err)
			}
			set := map[string]bool{}
			for _, f := range files {
				set[f] = true
			}
			s.starter[c.Name] = set
		}
	}
	return s, nil
}

// Start listens on cfg.Addr and serves in the background until Close.
func (s *Server) Start() error {
	addr := s.cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("scripted server: listen %s: %w", addr, err)
	}
	s.ln = ln
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &connState{})
		}}
	s.started = time.Now()
	go s.http.Serve(ln)
	s.log.Printf("main: server is listening on http://%s - starting the main loop", ln.Addr())
	return nil
}

// URL is the server root, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server at once (open streams are cut).
func (s *Server) Close() error {
	if s.http == nil {
		return nil
	}
	return s.http.Close()
}

// Shutdown stops accepting requests and waits for those in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.http == nil {
		return nil
	}
	return s.http.Shutdown(ctx)
}

func (s *Server) loading() bool { return time.Since(s.started) < s.cfg.StartupDelay }

// ServeHTTP routes llama-server's endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: 200}
	defer func() {
		s.log.Printf("srv  log_server_r: request: %s %s %s %d", r.Method, r.URL.Path, r.RemoteAddr, rec.status)
	}()
	w = rec
	if st := connOf(r); s.cfg.DropAfterStream && st != nil && st.streamed.Load() {
		rec.status = 0
		r.Body.Close()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	w.Header().Set("Server", "llama.cpp")
	if s.loading() {
		writeError(w, http.StatusServiceUnavailable, "unavailable_error", "Loading model")
		return
	}
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/health", "/v1/health":
		writeJSON(w, 200, map[string]string{"status": "ok"})
	case "/v1/models", "/models":
		writeJSON(w, 200, s.models())
	case "/props":
		writeJSON(w, 200, s.props())
	case "/slots":
		writeJSON(w, 200, s.slots())
	case "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, s.metrics())
	case "/tokenize":
		s.tokenize(w, r)
	case "/detokenize":
		s.detokenize(w, r)
	case "/apply-template":
		s.applyTemplate(w, r)
	case "/v1/chat/completions", "/chat/completions":
		s.chat(w, r)
	case "/completion", "/completions", "/v1/completions":
		s.completion(w, r, r.URL.Path == "/v1/completions")
	default:
		writeError(w, 404, "not_found_error", "File Not Found")
	}
}

type connKey struct{}

// connState is what the server remembers of one connection.
type connState struct {
	// streamed is set once a streamed response went out on it.
	streamed atomic.Bool
}

func connOf(r *http.Request) *connState {
	st, _ := r.Context().Value(connKey{}).(*connState)
	return st
}

func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := r.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("not hijackable")
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, apiError{Error: apiErrorBody{Code: status, Message: msg, Type: typ}})
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 256<<20))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON body: %w", err)
	}
	return nil
}

// scriptNames are the model names the server answers to, besides
// "control:<name>".
var scriptNames = []string{"reference", "flawed", "noop", "truncate", "cutcall", "malformed", "garble", "stall", "flaky", "overflow", "runaway", "busy"}

// Models lists the model names the server answers to, control:<name> last,
// for people choosing one.
func Models() []string {
	return append(append([]string(nil), scriptNames...), "control:<name>")
}

func (s *Server) models() map[string]any {
	names := append([]string(nil), scriptNames...)
	if s.cfg.Suite != nil {
		seen := map[string]bool{}
		for _, c := range s.cfg.Suite.Cases {
			for _, ctl := range c.Controls {
				if !seen[ctl.Name] {
					seen[ctl.Name] = true
					names = append(names, "control:"+ctl.Name)
				}
			}
		}
		sort.Strings(names[len(scriptNames):])
	}
	var data []map[string]any
	for _, n := range names {
		data = append(data, map[string]any{
			"id": n, "aliases": []string{n}, "tags": []string{}, "object": "model",
			"created": s.started.Unix(), "owned_by": "llamacpp",
			"meta": map[string]any{"vocab_type": 2, "n_vocab": vocabSize, "n_ctx": s.cfg.CtxSize, "n_ctx_train": s.cfg.CtxSize, "n_params": 0, "size": 0, "ftype": "scripted"},
		})
	}
	return map[string]any{"object": "list", "data": data}
}

func (s *Server) props() map[string]any {
	spec := "none"
	if s.cfg.DraftAcceptance > 0 {
		spec = "draft"
	}
	return map[string]any{
		"default_generation_settings": map[string]any{
			"params": map[string]any{
				"seed": 4294967295, "temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05,
				"repeat_penalty": 1.0, "max_tokens": -1, "n_predict": -1, "ignore_eos": false, "stream": false,
				"chat_format": "scripted", "reasoning_format": "deepseek", "speculative.types": spec,
			},
			"n_ctx": s.cfg.CtxSize,
		},
		"total_slots":    1,
		"model_alias":    ModelPath,
		"model_path":     ModelPath,
		"modalities":     map[string]bool{"vision": false, "video": false, "audio": false},
		"endpoint_slots": true, "endpoint_props": false, "endpoint_metrics": true,
		"chat_template": "", "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>",
		"build_info":  s.cfg.BuildInfo,
		"is_sleeping": false,
		"scripted": map[string]any{
			"decode_tps": s.cfg.DecodeTPS, "prompt_tps": s.cfg.PromptTPS, "realtime": s.cfg.Realtime,
			"draft_acceptance": s.cfg.DraftAcceptance, "draft_max": s.cfg.DraftMax, "tokenizer": "pieces of at most 4 bytes at rune boundaries",
		},
	}
}

func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content    string `json:"content"`
		WithPieces bool   `json:"with_pieces"`
	}
	if err := decodeBody(r, &req); err != nil {
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	pieces := Pieces(req.Content)
	if req.WithPieces {
		out := make([]map[string]any, len(pieces))
		for i, p := range pieces {
			out[i] = map[string]any{"id": TokenID(p), "piece": p}
		}
		writeJSON(w, 200, map[string]any{"tokens": out})
		return
	}
	ids := make([]int64, len(pieces))
	for i, p := range pieces {
		ids[i] = TokenID(p)
	}
	writeJSON(w, 200, map[string]any{"tokens": ids})
}

func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) {
	writeError(w, 501, "not_supported_error", "the scripted tokenizer is one-way: ids are hashes of pieces")
}

func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, 400, "invalid_request_error", err.Error())
		return
	}
	writeJSON(w, 200, map[string]string{"prompt": renderPrompt(&req)})
}

// metrics renders the counters with llama-server's names, help texts and
// order (see orchestrator/model/testdata/llama-server/responses/metrics_*.txt).
func (s *Server) metrics() string {
	s.mu.Lock()
	m := s.m
	s.mu.Unlock()
	sec := func(us int64) string { return fmtFloat(float64(us) / 1e6) }
	rate := func(tokens, us int64) string {
		if us == 0 {
			return "0"
		}
		return fmtFloat(float64(tokens) / (float64(us) / 1e6))
	}
	num := func(n int64) string { return fmtFloat(float64(n)) }
	busy := "0"
	if m.decodes {
		busy = "1"
	}
	rows := []struct{ name, help, typ, value string }{
		{"prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens", "counter", num(m.promptTokens)},
		{"prompt_tokens_cached_total", "Number of prompt tokens reused from the cache", "counter", num(m.promptCached)},
		{"prompt_seconds_total", "Total time spent processing prompts", "counter", sec(m.promptMicros)},
		{"tokens_predicted_total", "Number of generation tokens processed", "counter", num(m.predicted)},
		{"tokens_predicted_seconds_total", "Total time spent generating tokens", "counter", sec(m.predictedMicros)},
		{"n_decode_total", "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding", "counter", num(m.nDecode)},
		{"n_tokens_max", "Largest observed sequence length (prompt + generation)", "counter", num(m.nTokensMax)},
		{"spec_decode_num_draft_tokens_total", "Speculative: Total draft tokens generated", "counter", num(m.draftTokens)},
		{"spec_decode_num_accepted_tokens_total", "Speculative: Total draft tokens accepted by the target model", "counter", num(m.draftAccepted)},
		{"spec_decode_num_drafts_total", "Speculative: Total speculative decoding verification steps", "counter", num(m.drafts)},
		{"prompt_tokens_seconds", "Average prompt throughput in tokens/s", "gauge", rate(m.promptTokens, m.promptMicros)},
		{"predicted_tokens_seconds", "Average generation throughput in tokens/s", "gauge", rate(m.predicted, m.predictedMicros)},
		{"requests_processing", "Number of requests processing", "gauge", fmt.Sprint(s.inflight.Load())},
		{"requests_deferred", "Number of requests deferred", "gauge", "0"},
		{"n_busy_slots_per_decode", "Average number of busy slots per llama_decode() call", "gauge", busy},
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %s\n", r.name, r.help, r.name, r.typ, r.name, r.value)
	}
	return b.String()
}

// fmtFloat prints v as llama-server does (a C++ stream's default: six
// significant digits, "1.03364e+06" past a million, as in
// orchestrator/model/testdata/llama-server/responses/metrics_big_counter.txt).
func fmtFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// newID returns a llama-server-like id: 32 letters and digits.
func (s *Server) newID() string {
	n := s.seq.Add(1)
	sum := sha256.Sum256(fmt.Appendf(nil, "%d-%d", s.started.UnixNano(), n))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]byte, 32)
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out)
}

// conversationKey identifies a request's conversation state (flaky script).
func conversationKey(req *chatRequest) string {
	b, _ := json.Marshal(req.Messages)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// sleepCtx sleeps d unless ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// micros converts n tokens at rate tokens/s to whole microseconds.
func micros(n int, rate float64) int64 {
	return int64(math.Round(float64(n) / rate * 1e6))
}

var errClientGone = errors.New("client went away")

// slots is llama-server's /slots body for its one slot (the fields of
// orchestrator/model/testdata/llama-server/responses/slots_after.json that say whether it is
// busy): processing while a request is served or a cut one not yet
// released.
func (s *Server) slots() []map[string]any {
	s.mu.Lock()
	busy := s.cancelling > 0
	s.mu.Unlock()
	busy = busy || s.inflight.Load() > 0
	return []map[string]any{{"id": 0, "n_ctx": s.cfg.CtxSize, "speculative": false, "is_processing": busy}}
}

// waitSlot holds a new request until every cut response has released the
// slot, as llama-server's next request waits for the slot.
func (s *Server) waitSlot(ctx context.Context) error {
	for {
		s.mu.Lock()
		n := s.cancelling
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
}
