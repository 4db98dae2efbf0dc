// Package grader turns an answer snapshot into a Grade: it runs a case
// phase's frozen check groups against the answer in a fresh sandbox
// container (never the agent's) and counts protected changes and missing
// starter files. The answer cannot influence its own grading: protected
// files are restored from the case before anything runs, the checks are
// root-owned and read-only, the grader owns every command line, and a group
// that ran no test fails.
package grader

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// Engine starts grading containers; *sandbox.Engine satisfies it.
type Engine interface {
	Start(ctx context.Context, spec sandbox.Spec) (*sandbox.Container, error)
}

// gradeBox is what a grade calls on its container: the answer and the checks
// copied in, the check groups' commands, ending what they left running,
// where it ran and its removal.
type gradeBox interface {
	Exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, error)
	CopyInReadOnly(ctx context.Context, dir string, entries []sandbox.Entry) error
	CopyInPrivate(ctx context.Context, dir string, entries []sandbox.Entry, user string) error
	KillAll(ctx context.Context)
	Remove(ctx context.Context) error
	EngineName() string
	// EngineLost asks the engine whether it still answers.
	EngineLost(ctx context.Context) bool
}

var _ gradeBox = (*sandbox.Container)(nil)

// gradeBoxes is what a grade starts its container through: an Engine's
// containers as boxes (engineBoxes), or a fake in the package's tests.
type gradeBoxes interface {
	Start(ctx context.Context, spec sandbox.Spec) (gradeBox, error)
	// Drain checks b's engine after its work failed and, when it stopped
	// answering, drains it from the pool (the next container goes to
	// another) and reports true; false with no pool.
	Drain(ctx context.Context, b gradeBox) bool
	// Pool says whether the boxes come from a pool of engines (a grade
	// whose engine was lost is tried again on another).
	Pool() bool
}

// engineBoxes are the boxes of an Engine.
type engineBoxes struct{ e Engine }

var _ gradeBoxes = engineBoxes{}

func (e engineBoxes) Start(ctx context.Context, spec sandbox.Spec) (gradeBox, error) {
	c, err := e.e.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (e engineBoxes) Drain(ctx context.Context, b gradeBox) bool {
	pool, ok := e.e.(drainer)
	c, isContainer := b.(*sandbox.Container)
	return ok && isContainer && pool.Drain(ctx, c)
}

func (e engineBoxes) Pool() bool {
	_, ok := e.e.(drainer)
	return ok
}

// Grader grades snapshots. It is safe for concurrent use; at most
// Concurrency grades run at once.
type Grader struct {
	engine gradeBoxes
	// image is the sandbox image reference, imageID its ID (recorded).
	image, imageID string
	limits         sandbox.Limits
	slots          chan struct{}
}

// Options configure a Grader.
type Options struct {
	// Concurrency bounds how many grades run at once (default 1).
	Concurrency int
	// Limits of each grading container (defaults: sandbox.DefaultLimits).
	Limits sandbox.Limits
}

// New returns a grader using the given engine and sandbox image.
func New(engine Engine, image, imageID string, opts Options) *Grader {
	return newGrader(engineBoxes{engine}, image, imageID, opts)
}

// newGrader is New over gradeBoxes.
func newGrader(b gradeBoxes, image, imageID string, opts Options) *Grader {
	n := opts.Concurrency
	if n < 1 {
		n = 1
	}
	return &Grader{engine: b, image: image, imageID: imageID, limits: opts.Limits, slots: make(chan struct{}, n)}
}

// Labels tie a grading container to the run and attempt it grades, so a
// crashed run's containers can be pruned.
type Labels struct{ Run, Attempt string }

// drainer is a pool of engines (*sandbox.Hosts): it drains an engine that
// stopped answering, and places the next container on another.
type drainer interface {
	Drain(ctx context.Context, c *sandbox.Container) bool
}

// maxEngineTries bounds how many engines one grade is tried on.
const maxEngineTries = 3

// Grade grades the answer for phase (1-based) of case c of suite s. On a
// pool of engines, a grade whose engine stops answering is graded again on
// another (a grade is a pure function of answer, case and image, so the
// retry changes nothing but the engine recorded).
func (g *Grader) Grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels Labels) (*evalctl.Grade, error) {
	isPool := g.engine.Pool()
	for try := 1; ; try++ {
		var box gradeBox
		gr, err := g.grade(ctx, s, c, phase, answer, labels, &box)
		if err == nil && isPool && box != nil && box.EngineLost(ctx) {
			// An engine that died under the last command can make it look
			// like the answer's failure: such a grade is not kept.
			err = fmt.Errorf("grade %s phase %d: %w", c.Name, phase, sandbox.ErrEngineLost)
		}
		if err == nil {
			if box != nil {
				gr.Engine = box.EngineName()
			}
			return gr, nil
		}
		if !isPool || box == nil || ctx.Err() != nil || try == maxEngineTries || !g.engine.Drain(ctx, box) {
			if box != nil && ctx.Err() == nil && box.EngineLost(ctx) {
				return nil, fmt.Errorf("%w: engine %s: %w", sandbox.ErrEngineLost, box.EngineName(), err)
			}
			return nil, err
		}
	}
}

// grade is one try of Grade; used is the container it ran in.
func (g *Grader) grade(ctx context.Context, s *tasks.Suite, c *tasks.Case, phase int, answer *sandbox.Snapshot, labels Labels, used *gradeBox) (*evalctl.Grade, error) {
	p := c.Phase(phase)
	if p == nil {
		return nil, fmt.Errorf("grade %s: case has no phase %d", c.Name, phase)
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-g.slots }()
	start := time.Now()
	entries, err := answer.Entries()
	if err != nil {
		return nil, fmt.Errorf("grade %s phase %d: read snapshot: %w", c.Name, phase, err)
	}
	if sandbox.IsTooLarge(entries) {
		return &evalctl.Grade{
			Suite: s.Name, SuiteVersion: s.Version, SuiteFingerprint: s.Fingerprint,
			Case: c.Name, Phase: phase, SnapshotSHA256: answer.SHA256, ImageID: g.imageID,
			AnswerTooLarge: true, Groups: []evalctl.GroupResult{}, GradedAt: time.Now().UTC(), Seconds: time.Since(start).Seconds(),
		}, nil
	}
	pristine, err := Pristine(c, phase)
	if err != nil {
		return nil, err
	}
	ws, audit := Prepare(c, pristine, entries)
	checks, err := sandbox.DirEntries(c.ChecksDir, tasks.Ignored)
	if err != nil {
		return nil, fmt.Errorf("grade %s: read checks: %w", c.Name, err)
	}
	gr := &evalctl.Grade{
		Suite: s.Name, SuiteVersion: s.Version, SuiteFingerprint: s.Fingerprint,
		Case: c.Name, Phase: phase, SnapshotSHA256: answer.SHA256, ImageID: g.imageID,
		ProtectedChanges: audit.Protected, ProtectedChangesCount: len(audit.Protected),
		MissingStarterFiles: audit.Missing, MissingStarterFilesCount: len(audit.Missing),
	}
	box, err := g.engine.Start(ctx, sandbox.Spec{
		Image: g.image, Role: sandbox.RoleGrader, Run: labels.Run, Attempt: labels.Attempt,
		Limits: g.limits, Volumes: []string{"/checks"}, ReadOnlyWorkspace: true,
		Env: []string{"EVALCTL_WORKSPACE=/workspace", "HOME=/tmp", "PYTHONDONTWRITEBYTECODE=1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1"},
	})
	if err != nil {
		return nil, fmt.Errorf("grade %s phase %d: %w", c.Name, phase, err)
	}
	*used = box
	defer box.Remove(context.WithoutCancel(ctx))
	warm := warmRunners(ctx, box, hasPytest(p))
	defer func() { <-warm }()
	// The answer as graded is root-owned and read-only: no process of the
	// answer's can change what a later group reads.
	if err := box.CopyInReadOnly(ctx, "/workspace", ws); err != nil {
		return nil, fmt.Errorf("grade %s phase %d: copy answer: %w", c.Name, phase, err)
	}
	// The checks are the harness user's alone: the answer's processes
	// cannot read the frozen tests while they run.
	if err := box.CopyInPrivate(ctx, "/checks", checks, sandbox.HarnessUser); err != nil {
		return nil, fmt.Errorf("grade %s phase %d: copy checks: %w", c.Name, phase, err)
	}
	<-warm
	gr.Shadowed = shadowed(c, ws)
	gr.Solved = gr.ProtectedChangesCount == 0 && gr.MissingStarterFilesCount == 0
	if err := runGroups(ctx, box, c, p, gr); err != nil {
		return nil, err
	}
	gr.GradedAt = time.Now().UTC()
	gr.Seconds = time.Since(start).Seconds()
	return gr, nil
}

// warmRunners starts the two command runners (one container runtime exec
// each, the bulk of a grade's fixed cost) while the answer and checks are
// copied; the channel closes when both are up. With pytest groups to run,
// the harness user's runner also starts importing pytest once for all of
// them (see pytestPreload).
func warmRunners(ctx context.Context, box gradeBox, pytest bool) <-chan struct{} {
	warm := make(chan struct{})
	go func() {
		defer close(warm)
		var wg sync.WaitGroup
		for _, user := range []string{sandbox.HarnessUser, sandbox.CommandUser} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opt := sandbox.ExecOptions{User: user, Dir: "/", Timeout: 30 * time.Second}
				if pytest && user == sandbox.HarnessUser {
					opt.Preload = pytestPreload
				}
				box.Exec(ctx, []string{"true"}, opt)
			}()
		}
		wg.Wait()
	}()
	return warm
}

// hasPytest says whether p has a pytest group.
func hasPytest(p *tasks.Phase) bool {
	for _, g := range p.Groups {
		if g.Runner == tasks.RunnerPytest {
			return true
		}
	}
	return false
}

// runGroups runs the phase's check groups in their running order and
// records them in gr in the case's order; a required group that fails
// unsolves it.
func runGroups(ctx context.Context, box gradeBox, c *tasks.Case, p *tasks.Phase, gr *evalctl.Grade) error {
	order := orderGroups(p.Groups)
	pre := compileGroups(ctx, box, order)
	for _, grp := range order {
		res, err := runCompiledGroup(ctx, box, grp, pre[grp])
		if err != nil {
			return fmt.Errorf("grade %s phase %d group %s: %w", c.Name, p.Number, grp.Name, err)
		}
		gr.Groups = append(gr.Groups, *res)
		if grp.Required && !res.Success {
			gr.Solved = false
		}
	}
	// Report groups in the case's order, whatever order they ran in.
	sort.SliceStable(gr.Groups, func(i, j int) bool {
		return groupIndex(p, gr.Groups[i].Name) < groupIndex(p, gr.Groups[j].Name)
	})
	return nil
}

func groupIndex(p *tasks.Phase, name string) int {
	for i, g := range p.Groups {
		if g.Name == name {
			return i
		}
	}
	return len(p.Groups)
}

// orderGroups runs groups that execute nothing of the answer (syntax and
// type checks) first, then those reading workspace-resident tests (public),
// then the rest, so that answer code run by one group has no chance to
// alter files a later group reads from the workspace.
func orderGroups(groups []*tasks.Group) []*tasks.Group {
	rank := func(g *tasks.Group) int {
		switch {
		case g.Runner == tasks.RunnerPyCompile || g.Runner == tasks.RunnerTSC:
			return 0
		case g.Name == "public":
			return 1
		default:
			return 2
		}
	}
	out := append([]*tasks.Group(nil), groups...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// Pristine is the workspace as phase n of c begins, less the agent's work:
// the starter plus the overlays of phases 2..n. It is what protected files
// are compared with and restored from.
func Pristine(c *tasks.Case, n int) ([]sandbox.Entry, error) {
	return phaseTree(c, n, false)
}

// phaseTree is the starter with the overlays of phases 1..n laid over it
// in order and, with references, the reference answers of phases before n.
func phaseTree(c *tasks.Case, n int, references bool) ([]sandbox.Entry, error) {
	tree, err := sandbox.DirEntries(c.WorkspaceDir, tasks.Ignored)
	if err != nil {
		return nil, fmt.Errorf("case %s: read workspace: %w", c.Name, err)
	}
	for _, p := range c.Phases[:n] {
		if p.OverlayDir != "" {
			over, err := sandbox.DirEntries(p.OverlayDir, tasks.Ignored)
			if err != nil {
				return nil, fmt.Errorf("case %s phase %d: read overlay: %w", c.Name, p.Number, err)
			}
			tree = Overlay(tree, over)
		}
		if references && p.Number < n {
			ref, err := sandbox.DirEntries(p.ReferenceDir, tasks.Ignored)
			if err != nil {
				return nil, fmt.Errorf("case %s phase %d: read reference: %w", c.Name, p.Number, err)
			}
			tree = Overlay(tree, ref)
		}
	}
	return tree, nil
}

// Overlay lays over on top of base: entries of over replace those of base
// with the same name.
func Overlay(base, over []sandbox.Entry) []sandbox.Entry {
	idx := map[string]int{}
	out := append([]sandbox.Entry(nil), base...)
	for i, e := range out {
		idx[e.Name] = i
	}
	for _, e := range over {
		if i, ok := idx[e.Name]; ok {
			out[i] = e
			continue
		}
		idx[e.Name] = len(out)
		out = append(out, e)
	}
	return out
}

// Audit is what Prepare found wrong with an answer before any check ran.
type Audit struct {
	// Protected lists protected files modified, deleted or added, and links
	// pointing out of the workspace, as "modified: PATH" etc.
	Protected []string
	// Missing lists unprotected starter files the answer deleted.
	Missing []string
}

// Prepare compares an answer with the pristine workspace and returns the
// tree to grade: protected files restored, protected files the answer added
// removed, tool caches and links out of the workspace dropped.
func Prepare(c *tasks.Case, pristine, answer []sandbox.Entry) ([]sandbox.Entry, Audit) {
	var audit Audit
	isProtected := func(name string) bool {
		for _, g := range c.Protected {
			if tasks.MatchGlob(g, name) {
				return true
			}
		}
		return false
	}
	// Caches (node_modules, __pycache__, ...) are dropped outright.
	answer = sandbox.Filter(answer, tasks.Ignored)
	have := map[string]sandbox.Entry{}
	for _, e := range answer {
		have[e.Name] = e
	}
	protectedUnder := func(p string) bool {
		if isProtected(p) {
			return true
		}
		for _, q := range pristine {
			if (p == "" || strings.HasPrefix(q.Name, p+"/")) && isProtected(q.Name) {
				return true
			}
		}
		return false
	}
	var out []sandbox.Entry
	for _, e := range answer {
		if e.Mode&fs.ModeSymlink != 0 {
			// Judged by what it resolves to in the answer, not by its text.
			to, ok := resolveLink(have, e.Name)
			switch {
			case !ok:
				audit.Protected = append(audit.Protected, fmt.Sprintf("link out of the workspace: %s -> %s", e.Name, e.Linkname))
				continue
			case !isProtected(e.Name) && protectedUnder(to):
				audit.Protected = append(audit.Protected, fmt.Sprintf("link to a protected file: %s -> %s", e.Name, e.Linkname))
				continue
			}
		}
		if !e.Mode.IsDir() && isProtected(e.Name) {
			continue // restored below from the pristine tree
		}
		out = append(out, e)
	}
	inPristine := map[string]bool{}
	for _, p := range pristine {
		inPristine[p.Name] = true
		if p.Mode.IsDir() {
			continue
		}
		a, ok := have[p.Name]
		if isProtected(p.Name) {
			switch {
			case !ok:
				audit.Protected = append(audit.Protected, "deleted: "+p.Name)
			case a.Mode.Type() != p.Mode.Type() || !bytes.Equal(a.Data, p.Data) || a.Linkname != p.Linkname:
				audit.Protected = append(audit.Protected, "modified: "+p.Name)
			}
			out = append(out, p)
			continue
		}
		if !ok || a.Mode.IsDir() {
			audit.Missing = append(audit.Missing, p.Name)
		}
	}
	for _, e := range answer {
		if !e.Mode.IsDir() && isProtected(e.Name) && !inPristine[e.Name] {
			audit.Protected = append(audit.Protected, "added: "+e.Name)
		}
	}
	out = withParents(out)
	sort.Strings(audit.Protected)
	sort.Strings(audit.Missing)
	return out, audit
}

// withParents adds directory entries for parents that a restored file
// needs but the answer deleted, and drops entries whose parent is not a
// directory (a restored file under a name the answer turned into a file).
func withParents(entries []sandbox.Entry) []sandbox.Entry {
	kind := map[string]fs.FileMode{}
	for _, e := range entries {
		kind[e.Name] = e.Mode
	}
	var out []sandbox.Entry
	for _, e := range entries {
		ok := true
		for dir := path.Dir(e.Name); dir != "."; dir = path.Dir(dir) {
			m, seen := kind[dir]
			if !seen {
				kind[dir] = fs.ModeDir | 0o755
				out = append(out, sandbox.Entry{Name: dir, Mode: fs.ModeDir | 0o755})
			} else if !m.IsDir() {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// maxLinkHops bounds the links followed resolving one (as the kernel's 40).
const maxLinkHops = 40

// resolveLink resolves the symbolic link at name as the kernel would with
// the answer as /workspace, following links in the answer at every step.
// ok is false when it leaves the workspace at any step (however its text
// reads: "/workspace/../checks" leaves it) or loops.
func resolveLink(tree map[string]sandbox.Entry, name string) (string, bool) {
	hops := 0
	var walk func(dir []string, target string) ([]string, bool)
	walk = func(dir []string, target string) ([]string, bool) {
		parts := append([]string(nil), dir...)
		if strings.HasPrefix(target, "/") {
			parts = nil
			// An absolute path must go straight into /workspace (no "..",
			// no other directory on the way: the kernel would resolve
			// "/workspace/x/.." through x, not by its text).
			segs := strings.Split(target, "/")
			i := 0
			for i < len(segs) && (segs[i] == "" || segs[i] == ".") {
				i++
			}
			if i == len(segs) || segs[i] != "workspace" {
				return nil, false
			}
			target = strings.Join(segs[i+1:], "/")
		}
		for _, comp := range strings.Split(target, "/") {
			switch comp {
			case "", ".":
				continue
			case "..":
				if len(parts) == 0 {
					return nil, false
				}
				parts = parts[:len(parts)-1]
				continue
			}
			parts = append(parts, comp)
			e, ok := tree[strings.Join(parts, "/")]
			if ok && e.Mode&fs.ModeSymlink != 0 {
				if hops++; hops > maxLinkHops {
					return nil, false
				}
				var ok bool
				if parts, ok = walk(parts[:len(parts)-1], e.Linkname); !ok {
					return nil, false
				}
			}
		}
		return parts, true
	}
	e := tree[name]
	dir := strings.Split(name, "/")
	parts, ok := walk(dir[:len(dir)-1], e.Linkname)
	return strings.Join(parts, "/"), ok
}

func randomName() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
