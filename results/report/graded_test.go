package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/results/reporttest"
)

// TestCheckGraded: a suite version the run was graded under passes, by
// version or name@version; another is refused listing what was graded.
func TestCheckGraded(t *testing.T) {
	dir := writeRun(t, &reporttest.RunSpec{ID: "r1", Attempts: []reporttest.AttemptSpec{
		{Arm: "a", Case: "c", Repeat: "r", Phases: 1, Solved: []bool{true}, Regrades: map[string][]bool{"1.0.1": {false}}},
	}})
	for _, v := range []string{"", devSuite.Version, "1.0.1", devSuite.Name + "@1.0.1"} {
		if err := CheckGraded([]string{dir}, v); err != nil {
			t.Errorf("version %q: %v", v, err)
		}
	}
	err := CheckGraded([]string{dir}, "9.9.9")
	var ng *NotGradedError
	if !errors.As(err, &ng) || ng.Suite != devSuite.Name+"@9.9.9" || !strings.Contains(err.Error(), "(graded: ") || !strings.Contains(err.Error(), "@1.0.1") {
		t.Errorf("got %v, want a NotGradedError listing the graded versions", err)
	}
}
