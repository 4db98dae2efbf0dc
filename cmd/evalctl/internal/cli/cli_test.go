package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/evalctl/evalctl"
)

// TestArgs: flags are taken before, between and after positionals, "--"
// ends them, and a wrong number of positionals is a usage error saying so.
func TestArgs(t *testing.T) {
	tests := []struct {
		args     []string
		min, max int
		msg      string
		pos      []string
		format   string
		err      string
	}{
		{[]string{"a", "--format", "json"}, 1, 1, "", []string{"a"}, "json", ""},
		{[]string{"--format", "json", "a", "b"}, 0, -1, "", []string{"a", "b"}, "json", ""},
		{[]string{"a", "--format=csv", "b"}, 2, 2, "", []string{"a", "b"}, "csv", ""},
		{[]string{"a", "--", "--format", "b"}, 0, -1, "", []string{"a", "--format", "b"}, "table", ""},
		{[]string{}, 1, 1, "needs one run directory", nil, "", "needs one run directory"},
		{[]string{"a", "b"}, 0, 1, "", nil, "", `unexpected argument "a"`},
		{[]string{"a", "b"}, 0, 1, "takes at most one", nil, "", "takes at most one"},
		{[]string{"--bogus"}, 0, 0, "", nil, "", "unknown flag --bogus"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out strings.Builder
			fs := Flags(&Env{Stdout: &out, Stderr: &out}, "x", "x")
			format := fs.String("format", "table", "")
			pos, err := Args(fs, tt.args, tt.min, tt.max, tt.msg)
			if tt.err != "" {
				var ue *evalctl.UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v; want a usage error containing %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(pos, tt.pos) || *format != tt.format {
				t.Errorf("pos %q format %q err %v; want %q %q", pos, *format, err, tt.pos, tt.format)
			}
		})
	}
}

// TestExitCode: one line on stderr naming the command, and the code the
// error asks for.
func TestExitCode(t *testing.T) {
	tests := []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{fmt.Errorf("parse: %w", flag.ErrHelp), 0, ""},
		{errors.New("disk\nfull"), 1, "evalctl x: disk full\n"},
		{evalctl.Usagef("bad --n"), 2, "evalctl x: bad --n (see 'evalctl x --help')\n"},
		{&evalctl.UsageError{Err: errors.New("plan.yaml:3: arms"), See: "evalctl run --help-plan"}, 2, "evalctl x: plan.yaml:3: arms (evalctl run --help-plan)\n"},
		{fmt.Errorf("stopped: %w", &Exit{Code: 3, Msg: "resume with evalctl run --resume r"}), 3, "evalctl x: resume with evalctl run --resume r\n"},
		{&Exit{Code: 4}, 4, ""},
	}
	for _, tt := range tests {
		var stderr strings.Builder
		if code := ExitCode(&stderr, "x", tt.err); code != tt.code || stderr.String() != tt.stderr {
			t.Errorf("%v: exit %d stderr %q; want %d %q", tt.err, code, stderr.String(), tt.code, tt.stderr)
		}
	}
}

// TestMainDispatch: Main dispatches, answers --version anywhere before "--", and
// refuses an unknown command with exit 2.
func TestMainDispatch(t *testing.T) {
	var got []string
	cmds := map[string]Command{
		"version": {Summary: "v", Run: func(_ context.Context, e *Env, _ []string) error { fmt.Fprintln(e.Stdout, "evalctl v"); return nil }},
		"echo": {Summary: "e", Run: func(_ context.Context, e *Env, args []string) error {
			got = args
			return nil
		}},
	}
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "usage: evalctl", ""},
		{[]string{"--help"}, 0, "  echo         e", ""},
		{[]string{"echo", "a", "--version"}, 0, "evalctl v", ""},
		{[]string{"echo", "--", "--version"}, 0, "", ""},
		{[]string{"frob"}, 2, "", `unknown command "frob"`},
	}
	for _, tt := range tests {
		var out, errb strings.Builder
		code := Main(context.Background(), &Env{Stdout: &out, Stderr: &errb}, cmds, tt.args)
		if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("%q: exit %d %q %q; want %d %q %q", tt.args, code, out.String(), errb.String(), tt.code, tt.stdout, tt.stderr)
		}
	}
	if !reflect.DeepEqual(got, []string{"--", "--version"}) {
		t.Errorf("echo got %q", got)
	}
}

// TestFormat: --format takes text (the default; "table" reads as text),
// json and the command's own formats, and hands the command its own name
// for its text form; --json is --format json; the two disagreeing, or a
// format the command has not, is a usage error naming the formats.
func TestFormat(t *testing.T) {
	tests := []struct {
		text string
		own  []string
		args []string
		want string
		err  string
	}{
		{"table", nil, nil, "table", ""},
		{"table", nil, []string{"--format", "text"}, "table", ""},
		{"text", nil, []string{"--format", "table"}, "text", ""},
		{"table", nil, []string{"--json"}, "json", ""},
		{"table", nil, []string{"--format", "json"}, "json", ""},
		{"table", nil, []string{"--json", "--format", "json"}, "json", ""},
		{"table", []string{"csv"}, []string{"--format=csv"}, "csv", ""},
		{"table", []string{"csv"}, []string{"--json", "--format", "csv"}, "", "--json and --format csv disagree"},
		{"table", []string{"csv"}, []string{"--format", "csv", "--json"}, "", "--json and --format csv disagree"},
		{"table", nil, []string{"--format", "csv"}, "", `invalid value "csv" for --format: want one of text, json`},
		{"", nil, nil, "json", ""},
		{"", nil, []string{"--format", "text"}, "", `invalid value "text" for --format: want one of json`},
	}
	for _, tt := range tests {
		var out strings.Builder
		fs := Flags(&Env{Stdout: &out, Stderr: &out}, "x", "x")
		format := Format(fs, tt.text, tt.own...)
		err := Parse(fs, tt.args)
		var ue *evalctl.UsageError
		switch {
		case tt.err != "" && (!errors.As(err, &ue) || err.Error() != tt.err):
			t.Errorf("%q: error %v; want the usage error %q", tt.args, err, tt.err)
		case tt.err == "" && (err != nil || *format != tt.want):
			t.Errorf("%q: %q %v; want %q", tt.args, *format, err, tt.want)
		}
		if out.Len() > 0 {
			t.Errorf("%q: printed %q", tt.args, out.String())
		}
	}
}

// TestFlagsUsage: --help and -h print the usage on stdout, flags spelt
// with two dashes and their defaults; a flag mistake prints nothing (the
// command's one-line error says it, with two dashes).
func TestFlagsUsage(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		var out, errb strings.Builder
		fs := Flags(&Env{Stdout: &out, Stderr: &errb}, "x", "x [--n N]")
		fs.Int("n", 3, "how many")
		fs.Bool("all", false, "all of them")
		if err := Parse(fs, []string{arg}); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s: %v, want flag.ErrHelp", arg, err)
		}
		want := "usage: evalctl x [--n N]\n\n  --all\n    \tall of them\n  --n int\n    \thow many (default \"3\")\n  --version\n    \tprint the evalctl version\n"
		if out.String() != want || errb.Len() > 0 {
			t.Errorf("%s: stdout:\n%s\nstderr: %q\nwant on stdout:\n%s", arg, out.String(), errb.String(), want)
		}
	}
	for _, tt := range []struct{ args, want string }{
		{"--bogus", "unknown flag --bogus"},
		{"-bogus", "unknown flag --bogus"},
		{"--n", "flag --n needs a value"},
		{"--n=x", `invalid value "x" for --n (want a whole number)`},
		{"--all=maybe", `invalid value "maybe" for --all (want true or false)`},
		{"---n=1", "bad flag syntax: ---n=1"},
	} {
		var out, errb strings.Builder
		fs := Flags(&Env{Stdout: &out, Stderr: &errb}, "x", "x")
		fs.Int("n", 3, "how many")
		fs.Bool("all", false, "all of them")
		err := Parse(fs, []string{tt.args})
		var ue *evalctl.UsageError
		if !errors.As(err, &ue) || err.Error() != tt.want || out.Len()+errb.Len() > 0 {
			t.Errorf("%s: %v (printed %q %q); want the usage error %q and nothing printed", tt.args, err, out.String(), errb.String(), tt.want)
		}
	}
}

// TestWrite: a report goes to stdout, or atomically to a file (saying so);
// the report's error comes back and writes nothing.
func TestWrite(t *testing.T) {
	var out, errb strings.Builder
	e := &Env{Stdout: &out, Stderr: &errb}
	fill := func(w io.Writer) error { _, err := io.WriteString(w, "table\n"); return err }
	if err := Write(e, "")(fill, nil); err != nil || out.String() != "table\n" {
		t.Errorf("stdout: %v %q", err, out.String())
	}
	path := filepath.Join(t.TempDir(), "r.txt")
	if err := Write(e, path)(fill, nil); err != nil || errb.String() != "wrote "+path+"\n" {
		t.Errorf("file: %v %q", err, errb.String())
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "table\n" {
		t.Errorf("file holds %q %v", b, err)
	}
	bad := errors.New("no run")
	if err := Write(e, filepath.Join(t.TempDir(), "s.txt"))(nil, bad); !errors.Is(err, bad) {
		t.Errorf("error: %v", err)
	}
}
