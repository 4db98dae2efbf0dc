package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/sandbox"
)

// The workspace every row of TestToolsThroughDispatch starts from.
var toolFixture = map[string]string{
	"a.txt":             "alpha\nbeta\ngamma\ndelta\n",
	"dup.txt":           "x = 1\ny = 2\nx = 1\n",
	"sub/b.go":          "package sub\n\nfunc Beta() {}\n",
	"node_modules/m.js": "beta\n",
	".git/HEAD":         "beta\n",
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Test data for the truncation rows, built once.
var (
	// big.txt: 100 numbered lines of 10 bytes, 1000 bytes in all.
	bigText = func() string {
		var b strings.Builder
		for i := range 100 {
			fmt.Fprintf(&b, "line %04d\n", i)
		}
		return b.String()
	}()
	// many.txt: 50 matching lines; grep's output for them.
	manyText, manyGrep = func() (string, string) {
		var f, g strings.Builder
		for i := range 50 {
			fmt.Fprintf(&f, "match %02d\n", i)
			fmt.Fprintf(&g, "./many.txt:%d:match %02d\n", i+1, i)
		}
		return f.String(), g.String()
	}()
	// 2005 files under lots/, more than list_files gives back.
	lotsFiles = func() map[string]string {
		m := map[string]string{}
		for i := range maxListed + 5 {
			m[fmt.Sprintf("lots/f%04d", i)] = ""
		}
		return m
	}()
	lotsListing = func() string {
		names := make([]string, maxListed)
		for i := range names {
			names[i] = fmt.Sprintf("f%04d", i)
		}
		return strings.Join(names, "\n") + "\n[... truncated by evalctl: 5 more files ...]"
	}()
	// 500 x's then END: 503 bytes of stdout.
	xs = strings.Repeat("x", 500) + "END"
)

// TestToolsThroughDispatch runs tool calls through Loop.runTool, the
// dispatch the loop uses, against real host tools in a temporary workspace.
// What must hold: each tool returns exactly what tools.go promises the model
// (file:line:text from grep, the requested lines from read_file, workspace-
// relative sorted paths from list_files, skipping node_modules and .git);
// edit_file changes the file only when old_string occurs exactly once, and
// otherwise is a tool error saying why with the file untouched; over-long
// output keeps a bounded part and carries a visible truncation mark; and bad
// arguments or an unknown tool are tool errors that name the problem, never
// Go errors.
func TestToolsThroughDispatch(t *testing.T) {
	const small = 64 // MaxToolOutput of the truncation rows
	tests := []struct {
		name   string
		tool   string
		args   string
		maxOut int               // Config.MaxToolOutput; 0 is the default
		extra  map[string]string // files added to toolFixture
		// want is the exact content; wantHas and wantNot are substrings
		// that must (not) appear, when the exact text depends on the host.
		want       string
		wantHas    []string
		wantNot    []string
		wantFailed bool
		// files are workspace files and their content after the call.
		files map[string]string
	}{
		// edit_file
		{name: "edit_file replaces the single occurrence", tool: ToolEditFile,
			args:  `{"path":"a.txt","old_string":"beta\n","new_string":"BETA\nbeta2\n"}`,
			want:  "edited a.txt",
			files: map[string]string{"a.txt": "alpha\nBETA\nbeta2\ngamma\ndelta\n"}},
		{name: "edit_file in a subdirectory", tool: ToolEditFile,
			args:  `{"path":"sub/b.go","old_string":"func Beta() {}","new_string":"func Beta() int { return 1 }"}`,
			want:  "edited sub/b.go",
			files: map[string]string{"sub/b.go": "package sub\n\nfunc Beta() int { return 1 }\n"}},
		{name: "edit_file old_string not found", tool: ToolEditFile,
			args:       `{"path":"a.txt","old_string":"epsilon","new_string":"zeta"}`,
			want:       "error: old_string was not found in a.txt (it must match exactly, whitespace included)",
			wantFailed: true,
			files:      map[string]string{"a.txt": toolFixture["a.txt"]}},
		{name: "edit_file whitespace counts", tool: ToolEditFile,
			args:       `{"path":"a.txt","old_string":"alpha \nbeta","new_string":"z"}`,
			wantHas:    []string{"old_string was not found in a.txt"},
			wantFailed: true,
			files:      map[string]string{"a.txt": toolFixture["a.txt"]}},
		{name: "edit_file old_string occurs twice", tool: ToolEditFile,
			args:       `{"path":"dup.txt","old_string":"x = 1","new_string":"x = 3"}`,
			want:       "error: old_string occurs 2 times in dup.txt; include more surrounding text so it is unique",
			wantFailed: true,
			files:      map[string]string{"dup.txt": toolFixture["dup.txt"]}},
		{name: "edit_file empty old_string", tool: ToolEditFile,
			args:       `{"path":"a.txt","old_string":"","new_string":"z"}`,
			want:       "error: path and a non-empty old_string are required",
			wantFailed: true,
			files:      map[string]string{"a.txt": toolFixture["a.txt"]}},
		{name: "edit_file missing file", tool: ToolEditFile,
			args:       `{"path":"nope.txt","old_string":"a","new_string":"b"}`,
			wantHas:    []string{"error: ", "nope.txt", "No such file"},
			wantFailed: true},

		// write_file
		{name: "write_file creates parent directories", tool: ToolWriteFile,
			args:  `{"path":"new/deep/c.txt","content":"hello"}`,
			want:  "wrote 5 bytes to new/deep/c.txt",
			files: map[string]string{"new/deep/c.txt": "hello"}},

		// grep
		{name: "grep finds file and line", tool: ToolGrep,
			args: `{"pattern":"beta"}`,
			want: "./a.txt:2:beta\n"},
		{name: "grep ignore_case across files, skipping node_modules and .git", tool: ToolGrep,
			args:    `{"pattern":"^(func )?beta","ignore_case":true}`,
			wantHas: []string{"./a.txt:2:beta\n", "./sub/b.go:3:func Beta() {}\n"},
			wantNot: []string{"node_modules", ".git", "m.js", "HEAD"}},
		{name: "grep inside node_modules when asked to", tool: ToolGrep,
			args: `{"pattern":"beta","path":"node_modules"}`,
			want: "node_modules/m.js:1:beta\n"},
		{name: "grep under a path", tool: ToolGrep,
			args: `{"pattern":"Beta","path":"sub"}`,
			want: "sub/b.go:3:func Beta() {}\n"},
		{name: "grep no match is not an error", tool: ToolGrep,
			args: `{"pattern":"omega"}`,
			want: "no matches"},
		{name: "grep bad regular expression", tool: ToolGrep,
			args:       `{"pattern":"(beta"}`,
			wantHas:    []string{"error: ", "grep"},
			wantFailed: true},
		{name: "grep without pattern", tool: ToolGrep,
			args:       `{"path":"."}`,
			want:       "error: pattern is required",
			wantFailed: true},

		// read_file
		{name: "read_file whole file", tool: ToolReadFile,
			args: `{"path":"a.txt"}`,
			want: toolFixture["a.txt"]},
		{name: "read_file line range is inclusive", tool: ToolReadFile,
			args: `{"path":"a.txt","start_line":2,"end_line":3}`,
			want: "beta\ngamma\n"},
		{name: "read_file from start_line to the end", tool: ToolReadFile,
			args: `{"path":"a.txt","start_line":3}`,
			want: "gamma\ndelta\n"},
		{name: "read_file up to end_line", tool: ToolReadFile,
			args: `{"path":"a.txt","end_line":1}`,
			want: "alpha\n"},
		{name: "read_file range past the end", tool: ToolReadFile,
			args: `{"path":"a.txt","start_line":10,"end_line":12}`,
			want: "(empty)"},
		{name: "read_file end_line before start_line", tool: ToolReadFile,
			args:       `{"path":"a.txt","start_line":3,"end_line":1}`,
			want:       "error: end_line 1 is before start_line 3",
			wantFailed: true},
		{name: "read_file missing file", tool: ToolReadFile,
			args:       `{"path":"nope.txt"}`,
			wantHas:    []string{"error: ", "nope.txt", "No such file"},
			wantFailed: true},

		// list_files
		{name: "list_files sorted and relative, skipping node_modules and .git", tool: ToolListFiles,
			args: `{}`,
			want: "a.txt\ndup.txt\nsub/b.go"},
		{name: "list_files with empty arguments", tool: ToolListFiles,
			args: ``,
			want: "a.txt\ndup.txt\nsub/b.go"},
		{name: "list_files of node_modules when asked to", tool: ToolListFiles,
			args: `{"path":"node_modules"}`,
			want: "m.js"},
		{name: "list_files of a subdirectory", tool: ToolListFiles,
			args: `{"path":"sub/"}`,
			want: "b.go"},
		{name: "list_files of a directory holding only skipped caches", tool: ToolListFiles,
			args:  `{"path":"py"}`,
			extra: map[string]string{"py/__pycache__/m.pyc": "", "py/.pytest_cache/v": ""},
			want:  "(no files)"},
		{name: "list_files of a missing directory", tool: ToolListFiles,
			args:       `{"path":"nope"}`,
			wantHas:    []string{"error: ", "nope"},
			wantFailed: true},

		// Truncation marks.
		{name: "list_files stops at its cap with a mark", tool: ToolListFiles,
			args:  `{"path":"lots"}`,
			extra: lotsFiles,
			want:  lotsListing},
		{name: "read_file over the output cap", tool: ToolReadFile,
			args:   `{"path":"big.txt"}`,
			maxOut: small,
			extra:  map[string]string{"big.txt": bigText},
			want:   bigText[:small] + "\n[... truncated by evalctl: the output has 1000 bytes; read a line range with start_line/end_line ...]\n"},
		{name: "read_file at exactly the output cap is whole", tool: ToolReadFile,
			args:   `{"path":"big.txt","end_line":6}`,
			maxOut: 60,
			extra:  map[string]string{"big.txt": bigText},
			want:   bigText[:60]},
		{name: "grep over the output cap (capText)", tool: ToolGrep,
			args:   `{"pattern":"match"}`,
			maxOut: small,
			extra:  map[string]string{"many.txt": manyText},
			want:   manyGrep[:small] + "\n[... output truncated by evalctl ...]\n"},
		{name: "bash stdout over half the cap keeps head and tail (capMiddle)", tool: ToolBash,
			args:   `{"command":"head -c 500 /dev/zero | tr '\\0' x; printf END"}`,
			maxOut: small,
			// half = 32: a head of 8 bytes and a tail of 24.
			want: "exit code: 0\n--- stdout ---\n" + xs[:8] + "\n[... 471 bytes truncated by evalctl ...]\n" + xs[len(xs)-24:] + "\n"},
		{name: "bash stderr is capped the same way", tool: ToolBash,
			args:       `{"command":"printf ok; (head -c 500 /dev/zero | tr '\\0' x; printf END) >&2; exit 3"}`,
			maxOut:     small,
			want:       "exit code: 3\n--- stdout ---\nok\n--- stderr ---\n" + xs[:8] + "\n[... 471 bytes truncated by evalctl ...]\n" + xs[len(xs)-24:] + "\n",
			wantFailed: true},

		// bash
		{name: "bash runs in the workspace", tool: ToolBash,
			args: `{"command":"cat a.txt | wc -l"}`,
			want: "exit code: 0\n--- stdout ---\n4\n\n"},
		{name: "bash timeout is reported", tool: ToolBash,
			args:       `{"command":"sleep 5","timeout":1}`,
			want:       "exit code: 124 (killed: the command ran past its 1s timeout)\n",
			wantFailed: true},
		{name: "bash empty command", tool: ToolBash,
			args:       `{"command":"  "}`,
			want:       "error: command is empty",
			wantFailed: true},

		// Bad calls.
		{name: "malformed JSON", tool: ToolReadFile,
			args:       `{"path": "a.txt"`,
			wantHas:    []string{"error: arguments are not valid JSON for this tool: ", "unexpected EOF"},
			wantFailed: true},
		{name: "something after the arguments object", tool: ToolReadFile,
			args:       `{"path": "a.txt"} {"path": "b.txt"}`,
			wantHas:    []string{"error: arguments are not valid JSON for this tool: ", "more follows the arguments object"},
			wantFailed: true},
		{name: "unknown argument", tool: ToolEditFile,
			args:       `{"path":"a.txt","old":"beta","new_string":"b"}`,
			wantHas:    []string{"error: arguments are not valid JSON for this tool: ", `unknown field "old"`},
			wantFailed: true,
			files:      map[string]string{"a.txt": toolFixture["a.txt"]}},
		{name: "argument of the wrong type", tool: ToolGrep,
			args:       `{"pattern":"beta","ignore_case":"yes"}`,
			wantHas:    []string{"error: arguments are not valid JSON for this tool: ", "ignore_case"},
			wantFailed: true},
		{name: "arguments not an object", tool: ToolBash,
			args:       `["ls"]`,
			wantHas:    []string{"error: arguments are not valid JSON for this tool: ", "cannot unmarshal array"},
			wantFailed: true},
		{name: "unknown tool", tool: "rm_rf",
			args:       `{"path":"."}`,
			want:       `error: unknown tool "rm_rf"; the tools are bash, read_file, write_file, edit_file, list_files, grep`,
			wantFailed: true},
		{name: "tool names are case-sensitive", tool: "Read_File",
			args:       `{"path":"a.txt"}`,
			wantHas:    []string{`error: unknown tool "Read_File"`, "read_file"},
			wantFailed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb := newHostSandbox(t, "")
			writeFiles(t, sb.root, toolFixture)
			writeFiles(t, sb.root, tt.extra)
			l, err := New(Config{Model: &scriptedModel{}, ModelName: "x", Sandbox: sb, MaxToolOutput: tt.maxOut})
			if err != nil {
				t.Fatal(err)
			}
			res, err := l.runTool(context.Background(), model.ToolCall{ID: "call_1", Name: tt.tool, Arguments: tt.args})
			if err != nil {
				t.Fatalf("runTool returned a sandbox error: %v", err)
			}
			if tt.want != "" && res.content != tt.want {
				t.Errorf("content\n%q\nwant\n%q", res.content, tt.want)
			}
			for _, s := range tt.wantHas {
				if !strings.Contains(res.content, s) {
					t.Errorf("content %q does not contain %q", res.content, s)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(res.content, s) {
					t.Errorf("content %q contains %q", res.content, s)
				}
			}
			if res.failed != tt.wantFailed {
				t.Errorf("failed = %v, want %v (content %q)", res.failed, tt.wantFailed, res.content)
			}
			if tt.wantFailed && !strings.HasPrefix(res.content, "error: ") && tt.tool != ToolBash {
				t.Errorf("a tool error must start with \"error: \": %q", res.content)
			}
			if (res.exec != nil) != (tt.tool == ToolBash && !strings.HasPrefix(res.content, "error: ")) {
				t.Errorf("exec result %v for tool %s", res.exec, tt.tool)
			}
			for name, want := range tt.files {
				got, err := os.ReadFile(filepath.Join(sb.root, filepath.FromSlash(name)))
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if string(got) != want {
					t.Errorf("%s after the call:\n%q\nwant\n%q", name, got, want)
				}
			}
		})
	}
}

// TestTruncationMarks checks the two caps behind tool output directly.
// What must hold: output within the cap comes back unchanged, except that
// a stream the sandbox already cut keeps exactly one sandbox mark; output
// over the cap keeps at most max bytes of the original (capMiddle: the
// first quarter and the last three quarters, with the count of bytes
// dropped between them; capText: the head) and carries a visible mark.
func TestTruncationMarks(t *testing.T) {
	digits := strings.Repeat("0123456789", 10) // 100 bytes
	capTextMark := "\n[... output truncated by evalctl ...]\n"
	tests := []struct {
		name      string
		capText   bool // capText with MaxToolOutput max; capMiddle otherwise
		in        string
		max       int
		written   int64
		truncated bool
		want      string
		mark      string // the mark that must be present; "" for none
	}{
		{name: "capMiddle short", in: "abc", max: 8, want: "abc"},
		{name: "capMiddle exactly max", in: digits[:8], max: 8, want: digits[:8]},
		{name: "capMiddle short but cut by the sandbox keeps one mark",
			in: "abc" + sandbox.TruncationMark, max: 8, truncated: true,
			want: "abc" + sandbox.TruncationMark, mark: sandbox.TruncationMark},
		{name: "capMiddle cut by the sandbox says how much was written",
			in: "abc" + sandbox.TruncationMark, max: 8, written: 5000, truncated: true,
			want: "abc\n[... output truncated by evalctl: 5000 bytes in all, only the first 3 shown ...]\n",
			mark: "\n[... output truncated by evalctl: 5000 bytes in all, only the first 3 shown ...]\n"},
		{name: "capMiddle long keeps head and tail",
			in: digits, max: 20,
			want: digits[:5] + "\n[... 80 bytes truncated by evalctl ...]\n" + digits[85:],
			mark: "\n[... 80 bytes truncated by evalctl ...]\n"},
		{name: "capMiddle long and cut by the sandbox keeps only the head, which is all that is known",
			in: digits + sandbox.TruncationMark, max: 20, written: 2_000_000, truncated: true,
			want: digits[:20] + "\n[... output truncated by evalctl: 2000000 bytes in all, only the first 20 shown ...]\n",
			mark: "\n[... output truncated by evalctl: 2000000 bytes in all, only the first 20 shown ...]\n"},
		{name: "capText short", capText: true, in: "abc", max: 8, want: "abc"},
		{name: "capText exactly max", capText: true, in: digits[:8], max: 8, want: digits[:8]},
		{name: "capText long keeps the head",
			capText: true, in: digits, max: 20,
			want: digits[:20] + capTextMark, mark: capTextMark},
		{name: "capText short but cut by the sandbox is marked",
			capText: true, in: "abc", max: 20, truncated: true,
			want: "abc" + capTextMark, mark: capTextMark},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if tt.capText {
				l, err := New(Config{Model: &scriptedModel{}, ModelName: "x", Sandbox: instantSandbox{}, MaxToolOutput: tt.max})
				if err != nil {
					t.Fatal(err)
				}
				got = l.capText(tt.in, tt.truncated)
			} else {
				got = capMiddle([]byte(tt.in), tt.max, tt.written, tt.truncated)
			}
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if tt.mark == "" {
				return
			}
			if n := strings.Count(got, tt.mark); n != 1 {
				t.Errorf("mark %q appears %d times in %q", tt.mark, n, got)
			}
			if kept := len(got) - len(tt.mark); kept > tt.max {
				t.Errorf("kept %d bytes besides the mark, more than the cap %d", kept, tt.max)
			}
		})
	}
}
