package tasks

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/evalctl/evalctl/internal/yamlcheck"
)

// SuiteFile and CaseFile are the names of the YAML files the loader reads.
const (
	SuiteFile = "suite.yaml"
	CaseFile  = "case.yaml"
)

// DefaultGroupTimeout bounds a check group whose case gives no timeout.
const DefaultGroupTimeout = 120 * time.Second

// RequiredGroups lists, per language, the check groups every phase declares.
// The public and regression groups are optional (see OptionalGroups): a
// case may show the model no tests at all, as outside suites such as
// Exercism's do, and may have nothing to regress.
var RequiredGroups = map[Language][]string{
	Python:     {"acceptance", "syntax"},
	TypeScript: {"acceptance", "typecheck", "consumer_typecheck"},
}

// OptionalGroups lists the check groups a phase may leave out.
var OptionalGroups = []string{"public", "regression"}

var allowedRunners = map[Language]map[Runner]bool{
	Python:     {RunnerPytest: true, RunnerPyCompile: true},
	TypeScript: {RunnerNodeTest: true, RunnerTSC: true},
}

// ignoredNames are caches a tool may leave in a suite directory; they are
// neither part of the fingerprint nor of any workspace.
var ignoredNames = map[string]bool{
	"__pycache__":   true,
	".pytest_cache": true,
	"node_modules":  true,
	".DS_Store":     true,
}

// Ignored reports whether a file or directory name is a tool cache that the
// suite and snapshots leave out.
func Ignored(name string) bool {
	return ignoredNames[name] || strings.HasSuffix(name, ".pyc")
}

type suiteYAML struct {
	Name    string   `yaml:"name"`
	Version string   `yaml:"version"`
	Cases   []string `yaml:"cases"`
}

type caseYAML struct {
	Name      string        `yaml:"name"`
	Language  string        `yaml:"language"`
	Summary   string        `yaml:"summary"`
	Workspace string        `yaml:"workspace"`
	Checks    string        `yaml:"checks"`
	Protected []string      `yaml:"protected"`
	Phases    []phaseYAML   `yaml:"phases"`
	Controls  []controlYAML `yaml:"controls"`
	// Corpus is a directory of files the first prompt must draw on (a
	// long-context case); the arm's context strategy decides how it is
	// sent.
	Corpus string `yaml:"corpus"`
}

type phaseYAML struct {
	Prompt    string      `yaml:"prompt"`
	Overlay   string      `yaml:"overlay"`
	Reference string      `yaml:"reference"`
	Groups    []groupYAML `yaml:"groups"`
}

type groupYAML struct {
	Name     string   `yaml:"name"`
	Runner   string   `yaml:"runner"`
	Paths    []string `yaml:"paths"`
	TSConfig string   `yaml:"tsconfig"`
	Timeout  string   `yaml:"timeout"`
	Required *bool    `yaml:"required"`
	Tests    *int     `yaml:"tests"`
	Keyword  string   `yaml:"keyword"`
}

type controlYAML struct {
	Name     string              `yaml:"name"`
	Phase    int                 `yaml:"phase"`
	Overlay  string              `yaml:"overlay"`
	MustFail map[string][]string `yaml:"must_fail"`
	Why      string              `yaml:"why"`
}

// LoadSuite reads and validates the suite in dir: suite.yaml, every case it
// lists, and every file those cases name. It computes the fingerprint.
func LoadSuite(dir string) (*Suite, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load suite %s: %w", dir, err)
	}
	file := filepath.Join(abs, SuiteFile)
	var sy suiteYAML
	doc, err := yamlcheck.DecodeFile(file, &sy)
	if err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	}
	fe := fieldErr(doc)
	if sy.Name == "" {
		return nil, fe("name", "is required")
	}
	if sy.Version == "" {
		return nil, fe("version", "is required")
	}
	if len(sy.Cases) == 0 {
		return nil, fe("cases", "lists no case")
	}
	s := &Suite{Dir: abs, Name: sy.Name, Version: sy.Version}
	seen := map[string]bool{}
	for i, name := range sy.Cases {
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return nil, fe(fmt.Sprintf("cases[%d]", i), fmt.Sprintf("%q is not a case directory name", name))
		}
		if seen[name] {
			return nil, fe(fmt.Sprintf("cases[%d]", i), fmt.Sprintf("duplicate case %q", name))
		}
		seen[name] = true
		c, err := LoadCase(filepath.Join(abs, name))
		if err != nil {
			return nil, fmt.Errorf("load suite %s: %w", abs, err)
		}
		if c.Name != name {
			return nil, fieldErr(&yamlcheck.Doc{File: filepath.Join(c.Dir, CaseFile)})("name", fmt.Sprintf("%q differs from its directory name %q", c.Name, name))
		}
		s.Cases = append(s.Cases, c)
	}
	fp, err := Fingerprint(abs)
	if err != nil {
		return nil, fmt.Errorf("load suite: %w", err)
	}
	s.Fingerprint = fp
	return s, nil
}

// fieldErr reports a problem with the field at path ("phases[0].prompt")
// with the file and the line (see yamlcheck.Doc.Errorf).
func fieldErr(doc *yamlcheck.Doc) func(field, msg string) error {
	return func(field, msg string) error { return doc.Errorf(field, "%s", msg) }
}

// LoadCase reads and validates one case directory.
func LoadCase(dir string) (*Case, error) {
	file := filepath.Join(dir, CaseFile)
	var cy caseYAML
	doc, err := yamlcheck.DecodeFile(file, &cy)
	if err != nil {
		return nil, err
	}
	fe := fieldErr(doc)
	c := &Case{Dir: dir, Name: cy.Name, Language: Language(cy.Language), Summary: cy.Summary, Protected: cy.Protected}
	if c.Name == "" {
		return nil, fe("name", "is required")
	}
	if _, ok := RequiredGroups[c.Language]; !ok {
		return nil, fe("language", fmt.Sprintf("%q is not python or typescript", cy.Language))
	}
	if strings.TrimSpace(c.Summary) == "" || strings.Contains(strings.TrimSpace(c.Summary), "\n") {
		return nil, fe("summary", "must be one non-empty line")
	}
	if c.WorkspaceDir, err = subdir(dir, orDefault(cy.Workspace, "workspace")); err != nil {
		return nil, fe("workspace", err.Error())
	}
	if c.ChecksDir, err = subdir(dir, orDefault(cy.Checks, "checks")); err != nil {
		return nil, fe("checks", err.Error())
	}
	if cy.Corpus != "" {
		if c.CorpusDir, err = subdir(dir, cy.Corpus); err != nil {
			return nil, fe("corpus", err.Error())
		}
	}
	if len(cy.Phases) == 0 {
		return nil, fe("phases", "lists no phase")
	}
	visible, err := loadPhases(c, cy.Phases, fe)
	if err != nil {
		return nil, err
	}
	if err := checkProtected(c.Protected, visible, fe); err != nil {
		return nil, err
	}
	if err := checkShadowing(c, visible, fe); err != nil {
		return nil, err
	}
	if err := loadControls(c, cy.Controls, fe); err != nil {
		return nil, err
	}
	return c, nil
}

// loadPhases loads each phase onto c and returns the files the agent
// can see across all phases (the workspace and every overlay), for the
// protected-glob and shadowing checks.
func loadPhases(c *Case, phases []phaseYAML, fe func(string, string) error) ([]string, error) {
	visible, err := ListFiles(c.WorkspaceDir)
	if err != nil {
		return nil, fe("workspace", err.Error())
	}
	for i, py := range phases {
		p, err := loadPhase(c, i+1, py, fe)
		if err != nil {
			return nil, err
		}
		if p.OverlayDir != "" {
			files, err := ListFiles(p.OverlayDir)
			if err != nil {
				return nil, fe(fmt.Sprintf("phases[%d].overlay", i), err.Error())
			}
			visible = append(visible, files...)
		}
		c.Phases = append(c.Phases, p)
	}
	return visible, nil
}

// checkProtected: every protected glob is relative, well formed and
// matches some file the agent can see (a glob matching nothing protects
// nothing, most likely by a typo).
func checkProtected(protected, visible []string, fe func(string, string) error) error {
	for i, g := range protected {
		if _, err := path.Match(strings.ReplaceAll(g, "**", "x"), ""); err != nil || g == "" || strings.HasPrefix(g, "/") {
			return fe(fmt.Sprintf("protected[%d]", i), fmt.Sprintf("%q is not a relative glob", g))
		}
		matched := false
		for _, f := range visible {
			if MatchGlob(g, f) {
				matched = true
				break
			}
		}
		if !matched {
			return fe(fmt.Sprintf("protected[%d]", i), fmt.Sprintf("glob %q matches no file of the workspace", g))
		}
	}
	return nil
}

// checkShadowing refuses a Python case where a file the agent sees or a
// reference holds would be shadowed by a module of the standard library
// or pytest.
func checkShadowing(c *Case, visible []string, fe func(string, string) error) error {
	if c.Language == Python {
		files := visible
		for _, p := range c.Phases {
			ref, err := ListFiles(p.ReferenceDir)
			if err != nil {
				return fe(fmt.Sprintf("phases[%d].reference", p.Number-1), err.Error())
			}
			files = append(files, ref...)
		}
		if sh := Shadowed(files); len(sh) > 0 {
			return fe("workspace", fmt.Sprintf("%s: the grader appends the workspace to sys.path, after the standard library and pytest, so the tests would import those modules, never these files; rename them", strings.Join(sh, ", ")))
		}
	}
	return nil
}

// loadControls validates each negative control (a unique name, an
// existing phase and its groups, an overlay, a reason) and adds it to c.
func loadControls(c *Case, controls []controlYAML, fe func(string, string) error) error {
	var err error
	names := map[string]bool{}
	for i, cy := range controls {
		field := fmt.Sprintf("controls[%d]", i)
		if cy.Name == "" {
			return fe(field+".name", "is required")
		}
		if names[cy.Name] {
			return fe(field+".name", fmt.Sprintf("duplicate control %q", cy.Name))
		}
		names[cy.Name] = true
		ctl := &Control{Name: cy.Name, Phase: cy.Phase, MustFail: cy.MustFail, Why: strings.TrimSpace(cy.Why)}
		if ctl.Phase == 0 {
			ctl.Phase = 1
		}
		p := c.Phase(ctl.Phase)
		if p == nil {
			return fe(field+".phase", fmt.Sprintf("case has no phase %d", ctl.Phase))
		}
		if ctl.OverlayDir, err = subdir(c.Dir, cy.Overlay); err != nil {
			return fe(field+".overlay", err.Error())
		}
		if len(ctl.MustFail) == 0 {
			return fe(field+".must_fail", "names no group the control must fail")
		}
		for g := range ctl.MustFail {
			if p.Group(g) == nil {
				return fe(field+".must_fail", fmt.Sprintf("phase %d has no group %q", ctl.Phase, g))
			}
		}
		if ctl.Why == "" {
			return fe(field+".why", "is required: say what mistake the control stands for")
		}
		c.Controls = append(c.Controls, ctl)
	}
	return nil
}

func loadPhase(c *Case, n int, py phaseYAML, fe func(string, string) error) (*Phase, error) {
	field := fmt.Sprintf("phases[%d]", n-1)
	p := &Phase{Number: n}
	if py.Prompt == "" {
		return nil, fe(field+".prompt", "is required")
	}
	p.PromptFile = filepath.Join(c.Dir, filepath.FromSlash(py.Prompt))
	data, err := os.ReadFile(p.PromptFile)
	if err != nil {
		return nil, fe(field+".prompt", err.Error())
	}
	p.Prompt = string(data)
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, fe(field+".prompt", p.PromptFile+" is empty")
	}
	if py.Overlay != "" {
		if n == 1 {
			return nil, fe(field+".overlay", "phase 1 starts from the workspace; put its files there")
		}
		if p.OverlayDir, err = subdir(c.Dir, py.Overlay); err != nil {
			return nil, fe(field+".overlay", err.Error())
		}
	}
	if p.ReferenceDir, err = subdir(c.Dir, py.Reference); err != nil {
		return nil, fe(field+".reference", err.Error())
	}
	seen := map[string]bool{}
	for j, gy := range py.Groups {
		gf := fmt.Sprintf("%s.groups[%d]", field, j)
		g := &Group{Name: gy.Name, Runner: Runner(gy.Runner), Paths: gy.Paths, TSConfig: gy.TSConfig, Timeout: DefaultGroupTimeout, Required: true}
		if g.Name == "" {
			return nil, fe(gf+".name", "is required")
		}
		if seen[g.Name] {
			return nil, fe(gf+".name", fmt.Sprintf("duplicate group %q", g.Name))
		}
		seen[g.Name] = true
		if !allowedRunners[c.Language][g.Runner] {
			return nil, fe(gf+".runner", fmt.Sprintf("%q is not a %s runner", gy.Runner, c.Language))
		}
		if gy.Timeout != "" {
			d, err := time.ParseDuration(gy.Timeout)
			if err != nil || d <= 0 {
				return nil, fe(gf+".timeout", fmt.Sprintf("%q is not a positive duration such as 120s", gy.Timeout))
			}
			g.Timeout = d
		}
		if gy.Required != nil {
			g.Required = *gy.Required
		}
		if gy.Tests != nil {
			switch {
			case g.Runner != RunnerPytest && g.Runner != RunnerNodeTest:
				return nil, fe(gf+".tests", fmt.Sprintf("runner %s runs no tests to count", g.Runner))
			case *gy.Tests <= 0:
				return nil, fe(gf+".tests", fmt.Sprintf("%d is not a number of tests (at least 1)", *gy.Tests))
			}
			g.Tests = *gy.Tests
		}
		if gy.Keyword != "" {
			if g.Runner != RunnerPytest {
				return nil, fe(gf+".keyword", fmt.Sprintf("runner %s selects no tests by keyword (pytest only)", g.Runner))
			}
			if strings.HasPrefix(gy.Keyword, "-") || strings.ContainsAny(gy.Keyword, "\n\x00") {
				return nil, fe(gf+".keyword", fmt.Sprintf("%q is not a pytest -k expression", gy.Keyword))
			}
			g.Keyword = gy.Keyword
		}
		if err := checkGroupFiles(c, p, g); err != nil {
			return nil, fe(gf, err.Error())
		}
		p.Groups = append(p.Groups, g)
	}
	for _, want := range RequiredGroups[c.Language] {
		if !seen[want] {
			return nil, fe(field+".groups", fmt.Sprintf("missing the %q group every %s phase declares", want, c.Language))
		}
	}
	return p, nil
}

// checkGroupFiles makes sure every path a group names exists where the
// grader will look for it.
func checkGroupFiles(c *Case, p *Phase, g *Group) error {
	needsTS := g.Runner == RunnerNodeTest || g.Runner == RunnerTSC
	if needsTS {
		if g.TSConfig == "" {
			return fmt.Errorf("tsconfig: is required for runner %s", g.Runner)
		}
		if _, err := checksPath(c, g.TSConfig); err != nil {
			return fmt.Errorf("tsconfig: %w", err)
		}
	} else if g.TSConfig != "" {
		return fmt.Errorf("tsconfig: runner %s takes none", g.Runner)
	}
	switch g.Runner {
	case RunnerPytest:
		if len(g.Paths) == 0 {
			return errors.New("paths: lists no test path")
		}
		for i, tp := range g.Paths {
			// A path may select tests inside its file by pytest node id
			// ("test_x.py::TestA::test_y", "test_x.py::test_z[1]").
			tp, _, _ = strings.Cut(tp, "::")
			if strings.HasPrefix(tp, "/") {
				if _, err := checksPath(c, tp); err != nil {
					return fmt.Errorf("paths[%d]: %w", i, err)
				}
				continue
			}
			if !existsInWorkspace(c, p, tp) {
				return fmt.Errorf("paths[%d]: %q is in neither the workspace nor a phase overlay", i, tp)
			}
		}
	case RunnerNodeTest:
		if len(g.Paths) == 0 {
			return errors.New("paths: lists no compiled test path")
		}
		// The compiled tree mirrors the file system from "/": each path
		// must come from a source under /checks or /workspace (a .js file
		// from its .ts), or the typo shows only when an answer is graded.
		for i, tp := range g.Paths {
			src := []string{tp}
			if js, ok := strings.CutSuffix(tp, ".js"); ok {
				src = append(src, js+".ts")
			}
			found := false
			for _, s := range src {
				if strings.HasPrefix(s, "checks/") {
					_, err := checksPath(c, "/"+s)
					found = found || err == nil
				} else if rel, ok := strings.CutPrefix(s, "workspace/"); ok {
					found = found || existsInWorkspace(c, p, rel)
				}
			}
			if !found {
				return fmt.Errorf("paths[%d]: %q compiles from nothing under checks/ or workspace/ (the compiled tree mirrors /checks and /workspace)", i, tp)
			}
		}
	case RunnerPyCompile, RunnerTSC:
		if len(g.Paths) != 0 {
			return fmt.Errorf("paths: runner %s takes none", g.Runner)
		}
	}
	return nil
}

// checksPath maps an absolute grading path under /checks to the case's
// checks directory and checks that it exists.
func checksPath(c *Case, p string) (string, error) {
	rel, ok := strings.CutPrefix(p, "/checks/")
	if !ok || rel == "" || path.Clean(rel) != rel || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%q is not a path under /checks", p)
	}
	host := filepath.Join(c.ChecksDir, filepath.FromSlash(rel))
	if _, err := os.Stat(host); err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return host, nil
}

func existsInWorkspace(c *Case, upto *Phase, rel string) bool {
	dirs := []string{c.WorkspaceDir}
	for _, p := range c.Phases {
		if p.OverlayDir != "" {
			dirs = append(dirs, p.OverlayDir)
		}
	}
	if upto.OverlayDir != "" {
		dirs = append(dirs, upto.OverlayDir)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, filepath.FromSlash(rel))); err == nil {
			return true
		}
	}
	return false
}

// Group returns the phase's group of that name, or nil.
func (p *Phase) Group(name string) *Group {
	for _, g := range p.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// subdir resolves rel inside base and requires an existing directory that
// does not escape base.
func subdir(base, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("is required")
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q must be a directory inside %s", rel, base)
	}
	full := filepath.Join(base, clean)
	fi, err := os.Stat(full)
	if err != nil {
		return "", fmt.Errorf("directory %s: %w", full, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", full)
	}
	return full, nil
}

// ListFiles returns the slash-separated paths of the regular files under dir,
// sorted, leaving out tool caches.
func ListFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && Ignored(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		} else if d.Type()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s: symbolic links are not allowed in a suite", p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// MatchGlob reports whether the slash-separated relative path name matches
// pattern, where "**" as a whole segment matches any number of segments and
// other segments follow path.Match.
func MatchGlob(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
