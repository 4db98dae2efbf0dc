package orchestrator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/orchestrator/serving"
	"github.com/evalctl/evalctl/results/runstore"
	"github.com/evalctl/evalctl/tasks"
)

// ErrRerun is returned for a rerun that cannot be made as asked (an
// unknown setting, a value equal to the original, no change at all, an
// attempt whose run changed since registration).
var ErrRerun = errors.New("rerun refused")

// RerunPlan builds the plan of a diagnostic rerun of the attempt in
// attemptDir (RUNDIR/attempts/ID): the same case, repeat label and seed
// under the original arm with exactly the settings in sets ("FIELD=VALUE",
// VALUE read as YAML: 65536, 0.6, true, text) changed, the arm named label
// (default NAME-rerun). The original run's plan must still hash to what it
// registered and the attempt's arm must be the registered one.
func RerunPlan(attemptDir string, sets []string, label string) (*Plan, *tasks.Suite, error) {
	attemptDir = filepath.Clean(attemptDir)
	runDir := filepath.Dir(filepath.Dir(attemptDir))
	if filepath.Base(filepath.Dir(attemptDir)) != runstore.AttemptsDir {
		return nil, nil, fmt.Errorf("%w: %s is not an attempt directory (RUNDIR/%s/ID)", ErrRerun, attemptDir, runstore.AttemptsDir)
	}
	if len(sets) == 0 {
		return nil, nil, fmt.Errorf("%w: name the setting to change with --set FIELD=VALUE", ErrRerun)
	}
	src, err := readRerunSource(attemptDir, runDir)
	if err != nil {
		return nil, nil, err
	}
	a, arm := &src.attempt, src.arm
	changed, err := applySets(*arm, sets)
	if err != nil {
		return nil, nil, err
	}
	if changed.Profile != arm.Profile {
		// A server profile named on the command line: its path as given,
		// its SHA-256 part of the arm as at registration.
		if abs, err := filepath.Abs(changed.Profile); err == nil {
			changed.Profile = abs
		}
		prof, err := serving.LoadProfile(changed.Profile)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: --set profile: %v", ErrRerun, err)
		}
		changed.ProfileSHA256 = prof.SHA256
	}
	if label == "" {
		label = arm.Name + "-rerun"
	}
	changed.Name = label
	if e := validateArm(changed); e != nil {
		return nil, nil, fmt.Errorf("%w: %s: %s", ErrRerun, e.field, e.msg)
	}
	abs, _ := filepath.Abs(runDir)
	rec := &RerunRecord{OriginalRunID: src.run.ID, OriginalRunDir: abs, OriginalAttemptID: a.ID, OriginalArm: a.Arm,
		OriginalArmHash: a.ArmHash, Label: label, Changes: armDiff(*arm, changed)}
	orig := &src.plan
	p := &Plan{Name: "rerun-" + a.ID, SuiteDir: orig.SuiteDir, SuiteFingerprint: orig.SuiteFingerprint, Cases: []string{a.Case},
		Repeats: []Repeat{{Label: a.Repeat, Seed: a.Seed}}, Arms: []Arm{changed}, Order: Order{Policy: "sequential"},
		Concurrency: 1, Guards: orig.Guards, Rerun: rec}
	p.Slots = realise(p)
	return p, src.suite, nil
}

// rerunSource is what a rerun starts from, each part checked against
// what the original run registered.
type rerunSource struct {
	attempt evalctl.Attempt
	run     *runstore.Run
	plan    Plan
	arm     *Arm // the attempt's arm in plan
	suite   *tasks.Suite
}

// readRerunSource reads the attempt and its run, refusing a plan that no
// longer hashes to what the run registered, an arm that is not the
// registered one and a suite whose fingerprint changed.
func readRerunSource(attemptDir, runDir string) (*rerunSource, error) {
	src := &rerunSource{}
	a := &src.attempt
	if err := runstore.ReadJSON(filepath.Join(attemptDir, runstore.AttemptFile), a); err != nil {
		return nil, fmt.Errorf("rerun: %w", err)
	}
	st, err := runstore.Open(runDir)
	if err != nil {
		return nil, err
	}
	if src.run, err = st.ReadRun(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(st.Path(runstore.PlanFile))
	if err != nil {
		return nil, fmt.Errorf("rerun: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != src.run.PlanSHA256 {
		return nil, fmt.Errorf("%w: %s changed since registration", ErrRerun, st.Path(runstore.PlanFile))
	}
	if err := json.Unmarshal(data, &src.plan); err != nil {
		return nil, fmt.Errorf("rerun: %s: %w", st.Path(runstore.PlanFile), err)
	}
	src.arm = src.plan.Arm(a.Arm)
	if src.arm == nil || src.arm.Hash() != a.ArmHash {
		return nil, fmt.Errorf("%w: attempt %s ran under arm %s (%s), which the run's plan does not hold as registered", ErrRerun, a.ID, a.Arm, a.ArmHash)
	}
	if src.suite, err = tasks.LoadSuite(src.plan.SuiteDir); err != nil {
		return nil, fmt.Errorf("rerun: %w", err)
	}
	if src.suite.Fingerprint != src.run.Suite.Fingerprint {
		return nil, fmt.Errorf("%w: suite %s now has fingerprint %s, the attempt ran under %s", ErrRerun, src.suite.Dir, src.suite.Fingerprint, src.run.Suite.Fingerprint)
	}
	return src, nil
}

// applySets returns arm with each "FIELD=VALUE" of sets applied (VALUE
// read as YAML), refusing a setting that changes nothing.
func applySets(arm Arm, sets []string) (Arm, error) {
	changed := arm
	for _, s := range sets {
		field, value, ok := strings.Cut(s, "=")
		if !ok || field == "" {
			return Arm{}, fmt.Errorf("%w: --set %q: want FIELD=VALUE", ErrRerun, s)
		}
		var v any
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return Arm{}, fmt.Errorf("%w: --set %s: value %q: %v", ErrRerun, field, value, err)
		}
		before := changed
		var err error
		if changed, err = SetArmField(changed, field, v); err != nil {
			return Arm{}, fmt.Errorf("%w: --set %s: %v", ErrRerun, field, err)
		}
		if changed.Hash() == before.Hash() {
			return Arm{}, fmt.Errorf("%w: --set %s: the arm already has %s = %s", ErrRerun, field, field, value)
		}
	}
	return changed, nil
}

// armDiff lists the settings (dotted JSON names, the name aside) whose
// values differ between a and b.
func armDiff(a, b Arm) []ArmChange {
	fa, fb := flatten(a), flatten(b)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		if k != "name" && !bytes.Equal(fa[k], fb[k]) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	out := []ArmChange{}
	for _, k := range names {
		from, to := fa[k], fb[k]
		if from == nil {
			from = json.RawMessage("null")
		}
		if to == nil {
			to = json.RawMessage("null")
		}
		out = append(out, ArmChange{Field: k, From: from, To: to})
	}
	return out
}

func flatten(a Arm) map[string]json.RawMessage {
	data, _ := json.Marshal(a)
	var m map[string]any
	json.Unmarshal(data, &m)
	out := map[string]json.RawMessage{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if mm, ok := v.(map[string]any); ok && len(mm) > 0 {
			for k, x := range mm {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x)
			}
			return
		}
		raw, _ := json.Marshal(v)
		out[prefix] = raw
	}
	walk("", m)
	return out
}

// Rerun registers and runs a diagnostic rerun (see RerunPlan) under
// opts.OutDir.
func Rerun(ctx context.Context, opts Options, attemptDir string, sets []string, label string) (*Result, error) {
	p, suite, err := RerunPlan(attemptDir, sets, label)
	if err != nil {
		return nil, err
	}
	opts.Plan, opts.Suite = p, suite
	opts.ResumeDir = ""
	return Run(ctx, opts)
}
