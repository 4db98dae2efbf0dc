package inspect

import (
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
