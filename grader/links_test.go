package grader_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

func link(name, target string) sandbox.Entry {
	return sandbox.Entry{Name: name, Mode: fs.ModeSymlink | 0o777, Linkname: target}
}

// TestLinksAreJudgedByWhatTheyResolveTo: a symbolic link in an answer is
// resolved inside the answer, as the kernel would with the answer as
// /workspace; one that leaves the workspace at any step, loops, or lands on
// a protected file or a directory holding one fails like a protected
// change and is dropped, whatever its text looks like.
func TestLinksAreJudgedByWhatTheyResolveTo(t *testing.T) {
	s, err := tasks.LoadSuite("testdata/suite")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Case("adder")
	pristine, err := grader.Pristine(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		links []sandbox.Entry
		// want is the audit entry expected, "" for a link that is kept.
		want string
	}{
		{"absolute, out", []sandbox.Entry{link("peek", "/checks/acceptance")}, "link out of the workspace: peek -> /checks/acceptance"},
		{"absolute through the workspace and up", []sandbox.Entry{link("x", "/workspace/../checks")}, "link out of the workspace: x -> /workspace/../checks"},
		{"relative, up", []sandbox.Entry{link("x", "../checks")}, "link out of the workspace: x -> ../checks"},
		{"relative from a subdirectory, up twice", []sandbox.Entry{dir("sub"), link("sub/x", "../../tmp")}, "link out of the workspace: sub/x -> ../../tmp"},
		{"through another link", []sandbox.Entry{link("a", "."), link("b", "a/../..")}, "link out of the workspace: b -> a/../.."},
		{"through a link out", []sandbox.Entry{link("t", "/tmp"), link("u", "t/../workspace/helper.py")}, "link out of the workspace: t -> /tmp"},
		{"a loop", []sandbox.Entry{link("l1", "l2"), link("l2", "l1")}, "link out of the workspace: l1 -> l2"},
		{"to a protected file", []sandbox.Entry{link("t", "tests/test_public.py")}, "link to a protected file: t -> tests/test_public.py"},
		{"to a protected file, absolute", []sandbox.Entry{link("t", "/workspace/pytest.ini")}, "link to a protected file: t -> /workspace/pytest.ini"},
		{"to a protected directory", []sandbox.Entry{link("t", "./tests")}, "link to a protected file: t -> ./tests"},
		{"to a protected file through a link", []sandbox.Entry{link("d", "tests"), link("t", "d/test_public.py")}, "link to a protected file: d -> tests"},
		{"inside, relative", []sandbox.Entry{link("h", "helper.py")}, ""},
		{"inside, absolute", []sandbox.Entry{link("h", "/workspace/helper.py")}, ""},
		{"inside, from a subdirectory", []sandbox.Entry{dir("sub"), link("sub/h", "../helper.py")}, ""},
		{"dangling inside", []sandbox.Entry{link("h", "nothing-here.py")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := grader.Overlay(pristine, tt.links)
			ws, audit := grader.Prepare(c, pristine, answer)
			got := strings.Join(audit.Protected, "|")
			if tt.want == "" {
				if got != "" {
					t.Fatalf("protected changes %q, want none", got)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("protected changes %q, want %q", got, tt.want)
			}
			// No link the audit flagged is graded.
			for _, e := range ws {
				if e.Mode&fs.ModeSymlink != 0 && strings.Contains(got, e.Name+" -> ") {
					t.Errorf("flagged link %s is still in the graded tree", e.Name)
				}
			}
		})
	}
}

// TestTooLargeAnswerIsGradedFailing: the snapshot of an answer too large
// to keep is graded, as failing (answer_too_large), not an error the
// orchestrator would record as an infrastructure failure.
func TestTooLargeAnswerIsGradedFailing(t *testing.T) {
	s, g := setup(t)
	marker := []sandbox.Entry{{Name: sandbox.TooLargeMarker, Mode: 0o644, Data: []byte("too large\n")}}
	snap, err := sandbox.NewSnapshot(marker)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := g.Grade(context.Background(), s, s.Case("adder"), 1, snap, grader.Labels{Run: sandboxtest.RunLabel(t)})
	if err != nil {
		t.Fatalf("grade: %v", err)
	}
	if gr.Solved || !gr.AnswerTooLarge {
		t.Errorf("solved=%v answer_too_large=%v, want false true", gr.Solved, gr.AnswerTooLarge)
	}
}
