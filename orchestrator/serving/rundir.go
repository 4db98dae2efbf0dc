package serving

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/evalctl/evalctl/orchestrator/runstore"
)

// registerRun creates a run directory NAME-YYYYmmdd-HHMMSS under out (with
// a suffix if that exists), writes plan to file in it, and records the
// plan's digest in run.json, so that a resume can refuse a plan edited
// since.
func registerRun(out, name, kind, file string, plan any) (*runstore.Store, *runstore.Run, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now().UTC()
	dir := filepath.Join(out, name+"-"+now.Format("20060102-150405"))
	if _, err := os.Stat(dir); err == nil {
		dir += "-" + id.String()[:8]
	}
	st, err := runstore.Create(dir)
	if err != nil {
		return nil, nil, err
	}
	data, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	data = append(data, '\n')
	if err := runstore.WriteFileAtomic(st.Path(file), data, 0o644); err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(data)
	run := &runstore.Run{ID: id.String(), Name: name, CreatedAt: now, PlanSHA256: hex.EncodeToString(sum[:]),
		EvalctlVersion: runstore.Version(), Kind: kind}
	if err := st.WriteRun(run); err != nil {
		return nil, nil, err
	}
	return st, run, nil
}

// openRun opens a run directory of the given kind (what names it in
// errors) and reads its plan from file into plan, checking the plan
// against the digest recorded at registration.
func openRun(dir, kind, what, file string, plan any) (*runstore.Store, *runstore.Run, error) {
	st, err := runstore.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	run, err := st.ReadRun()
	if err != nil {
		return nil, nil, err
	}
	if run.Kind != kind {
		return nil, nil, fmt.Errorf("%s is a %q run, not a %s", dir, run.Kind, what)
	}
	data, err := os.ReadFile(st.Path(file))
	if err != nil {
		return nil, nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != run.PlanSHA256 {
		return nil, nil, fmt.Errorf("%s: %s changed since registration (digest differs from run.json)", dir, file)
	}
	if err := json.Unmarshal(data, plan); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", st.Path(file), err)
	}
	return st, run, nil
}
