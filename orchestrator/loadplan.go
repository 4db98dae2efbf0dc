package orchestrator

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/internal/yamlcheck"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/tasks"
)

// planYAML is the plan file as users write it.
type planYAML struct {
	// Name names the run: its directory is NAME-RUNID and reports show it
	// (default: the plan file's name without .yaml).
	Name string `yaml:"name"`
	// Suite is the suite directory, relative to the plan file (required).
	Suite string `yaml:"suite"`
	// SuiteFingerprint, when given, must equal the suite's fingerprint
	// ('evalctl cases fingerprint'): the run refuses a suite that changed.
	SuiteFingerprint string `yaml:"suite_fingerprint"`
	// Cases is all, or a list of case names of the suite.
	Cases yaml.Node `yaml:"cases" default:"all" yamltype:"all, or a list of case names"`
	// Repeats are the repeat labels, each with its seed (required, at least
	// one): the same label runs with the same seed in every arm, so attempts
	// pair up across arms. Seeds must differ.
	Repeats []Repeat `yaml:"repeats"`
	// Arms are the configurations compared (required, at least one): each
	// inline, or {file: PATH} naming a file with the same fields (see Arm).
	Arms []armRef `yaml:"arms"`
	// Order says how attempts are ordered.
	Order Order `yaml:"order"`
	// RestSeconds is a pause between attempts (the GPU cools down).
	RestSeconds float64 `yaml:"rest_seconds" range:"0," default:"0"`
	// Concurrency is the number of attempts run at once per device; arms
	// that start their own server need 1.
	Concurrency int `yaml:"concurrency" range:"1," default:"1"`
	// Guards stop the run cleanly between attempts; resume it later.
	Guards Guards `yaml:"guards"`
	// SandboxHosts are the Docker Engines that run agent and grading
	// containers, each with its capacity (default: the local engine alone,
	// one container per attempt in flight). See docs/sandbox-hosts.md.
	SandboxHosts []SandboxHost `yaml:"sandbox_hosts"`
	// Defaults holds budgets for arms that leave them unset.
	Defaults *armDefault `yaml:"defaults"`
	// Stop is an opt-in sequential stop rule on the speed ratio of two
	// arms, checked after every complete pair (see docs/power.md).
	Stop *StopRule `yaml:"stop"`
}

// armRef is an inline arm or a reference to an arm file.
type armRef struct {
	// File names a YAML file holding the arm, relative to the plan; then
	// the entry holds nothing else.
	File string `yaml:"file"`
	Arm  `yaml:",inline"`
	// Sweep expands the arm into one arm per value of a setting (one axis),
	// or per combination of values (a list of axes: a grid).
	Sweep sweepAxes `yaml:"sweep" yamltype:"mapping (one axis), or a list of mappings (a grid)"`
}

// armDefault holds budgets applied to arms that leave them unset.
type armDefault struct {
	// Budgets fills the budgets each arm leaves unset.
	Budgets Budgets `yaml:"budgets"`
}

// PlanError is a bad plan input, naming the file, the line and the field
// path (arms[1].sampling.temperature).
type PlanError struct {
	File, Field, Msg string
	// Line is where the field (or its nearest written parent) is; 0 when
	// unknown.
	Line int
}

func (e *PlanError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// PlanErrors are every mistake found in a plan (and the files it names),
// in file and line order: a plan is fixed in one go, not one try per
// mistake. errors.As finds the first *PlanError in it.
type PlanErrors []*PlanError

func (l PlanErrors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Errors lists the mistakes one by one (the command line prints one line
// for each).
func (l PlanErrors) Errors() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

func (l PlanErrors) Unwrap() []error { return l.Errors() }

// planCheck gathers a plan's mistakes. Checks of a field the decoder
// already found wrong, or of an arm whose file did not load, are dropped:
// they would repeat the mistake or report the unset value left behind.
type planCheck struct {
	file string
	doc  *yamlcheck.Doc // nil for a plan built as a Go value
	errs PlanErrors
	// skip holds field paths whose checks are dropped.
	skip map[string]bool
	// armDocs are the arm files by the arm's field path ("arms[1]"): a
	// check of a field an arm file got wrong is dropped too.
	armDocs map[string]*yamlcheck.Doc
}

func newPlanCheck(file string, doc *yamlcheck.Doc) *planCheck {
	return &planCheck{file: file, doc: doc, skip: map[string]bool{}, armDocs: map[string]*yamlcheck.Doc{}}
}

// bad records a mistake with the field at path; one of an arm read from
// its own file is placed in that file.
func (c *planCheck) bad(field, format string, a ...any) {
	if c.doc.Reported(field) {
		return
	}
	file, doc, at, note, skipped := c.place(field)
	if skipped || doc != c.doc && doc.Reported(at) {
		return
	}
	c.errs = append(c.errs, &PlanError{File: file, Field: at, Line: doc.Line(at), Msg: fmt.Sprintf(format, a...) + note})
}

// place is where the field at path was written: the plan file, or the arm
// file it came from (at is then the path in that file, and note names
// the arm in the plan); skipped when its checks are dropped.
func (c *planCheck) place(field string) (file string, doc *yamlcheck.Doc, at, note string, skipped bool) {
	file, doc, at = c.file, c.doc, field
	for p := field; p != ""; p = parentField(p) {
		if c.skip[p] {
			return file, doc, at, note, true
		}
		if d := c.armDocs[p]; d != nil {
			file, doc, at = d.File, d, strings.TrimPrefix(field, p+".")
			note = fmt.Sprintf(" (%s of %s)", p, filepath.Base(c.file))
		}
	}
	return file, doc, at, note, false
}

// add records err: each *PlanError it holds as it is (placed on its line
// when it names none in the plan file), anything else as a mistake with
// field.
func (c *planCheck) add(field string, err error) {
	var list PlanErrors
	var pe *PlanError
	switch {
	case err == nil:
	case errors.As(err, &list):
		for _, e := range list {
			c.add(field, e)
		}
	case errors.As(err, &pe):
		if pe.Line == 0 && pe.File == c.file {
			if c.doc.Reported(pe.Field) {
				return
			}
			pe.Line = c.doc.Line(pe.Field)
		}
		c.errs = append(c.errs, pe)
	default:
		c.bad(field, "%v", err)
	}
}

// err is nil, the one *PlanError, or PlanErrors in file and line order.
func (c *planCheck) err() error {
	switch len(c.errs) {
	case 0:
		return nil
	case 1:
		return c.errs[0]
	}
	sort.SliceStable(c.errs, func(i, j int) bool {
		if c.errs[i].File != c.errs[j].File {
			return c.errs[i].File < c.errs[j].File
		}
		return c.errs[i].Line < c.errs[j].Line
	})
	return c.errs
}

func parentField(p string) string {
	if i := strings.LastIndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return ""
}

// decodeYAML reads a plan or arm file through yamlcheck: unknown fields
// with "did you mean", values of the wrong type, ranges, tabs and broken
// indentation are reported with the field path and the line, every one of
// them. The Doc comes back with the mistakes when the file parsed, v
// holding what decoded, so the loader may check the rest.
func decodeYAML(file string, v any) (*yamlcheck.Doc, error) {
	doc, err := yamlcheck.DecodeFile(file, v)
	var list yamlcheck.Errors
	var ye *yamlcheck.Error
	switch {
	case err == nil:
		return doc, nil
	case errors.As(err, &list):
		out := make(PlanErrors, len(list))
		for i, e := range list {
			out[i] = &PlanError{File: e.File, Line: e.Line, Field: e.Field, Msg: e.Msg}
		}
		return doc, out
	case errors.As(err, &ye):
		return doc, &PlanError{File: ye.File, Line: ye.Line, Field: ye.Field, Msg: ye.Msg}
	}
	return nil, &PlanError{File: file, Msg: err.Error()}
}

// LoadPlan reads, validates and resolves a plan file. Every problem is
// reported before anything runs, naming the file, the line and the field:
// all of them at once (PlanErrors), not only the first.
func LoadPlan(file string) (*Plan, *tasks.Suite, error) {
	p, suite, _, err := loadPlan(file)
	return p, suite, err
}

// loadPlan is LoadPlan that also says what the plan leaves to chance
// (warnings 'run --check' prints).
func loadPlan(file string) (*Plan, *tasks.Suite, []PlanWarning, error) {
	var py planYAML
	doc, err := decodeYAML(file, &py)
	if doc == nil {
		return nil, nil, nil, err
	}
	c := newPlanCheck(file, doc)
	c.add("", err)
	base := filepath.Dir(file)
	p := &Plan{Name: py.Name, RestSeconds: py.RestSeconds, Concurrency: py.Concurrency, Guards: py.Guards, Order: py.Order, Stop: py.Stop}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	suite := loadPlanSuite(c, base, &py, p)
	p.Repeats = py.Repeats
	armFields := loadArms(c, base, &py, p)
	c.add("sandbox_hosts", checkSandboxHosts(file, "sandbox_hosts", doc.Line, py.SandboxHosts))
	p.SandboxHosts = py.SandboxHosts
	resolve(p, armFields, c)
	if err := c.err(); err != nil {
		return nil, nil, nil, err
	}
	for i, arm := range p.Arms {
		if arm.Agent != nil && arm.Agent.Image != "" {
			file, d, at, note, _ := c.place(armFields[i] + ".agent.image")
			if p.AgentImageAt == nil {
				p.AgentImageAt = map[string]evalctl.FieldAt{}
			}
			p.AgentImageAt[arm.Name] = evalctl.FieldAt{File: file, Line: d.Line(at), Field: at + note}
		}
	}
	return p, suite, planWarnings(doc, file, p, armFields), nil
}

// loadPlanSuite loads the plan's suite and its cases; nil when the suite
// does not load (its cases are then left unchecked).
func loadPlanSuite(c *planCheck, base string, py *planYAML, p *Plan) *tasks.Suite {
	if py.Suite == "" {
		c.bad("suite", "is required (the suite directory)")
		return nil
	}
	suiteDir := py.Suite
	if !filepath.IsAbs(suiteDir) {
		suiteDir = filepath.Join(base, suiteDir)
	}
	suite, err := tasks.LoadSuite(suiteDir)
	if err != nil {
		c.bad("suite", "%v", err)
		return nil
	}
	p.SuiteDir, p.SuiteFingerprint = suite.Dir, suite.Fingerprint
	if py.SuiteFingerprint != "" && py.SuiteFingerprint != suite.Fingerprint {
		c.bad("suite_fingerprint", "the suite's fingerprint is %s, the plan expects %s: the suite changed", suite.Fingerprint, py.SuiteFingerprint)
	}
	switch {
	case py.Cases.Kind == 0 || (py.Cases.Kind == yaml.ScalarNode && py.Cases.Value == "all"):
		for _, cs := range suite.Cases {
			p.Cases = append(p.Cases, cs.Name)
		}
	case py.Cases.Kind == yaml.SequenceNode:
		var names []string
		if err := py.Cases.Decode(&names); err != nil {
			c.bad("cases", "%v", err)
			break
		}
		p.Cases = checkCases(c, suite, names)
	default:
		c.bad("cases", "must be \"all\" or a list of case names")
	}
	return suite
}

// checkCases refuses case names the suite has not, and names given twice.
func checkCases(c *planCheck, suite *tasks.Suite, names []string) []string {
	seen := map[string]bool{}
	var out []string
	for i, n := range names {
		switch {
		case suite.Case(n) == nil:
			var known []string
			for _, cs := range suite.Cases {
				known = append(known, cs.Name)
			}
			msg := fmt.Sprintf("suite %s has no case %q", suite.ID(), n)
			if s := yamlcheck.Suggest(n, known); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			c.bad(fmt.Sprintf("cases[%d]", i), "%s", msg)
		case seen[n]:
			c.bad(fmt.Sprintf("cases[%d]", i), "duplicate case %q", n)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// loadArms expands sweeps, reads arm files and server profiles, and fills
// the plan's default budgets; it returns each arm's field path.
func loadArms(c *planCheck, base string, py *planYAML, p *Plan) []string {
	if len(py.Arms) == 0 {
		c.bad("arms", "lists no arm")
		return nil
	}
	armRefs, armFields, sweeps, err := expandSweeps(c.file, base, py.Arms)
	if err != nil {
		c.add("arms", err)
		return nil
	}
	p.Sweeps = sweeps
	if py.Defaults != nil {
		if v := py.Defaults.Budgets.CommandTimeoutSeconds; v != nil && *v < 1 {
			c.bad("defaults.budgets.command_timeout_seconds", "%v: a command the agent runs always has a timeout, so 0 cannot mean no limit; give at least 1 second (default 120)", *v)
		}
	}
	for i, ref := range armRefs {
		arm, ok := loadArm(c, base, armFields[i], ref)
		if !ok {
			c.skip[armFields[i]] = true
		}
		if py.Defaults != nil {
			arm.Budgets = fillBudgets(arm.Budgets, py.Defaults.Budgets)
		}
		p.Arms = append(p.Arms, arm)
	}
	return armFields
}

// loadArm reads one arm (inline or from its file) and its server profile;
// ok is false when the arm could not be read, so its checks are left out.
func loadArm(c *planCheck, base, field string, ref armRef) (Arm, bool) {
	arm := ref.Arm
	if ref.File != "" {
		if ref.Arm.Name != "" || !reflect.DeepEqual(ref.Arm.Endpoint, Endpoint{}) {
			c.bad(field+".file", "an arm comes either from a file or inline, not both")
			return arm, false
		}
		af := ref.File
		if !filepath.IsAbs(af) {
			af = filepath.Join(base, af)
		}
		var fromFile Arm
		doc, err := decodeYAML(af, &fromFile)
		if doc == nil {
			c.bad(field+".file", "%v", err) // unread, or not YAML
			return fromFile, false
		}
		c.add(field+".file", err) // each mistake in the arm file
		c.armDocs[field] = doc
		arm = fromFile
	}
	if arm.Profile == "" {
		if len(arm.ProfileVars) > 0 {
			c.bad(field+".profile_vars", "set without a server profile")
		}
		return arm, true
	}
	if !filepath.IsAbs(arm.Profile) {
		arm.Profile = filepath.Join(base, arm.Profile)
	}
	prof, err := serving.LoadProfile(arm.Profile)
	if err != nil {
		c.bad(field+".profile", "%v", err)
		return arm, true
	}
	if arm.Endpoint.BaseURL != "" {
		c.bad(field+".endpoint.base_url", "an arm with a server profile gets its URL from the started server; leave base_url out")
	}
	arm.ProfileSHA256 = prof.SHA256
	if arm.Endpoint.Device == "" {
		arm.Endpoint.Device = prof.Device
	}
	if _, err := prof.OwnVars(arm.ProfileVars); err != nil {
		c.bad(field+".profile_vars", "%v", err)
	}
	return arm, true
}

// NewPlan resolves a plan built as a Go value against its suite, as
// LoadPlan resolves a plan file: the suite's directory and fingerprint are
// recorded, no cases means all of them, unset budgets, order policy and
// concurrency take their defaults, every field is checked, and the order
// of attempts is realised. Paths in arms (Profile) must be absolute;
// server profiles are not loaded (a plan with profiles comes from a file).
// Errors are *PlanError (or PlanErrors) naming the field.
func NewPlan(p Plan, suite *tasks.Suite) (*Plan, error) {
	c := newPlanCheck("plan "+p.Name, nil)
	if suite == nil {
		c.bad("suite", "is required")
		return nil, c.err()
	}
	if p.Name == "" {
		c.bad("name", "is required")
	}
	if p.SuiteFingerprint != "" && p.SuiteFingerprint != suite.Fingerprint {
		c.bad("suite_fingerprint", "the suite's fingerprint is %s, the plan expects %s: the suite changed", suite.Fingerprint, p.SuiteFingerprint)
	}
	c.add("sandbox_hosts", checkSandboxHosts("plan "+p.Name, "sandbox_hosts", func(string) int { return 0 }, p.SandboxHosts))
	p.SuiteDir, p.SuiteFingerprint = suite.Dir, suite.Fingerprint
	p.Arms = append([]Arm(nil), p.Arms...)
	p.Repeats = append([]Repeat(nil), p.Repeats...)
	if len(p.Cases) == 0 {
		for _, cs := range suite.Cases {
			p.Cases = append(p.Cases, cs.Name)
		}
	} else {
		p.Cases = checkCases(c, suite, p.Cases)
	}
	if len(p.Arms) == 0 {
		c.bad("arms", "lists no arm")
	}
	fields := make([]string, len(p.Arms))
	for i := range p.Arms {
		fields[i] = fmt.Sprintf("arms[%d]", i)
	}
	resolve(&p, fields, c)
	if err := c.err(); err != nil {
		return nil, err
	}
	return &p, nil
}

// resolve checks what a plan file and a plan value share and completes
// the plan: repeats, arms (defaults filled, each checked), order,
// concurrency, guards, and, when nothing is wrong, the realised slots.
// armFields name each arm's field path in the user's words.
func resolve(p *Plan, armFields []string, c *planCheck) {
	if len(p.Cases) == 0 && p.SuiteDir != "" && !c.doc.Reported("cases") {
		c.bad("cases", "lists no case")
	}
	checkRepeats(p, c)
	names := map[string]bool{}
	for i := range p.Arms {
		arm := &p.Arms[i]
		field := armFields[i]
		arm.Budgets = fillBudgets(arm.Budgets, DefaultBudgets())
		if arm.Agent != nil {
			if err := yamlcheck.FillDefaults(arm.Agent); err != nil {
				panic(err) // see TestPlanDefaults
			}
		}
		for _, e := range armErrors(*arm) {
			c.bad(field+"."+e.field, "%s", e.msg)
		}
		if names[arm.Name] && arm.Name != "" {
			c.bad(field+".name", "duplicate arm %q", arm.Name)
		}
		names[arm.Name] = true
	}
	if err := yamlcheck.FillDefaults(&p.Order); err != nil {
		panic(err) // a tag that is no value of its field; TestPlanDefaults loads them all
	}
	if p.Order.Policy != "interleaved" && p.Order.Policy != "sequential" {
		c.bad("order.policy", "%q is not interleaved or sequential", p.Order.Policy)
	}
	if p.Concurrency == 0 {
		p.Concurrency = yamlcheck.Default[int](planYAML{}, "concurrency")
	}
	if p.Concurrency < 0 {
		c.bad("concurrency", "must be at least 1")
	}
	checkDevices(p, c)
	if p.RestSeconds < 0 {
		c.bad("rest_seconds", "must not be negative")
	}
	if p.Guards.MaxConsecutiveInfraFailures < 0 {
		c.bad("guards.max_consecutive_infra_failures", "must not be negative")
	}
	if p.Guards.MaxTemperatureC < 0 {
		c.bad("guards.max_temperature_c", "must not be negative")
	}
	checkStop(p, c)
	if len(c.errs) == 0 {
		p.Slots = realise(p)
	}
}

// checkRepeats wants at least one repeat, each labelled once, with seeds
// that differ.
func checkRepeats(p *Plan, c *planCheck) {
	if len(p.Repeats) == 0 {
		c.bad("repeats", "lists no repeat label")
	}
	labels, seeds := map[string]bool{}, map[int64]string{}
	for i, r := range p.Repeats {
		switch {
		case r.Label == "":
			c.bad(fmt.Sprintf("repeats[%d].label", i), "is required")
		case labels[r.Label]:
			c.bad(fmt.Sprintf("repeats[%d].label", i), "duplicate label %q", r.Label)
		}
		if other, ok := seeds[r.Seed]; ok {
			c.bad(fmt.Sprintf("repeats[%d].seed", i), "labels %q and %q share seed %d: paired repeats need distinct seeds", other, r.Label, r.Seed)
		}
		labels[r.Label], seeds[r.Seed] = true, r.Label
	}
}

// checkDevices refuses arms that start their own server beside others.
func checkDevices(p *Plan, c *planCheck) {
	devices := map[string]bool{}
	for _, a := range p.Arms {
		for _, r := range a.Replicas() {
			devices[r.Device] = true
		}
	}
	for i, a := range p.Arms {
		if a.Profile != "" && p.Concurrency > 1 {
			c.bad(fmt.Sprintf("arms[%d].profile", i), "arms that start their own server run one attempt at a time; set concurrency: 1")
		}
		if a.Profile != "" && len(devices) > 1 {
			// evalctl keeps one model server at a time: arms on several
			// devices would stop each other's servers.
			c.bad(fmt.Sprintf("arms[%d].profile", i), "arms that start their own server cannot run side by side with other arms: give every arm the same device (or none)")
		}
	}
}

// fillBudgets gives b's unset budgets d's values (copies: plans share no
// pointers).
func fillBudgets(b, d Budgets) Budgets {
	b.WallSeconds = fill(b.WallSeconds, d.WallSeconds)
	b.GeneratedTokens = fill(b.GeneratedTokens, d.GeneratedTokens)
	b.ToolCalls = fill(b.ToolCalls, d.ToolCalls)
	b.CommandTimeoutSeconds = fill(b.CommandTimeoutSeconds, d.CommandTimeoutSeconds)
	return b
}

func fill[T any](v, d *T) *T {
	if v != nil || d == nil {
		return v
	}
	c := *d
	return &c
}

type armErr struct{ field, msg string }

// validateArm is the first of the arm's mistakes, nil when it has none.
func validateArm(a Arm) *armErr {
	if es := armErrors(a); len(es) > 0 {
		return &es[0]
	}
	return nil
}

// armErrors lists every mistake of an arm whose budgets are filled.
func armErrors(a Arm) []armErr {
	var out []armErr
	add := func(cond bool, field, msg string) {
		if cond {
			out = append(out, armErr{field, msg})
		}
	}
	add(a.Name == "", "name", "is required")
	add(strings.ContainsAny(a.Name, " /\\,"), "name", fmt.Sprintf("%q: use letters, digits, '-', '_' or '.'", a.Name))
	add(a.Endpoint.BaseURL == "" && a.Profile == "" && len(a.Endpoint.Replicas) == 0, "endpoint.base_url", "is required (or name a server profile)")
	add(a.Endpoint.Model == "", "endpoint.model", "is required")
	add(a.MaxTokens < 0, "max_tokens", "must not be negative")
	add(*a.Budgets.WallSeconds < 0, "budgets.wall_seconds", "must not be negative (0: no limit)")
	add(*a.Budgets.GeneratedTokens < 0, "budgets.generated_tokens", "must not be negative (0: no limit)")
	add(*a.Budgets.ToolCalls < 0, "budgets.tool_calls", "must not be negative (0: no limit)")
	add(*a.Budgets.CommandTimeoutSeconds < 1, "budgets.command_timeout_seconds", fmt.Sprintf("%v: a command the agent runs always has a timeout, so 0 cannot mean no limit; give at least 1 second (default 120)", *a.Budgets.CommandTimeoutSeconds))
	if a.Context != nil {
		if err := a.Context.Validate(); err != nil {
			add(true, "context", err.Error())
		}
	}
	if a.Agent != nil {
		if err := a.Agent.Validate(); err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			add(true, "agent."+field, msg)
		}
		add(a.Context != nil, "agent", "an agent command reads the case prompt itself; a context strategy is for the built-in loop only")
	}
	add(a.Endpoint.BaseURL != "" && !strings.HasPrefix(a.Endpoint.BaseURL, "http://") && !strings.HasPrefix(a.Endpoint.BaseURL, "https://"),
		"endpoint.base_url", fmt.Sprintf("%q is not an http(s) URL", a.Endpoint.BaseURL))
	if e := validateReplicas(a); e != nil {
		out = append(out, *e)
	}
	return out
}
