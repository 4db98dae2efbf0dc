package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/evalctl/evalctl/orchestrator/model"
	"github.com/evalctl/evalctl/sandbox"
)

// Tool names, as the model sees them.
const (
	ToolBash      = "bash"
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEditFile  = "edit_file"
	ToolListFiles = "list_files"
	ToolGrep      = "grep"
)

// Defaults for tool execution.
const (
	DefaultCommandTimeout = 120 * time.Second
	MaxCommandTimeout     = 600 * time.Second
	// DefaultToolOutput caps what one tool result gives back to the model.
	DefaultToolOutput = 32 << 10
	// fileOpTimeout bounds the small commands behind the file tools.
	fileOpTimeout = 30 * time.Second
	// maxEditFile bounds a file edit_file reads whole.
	maxEditFile = 8 << 20
	maxListed   = 2000
)

// maxCommandTimeout is the longest a command may ask for: MaxCommandTimeout,
// or the default timeout when an arm sets a longer one.
func maxCommandTimeout(def time.Duration) time.Duration { return max(MaxCommandTimeout, def) }

// Tools are the tool definitions sent to the model, the bash tool stating
// the command timeouts the loop applies (def, the arm's default). The
// descriptions are written for the model: what the tool does, what comes
// back, and limits.
func Tools(def time.Duration) []model.Tool {
	if def <= 0 {
		def = DefaultCommandTimeout
	}
	defS, maxS := seconds(def), seconds(maxCommandTimeout(def))
	bash := model.Tool{
		Name: ToolBash,
		Description: "Run a shell command with bash in the workspace directory (bash -o pipefail -c). " +
			"Returns the exit code, then stdout and stderr, each capped with a visible truncation mark. " +
			"There is no network. Default timeout " + defS + " s, at most " + maxS + " s. Use it to run tests and type checks " +
			"(for example python3 -m pytest -q, or tsc -p . && node --test build/).",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The command line to run."},` +
			`"timeout":{"type":"integer","description":"Seconds before the command is killed (default ` + defS + `, max ` + maxS + `)."}},` +
			`"required":["command"]}`),
	}
	return append([]model.Tool{bash}, fileTools...)
}

// seconds writes d in whole seconds, or with the fraction it has.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// fileTools are the tools whose limits no arm changes.
var fileTools = []model.Tool{
	{
		Name: ToolReadFile,
		Description: "Read a text file. Paths are relative to the workspace. Give start_line and end_line " +
			"(1-based, inclusive) to read part of a large file; long output is truncated with a mark.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the workspace."},` +
			`"start_line":{"type":"integer","description":"First line to return (1-based)."},` +
			`"end_line":{"type":"integer","description":"Last line to return (inclusive)."}},` +
			`"required":["path"]}`),
	},
	{
		Name:        ToolWriteFile,
		Description: "Create or overwrite a file with the given content (parent directories are created).",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the workspace."},` +
			`"content":{"type":"string","description":"The complete new content of the file."}},` +
			`"required":["path","content"]}`),
	},
	{
		Name: ToolEditFile,
		Description: "Replace one exact occurrence of old_string with new_string in a file. old_string must " +
			"appear exactly once (include surrounding lines to make it unique); whitespace counts.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"File path, relative to the workspace."},` +
			`"old_string":{"type":"string","description":"Exact text to replace; must occur once."},` +
			`"new_string":{"type":"string","description":"Replacement text."}},` +
			`"required":["path","old_string","new_string"]}`),
	},
	{
		Name: ToolListFiles,
		Description: "List the files under a directory recursively, one path per line, relative to it " +
			"(node_modules, .git and Python caches are skipped).",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Directory, relative to the workspace (default \".\")."}}}`),
	},
	{
		Name: ToolGrep,
		Description: "Search files for a regular expression (grep -rnE), printing file:line:text for each match. " +
			"No match is not an error.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"Extended regular expression."},` +
			`"path":{"type":"string","description":"File or directory to search (default \".\")."},` +
			`"ignore_case":{"type":"boolean","description":"Match case-insensitively."}},` +
			`"required":["pattern"]}`),
	},
}

// toolResult is what running one tool call produced.
type toolResult struct {
	// content is what goes back to the model.
	content string
	// failed marks a tool error (counted): bad arguments, unknown tool,
	// a failing command.
	failed bool
	// exec is the command's result for bash; nil otherwise.
	exec *sandbox.ExecResult
	// command is the command line bash ran (set with exec).
	command string
	// execTime is time spent inside the sandbox.
	execTime time.Duration
}

// errSandbox wraps a failure of the sandbox itself (not of a command).
type errSandbox struct{ err error }

func (e *errSandbox) Error() string { return "sandbox: " + e.err.Error() }
func (e *errSandbox) Unwrap() error { return e.err }

func toolError(format string, a ...any) *toolResult {
	return &toolResult{content: "error: " + fmt.Sprintf(format, a...), failed: true}
}

// stderrError is the tool error of a failed command behind a file tool or
// grep: what it wrote to stderr.
func stderrError(res *sandbox.ExecResult, d time.Duration) *toolResult {
	return &toolResult{content: "error: " + strings.TrimSpace(string(res.Stderr)), failed: true, execTime: d}
}

// decodeArgs decodes a call's JSON arguments strictly enough to report
// mistakes back to the model.
func decodeArgs(raw string, v any) error {
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments are not valid JSON for this tool: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("arguments are not valid JSON for this tool: more follows the arguments object")
	}
	return nil
}

// toolRuns are the tools by name: one method each, as the model calls
// them (the command table's pattern). runTool looks a call up here.
var toolRuns = map[string]func(l *Loop, ctx context.Context, args string) (*toolResult, error){
	ToolBash:      (*Loop).bash,
	ToolReadFile:  (*Loop).readFile,
	ToolWriteFile: (*Loop).writeFileTool,
	ToolEditFile:  (*Loop).editFile,
	ToolListFiles: (*Loop).listFiles,
	ToolGrep:      (*Loop).grep,
}

// runTool executes one tool call. An error return means the sandbox failed;
// a tool-level failure is a toolResult for the model to read.
func (l *Loop) runTool(ctx context.Context, tc model.ToolCall) (*toolResult, error) {
	if run, ok := toolRuns[tc.Name]; ok {
		return run(l, ctx, tc.Arguments)
	}
	names := []string{ToolBash}
	for _, t := range fileTools {
		names = append(names, t.Name)
	}
	return toolError("unknown tool %q; the tools are %s", tc.Name, strings.Join(names, ", ")), nil
}

// bash runs a shell command in the workspace.
func (l *Loop) bash(ctx context.Context, args string) (*toolResult, error) {
	var a struct {
		Command string `json:"command"`
		Timeout *int   `json:"timeout"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return toolError("%v", err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return toolError("command is empty"), nil
	}
	timeout := l.cfg.CommandTimeout
	if a.Timeout != nil && *a.Timeout > 0 {
		timeout = min(time.Duration(*a.Timeout)*time.Second, maxCommandTimeout(l.cfg.CommandTimeout))
	}
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	res, d, err := l.exec(ctx, []string{"bash", "-o", "pipefail", "-c", a.Command}, sandbox.ExecOptions{Timeout: timeout})
	if err != nil {
		return nil, err
	}
	return &toolResult{content: l.formatExec(res, timeout), failed: res.ExitCode != 0 || res.TimedOut, exec: res, command: a.Command, execTime: d}, nil
}

// readFile reads a file, or a range of its lines.
func (l *Loop) readFile(ctx context.Context, args string) (*toolResult, error) {
	var a struct {
		Path      string `json:"path"`
		StartLine *int   `json:"start_line"`
		EndLine   *int   `json:"end_line"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return toolError("%v", err), nil
	}
	if a.Path == "" {
		return toolError("path is required"), nil
	}
	cmd := []string{"cat", "--", a.Path}
	if a.StartLine != nil || a.EndLine != nil {
		from, to := 1, "$"
		if a.StartLine != nil && *a.StartLine > 0 {
			from = *a.StartLine
		}
		if a.EndLine != nil {
			if *a.EndLine < from {
				return toolError("end_line %d is before start_line %d", *a.EndLine, from), nil
			}
			to = fmt.Sprint(*a.EndLine)
		}
		cmd = []string{"sed", "-n", fmt.Sprintf("%d,%sp", from, to), "--", a.Path}
	}
	res, d, err := l.exec(ctx, cmd, sandbox.ExecOptions{Timeout: fileOpTimeout, MaxOutput: l.cfg.MaxToolOutput + 1})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return stderrError(res, d), nil
	}
	out := l.capTextMark(string(res.Stdout), res.StdoutTruncated,
		fmt.Sprintf("\n[... truncated by evalctl: the output has %d bytes; read a line range with start_line/end_line ...]\n", res.StdoutBytes))
	if out == "" {
		out = "(empty)"
	}
	return &toolResult{content: out, execTime: d}, nil
}

// writeFileTool writes a whole file.
func (l *Loop) writeFileTool(ctx context.Context, args string) (*toolResult, error) {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return toolError("%v", err), nil
	}
	if a.Path == "" {
		return toolError("path is required"), nil
	}
	return l.writeFile(ctx, a.Path, a.Content, fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path))
}

// editFile replaces one unique occurrence of a string in a file.
func (l *Loop) editFile(ctx context.Context, args string) (*toolResult, error) {
	var a struct {
		Path      string `json:"path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return toolError("%v", err), nil
	}
	if a.Path == "" || a.OldString == "" {
		return toolError("path and a non-empty old_string are required"), nil
	}
	res, d, err := l.exec(ctx, []string{"cat", "--", a.Path}, sandbox.ExecOptions{Timeout: fileOpTimeout, MaxOutput: maxEditFile})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return stderrError(res, d), nil
	}
	if res.StdoutTruncated {
		return toolError("%s is larger than %d bytes; use write_file or bash", a.Path, maxEditFile), nil
	}
	text := string(res.Stdout)
	switch n := strings.Count(text, a.OldString); n {
	case 0:
		return toolError("old_string was not found in %s (it must match exactly, whitespace included)", a.Path), nil
	case 1:
	default:
		return toolError("old_string occurs %d times in %s; include more surrounding text so it is unique", n, a.Path), nil
	}
	r, err := l.writeFile(ctx, a.Path, strings.Replace(text, a.OldString, a.NewString, 1), "edited "+a.Path)
	if r != nil {
		r.execTime += d
	}
	return r, err
}

// listFiles lists the files under a directory, build and cache directories pruned.
func (l *Loop) listFiles(ctx context.Context, args string) (*toolResult, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return toolError("%v", err), nil
	}
	dir := a.Path
	if dir == "" {
		dir = "."
	}
	// -mindepth 1: a directory named on purpose (node_modules, say)
	// is listed; only those found below it are pruned.
	res, d, err := l.exec(ctx, []string{"find", dir, "-mindepth", "1", "(", "-name", "node_modules", "-o", "-name", ".git", "-o", "-name", "__pycache__",
		"-o", "-name", ".pytest_cache", ")", "-prune", "-o", "-type", "f", "-print"}, sandbox.ExecOptions{Timeout: fileOpTimeout})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return stderrError(res, d), nil
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var files []string
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		if line != "" {
			files = append(files, strings.TrimPrefix(line, prefix))
		}
	}
	sort.Strings(files)
	more := ""
	if len(files) > maxListed {
		more = fmt.Sprintf("\n[... truncated by evalctl: %d more files ...]", len(files)-maxListed)
		files = files[:maxListed]
	}
	if len(files) == 0 {
		return &toolResult{content: "(no files)", execTime: d}, nil
	}
	return &toolResult{content: strings.Join(files, "\n") + more, execTime: d}, nil
}

// grep searches files for a pattern.
func (l *Loop) grep(ctx context.Context, args string) (*toolResult, error) {
	var a struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path"`
		IgnoreCase bool   `json:"ignore_case"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return toolError("%v", err), nil
	}
	if a.Pattern == "" {
		return toolError("pattern is required"), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	cmd := []string{"grep", "-rnIE"}
	for _, skip := range []string{"node_modules", ".git", "__pycache__", ".pytest_cache"} {
		// grep skips a directory named on the command line too: a
		// search asked for inside one must still look there.
		if path.Base(path.Clean(a.Path)) != skip {
			cmd = append(cmd, "--exclude-dir="+skip)
		}
	}
	if a.IgnoreCase {
		cmd = append(cmd, "-i")
	}
	cmd = append(cmd, "-e", a.Pattern, "--", a.Path)
	res, d, err := l.exec(ctx, cmd, sandbox.ExecOptions{Timeout: fileOpTimeout, MaxOutput: l.cfg.MaxToolOutput + 1})
	if err != nil {
		return nil, err
	}
	switch res.ExitCode {
	case 0:
		return &toolResult{content: l.capText(string(res.Stdout), res.StdoutTruncated), execTime: d}, nil
	case 1:
		return &toolResult{content: "no matches", execTime: d}, nil
	}
	return stderrError(res, d), nil
}

func (l *Loop) writeFile(ctx context.Context, path, content, done string) (*toolResult, error) {
	res, d, err := l.exec(ctx, []string{"sh", "-c", `mkdir -p -- "$(dirname -- "$1")" && cat > "$1"`, "sh", path},
		sandbox.ExecOptions{Timeout: fileOpTimeout, Stdin: strings.NewReader(content)})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return stderrError(res, d), nil
	}
	return &toolResult{content: done, execTime: d}, nil
}

// exec runs a command in the sandbox's workspace, timing it; an error is a
// sandbox failure (wrapped as errSandbox) unless the context ended.
func (l *Loop) exec(ctx context.Context, cmd []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, time.Duration, error) {
	opt.Dir = l.cfg.Workdir
	start := time.Now()
	res, err := l.cfg.Sandbox.Exec(ctx, cmd, opt)
	d := time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return nil, d, fmt.Errorf("%s: %w", cmd[0], context.Cause(ctx))
		}
		return nil, d, &errSandbox{err: err}
	}
	return res, d, nil
}

// formatExec renders a command's result for the model: exit code first
// (the scripted model and people read it there), then the output streams.
func (l *Loop) formatExec(res *sandbox.ExecResult, timeout time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code: %d", res.ExitCode)
	if res.TimedOut {
		fmt.Fprintf(&b, " (killed: the command ran past its %s timeout)", timeout.Round(time.Millisecond))
	}
	if res.OOMKilled {
		b.WriteString(" (killed: out of memory)")
	}
	b.WriteString("\n")
	half := l.cfg.MaxToolOutput / 2
	if len(res.Stdout) > 0 {
		b.WriteString("--- stdout ---\n")
		b.WriteString(capMiddle(res.Stdout, half, res.StdoutBytes, res.StdoutTruncated))
		b.WriteString("\n")
	}
	if len(res.Stderr) > 0 {
		b.WriteString("--- stderr ---\n")
		b.WriteString(capMiddle(res.Stderr, half, res.StderrBytes, res.StderrTruncated))
		b.WriteString("\n")
	}
	return b.String()
}

// capText keeps the head of s within the tool output cap, marking a cut
// (also one the sandbox made: truncated).
func (l *Loop) capText(s string, truncated bool) string {
	return l.capTextMark(s, truncated, "\n[... output truncated by evalctl ...]\n")
}

// capTextMark is capText with the given truncation mark.
func (l *Loop) capTextMark(s string, truncated bool, mark string) string {
	if len(s) <= l.cfg.MaxToolOutput && !truncated {
		return s
	}
	return s[:min(len(s), l.cfg.MaxToolOutput)] + mark
}

// capMiddle keeps the head and the (more telling) tail of long output. When
// the sandbox already cut the stream (truncated) it kept only its head, so
// no tail is known: the head is shown with how much the command wrote in
// all (written; 0 when unknown), never the end of the kept part passed off
// as the end of the output.
func capMiddle(b []byte, max int, written int64, truncated bool) string {
	b = bytes.TrimSuffix(b, []byte(sandbox.TruncationMark))
	if truncated {
		head := b[:min(len(b), max)]
		if written > int64(len(head)) {
			return string(head) + fmt.Sprintf("\n[... output truncated by evalctl: %d bytes in all, only the first %d shown ...]\n", written, len(head))
		}
		return string(head) + sandbox.TruncationMark
	}
	if len(b) <= max {
		return string(b)
	}
	head := max / 4
	tail := max - head
	return string(b[:head]) + fmt.Sprintf("\n[... %d bytes truncated by evalctl ...]\n", len(b)-head-tail) + string(b[len(b)-tail:])
}
