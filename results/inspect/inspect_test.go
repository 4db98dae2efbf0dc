package inspect

import (
	"errors"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	from := map[string][]byte{"same.py": []byte("x\n"), "gone.py": []byte("a\n"), "mod.py": []byte("a\nb\nc\n"), "bin": {0, 1}}
	to := map[string][]byte{"same.py": []byte("x\n"), "new.py": []byte("n"), "mod.py": []byte("a\nB\nc\n"), "bin": {0, 2}}
	got := Diff(from, to)
	want := []struct{ path, status, has string }{
		{"bin", "modified", ""},
		{"gone.py", "deleted", "--- starter/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"},
		{"mod.py", "modified", "-b\n+B\n"},
		{"new.py", "added", "--- /dev/null\n+++ answer/new.py\n@@ -0,0 +1 @@\n+n\n\\ No newline at end of file\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d files, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Path != w.path || g.Status != w.status || !strings.Contains(g.Unified, w.has) {
			t.Errorf("file %d: %+v, want %s %s with %q", i, g, w.path, w.status, w.has)
		}
	}
	if !got[0].Binary || got[0].Unified != "" {
		t.Errorf("binary file: %+v", got[0])
	}
}

func TestFind(t *testing.T) {
	run := "../../cmd/evalctl/testdata/recorded/fixture-ab-01a230a6-ae6c-7a5b-8772-8ca68c6bda0a"
	dir, id, err := Find([]string{run}, Query{ID: "01a230a6-ae8e"})
	if err != nil || dir != run || id != "01a230a6-ae8e-7d26-8bcd-7abc672f064a" {
		t.Errorf("by prefix: %s %s %v", dir, id, err)
	}
	if _, id, err := Find([]string{run}, Query{Arm: "flawed", Case: "tsadd", Repeat: "repeat-1"}); err != nil || id != "01a230a6-ae9a-7445-918a-2cc4bb1c7f91" {
		t.Errorf("by slot: %s %v", id, err)
	}
	if _, _, err := Find([]string{run}, Query{ID: "01a230a6-ae"}); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, _, err := Find([]string{run}, Query{ID: "zz"}); !errors.Is(err, ErrNoAttempt) {
		t.Errorf("unknown: %v", err)
	}
}
