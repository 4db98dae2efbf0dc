package report

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/evalctl/evalctl"
)

// WriteRunEnd ends a run's output: its directory, its pooled table (left
// out when the run cannot be pooled yet) and the commands that read it
// further; a stopped run first gets the one that resumes it.
func WriteRunEnd(ctx context.Context, w io.Writer, dir string, stopped bool) {
	fmt.Fprintf(w, "run directory: %s\n", dir)
	infra := 0
	if in, err := Load(context.WithoutCancel(ctx), []string{dir}, ""); err == nil {
		for i := range in.Rows {
			if r := &in.Rows[i]; r.inPlan() && r.State == string(evalctl.InfraFailed) {
				infra++
			}
		}
		if rep, err := Build(in, Options{}); err == nil {
			fmt.Fprintln(w)
			Write(w, rep, FormatTable)
		}
	}
	fmt.Fprintf(w, "\nnext:\n")
	switch {
	case stopped && infra > 0:
		fmt.Fprintf(w, "  evalctl run --resume %s --replace-infra   # run what is left, and re-run the %d infrastructure failure(s)\n", dir, infra)
	case stopped:
		fmt.Fprintf(w, "  evalctl run --resume %s   # run what is left\n", dir)
	}
	fmt.Fprintf(w, "  evalctl report %s --format html > report.html\n  evalctl view %s\n  evalctl show ATTEMPT-ID --run %s   # one attempt, by id or prefix\n", dir, filepath.Dir(dir), dir)
}
