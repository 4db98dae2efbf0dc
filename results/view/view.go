// Package view is the live web viewer ('evalctl view'): runs, a run's
// per-arm summary and per-case grid, and each attempt (conversation, tool
// calls, test output, diff), updating while a run is in progress.
//
// The page is static (embedded HTML, JavaScript and CSS) and reads JSON
// from the server. A run's figures are the report package's own JSON
// (report.Build and report.WriteJSON, byte for byte what 'evalctl report
// --format json' prints), so the viewer never computes a number of its
// own; an attempt is inspect.Load's, as 'evalctl show --format json'.
package view

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/results/inspect"
	"github.com/evalctl/evalctl/results/report"
	"github.com/evalctl/evalctl/results/runstore"
)

//go:embed assets
var assets embed.FS

// Server serves the runs under Root (a folder of runs, or one run
// directory).
type Server struct {
	Root string
	// BuildTimeout bounds building one run's report (default 2 minutes).
	BuildTimeout time.Duration

	mu    sync.Mutex
	cache map[string]*cached
}

// cached is a run's report JSON for one state of the run directory.
type cached struct {
	token string
	body  []byte
	err   error
}

// New returns a server for the runs under root.
func New(root string) *Server {
	return &Server{Root: root, cache: map[string]*cached{}}
}

// Handler routes the viewer's pages and its JSON.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", files))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		data, _ := fs.ReadFile(static, "index.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(data)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" fill="#2b6cb0"/></svg>`))
	})
	mux.HandleFunc("GET /api/runs", s.runs)
	mux.HandleFunc("GET /api/report", s.multiReport)
	mux.HandleFunc("GET /api/runs/{run}", s.summary)
	mux.HandleFunc("GET /api/runs/{run}/report", s.report)
	mux.HandleFunc("GET /api/runs/{run}/arms", s.arms)
	mux.HandleFunc("GET /runs/{run}/report.html", s.htmlReport)
	mux.HandleFunc("GET /api/runs/{run}/attempts/{attempt}", s.attempt)
	return mux
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	list, err := runstore.List(s.Root)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	if list == nil {
		list = []runstore.Summary{}
	}
	writeJSON(w, list)
}

// htmlReport is 'evalctl report RUN --format html' with each grid cell
// linking to its attempts in the viewer.
func (s *Server) htmlReport(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("run")
	dir, err := s.runDir(id)
	if err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	body, err := s.build(r.Context(), []string{dir}, report.Options{})
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	var rep report.Report
	if err := json.Unmarshal(body, &rep); err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	setup, err := report.LoadSetup([]string{dir})
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	setup.CellLink = func(c, arm string) string {
		return "/#/run/" + url.PathEscape(id) + "/cell/" + url.PathEscape(c) + "/" + url.PathEscape(arm)
	}
	var buf bytes.Buffer
	if err := report.WriteHTMLWith(&buf, &rep, setup); err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

func (s *Server) summary(w http.ResponseWriter, r *http.Request) {
	dir, err := s.runDir(r.PathValue("run"))
	if err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	// Cached per state of the run: a run without an event log is counted
	// from its attempt records, which a page polling it must not repeat.
	key, tok := "summary\x00"+dir, token(dir)
	s.mu.Lock()
	c := s.cache[key]
	s.mu.Unlock()
	if c == nil || c.token != tok {
		c = &cached{token: tok}
		var sum *runstore.Summary
		if sum, c.err = runstore.Summarize(dir); c.err == nil {
			c.body, c.err = json.Marshal(sum)
		}
		s.mu.Lock()
		s.cache[key] = c
		s.mu.Unlock()
	}
	if c.err != nil {
		httpError(w, http.StatusInternalServerError, c.err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(c.body)
}

// runDir finds a run under Root by its id (or directory name).
func (s *Server) runDir(id string) (string, error) {
	if runstore.IsRunDir(s.Root) {
		st, err := runstore.Open(s.Root)
		if err != nil {
			return "", err
		}
		run, err := st.ReadRun()
		if err != nil {
			return "", err
		}
		if run.ID == id || filepath.Base(s.Root) == id {
			return s.Root, nil
		}
		return "", fmt.Errorf("run %q: %w", id, runstore.ErrNoRun)
	}
	return runstore.Lookup(s.Root, id)
}

// token says which state of the run directory a report was built from:
// the runner appends to events.jsonl after every record it writes, and a
// regrade adds a file under regrades/.
//
// Whether a runner holds the run is part of it too: a runner that stops
// (killed) writes nothing, but its run is no longer running.
func token(dir string) string {
	var b strings.Builder
	for _, p := range []string{runstore.RunFile, runstore.EventsFile, runstore.RegradesDir, runstore.AttemptsDir, runstore.PhasesFile} {
		if fi, err := os.Stat(filepath.Join(dir, p)); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d;", p, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if st, err := runstore.Open(dir); err == nil {
		fmt.Fprintf(&b, "busy:%v;", st.Busy())
	}
	return b.String()
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	dir, err := s.runDir(r.PathValue("run"))
	if err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	s.serveReport(w, r, []string{dir})
}

// multiReport pools several runs, as 'evalctl report RUN RUN...' does:
// /api/report?run=A&run=B.
func (s *Server) multiReport(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["run"]
	if len(ids) == 0 {
		httpError(w, http.StatusBadRequest, errors.New("name the runs to pool: ?run=ID&run=ID"))
		return
	}
	var dirs []string
	for _, id := range ids {
		dir, err := s.runDir(id)
		if err != nil {
			httpError(w, http.StatusNotFound, err)
			return
		}
		dirs = append(dirs, dir)
	}
	s.serveReport(w, r, dirs)
}

// serveReport answers with the report JSON of dirs, built once per state
// of the run directories (304 when the page already has it).
func (s *Server) serveReport(w http.ResponseWriter, r *http.Request, dirs []string) {
	opts := report.Options{Suite: r.URL.Query().Get("suite"), Baseline: r.URL.Query().Get("baseline"), AllowMixed: r.URL.Query().Get("allow_mixed") == "true"}
	key := strings.Join(dirs, "\x00") + "\x00" + opts.Suite + "\x00" + opts.Baseline + "\x00" + fmt.Sprint(opts.AllowMixed)
	var tb strings.Builder
	for _, d := range dirs {
		tb.WriteString(token(d))
	}
	tok := fmt.Sprintf("%q", tb.String()+opts.Suite+"|"+opts.Baseline+"|"+fmt.Sprint(opts.AllowMixed))
	if r.Header.Get("If-None-Match") == tok {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.mu.Lock()
	c := s.cache[key]
	if c == nil || c.token != tok {
		c = &cached{token: tok}
		c.body, c.err = s.build(r.Context(), dirs, opts)
		if r.Context().Err() == nil {
			s.cache[key] = c
		}
	}
	s.mu.Unlock()
	if c.err != nil {
		status := http.StatusInternalServerError
		if errors.Is(c.err, report.ErrUnknownArm) || errors.Is(c.err, report.ErrMixed) {
			status = http.StatusBadRequest
		}
		httpError(w, status, c.err)
		return
	}
	w.Header().Set("ETag", tok)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Type", "application/json")
	w.Write(c.body)
}

// build is 'evalctl report DIR... --format json'.
func (s *Server) build(ctx context.Context, dirs []string, opts report.Options) ([]byte, error) {
	for _, dir := range dirs {
		st, err := runstore.Open(dir)
		if err != nil {
			return nil, err
		}
		run, err := st.ReadRun()
		if err != nil {
			return nil, err
		}
		if run.Kind != "" && run.Kind != runstore.KindCohort {
			return nil, fmt.Errorf("run %s is a %s run: 'evalctl %s report %s' reports it", run.ID, run.Kind, run.Kind, dir)
		}
	}
	d := s.BuildTimeout
	if d == 0 {
		d = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	in, err := report.Load(ctx, dirs, opts.Suite)
	if err != nil {
		return nil, err
	}
	rep, err := report.Build(in, opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, rep); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ArmInfo is an arm's registered settings and the identity of the server
// its first attempt with one ran against.
type ArmInfo struct {
	Name     string                `json:"name"`
	Settings evalctl.Arm           `json:"settings"`
	Endpoint *evalctl.EndpointInfo `json:"endpoint"`
	// Server is the identity file of a server evalctl started for the arm.
	Server string `json:"server,omitempty"`
}

// armsReply is what /api/runs/RUN/arms answers.
type armsReply struct {
	Arms     []ArmInfo `json:"arms"`
	PlanName string    `json:"plan_name"`
}

func (s *Server) arms(w http.ResponseWriter, r *http.Request) {
	dir, err := s.runDir(r.PathValue("run"))
	if err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	var plan evalctl.Plan
	st, err := runstore.Open(dir)
	if err == nil {
		err = runstore.ReadJSON(st.Path(runstore.PlanFile), &plan)
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	var out []ArmInfo
	index := map[string]int{}
	for _, a := range plan.Arms {
		index[a.Name] = len(out)
		out = append(out, ArmInfo{Name: a.Name, Settings: a})
	}
	// Server identity: the first attempt of each arm that recorded one.
	if entries, err := os.ReadDir(st.Path(runstore.AttemptsDir)); err == nil && len(out) > 0 {
		missing := len(out)
		for _, e := range entries {
			if missing == 0 {
				break
			}
			var a evalctl.Attempt
			if runstore.ReadJSON(filepath.Join(st.AttemptDir(e.Name()), runstore.AttemptFile), &a) != nil || a.Endpoint == nil {
				continue
			}
			if i, ok := index[a.Arm]; ok && out[i].Endpoint == nil {
				a.Endpoint.Props, a.Endpoint.Models = nil, nil // bulky; build and model path stay
				out[i].Endpoint, out[i].Server = a.Endpoint, a.Server
				missing--
			}
		}
	}
	if out == nil {
		out = []ArmInfo{}
	}
	writeJSON(w, armsReply{Arms: out, PlanName: plan.Name})
}

func (s *Server) attempt(w http.ResponseWriter, r *http.Request) {
	dir, err := s.runDir(r.PathValue("run"))
	if err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	id := r.PathValue("attempt")
	if strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		httpError(w, http.StatusNotFound, inspect.ErrNoAttempt)
		return
	}
	d, err := inspect.Load(dir, id)
	if errors.Is(err, inspect.ErrNoAttempt) {
		httpError(w, http.StatusNotFound, err)
		return
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, d)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

func httpError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
