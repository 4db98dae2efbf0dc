package runstore

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/evalctl/evalctl"
)

// RunsEnv names the folder of runs that run ids and prefixes are looked
// up in, when set.
const RunsEnv = "EVALCTL_RUNS"

// Root is where run ids and prefixes are looked up, and what 'runs' and
// 'view' list by default: $EVALCTL_RUNS, else "runs" (run's --out
// default).
func Root() string {
	if d := os.Getenv(RunsEnv); d != "" {
		return d
	}
	return "runs"
}

// ResolveAll resolves each argument under root (see Resolve); with
// folders true, a folder that holds run directories stands for all its
// cohorts, oldest first.
func ResolveAll(root string, args []string, folders bool) ([]string, error) {
	var out []string
	for _, a := range args {
		if folders && !IsRunDir(a) {
			if fi, err := os.Stat(a); err == nil && fi.IsDir() {
				dirs, err := Expand(a, "cohort")
				if err != nil {
					return nil, err
				}
				if len(dirs) > 0 {
					out = append(out, dirs...)
					continue
				}
			}
		}
		d, err := Resolve(root, a)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// WriteTable writes a listing, one run a line; unknown counts are "-".
func WriteTable(w io.Writer, list []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tKIND\tCREATED\tSTATE\tARMS\tSCORED/PLANNED\tSUITE")
	for _, s := range list {
		kind := s.Kind
		if s.Regrades > 0 {
			kind += fmt.Sprintf("+%d regrade(s)", s.Regrades)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\n", s.Name, s.ID, kind, s.CreatedAt, orDash(s.State),
			orDash(strings.Join(s.Arms, ",")), count(s.Scored), count(s.Planned), orDash(s.SuiteVersion))
	}
	if len(list) == 0 {
		fmt.Fprintln(tw, "(no runs)")
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func count(n *int) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// Kind is the kind of the run in dir ("" for a cohort of an older
// evalctl).
func Kind(dir string) (string, error) {
	st, err := Open(dir)
	if err != nil {
		return "", err
	}
	r, err := st.ReadRun()
	if err != nil {
		return "", err
	}
	return r.Kind, nil
}

// ResolveCohort resolves arg under root (see Resolve) to a run that must
// be a cohort: a screen or a capacity probe is resumed by its own command,
// so naming one is a usage error.
func ResolveCohort(root, arg string) (string, error) {
	dir, err := Resolve(root, arg)
	if err != nil {
		return "", err
	}
	k, err := Kind(dir)
	if err != nil {
		return "", err
	}
	if k != "" && k != "cohort" {
		return "", evalctl.Usagef("%s is a %s run, not a cohort; see 'evalctl %s --help'", dir, k, k)
	}
	return dir, nil
}
