package runstore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// recorded is a real run of the grader's fixture suite: arms reference
// and flawed, cases adder and tsadd, one repeat; its four attempt ids share
// the prefix 01a230a6-ae.
const recorded = "../../cmd/evalctl/testdata/recorded/fixture-ab-01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"

// copyRun copies the recorded run under a fresh root, with one more
// planned slot (reference adder repeat-2) that has not run.
func copyRun(t *testing.T) (root, dir string) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, filepath.Base(recorded))
	err := filepath.WalkDir(recorded, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(recorded, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	var plan map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, PlanFile))
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	plan["slots"] = append(plan["slots"].([]any), map[string]any{"index": 4, "arm": "reference", "case": "adder", "repeat": "repeat-2", "seed": 202})
	if err := WriteJSON(filepath.Join(dir, PlanFile), plan); err != nil {
		t.Fatal(err)
	}
	return root, dir
}

// TestFindAttempt: every form names the same attempt (id, prefix, attempt
// directory, slot); mistakes are usage errors that say what was meant.
func TestFindAttempt(t *testing.T) {
	root, dir := copyRun(t)
	const id = "01a230a6-ae9a-7445-918a-2cc4bb1c7f91" // flawed tsadd repeat-1
	for _, tt := range []struct {
		name string
		q    AttemptQuery
	}{
		{"id", AttemptQuery{Args: []string{id}}},
		{"prefix", AttemptQuery{Args: []string{"01a230a6-ae9a"}}},
		{"prefix in one run", AttemptQuery{Args: []string{"01a230a6-ae9"}, Run: "fixture"}},
		{"attempt directory", AttemptQuery{Args: []string{filepath.Join(dir, AttemptsDir, id)}}},
		{"attempt directory with a slash", AttemptQuery{Args: []string{filepath.Join(dir, AttemptsDir, id) + "/"}}},
		{"slot by run name", AttemptQuery{Args: []string{"fixture-ab", "flawed", "tsadd", "repeat-1"}}},
		{"slot by run id prefix", AttemptQuery{Args: []string{"01a230a6-ae6c", "flawed", "tsadd", "repeat-1"}}},
		{"slot by run directory", AttemptQuery{Args: []string{dir, "flawed", "tsadd", "repeat-1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.Root = root
			d, got, err := FindAttempt(tt.q)
			if err != nil || got != id || filepath.Clean(d) != dir {
				t.Errorf("%s %s %v; want %s in %s", d, got, err, id, dir)
			}
		})
	}
	for _, tt := range []struct {
		name string
		args []string
		is   error
		want []string
	}{
		{"ambiguous prefix lists slots", []string{"01a230a6-ae"}, ErrAmbiguousAttempt, []string{
			"matches 4 attempts", "01a230a6-ae77-7e4d-bfff-cc6a6031c8ba (reference adder repeat-1, completed)",
			"01a230a6-ae9a-7445-918a-2cc4bb1c7f91 (flawed tsadd repeat-1, completed)", "give more of the id"}},
		{"unknown id", []string{"zz"}, ErrNoAttempt, []string{`attempt "zz": no such attempt in 1 run(s)`, "evalctl attempts RUN"}},
		{"misspelt case", []string{"fixture-ab", "flawed", "tsad", "repeat-1"}, ErrNoAttempt, []string{`the run has no case "tsad" (did you mean "tsadd"?)`}},
		{"misspelt arm and repeat", []string{"fixture-ab", "flaw", "tsadd", "repeat1"}, ErrNoAttempt, []string{`no arm "flaw" (did you mean "flawed"?)`, `no repeat "repeat1" (did you mean "repeat-1"?)`}},
		{"unrelated case", []string{"fixture-ab", "flawed", "quux", "repeat-1"}, ErrNoAttempt, []string{`no case "quux" (its cases: adder, tsadd)`}},
		{"planned, not run", []string{"fixture-ab", "reference", "adder", "repeat-2"}, ErrNoAttempt, []string{"planned but has not run yet"}},
		{"never paired", []string{"fixture-ab", "flawed", "adder", "repeat-2"}, ErrNoAttempt, []string{"never pairs these"}},
		{"a run is not an attempt", []string{dir}, nil, []string{"is a run, not an attempt"}},
		{"not an attempt directory", []string{filepath.Join(dir, "events.jsonl")}, ErrNoAttempt, []string{"not an attempt directory"}},
		{"no such run", []string{"nosuchrun", "flawed", "tsadd", "repeat-1"}, ErrNoRun, []string{`run "nosuchrun": no such run`}},
		{"two arguments", []string{"a", "b"}, nil, []string{"name one attempt"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := FindAttempt(AttemptQuery{Args: tt.args, Root: root})
			var ue *evalctl.UsageError
			if !errors.As(err, &ue) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("error %v; want a usage error wrapping %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestAttempts: the listing holds every attempt with its slot, state,
// outcome and tokens, each id's shortest unique prefix, then the planned
// slots not yet run.
func TestAttempts(t *testing.T) {
	_, dir := copyRun(t)
	rows, err := Attempts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 4 attempts and 1 planned slot: %+v", len(rows), rows)
	}
	ref, flawed, planned := rows[0], rows[3], rows[4]
	if ref.Prefix != "01a230a6-ae77" || ref.Arm != "reference" || ref.Case != "adder" || ref.State != "completed" ||
		ref.Functional == nil || !*ref.Functional || ref.Tokens == nil || *ref.Tokens <= 0 || ref.Suite == "" {
		t.Errorf("reference adder: %+v", ref)
	}
	if flawed.Case != "tsadd" || flawed.Functional == nil || *flawed.Functional || flawed.Delivered == nil || *flawed.Delivered {
		t.Errorf("flawed tsadd: %+v", flawed)
	}
	if planned.ID != "" || planned.State != "planned" || planned.Functional != nil || planned.Tokens != nil || planned.Repeat != "repeat-2" {
		t.Errorf("planned slot: %+v", planned)
	}
	var b strings.Builder
	fill, err := AttemptListing(dir, "text")
	if err != nil {
		t.Fatal(err)
	}
	if err := fill(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := [][]string{
		{"PREFIX", "SLOT", "ARM", "CASE", "REPEAT", "STATE", "FUNCTIONAL", "DELIVERED", "TOKENS", "ID"},
		{"01a230a6-ae77", "0", "reference", "adder", "repeat-1", "completed", "yes"},
		{"01a230a6-ae9", "3", "flawed", "tsadd", "repeat-1", "completed", "no", "no"},
		{"-", "4", "reference", "adder", "repeat-2", "planned", "-", "-", "-", "-"},
	}
	for i, l := range []string{lines[0], lines[1], lines[4], lines[5]} {
		got := strings.Fields(l)
		if len(got) < len(want[i]) || strings.Join(got[:len(want[i])], " ") != strings.Join(want[i], " ") {
			t.Errorf("line %q, want it to start %q", l, want[i])
		}
	}
}

func TestUniquePrefixes(t *testing.T) {
	got := UniquePrefixes([]string{"01a2-b1", "01a2-b2", "01a3-c", "9"})
	want := []string{"01a2-b1", "01a2-b2", "01a3", "9"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%q, want %q", got, want)
	}
	// A prefix never ends in '-': "01a-x" and "01b" part at the third
	// character, "01a-" would end on a dash.
	if got := UniquePrefixes([]string{"01a-x", "01a-y", "01b"}); got[2] != "01b" || got[0] != "01a-x" {
		t.Errorf("%q", got)
	}
	if got := UniquePrefixes([]string{"ab-cd", "ab-ef"}); got[0] != "ab-c" {
		t.Errorf("%q", got)
	}
	if got := UniquePrefixes([]string{"abc"}); got[0] != "a" {
		t.Errorf("one id: %q", got)
	}
}

// TestResolveID: a run named by directory, name or prefix is its id (what
// its sandbox containers are labelled with); a well-formed id of a run no
// longer on disk is taken as it is, unknown; anything else is no run.
func TestResolveID(t *testing.T) {
	root, dir := copyRun(t)
	const id = "01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"
	for _, arg := range []string{dir, "fixture-ab", "fixture", id, "01a230a6-ae6c"} {
		if got, known, err := ResolveID(root, arg); got != id || !known || err != nil {
			t.Errorf("%s: %s %v %v", arg, got, known, err)
		}
	}
	gone := "01a230a6-0000-7000-8000-000000000000"
	if got, known, err := ResolveID(root, gone); got != gone || known || err != nil {
		t.Errorf("removed run: %s %v %v", got, known, err)
	}
	var ue *evalctl.UsageError
	if _, _, err := ResolveID(root, "nosuchrun"); !errors.Is(err, ErrNoRun) || !errors.As(err, &ue) {
		t.Errorf("no such run: %v", err)
	}
	if got, known, err := ResolveID(root, ""); got != "" || known || err != nil {
		t.Errorf("none: %q %v %v", got, known, err)
	}
}
