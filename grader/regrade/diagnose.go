package regrade

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/tasks"
)

// DiagnosisSchema names the version of the fixture diagnosis JSON shape.
const DiagnosisSchema = "evalctl.fixture_diagnosis/v1"

// Candidate kinds of a diagnosis row: a stored answer, or one of the
// case's own variants (see grader.Variants).
const (
	KindAnswer = "answer"
)

// DiagnoseOptions say what to diagnose.
type DiagnoseOptions struct {
	// Case is the case name; it must exist in both suites.
	Case string
	// Original is suite A, the version under suspicion.
	Original *tasks.Suite
	// Corrected is suite B, the candidate fix; nil grades under A only.
	Corrected *tasks.Suite
	// Answers are run directories whose stored answers of Case are graded.
	Answers []string
}

// SuiteInfo identifies a suite version in a diagnosis.
type SuiteInfo struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
	Dir         string `json:"dir"`
}

// GroupCount is one check group's result in a diagnosis.
type GroupCount struct {
	Name        string   `json:"name"`
	Required    bool     `json:"required"`
	Passed      int      `json:"passed"`
	Total       int      `json:"total"`
	Success     bool     `json:"success"`
	FailedTests []string `json:"failed_tests"`
}

// Side is one candidate graded under one suite version.
type Side struct {
	Suite          string `json:"suite"`
	SnapshotSHA256 string `json:"snapshot_sha256"`
	// Passed and Total sum the tests of every group.
	Passed int          `json:"passed"`
	Total  int          `json:"tests"`
	Solved bool         `json:"solved"`
	Groups []GroupCount `json:"groups"`
	// Rejected is, for the starter and negative controls, whether the
	// checks rejected it as the case declares (the starter fails
	// acceptance; a control fails every group and test it names); null for
	// answers and the reference.
	Rejected *bool `json:"rejected"`
	// Problems say why a variant did not behave as its kind requires.
	Problems []string `json:"problems"`
}

// DiagnosisRow is one candidate: a stored answer of one phase, or a
// variant of the case. The flat fields follow the shape of the results
// file's ledger_fixture_diagnosis; Original and Corrected hold the detail.
type DiagnosisRow struct {
	Candidate string `json:"candidate"`
	Kind      string `json:"kind"`
	Phase     int    `json:"phase"`
	RunID     string `json:"run_id,omitempty"`
	AttemptID string `json:"attempt_id,omitempty"`
	// OriginalPassed and CorrectedPassed are tests passed (all groups)
	// under suites A and B; null where the candidate was not graded there.
	OriginalPassed  *int `json:"original_passed"`
	CorrectedPassed *int `json:"corrected_passed"`
	// Tests is the number of tests when both gradings agree on it (null
	// when they differ: see OriginalTests and CorrectedTests).
	Tests          *int `json:"tests"`
	OriginalTests  *int `json:"original_tests"`
	CorrectedTests *int `json:"corrected_tests"`
	// CandidateChanged is whether the graded bytes differ between the two
	// gradings (a stored answer must not: the same digest is graded under
	// both); null with one suite.
	CandidateChanged *bool `json:"candidate_changed"`
	Original         *Side `json:"original"`
	Corrected        *Side `json:"corrected"`
}

// ControlVerdict says whether one negative control was rejected under each
// suite version (null where the suite has no such control).
type ControlVerdict struct {
	Name              string `json:"name"`
	Phase             int    `json:"phase"`
	Why               string `json:"why"`
	OriginalRejected  *bool  `json:"original_rejected"`
	CorrectedRejected *bool  `json:"corrected_rejected"`
}

// Diagnosis is a fixture diagnosis of one case.
type Diagnosis struct {
	Schema    string         `json:"schema"`
	Case      string         `json:"case"`
	Original  SuiteInfo      `json:"original_suite"`
	Corrected *SuiteInfo     `json:"corrected_suite"`
	Answers   []string       `json:"answer_runs"`
	Results   []DiagnosisRow `json:"results"`
	// ReferenceSolved is whether every phase's reference was solved, per
	// suite (null for a suite not given).
	ReferenceSolvedOriginal  *bool            `json:"reference_solved_original"`
	ReferenceSolvedCorrected *bool            `json:"reference_solved_corrected"`
	Controls                 []ControlVerdict `json:"negative_controls"`
	// NegativeControlsRejected is whether every control was rejected under
	// every suite given (null when the case has none).
	NegativeControlsRejected *bool `json:"negative_controls_rejected"`
	// AnswersChanged counts stored-answer rows whose bytes changed between
	// the two gradings; it must be zero. (A reference or control may
	// legitimately differ between two suite versions; its row says so.)
	AnswersChanged int  `json:"answers_changed"`
	ModelsCalled   bool `json:"models_called"`
}

// ErrCandidateChanged: a stored answer's bytes differed between the two
// gradings of a diagnosis.
var ErrCandidateChanged = errors.New("a stored answer changed between its two gradings")

type candidate struct {
	row   *DiagnosisRow
	kind  string
	phase int
	// snaps[i] is what is graded under suite i (nil: not graded there).
	snaps [2]*sandbox.Snapshot
	vars  [2]*grader.Variant
	// file to re-hash after grading (stored answers).
	st  *runstore.Store
	a   *evalctl.Attempt
	rec evalctl.Snapshot
}

// Diagnose grades every stored answer of the case found in the answer
// runs (each phase's snapshot, digest checked), the reference, the starter
// and every negative control of each phase, under suite A and (if given)
// suite B. Identical snapshots are graded once per suite and phase.
func Diagnose(ctx context.Context, g Grader, opts DiagnoseOptions) (*Diagnosis, error) {
	suites, cases, err := diagnosedCases(opts)
	if err != nil {
		return nil, err
	}
	d := &Diagnosis{Schema: DiagnosisSchema, Case: opts.Case, Original: info(opts.Original),
		Answers: append([]string{}, opts.Answers...), Results: []DiagnosisRow{}, Controls: []ControlVerdict{}}
	if opts.Corrected != nil {
		ci := info(opts.Corrected)
		d.Corrected = &ci
	}

	cands, err := answerCandidates(opts, suites, cases)
	if err != nil {
		return nil, err
	}
	vc, err := variantCandidates(suites, cases)
	if err != nil {
		return nil, err
	}
	cands = append(cands, vc...)

	grades, err := gradeCandidates(ctx, g, opts.Case, suites, cases, cands)
	if err != nil {
		return nil, err
	}
	for _, c := range cands {
		d.Results = append(d.Results, *d.fillRow(c, suites, grades))
	}
	d.referenceVerdicts(len(suites))
	d.controlVerdicts(cases, len(suites))
	return d, nil
}

// diagnosedCases returns the suites to grade under (the original, then
// the corrected one if given) and the case in each, so a case missing
// from either suite fails before any container starts.
func diagnosedCases(opts DiagnoseOptions) ([]*tasks.Suite, [2]*tasks.Case, error) {
	var cases [2]*tasks.Case
	if opts.Original == nil {
		return nil, cases, errors.New("diagnose: no suite given")
	}
	suites := []*tasks.Suite{opts.Original}
	if opts.Corrected != nil {
		suites = append(suites, opts.Corrected)
	}
	for i, s := range suites {
		if cases[i] = s.Case(opts.Case); cases[i] == nil {
			return nil, cases, fmt.Errorf("diagnose: suite %s (%s) has no case %q", s.ID(), s.Dir, opts.Case)
		}
	}
	return suites, cases, nil
}

// gradeKey names one grading: the same snapshot under the same suite and
// phase is graded once however many candidates share it.
type gradeKey struct {
	suite, phase int
	digest       string
}

// gradeCandidates grades each distinct (suite, phase, digest) of cands
// once, all concurrently, and fails on any grading error.
func gradeCandidates(ctx context.Context, g Grader, caseID string, suites []*tasks.Suite, cases [2]*tasks.Case, cands []*candidate) (map[gradeKey]*evalctl.Grade, error) {
	grades := map[gradeKey]*evalctl.Grade{}
	errs := map[gradeKey]error{}
	var mu sync.Mutex
	// A label of this diagnosis alone: another user's diagnosis of the
	// same case never prunes or counts these containers.
	labels := grader.Labels{Run: grader.RunLabel("controls-" + caseID)}
	var wg sync.WaitGroup
	for _, c := range cands {
		for i := range suites {
			snap := c.snaps[i]
			if snap == nil {
				continue
			}
			k := gradeKey{i, c.phase, snap.SHA256}
			mu.Lock()
			_, dup := grades[k]
			if !dup {
				grades[k] = nil
			}
			mu.Unlock()
			if dup {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				gr, err := g.Grade(ctx, suites[i], cases[i], c.phase, snap, labels)
				mu.Lock()
				grades[k], errs[k] = gr, err
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("diagnose %s phase %d under %s: %w", caseID, k.phase, suites[k.suite].ID(), err)
		}
	}
	return grades, nil
}

// fillRow completes c's row from its gradings: each suite's side, the
// test counts, and (with two suites) whether the candidate changed
// between them, counting changed stored answers on d.
func (d *Diagnosis) fillRow(c *candidate, suites []*tasks.Suite, grades map[gradeKey]*evalctl.Grade) *DiagnosisRow {
	r := c.row
	var sides [2]*Side
	for i := range suites {
		if c.snaps[i] == nil {
			continue
		}
		gr := grades[gradeKey{i, c.phase, c.snaps[i].SHA256}]
		sides[i] = side(suites[i], gr, c.vars[i])
	}
	r.Original, r.Corrected = sides[0], sides[1]
	if sides[0] != nil {
		r.OriginalPassed, r.OriginalTests = ip(sides[0].Passed), ip(sides[0].Total)
	}
	if sides[1] != nil {
		r.CorrectedPassed, r.CorrectedTests = ip(sides[1].Passed), ip(sides[1].Total)
	}
	switch {
	case sides[0] != nil && sides[1] != nil:
		if sides[0].Total == sides[1].Total {
			r.Tests = ip(sides[0].Total)
		}
	case sides[0] != nil && len(suites) == 1:
		r.Tests = ip(sides[0].Total)
	}
	if len(suites) == 2 && sides[0] != nil && sides[1] != nil {
		changed := sides[0].SnapshotSHA256 != sides[1].SnapshotSHA256
		if c.kind == KindAnswer {
			// The stored file must still be what was recorded.
			if _, err := ReadSnapshot(c.st, c.a, c.rec); err != nil {
				changed = true
			}
			changed = changed || sides[0].SnapshotSHA256 != c.rec.SHA256
		}
		r.CandidateChanged = &changed
		if changed && c.kind == KindAnswer {
			d.AnswersChanged++
		}
	}
	return r
}

// referenceVerdicts records, per suite, whether every reference row
// solved the case.
func (d *Diagnosis) referenceVerdicts(nSuites int) {
	for i := 0; i < nSuites; i++ {
		solved := true
		for _, r := range d.Results {
			s := pick(r, i)
			if r.Kind == grader.KindReference && s != nil && !s.Solved {
				solved = false
			}
		}
		if i == 0 {
			d.ReferenceSolvedOriginal = &solved
		} else {
			d.ReferenceSolvedCorrected = &solved
		}
	}
}

// controlVerdicts gathers the control rows into one verdict per (phase,
// control) with the case's stated reason, and whether every control was
// rejected under every suite graded (unknown when the case has none).
func (d *Diagnosis) controlVerdicts(cases [2]*tasks.Case, nSuites int) {
	ctlIdx := map[string]int{}
	for _, r := range d.Results {
		if r.Kind != grader.KindControl {
			continue
		}
		k := fmt.Sprintf("%d/%s", r.Phase, r.Candidate)
		if _, ok := ctlIdx[k]; !ok {
			ctlIdx[k] = len(d.Controls)
			d.Controls = append(d.Controls, ControlVerdict{Name: r.Candidate, Phase: r.Phase})
		}
		v := &d.Controls[ctlIdx[k]]
		if r.Original != nil {
			v.OriginalRejected = r.Original.Rejected
		}
		if r.Corrected != nil {
			v.CorrectedRejected = r.Corrected.Rejected
		}
	}
	for i := range d.Controls {
		v := &d.Controls[i]
		for _, c := range cases {
			if c == nil {
				continue
			}
			for _, ctl := range c.Controls {
				if ctl.Name == v.Name && ctl.Phase == v.Phase && v.Why == "" {
					v.Why = ctl.Why
				}
			}
		}
	}
	if len(d.Controls) > 0 {
		all := true
		for _, v := range d.Controls {
			for i, rej := range []*bool{v.OriginalRejected, v.CorrectedRejected} {
				if i < nSuites && (rej == nil || !*rej) {
					all = false
				}
			}
		}
		d.NegativeControlsRejected = &all
	}
}

// Err reports a diagnosis whose stored answers changed between gradings.
func (d *Diagnosis) Err() error {
	if d.AnswersChanged == 0 {
		return nil
	}
	for _, r := range d.Results {
		if r.Kind == KindAnswer && r.CandidateChanged != nil && *r.CandidateChanged {
			return fmt.Errorf("%s phase %d (run %s attempt %s): %w", r.Candidate, r.Phase, r.RunID, r.AttemptID, ErrCandidateChanged)
		}
	}
	return nil
}

func pick(r DiagnosisRow, i int) *Side {
	if i == 0 {
		return r.Original
	}
	return r.Corrected
}

func info(s *tasks.Suite) SuiteInfo {
	return SuiteInfo{ID: s.ID(), Fingerprint: s.Fingerprint, Dir: s.Dir}
}

func ip(v int) *int { return &v }

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// answerCandidates reads every stored answer of the case, checking each
// snapshot against its record. A changed answer stops the diagnosis: its
// verdict would describe bytes nobody submitted.
func answerCandidates(opts DiagnoseOptions, suites []*tasks.Suite, cases [2]*tasks.Case) ([]*candidate, error) {
	var out []*candidate
	labels := map[string]int{}
	seen := map[string]string{}
	for _, dir := range opts.Answers {
		st, err := runstore.Open(dir)
		if err != nil {
			return nil, fmt.Errorf("diagnose: %w", err)
		}
		run, err := st.ReadRun()
		if err != nil {
			return nil, fmt.Errorf("diagnose: read run %s: %w", dir, err)
		}
		if prev, ok := seen[run.ID]; ok {
			return nil, fmt.Errorf("diagnose: run %s given twice (%s and %s)", run.ID, prev, dir)
		}
		seen[run.ID] = dir
		as, err := st.Attempts()
		if err != nil {
			return nil, fmt.Errorf("diagnose: %w", err)
		}
		for _, a := range as {
			if a.Case != opts.Case {
				continue
			}
			for _, rec := range a.Snapshots {
				snap, err := ReadSnapshot(st, a, rec)
				if err != nil {
					return nil, fmt.Errorf("diagnose: run %s attempt %s (%s/%s) phase %d: %w", run.ID, a.ID, a.Arm, a.Repeat, rec.Phase, err)
				}
				label := a.Arm + "/" + a.Repeat
				labels[fmt.Sprintf("%s#%d", label, rec.Phase)]++
				c := &candidate{kind: KindAnswer, phase: rec.Phase, st: st, a: a, rec: rec,
					row: &DiagnosisRow{Candidate: label, Kind: KindAnswer, Phase: rec.Phase, RunID: run.ID, AttemptID: a.ID}}
				for i := range suites {
					if cases[i].Phase(rec.Phase) != nil {
						c.snaps[i] = snap
					}
				}
				out = append(out, c)
			}
		}
	}
	// The same arm/repeat more than once (several runs, or a replaced
	// attempt): tell them apart by run and attempt id.
	for _, c := range out {
		if labels[fmt.Sprintf("%s#%d", c.row.Candidate, c.phase)] > 1 {
			c.row.Candidate += fmt.Sprintf(" (%s/%s)", short(c.row.RunID), short(c.row.AttemptID))
		}
	}
	return out, nil
}

// variantCandidates pairs the reference, starter and controls of the case
// in each suite by (phase, name).
func variantCandidates(suites []*tasks.Suite, cases [2]*tasks.Case) ([]*candidate, error) {
	type vk struct {
		phase int
		name  string
	}
	idx := map[vk]*candidate{}
	var out []*candidate
	for i := range suites {
		vs, err := grader.Variants(cases[i])
		if err != nil {
			return nil, fmt.Errorf("diagnose under %s: %w", suites[i].ID(), err)
		}
		for _, v := range vs {
			snap, err := sandbox.NewSnapshot(v.Entries)
			if err != nil {
				return nil, fmt.Errorf("diagnose under %s: %s phase %d: %w", suites[i].ID(), v.Name, v.Phase, err)
			}
			k := vk{v.Phase, v.Kind + "/" + v.Name}
			c := idx[k]
			if c == nil {
				c = &candidate{kind: v.Kind, phase: v.Phase, row: &DiagnosisRow{Candidate: v.Name, Kind: v.Kind, Phase: v.Phase}}
				idx[k] = c
				out = append(out, c)
			}
			c.snaps[i] = snap
			c.vars[i] = &v
		}
	}
	rank := map[string]int{grader.KindReference: 0, grader.KindStarter: 1, grader.KindControl: 2}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].phase != out[j].phase {
			return out[i].phase < out[j].phase
		}
		return rank[out[i].kind] < rank[out[j].kind]
	})
	return out, nil
}

func side(s *tasks.Suite, gr *evalctl.Grade, v *grader.Variant) *Side {
	sd := &Side{Suite: s.ID(), SnapshotSHA256: gr.SnapshotSHA256, Solved: gr.Solved, Groups: []GroupCount{}, Problems: []string{}}
	for _, g := range gr.Groups {
		ft := g.FailedTests
		if ft == nil {
			ft = []string{}
		}
		sd.Groups = append(sd.Groups, GroupCount{Name: g.Name, Required: g.Required, Passed: g.Passed, Total: g.Total, Success: g.Success, FailedTests: ft})
		sd.Passed += g.Passed
		sd.Total += g.Total
	}
	if v != nil {
		res := grader.Expect(*v, gr)
		if v.Kind != grader.KindReference {
			met := res.Met
			sd.Rejected = &met
		}
		if res.Problems != nil {
			sd.Problems = res.Problems
		}
	}
	return sd
}
