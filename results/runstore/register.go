package runstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/evalctl/evalctl"
)

// Kinds of run directory, as run.json records them.
const (
	KindCohort   = evalctl.KindCohort
	KindScreen   = evalctl.KindScreen
	KindCapacity = evalctl.KindCapacity
)

// ErrChanged is returned when a run's registered plan file no longer
// matches the digest run.json recorded (and, by the cohort runner, when its
// suite changed): a resume would run something other than what was
// registered.
var ErrChanged = errors.New("run changed since registration")

// Register creates the run directory dir for run, in the one order every
// kind of run uses: the directory, its lock, the plan document (data, byte
// for byte) in planFile, its SHA-256 in run.PlanSHA256, then begin (what
// the run starts with, such as its planned attempts; may be nil), and
// run.json last. A directory without run.json is a registration that did
// not finish (see Open). The store is returned locked: the caller runs
// the run under that lock, or unlocks it for whoever will.
func Register(dir, planFile string, data []byte, run *Run, begin func(*Store) error) (*Store, error) {
	st, err := Create(dir)
	if err != nil {
		return nil, err
	}
	if err := st.Lock(); err != nil {
		return nil, err
	}
	fail := func(err error) (*Store, error) {
		st.Unlock()
		return nil, fmt.Errorf("register run %s: %w", dir, err)
	}
	if err := WriteFileAtomic(st.Path(planFile), data, 0o644); err != nil {
		return fail(err)
	}
	sum := sha256.Sum256(data)
	run.PlanSHA256 = hex.EncodeToString(sum[:])
	if run.EvalctlVersion == "" {
		run.EvalctlVersion = Version()
	}
	if begin != nil {
		if err := begin(st); err != nil {
			return fail(err)
		}
	}
	if err := st.WriteRun(run); err != nil {
		return fail(err)
	}
	return st, nil
}

// OpenRegistered opens the run directory dir and reads what it registered
// (see Store.Registered). The store is not locked.
func OpenRegistered(dir, kind, planFile string) (*Store, *Run, []byte, error) {
	st, err := Open(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	run, data, err := st.Registered(kind, planFile)
	if err != nil {
		return nil, nil, nil, err
	}
	return st, run, data, nil
}

// Registered reads run.json, which must be of kind (a run without a kind
// is a cohort: runs registered before kinds were recorded), and the plan
// document in planFile, refusing it with ErrChanged when its bytes differ
// from what was registered. The bytes hashed are the bytes returned.
func (s *Store) Registered(kind, planFile string) (*Run, []byte, error) {
	run, err := s.ReadRun()
	if err != nil {
		return nil, nil, err
	}
	if got := run.Kind; got != kind && (got != "" || kind != KindCohort) {
		what := map[string]string{KindCohort: "cohort run", KindScreen: "screen", KindCapacity: "capacity probe"}[kind]
		if what == "" {
			what = kind + " run"
		}
		return nil, nil, evalctl.Usagef("%s is a %q run, not a %s", s.Dir, got, what)
	}
	data, err := os.ReadFile(s.Path(planFile))
	if err != nil {
		return nil, nil, fmt.Errorf("open run %s: %w", s.Dir, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != run.PlanSHA256 {
		return nil, nil, fmt.Errorf("%s: %w: %s's SHA-256 is %s, registered %s; start a new run instead", s.Dir, ErrChanged, planFile, got, run.PlanSHA256)
	}
	return run, data, nil
}
