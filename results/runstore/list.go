// Package runstore keeps everything a run produces on disk: the registered
// plan, one record per attempt, transcripts, answer snapshots and grades.
// It reads and writes the records (their types and the scoring rules live
// in the root package evalctl); records are JSON written atomically, a
// finished attempt is never rewritten and a grade is never replaced, only
// added beside others.
package runstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/gofrs/flock"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/tasks"
)

// Run states as a listing shows them.
const (
	// RunRunning: a runner holds the run's lock now.
	RunRunning = "running"
	// RunStopped: no runner holds it and some planned attempt has not run
	// (a crash, Ctrl-C, a guard): 'evalctl run --resume' continues it.
	RunStopped = "stopped"
	// RunComplete: every planned attempt ended (completed, cancelled or
	// infra-failed and not replaced).
	RunComplete = "complete"
)

// Summary is one line of a run listing. Counts a run does not say are
// null, never 0.
type Summary struct {
	Dir       string `json:"dir"`
	Name      string `json:"name"`
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	CreatedAt string `json:"created_at"`
	State     string `json:"state"`
	// Arms are the cohort's arm names (screen legs are not arms).
	Arms []string `json:"arms"`
	// Scored counts attempts that completed and were graded; Planned the
	// planned attempts (slots). Null when the run kind does not record them.
	Scored  *int `json:"scored"`
	Planned *int `json:"planned"`
	// Ended counts planned slots whose attempt ended for good.
	Ended        *int   `json:"ended"`
	SuiteVersion string `json:"suite_version"`
	// Regrades is the number of regrade records the run holds.
	Regrades int `json:"regrades"`
}

// DirName is the directory name of a new run: the plan's name (made safe
// for a path) followed by the run id, so that a listing reads as names and
// the id keeps the name unique.
func DirName(planName, id string) string {
	n := unsafeChars.ReplaceAllString(planName, "-")
	n = strings.Trim(n, "-.")
	if len(n) > 60 {
		n = n[:60]
	}
	if n == "" {
		return id
	}
	return n + "-" + id
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// List summarises every run directory directly under root, newest first.
// It reads run.json and the event log of each (not every attempt record),
// so that listing a thousand runs stays fast; a run without an event log
// (written by tools, not by a runner) is summarised from its attempts.
func List(root string) ([]Summary, error) {
	if IsRunDir(root) {
		s, err := Summarize(root)
		if err != nil {
			return nil, err
		}
		return []Summary{*s}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dirs = append(dirs, filepath.Join(root, e.Name()))
	}
	// Runs are summarised in parallel: each is a few small files.
	out := make([]Summary, len(dirs))
	ok := make([]bool, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0)*2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if !IsRunDir(dirs[i]) {
					continue
				}
				s, err := Summarize(dirs[i])
				if err != nil {
					errs[i] = err
					continue
				}
				out[i], ok[i] = *s, true
			}
		}()
	}
	for i := range dirs {
		next <- i
	}
	close(next)
	wg.Wait()
	kept := out[:0]
	for i := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if ok[i] {
			kept = append(kept, out[i])
		}
	}
	out = kept
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt > out[j].CreatedAt
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// Summarize describes one run directory.
func Summarize(dir string) (*Summary, error) {
	st, err := Open(dir)
	if err != nil {
		return nil, err
	}
	run, err := st.ReadRun()
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", dir, err)
	}
	s := &Summary{Dir: dir, Name: run.Name, ID: run.ID, Kind: run.Kind, SuiteVersion: run.Suite.Version,
		CreatedAt: run.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")}
	if run.Suite.Name != "" {
		s.SuiteVersion = tasks.Label(run.Suite.Name, run.Suite.Version)
	}
	if regs, err := os.ReadDir(st.Path(RegradesDir)); err == nil {
		for _, r := range regs {
			if strings.HasSuffix(r.Name(), ".json") && !strings.HasPrefix(r.Name(), ".") {
				s.Regrades++
			}
		}
	}
	events, err := listEvents(st)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", dir, err)
	}
	switch run.Kind {
	case KindCohort, "":
		if err := summarizeCohort(st, s, events); err != nil {
			return nil, err
		}
	case KindScreen:
		summarizeScreen(s, events)
	default:
		s.State = RunStopped
		if len(events) > 0 {
			s.State = "" // unknown: this kind keeps no end marker
		}
	}
	if locked(st) {
		s.State = RunRunning
	}
	if s.Name == "" {
		s.Name = "-"
	}
	return s, nil
}

// summarizeCohort fills s from a cohort's plan and event log: its arms,
// planned, scored and ended attempts, and whether it completed.
func summarizeCohort(st *Store, s *Summary, events []listEvent) error {
	var ph evalctl.Plan
	if err := ReadJSON(st.Path(PlanFile), &ph); err != nil {
		return fmt.Errorf("read plan of %s: %w", st.Dir, err)
	}
	if s.Name == "" {
		s.Name = ph.Name
	}
	for _, a := range ph.Arms {
		s.Arms = append(s.Arms, a.Name)
	}
	planned := len(ph.Slots)
	scored, ended, err := cohortCounts(st, events)
	if err != nil {
		return err
	}
	if len(ph.Slots) == 0 {
		// A plan.json not written by a runner (a fixture, a tool):
		// the slots and arms are those of the attempt records.
		if planned, err = fromAttempts(st, s); err != nil {
			return err
		}
	}
	s.Planned, s.Scored, s.Ended = &planned, &scored, &ended
	s.State = RunStopped
	if ended >= planned {
		s.State = RunComplete
	}
	return nil
}

// summarizeScreen fills s from a screen's event log: samples planned and
// ended, and whether the screen reached its end.
func summarizeScreen(s *Summary, events []listEvent) {
	s.State = RunStopped
	done := map[string]bool{}
	for _, e := range events {
		switch e.Kind {
		case evalctl.EventScreenStart:
			var fin, planned int
			if _, err := fmt.Sscanf(e.Detail, "%d of %d finished", &fin, &planned); err == nil {
				s.Planned = &planned
			}
		case evalctl.EventSample:
			done[e.Attempt] = true
		case evalctl.EventScreenEnd:
			s.State = RunComplete
		}
	}
	n := len(done)
	s.Ended = &n
}

// listEvent is the part of an Event a listing reads: its time is left
// unparsed, which keeps BenchmarkList1000 about 20% faster than reading
// whole Events (measured side by side).
type listEvent struct {
	Kind    evalctl.EventKind `json:"kind"`
	Attempt string            `json:"attempt"`
	Detail  string            `json:"detail"`
}

// listEvents reads the event log as Events does (a torn last line is
// ignored), keeping only kind, attempt and detail.
func listEvents(st *Store) ([]listEvent, error) {
	data, err := os.ReadFile(st.Path(EventsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []listEvent
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		var e listEvent
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// cohortCounts counts scored attempts and ended slots from the event log,
// which the runner appends after it wrote each record; a run without an
// event log is counted from its attempt records.
func cohortCounts(st *Store, events []listEvent) (scored, ended int, err error) {
	registered := false
	for _, e := range events {
		if e.Kind == evalctl.EventRegistered {
			registered = true
			break
		}
	}
	if !registered {
		all, err := st.Attempts()
		if err != nil {
			return 0, 0, err
		}
		for _, a := range Current(all) {
			switch {
			case a.State == evalctl.Completed:
				scored++
				ended++
			case a.State.Ended():
				ended++
			}
		}
		return scored, ended, nil
	}
	last := map[string]evalctl.EventKind{}
	replaced := map[string]bool{}
	for _, e := range events {
		switch k := evalctl.State(e.Kind); {
		case k == evalctl.Completed || k == evalctl.Interrupted || k.Ended() || e.Kind == evalctl.EventStart:
			last[e.Attempt] = e.Kind
		case e.Kind == evalctl.EventReplaceInfra:
			if old, ok := strings.CutPrefix(e.Detail, "replaces "); ok {
				replaced[old] = true
			}
		}
	}
	for id, k := range last {
		if replaced[id] {
			continue
		}
		switch s := evalctl.State(k); {
		case s == evalctl.Completed:
			scored++
			ended++
		case s.Ended():
			ended++
		}
	}
	return scored, ended, nil
}

// fromAttempts fills s.Arms from the attempt records and returns the
// number of distinct slots they fill.
func fromAttempts(st *Store, s *Summary) (int, error) {
	all, err := st.Attempts()
	if err != nil {
		return 0, err
	}
	slots, arms := map[int]bool{}, map[string]bool{}
	for _, a := range all {
		slots[a.Slot] = true
		if !arms[a.Arm] {
			arms[a.Arm] = true
			s.Arms = append(s.Arms, a.Arm)
		}
	}
	return len(slots), nil
}

// locked reports whether a runner holds the run's lock. It reads the
// kernel's table of locks (/proc/locks) rather than trying the lock, so a
// listing never makes a runner starting at that instant fail; where that
// table is missing it tries the lock for an instant.
func locked(st *Store) bool {
	p := st.Path(lockFile)
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	if ino, ok := inode(fi); ok {
		if table, err := os.ReadFile("/proc/locks"); err == nil {
			suffix := ":" + strconv.FormatUint(ino, 10)
			for _, line := range strings.Split(string(table), "\n") {
				f := strings.Fields(line)
				// "1: FLOCK  ADVISORY  WRITE 6224 fe:00:9986177 0 EOF"
				if len(f) >= 6 && f[1] == "FLOCK" && strings.HasSuffix(f[5], suffix) && strings.Count(f[5], ":") == 2 {
					return true
				}
			}
			return false
		}
	}
	l := flock.New(p)
	ok, err := l.TryLock()
	if err != nil {
		return false
	}
	if ok {
		l.Unlock()
		return false
	}
	return true
}

func inode(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Ino), true
}

// ErrNoRun is returned by Resolve when nothing matches.
var ErrNoRun = errors.New("no such run")

// ErrAmbiguous is returned by Resolve when a prefix matches several runs.
var ErrAmbiguous = errors.New("ambiguous run")

// Resolve finds the run directory arg names: a run directory path, or under
// root a directory name, a run id, or a unique prefix of either. Naming no
// run (a path that holds none, a name that matches none) or several is the
// user's mistake: an *evalctl.UsageError wrapping ErrNoRun or ErrAmbiguous.
func Resolve(root, arg string) (string, error) {
	if IsRunDir(arg) {
		return arg, nil
	}
	_, statErr := os.Stat(arg)
	if arg == "" || statErr == nil || strings.ContainsRune(arg, os.PathSeparator) {
		// A path: say what is wrong with it (exists but holds no run, or
		// does not exist).
		switch _, err := Open(arg); {
		case statErr != nil:
			return "", evalctl.Usage(fmt.Errorf("%s: %w (no such file or directory); 'evalctl runs' lists runs by name and id", arg, ErrNoRun))
		case err != nil && !fileExists(filepath.Join(arg, PlanFile)):
			return "", evalctl.Usage(fmt.Errorf("%s: %w: not a run directory (it holds no %s); 'evalctl runs' lists runs by name and id", arg, ErrNoRun, RunFile))
		case err != nil:
			return "", evalctl.Usage(fmt.Errorf("%w (%w)", err, ErrNoRun))
		}
		return arg, nil
	}
	return Lookup(root, arg)
}

// Lookup finds a run under root only, by directory name, id, or a unique
// prefix of either; arg is never taken as a path. Naming no run, or several,
// is the user's mistake (an *evalctl.UsageError wrapping ErrNoRun or
// ErrAmbiguous).
func Lookup(root, arg string) (string, error) {
	if arg == "" || strings.ContainsAny(arg, `/\`) || arg == "." || arg == ".." {
		return "", evalctl.Usage(fmt.Errorf("run %q: %w", arg, ErrNoRun))
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return "", evalctl.Usage(fmt.Errorf("run %q: %w: not a run directory, and there is no folder of runs at %s to look it up in (give the run's directory, or set %s)", arg, ErrNoRun, root, RunsEnv))
	}
	if err != nil {
		return "", fmt.Errorf("run %q: not a run directory, and %w (run ids and prefixes are looked up under %s)", arg, err, root)
	}
	var exact, prefix []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		var r struct {
			ID string `json:"id"`
		}
		if err := ReadJSON(filepath.Join(dir, RunFile), &r); err != nil {
			continue
		}
		switch {
		case e.Name() == arg || r.ID == arg:
			exact = append(exact, dir)
		case strings.HasPrefix(e.Name(), arg) || strings.HasPrefix(r.ID, arg):
			prefix = append(prefix, dir)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) == 0 && len(prefix) == 1:
		return prefix[0], nil
	case len(exact)+len(prefix) == 0:
		return "", evalctl.Usage(fmt.Errorf("run %q: %w under %s ('evalctl runs %s' lists them)", arg, ErrNoRun, root, root))
	}
	all := append(exact, prefix...)
	sort.Strings(all)
	return "", evalctl.Usage(fmt.Errorf("run %q: %w: it matches %d runs under %s: %s", arg, ErrAmbiguous, len(all), root, strings.Join(all, ", ")))
}

// ResolveID is the id of the run arg names (see Resolve); "" stays "". A
// well-formed run id that names no run under root is taken as it is, with
// known false, for what the run left behind elsewhere (sandbox containers
// carry the id) after its directory was removed.
func ResolveID(root, arg string) (id string, known bool, err error) {
	if arg == "" {
		return "", false, nil
	}
	dir, err := Resolve(root, arg)
	if err != nil {
		if errors.Is(err, ErrNoRun) && runID.MatchString(arg) {
			return arg, false, nil
		}
		return "", false, err
	}
	st, err := Open(dir)
	if err != nil {
		return "", false, err
	}
	r, err := st.ReadRun()
	if err != nil {
		return "", false, err
	}
	return r.ID, true, nil
}

// ResolveInputs resolves each argument that is not a file as a run (see
// Resolve); files (a fixture diagnosis, say) stay as they are.
func ResolveInputs(root string, args []string) ([]string, error) {
	out := make([]string, len(args))
	for i, a := range args {
		if fi, err := os.Stat(a); err == nil && !fi.IsDir() {
			out[i] = a
			continue
		}
		d, err := Resolve(root, a)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// runID is the form of a run id (a UUID).
var runID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Expand turns a folder of runs into its run directories of the given kind
// ("" for any), oldest first; a run directory stays itself.
func Expand(dir, kind string) ([]string, error) {
	if IsRunDir(dir) {
		return []string{dir}, nil
	}
	list, err := List(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for i := len(list) - 1; i >= 0; i-- {
		if kind != "" && list[i].Kind != kind {
			continue
		}
		out = append(out, list[i].Dir)
	}
	return out, nil
}

// GradedSuites lists the suite ids ("dev@1.0.0") any attempt of the run in
// dir has grades under, sorted.
func GradedSuites(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, AttemptsDir))
	if err != nil {
		return nil, fmt.Errorf("read attempts of %s: %w", dir, err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		gs, err := os.ReadDir(filepath.Join(dir, AttemptsDir, e.Name(), GradesDir))
		if err != nil {
			continue // no grades (yet)
		}
		for _, g := range gs {
			if g.IsDir() {
				seen[g.Name()] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}
