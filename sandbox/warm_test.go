package sandbox_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
)

// probeScript reports what a Python script sees of its process; "parent"
// is the warm interpreter when it ran as a fork of one.
const probeScript = `import json, os, sys
data = sys.stdin.read() if sys.argv[1:2] == ["stdin"] else ""
if sys.argv[1:2] == ["raise"]:
    raise ValueError("boom")
if sys.argv[1:2] == ["sleep"]:
    import time
    time.sleep(600)
print(json.dumps({"preloaded": "email.message" in sys.modules, "argv": sys.argv, "cwd": os.getcwd(),
                  "x": os.environ.get("PROBE_X"), "stdin": data, "leader": os.getsid(0) == os.getpid(),
                  "path": sys.path, "flags": [sys.flags.isolated, sys.flags.dont_write_bytecode], "orig": sys.orig_argv,
                  "parent": os.getppid(), "own_proc": os.access("/proc/self/environ", os.R_OK)}))
sys.stderr.write("to stderr, unflushed")
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
`

type probe struct {
	Preloaded bool     `json:"preloaded"`
	Argv      []string `json:"argv"`
	Cwd       string   `json:"cwd"`
	X         *string  `json:"x"`
	Stdin     string   `json:"stdin"`
	Leader    bool     `json:"leader"`
	Path      []string `json:"path"`
	Flags     []int    `json:"flags"`
	Orig      []string `json:"orig"`
	Parent    int      `json:"parent"`
	OwnProc   bool     `json:"own_proc"`
}

// TestPreloadRunsPythonInAWarmInterpreter: a `python3 -I -B SCRIPT`
// command that names modules to preload runs as a fork of the runner's
// warm interpreter, and sees exactly what a fresh interpreter would
// (arguments, directory, environment, standard input, output, exit
// status, sys.path, flags, a session of its own) except that the modules
// are already imported. The warm interpreter outlives the commands and the
// sweep after each; a command that overruns is stopped like any other; one
// that kills the warm interpreter only costs a restart; and a command it
// cannot take runs in a new interpreter.
func TestPreloadRunsPythonInAWarmInterpreter(t *testing.T) {
	c := sandboxtest.Start(t, sandbox.Spec{})
	ctx := context.Background()
	sh(t, c, "cat > /tmp/probe.py <<'EOF'\n"+probeScript+"EOF", sandbox.ExecOptions{})
	preload := []string{"email.message"}
	run := func(argv []string, opt sandbox.ExecOptions) (*sandbox.ExecResult, probe) {
		t.Helper()
		if opt.Timeout == 0 {
			opt.Timeout = time.Minute
		}
		res, err := c.Exec(ctx, argv, opt)
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		var p probe
		if res.ExitCode == 0 || res.ExitCode == 5 {
			if err := json.Unmarshal(res.Stdout, &p); err != nil {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q", argv, res.ExitCode, res.Stdout, res.Stderr)
			}
		}
		return res, p
	}
	argv := []string{"python3", "-I", "-B", "/tmp/probe.py", "stdin", "two words"}
	opt := func(preload []string) sandbox.ExecOptions {
		return sandbox.ExecOptions{Dir: "/tmp", Env: []string{"PROBE_X=x y", "PROBE_EXIT=5"}, Stdin: strings.NewReader("in\x00put"), Preload: preload}
	}

	warmRes, warm := run(argv, opt(preload))
	freshRes, fresh := run(argv, opt(nil))
	if !warm.Preloaded || fresh.Preloaded {
		t.Fatalf("preloaded: warm %v, fresh %v; want true, false", warm.Preloaded, fresh.Preloaded)
	}
	if warm.Parent == fresh.Parent {
		t.Errorf("the preloaded command's parent is the runner (%d): it did not run in the warm interpreter", warm.Parent)
	}
	if warmRes.ExitCode != 5 || freshRes.ExitCode != 5 || string(warmRes.Stderr) != string(freshRes.Stderr) {
		t.Errorf("exit %d stderr %q in the warm interpreter, %d %q fresh; want 5 and the same",
			warmRes.ExitCode, warmRes.Stderr, freshRes.ExitCode, freshRes.Stderr)
	}
	warmParent := warm.Parent
	warm.Preloaded, warm.Parent, fresh.Parent = fresh.Preloaded, 0, 0
	if !reflect.DeepEqual(warm, fresh) {
		t.Errorf("the script saw\n%+v\nin the warm interpreter and\n%+v\nfresh", warm, fresh)
	}
	if fresh.Stdin != "in\x00put" || fresh.X == nil || *fresh.X != "x y" || !fresh.Leader || fresh.Cwd != "/tmp" {
		t.Errorf("fresh probe %+v: the request's stdin, env, directory or session did not arrive", fresh)
	}

	t.Run("an exception ends it as in a fresh interpreter", func(t *testing.T) {
		for _, args := range [][]string{{"raise"}, {}} {
			cmd := append([]string{"python3", "-I", "-B", "/tmp/probe.py"}, args...)
			w, _ := run(cmd, sandbox.ExecOptions{Preload: preload})
			f, _ := run(cmd, sandbox.ExecOptions{})
			if w.ExitCode != f.ExitCode || string(w.Stderr) != string(f.Stderr) {
				t.Errorf("%v: exit %d stderr %q warm; %d %q fresh", args, w.ExitCode, w.Stderr, f.ExitCode, f.Stderr)
			}
		}
		missing := []string{"python3", "-I", "-B", "/tmp/missing.py"}
		w, _ := run(missing, sandbox.ExecOptions{Preload: preload})
		f, _ := run(missing, sandbox.ExecOptions{})
		if w.ExitCode != 2 || f.ExitCode != 2 || string(w.Stderr) != string(f.Stderr) {
			t.Errorf("missing script: exit %d %q warm, %d %q fresh", w.ExitCode, w.Stderr, f.ExitCode, f.Stderr)
		}
	})

	t.Run("the warm interpreter outlives commands and the sweep after them", func(t *testing.T) {
		_, again := run(argv, opt(preload))
		if !again.Preloaded || again.Parent != warmParent {
			t.Errorf("later command: preloaded %v, parent %d; want the same warm interpreter %d", again.Preloaded, again.Parent, warmParent)
		}
	})

	t.Run("other flags run in a new interpreter", func(t *testing.T) {
		_, p := run([]string{"python3", "-B", "/tmp/probe.py"}, sandbox.ExecOptions{Preload: preload})
		if p.Preloaded {
			t.Errorf("python3 -B ran in the warm interpreter (started -I -B)")
		}
	})

	t.Run("an overrunning command is stopped and leaves nothing", func(t *testing.T) {
		start := time.Now()
		res, _ := run([]string{"python3", "-I", "-B", "/tmp/probe.py", "sleep"}, sandbox.ExecOptions{Preload: preload, Timeout: 2 * time.Second})
		if !res.TimedOut || time.Since(start) > 20*time.Second {
			t.Errorf("timed out %v after %v, want true within seconds", res.TimedOut, time.Since(start))
		}
		left := sh(t, c, "ps -eo args= | grep -c '[p]ython3 -I -B /opt/evalctl/forkserver.py' || true", sandbox.ExecOptions{})
		if got := strings.TrimSpace(string(left.Stdout)); got != "1" {
			t.Errorf("%s warm interpreters (or forks of one) after the timeout, want the one", got)
		}
		if _, p := run(argv, opt(preload)); !p.Preloaded || p.Parent != warmParent {
			t.Errorf("after a timeout: preloaded %v parent %d, want the warm interpreter %d", p.Preloaded, p.Parent, warmParent)
		}
	})

	t.Run("a command that kills it costs a restart", func(t *testing.T) {
		sh(t, c, "kill -9 "+strconv.Itoa(warmParent), sandbox.ExecOptions{})
		_, p := run(argv, opt(preload))
		if !p.Preloaded || p.Parent == warmParent {
			t.Errorf("after the warm interpreter was killed: preloaded %v parent %d (was %d)", p.Preloaded, p.Parent, warmParent)
		}
	})
}
