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
		{[]string{"--bogus"}, 0, 0, "", nil, "", "flag provided but not defined: -bogus"},
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

// TestJSONFlag: --json is --format json; the two disagreeing, or another
// format, is a usage error.
func TestJSONFlag(t *testing.T) {
	tests := []struct {
		args []string
		json bool
		err  string
	}{
		{nil, false, ""},
		{[]string{"--json"}, true, ""},
		{[]string{"--format", "json"}, true, ""},
		{[]string{"--json", "--format", "json"}, true, ""},
		{[]string{"--json", "--format", "csv"}, false, "--json and --format csv disagree"},
		{[]string{"--format", "csv"}, false, `unknown --format "csv"`},
	}
	for _, tt := range tests {
		var out strings.Builder
		fs := Flags(&Env{Stdout: &out, Stderr: &out}, "x", "x")
		format := JSONFlag(fs)
		if err := Parse(fs, tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := format()
		if got != tt.json || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: %v %v; want %v %q", tt.args, got, err, tt.json, tt.err)
		}
	}
}

// TestFlagsUsage: the usage lists flags with two dashes and their defaults.
func TestFlagsUsage(t *testing.T) {
	var errb strings.Builder
	fs := Flags(&Env{Stdout: &errb, Stderr: &errb}, "x", "x [--n N]")
	fs.Int("n", 3, "how many")
	if err := Parse(fs, []string{"-h"}); err == nil {
		t.Fatal("-h parsed without ErrHelp")
	}
	want := "usage: evalctl x [--n N]\n\n  --n int\n    \thow many (default \"3\")\n  --version\n    \tprint the evalctl version\n"
	if errb.String() != want {
		t.Errorf("usage:\n%s\nwant:\n%s", errb.String(), want)
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
