package screen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/evalctl/evalctl/results/runstore"
)

// registerRun registers a run directory NAME-YYYYmmdd-HHMMSS under out
// (with a suffix if that exists) through runstore.Register, with plan as
// indented JSON in file. The lock is released: whoever runs the screen or
// probe takes it (see Run's callers).
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
	data, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	run := &runstore.Run{ID: id.String(), Name: name, CreatedAt: now, Kind: kind}
	st, err := runstore.Register(dir, file, append(data, '\n'), run, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := st.Unlock(); err != nil {
		return nil, nil, err
	}
	return st, run, nil
}

// openRun opens a run directory of the given kind and reads its plan from
// file into plan, checked against the digest recorded at registration.
func openRun(dir, kind, file string, plan any) (*runstore.Store, *runstore.Run, error) {
	st, run, data, err := runstore.OpenRegistered(dir, kind, file)
	if err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(data, plan); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", st.Path(file), err)
	}
	return st, run, nil
}
