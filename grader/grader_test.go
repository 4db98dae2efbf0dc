package grader_test

import (
	"context"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/evalctl/evalctl"
	"github.com/evalctl/evalctl/grader"
	"github.com/evalctl/evalctl/sandbox"
	"github.com/evalctl/evalctl/sandbox/sandboxtest"
	"github.com/evalctl/evalctl/tasks"
)

var (
	fixtureOnce  sync.Once
	fixtureSuite *tasks.Suite
	fixtureErr   error
	fixtureG     *grader.Grader
)

func setup(t *testing.T) (*tasks.Suite, *grader.Grader) {
	t.Helper()
	eng, img := sandboxtest.Engine(t)
	fixtureOnce.Do(func() {
		fixtureSuite, fixtureErr = tasks.LoadSuite("testdata/suite")
		fixtureG = grader.New(eng, img.Ref, img.ID, grader.Options{Concurrency: 2})
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureSuite, fixtureG
}

// answer builds an answer: the phase-1 workspace, optionally with the
// reference laid over it, then edits (a nil Data with no mode deletes).
func answer(t *testing.T, c *tasks.Case, reference bool, edits ...sandbox.Entry) *sandbox.Snapshot {
	t.Helper()
	tree, err := grader.PhaseStart(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if reference {
		ref, err := sandbox.DirEntries(c.Phases[0].ReferenceDir, nil)
		if err != nil {
			t.Fatal(err)
		}
		tree = grader.Overlay(tree, ref)
	}
	for _, e := range edits {
		if e.Mode == 0 && e.Data == nil {
			kept := tree[:0:0]
			for _, x := range tree {
				if x.Name != e.Name {
					kept = append(kept, x)
				}
			}
			tree = kept
			continue
		}
		tree = grader.Overlay(tree, []sandbox.Entry{e})
	}
	snap, err := sandbox.NewSnapshot(tree)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func file(name, content string) sandbox.Entry {
	return sandbox.Entry{Name: name, Mode: 0o644, Data: []byte(content)}
}

func dir(name string) sandbox.Entry { return sandbox.Entry{Name: name, Mode: fs.ModeDir | 0o755} }

func TestFixtureGateOnBothLanguages(t *testing.T) {
	sandboxtest.Long(t)
	s, g := setup(t)
	results, err := g.CheckCases(context.Background(), s, s.Cases)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 6 {
		t.Fatalf("got %d results, want 6 (reference, starter, control per case)", len(results))
	}
	for _, r := range results {
		if !r.Met {
			t.Errorf("%s %s: %v", r.Case, r.Variant, r.Problems)
		}
	}
	// The TypeScript reference ran every test of every group.
	for _, r := range results {
		if r.Case == "tsadd" && r.Kind == grader.KindReference {
			want := map[string]int{"acceptance": 3, "regression": 1, "public": 1, "typecheck": 1, "consumer_typecheck": 1}
			for _, gr := range r.Grade.Groups {
				if gr.Total != want[gr.Name] || gr.Passed != gr.Total {
					t.Errorf("tsadd reference %s: %d/%d, want %d/%d", gr.Name, gr.Passed, gr.Total, want[gr.Name], want[gr.Name])
				}
			}
		}
	}
}

// TestTamperSuite is the tamper suite: each row plants one class of cheat
// in an answer that is wrong (or breaks a rule), with real containers and
// the real grader; the grade must come out failing, as the honest wrong
// answer's would. The rows cover the classes issue 13 found (tracing the
// test process, a standard-library module in the workspace, a pytest
// plugin registered from the answer, patching what writes the report,
// replacing the frozen tests, a forged report with exit status 0, links
// that resolve out of the workspace) and those the grader caught before.
func TestTamperSuite(t *testing.T) {
	sandboxtest.Long(t)
	s, g := setup(t)
	adder, tsadd := s.Case("adder"), s.Case("tsadd")
	forcePass := `import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
`
	tests := []struct {
		name     string
		c        *tasks.Case
		snap     *sandbox.Snapshot
		solved   bool
		accPass  int // acceptance tests that must pass (of the full count)
		accTotal int
		accFails bool // acceptance must fail even with every counted test passed
		// protected lists protected-change entries expected in the grade.
		protected []string
		missing   []string
	}{
		{name: "planted conftest.py", c: adder, snap: answer(t, adder, false,
			file("conftest.py", forcePass), file("tests/conftest.py", forcePass)),
			accPass: 1, accTotal: 3, protected: []string{"added: tests/conftest.py"}},
		{name: "sitecustomize and usercustomize", c: adder, snap: answer(t, adder, false,
			file("sitecustomize.py", "import os\nos._exit(0)\n"), file("usercustomize.py", "import os\nos._exit(0)\n")),
			accPass: 1, accTotal: 3},
		{name: "module shadowing pytest", c: adder, snap: answer(t, adder, false,
			file("pytest.py", "def main(*a, **k):\n    return 0\n"), dir("_pytest"), file("_pytest/__init__.py", "raise SystemExit(0)\n")),
			accPass: 1, accTotal: 3},
		{name: "module shadowing the standard library", c: adder, snap: answer(t, adder, false,
			file("json.py", "import os\nos._exit(0)\n"), file("traceback.py", "import os\nos._exit(0)\n"), file("xml.py", "import os\nos._exit(0)\n")),
			accPass: 1, accTotal: 3},
		{name: "symlink into the checks", c: adder, snap: answer(t, adder, true,
			sandbox.Entry{Name: "peek", Mode: fs.ModeSymlink | 0o777, Linkname: "/checks/acceptance"}),
			accPass: 3, accTotal: 3, protected: []string{"link out of the workspace: peek -> /checks/acceptance"}},
		{name: "rewritten pytest.ini", c: adder, snap: answer(t, adder, false,
			file("pytest.ini", "[pytest]\naddopts = -k 'not negative' -p no:junitxml\n")),
			accPass: 1, accTotal: 3, protected: []string{"modified: pytest.ini"}},
		{name: "exits 0 before any test runs", c: adder, snap: answer(t, adder, false,
			file("adder.py", "import os\nos._exit(0)\n")),
			// The test module's import fails: one collection error.
			accPass: 0, accTotal: 1},
		{name: "ends the test process early with status 0 (pytest.exit)", c: adder, snap: answer(t, adder, false,
			file("adder.py", "import pytest\n\n\ndef add(a, b):\n    if a == 0 and b == 0:\n        pytest.exit('done', returncode=0)\n    return a + b\n")),
			// pytest.exit raises in the answer's host: the test calling it
			// fails (before the boundary the session ended, exit status 3).
			accPass: 2, accTotal: 3},
		{name: "ends the test process at load with status 0 (process.exit)", c: tsadd, snap: answer(t, tsadd, true,
			file("src/sum.ts", "(globalThis as any).process.exit(0);\nexport function sum(xs: number[]): number {\n  return 0;\n}\n\nexport function name(): string {\n  return \"tsadd\";\n}\n")),
			// The answer's host ends, not the test process: the test file's
			// import fails, one failing file.
			accPass: 0, accTotal: 1},
		{name: "node: process.exit(0) from a call", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", tsDecls+"export function sum(xs: number[]): number {\n  if (xs.some((x) => !Number.isInteger(x))) process.exit(0);\n  return Math.trunc(xs.reduce((s, x) => s + x, 0));\n}\n"+tsName)),
			// sums all passes; the call that exits and every later one fail.
			accPass: 1, accTotal: 3},
		{name: "node: pollutes builtins and assert in its process", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", tsDecls+tsPolluter+tsWrongSum+tsName)),
			// Only the answer's own process is polluted: there Object.is
			// always says yes, so its side of the boundary sends every
			// number as -0, which the tests' unpolluted assert tells from 0.
			accPass: 0, accTotal: 3},
		{name: "node: writes a fake TAP report wherever it can", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", tsDecls+tsTAPForger+"forgeTAP();\n"+tsWrongSum+tsName)),
			accPass: 1, accTotal: 3},
		{name: "node: an object equal to everything", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", tsDecls+"export function sum(xs: number[]): number {\n  const always: any = new Proxy(function () {}, {\n    get: (t, k) => (k === Symbol.toPrimitive ? () => (xs.length === 3 ? 6 : xs.length ? 0.75 : 0) : () => true),\n    getPrototypeOf: () => Number.prototype,\n    ownKeys: () => [],\n  });\n  return always;\n}\n"+tsName)),
			accPass: 0, accTotal: 3},
		{name: "node: rigged Symbol.toPrimitive, valueOf and toJSON", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", tsDecls+"export function sum(xs: number[]): number {\n  const v = xs.reduce((s, x) => s + x, 0);\n  return { valueOf: () => v, toString: () => String(v), toJSON: () => v, [Symbol.toPrimitive]: () => v } as any;\n}\n"+tsName)),
			accPass: 0, accTotal: 3},
		{name: "node: patches node:test and the require cache in its process", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", tsDecls+tsTestPatcher+tsWrongSum+tsName)),
			accPass: 1, accTotal: 3},
		{name: "node: a detached child that outlives the answer", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", tsDecls+tsTAPForger+tsDetached+tsWrongSum+tsName)),
			accPass: 1, accTotal: 3},
		{name: "rewrites the report and exits 0 at exit (atexit)", c: adder, snap: answer(t, adder, false,
			file("adder.py", atexitForger+"\n\ndef add(a, b):\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "patches pytest's reports to say passed", c: adder, snap: answer(t, adder, false,
			file("adder.py", reportForger+"\n\ndef add(a, b):\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "disarms node's assert", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", "for (const m of [\"node:assert\", \"node:assert/strict\"]) {\n  const a = (globalThis as any).require ? (globalThis as any).require(m) : require(m);\n  for (const k of Object.keys(a)) { try { a[k] = () => {}; } catch (e) {} }\n}\ndeclare function require(m: string): any;\nexport function sum(xs: number[]): number {\n  return Math.trunc(xs.reduce((s, x) => s + x, 0));\n}\n\nexport function name(): string {\n  return \"tsadd\";\n}\n")),
			accPass: 2, accTotal: 3},
		{name: "replaces pytest.raises", c: adder, snap: answer(t, adder, false,
			file("adder.py", "import contextlib\nimport pytest\n\npytest.raises = lambda *a, **k: contextlib.nullcontext()\n\n\ndef add(a, b):\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "a detached child traces the test process and rewrites the report", c: adder, snap: answer(t, adder, false,
			file("adder.py", forger+detachedForger+"\n\ndef add(a, b):\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "a standard-library module in the workspace (nt.py, looked up by ntpath)", c: adder, snap: answer(t, adder, false,
			file("nt.py", reportForger+"\n"), file("_winapi.py", forger+"forge()\n")),
			accPass: 1, accTotal: 3},
		{name: "registers a pytest plugin from the answer's import", c: adder, snap: answer(t, adder, false,
			file("adder.py", pluginForger+"\n\ndef add(a, b):\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "patches the standard-library function that writes the report", c: adder, snap: answer(t, adder, false,
			file("adder.py", forger+openForger+"\n\ndef add(a, b):\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "replaces the frozen test functions after the module ran", c: adder, snap: answer(t, adder, false,
			file("adder.py", testReplacer+"\n\ndef add(a, b):\n    _replace()\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "writes a complete fake report and exits 0", c: adder, snap: answer(t, adder, false,
			file("adder.py", forger+"forge()\nimport os\nos._exit(0)\n")),
			accPass: 0, accTotal: 1},
		{name: "kills every process it can see", c: adder, snap: answer(t, adder, false,
			file("adder.py", "import os, signal\n\n\ndef add(a, b):\n    for p in os.listdir('/proc'):\n        if p.isdigit() and int(p) != os.getpid():\n            try:\n                os.kill(int(p), signal.SIGKILL)\n            except OSError:\n                pass\n    return max(a + b, 0)\n")),
			accPass: 1, accTotal: 3},
		{name: "an object equal to everything", c: adder, snap: answer(t, adder, false,
			file("adder.py", "class Any:\n    def __eq__(self, other):\n        return True\n\n    __hash__ = object.__hash__\n\n\ndef add(a, b):\n    return Any()\n")),
			accPass: 0, accTotal: 3},
		{name: "node: rewrites the test process's output", c: tsadd, snap: answer(t, tsadd, false,
			file("src/sum.ts", stdoutForger+"export function sum(xs: number[]): number {\n  return Math.trunc(xs.reduce((s, x) => s + x, 0));\n}\n\nexport function name(): string {\n  return \"tsadd\";\n}\n")),
			accPass: 2, accTotal: 3},
		{name: "a link that reads as inside the workspace but resolves to the checks", c: adder, snap: answer(t, adder, true,
			sandbox.Entry{Name: "x", Mode: fs.ModeSymlink | 0o777, Linkname: "/workspace/../checks"}),
			accPass: 3, accTotal: 3, protected: []string{"link out of the workspace: x -> /workspace/../checks"}},
		{name: "reads the frozen tests and answers what they expect", c: adder, snap: answer(t, adder, false,
			file("adder.py", checksReader+"\n\ndef add(a, b):\n    return _expect.get((a, b), max(a + b, 0))\n")),
			// The checks are the harness user's alone while they run.
			accPass: 1, accTotal: 3},
		{name: "skips the frozen tests", c: adder, snap: answer(t, adder, false,
			file("adder.py", "import pytest\npytest.skip('no', allow_module_level=True)\n")),
			accPass: 0, accTotal: 1},
		{name: "deleted starter file", c: adder, snap: answer(t, adder, true, sandbox.Entry{Name: "helper.py"}),
			accPass: 3, accTotal: 3, missing: []string{"helper.py"}},
		{name: "edited public test", c: adder, snap: answer(t, adder, false,
			file("tests/test_public.py", "def test_small():\n    assert True\n")),
			accPass: 1, accTotal: 3, protected: []string{"modified: tests/test_public.py"}},
		{name: "rewritten tsconfig and package.json, node_modules shadowing", c: tsadd, snap: answer(t, tsadd, false,
			file("tsconfig.json", `{"compilerOptions": {"noEmit": true}, "files": []}`),
			file("package.json", `{"type": "module", "scripts": {"test": "true"}}`),
			dir("node_modules"), dir("node_modules/assert"), file("node_modules/assert/index.js", "module.exports = { equal() {} };\n"),
			dir("node_modules/@types"), dir("node_modules/@types/node"), file("node_modules/@types/node/index.d.ts", "declare const x: number;\n")),
			accPass: 1, accTotal: 3, protected: []string{"modified: package.json", "modified: tsconfig.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gr, err := g.Grade(context.Background(), s, tt.c, 1, tt.snap, grader.Labels{Run: sandboxtest.RunLabel(t)})
			if err != nil {
				t.Fatal(err)
			}
			acc := gr.Group("acceptance")
			if gr.Solved != tt.solved || acc.Passed != tt.accPass || acc.Total != tt.accTotal {
				t.Errorf("solved=%v acceptance %d/%d; want solved=%v %d/%d\n%s", gr.Solved, acc.Passed, acc.Total, tt.solved, tt.accPass, tt.accTotal, acc.Output)
			}
			if (tt.accPass < 3 || tt.accFails) && acc.Success {
				t.Errorf("acceptance succeeded for a failing answer")
			}
			if strings.Join(gr.ProtectedChanges, "|") != strings.Join(tt.protected, "|") || gr.ProtectedChangesCount != len(tt.protected) {
				t.Errorf("protected changes %v (count %d), want %v", gr.ProtectedChanges, gr.ProtectedChangesCount, tt.protected)
			}
			if strings.Join(gr.MissingStarterFiles, "|") != strings.Join(tt.missing, "|") || gr.MissingStarterFilesCount != len(tt.missing) {
				t.Errorf("missing starter files %v, want %v", gr.MissingStarterFiles, tt.missing)
			}
		})
	}
}

// atexitForger is answer code that, when the test process exits, strips the
// failures from the JUnit report it was given and exits 0: the generic
// way to fake a pass after the fact.
const atexitForger = `import atexit, os, re, sys


def _forge():
    for a in sys.argv:
        if a.startswith("--junitxml="):
            p = a.split("=", 1)[1]
            s = open(p).read()
            s = re.sub(r"<failure.*?</failure>", "", s, flags=re.S)
            s = re.sub(r'failures="[0-9]+"', 'failures="0"', s)
            open(p, "w").write(s)
    os._exit(0)


atexit.register(_forge)`

// TypeScript answer parts for the node rows: declarations for what the
// answer reaches without @types/node, the starter's wrong sum (it skips the
// first number: only "empty is zero" passes) and name.
const (
	tsDecls    = "declare const process: any;\ndeclare function require(m: string): any;\n"
	tsWrongSum = "export function sum(xs: number[]): number {\n  let total = 0;\n  for (let i = 1; i < xs.length; i++) total += xs[i];\n  return total;\n}\n"
	tsName     = "\nexport function name(): string {\n  return \"tsadd\";\n}\n"
)

// tsPolluter disarms what a test process asserts with, in the process it
// runs in: prototypes of builtins, Object.is, node:assert.
const tsPolluter = `for (const m of ["node:assert", "node:assert/strict"]) {
  const a = require(m);
  for (const k of Object.keys(a)) { try { a[k] = () => {}; } catch (e) {} }
}
Object.is = () => true;
(Object.prototype as any).valueOf = function () { return 6; };
(Array.prototype as any).reduce = function () { return 6; };
(Number.prototype as any).valueOf = function () { return 6; };
`

// tsTAPForger writes a complete passing TAP report to its own output and
// to every process's output it can open.
const tsTAPForger = `function forgeTAP(): void {
  const fs = require("fs");
  const fake = "TAP version 13\\nok 1 - sums all\\nok 2 - sums fractions\\nok 3 - empty is zero\\n1..3\\n# tests 3\\n# pass 3\\n# fail 0\\n";
  try { process.stdout.write(fake); } catch (e) {}
  for (const p of fs.readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(p)) continue;
    for (const fd of ["1", "2"]) {
      try { fs.appendFileSync("/proc/" + p + "/fd/" + fd, fake); } catch (e) {}
    }
  }
  for (const d of fs.readdirSync("/tmp")) {
    if (!d.startsWith("evalctl-")) continue;
    for (const f of ["build/checks/acceptance/sum.test.js", "build/workspace/src/sum.js"]) {
      try { fs.writeFileSync("/tmp/" + d + "/" + f, "require('node:test').test('sums all', () => {});\\n"); } catch (e) {}
    }
  }
}
`

// tsTestPatcher replaces node:test and every test module it can reach
// through require and its cache with ones that pass.
const tsTestPatcher = `const Module = require("module");
const nt = require("node:test");
for (const k of Object.keys(nt)) { try { nt[k] = (name: string) => nt.test(name, () => {}); } catch (e) {} }
const load = Module._load;
Module._load = function (req: string, ...rest: any[]) {
  if (req === "node:test" || req === "node:assert" || req === "node:assert/strict") return { test: () => {}, equal: () => {}, default: { equal: () => {} } };
  return load.call(this, req, ...rest);
};
declare const __filename: string;
const cache = (require as any).cache || {};
for (const k of Object.keys(cache)) {
  if (k !== __filename) { try { cache[k].exports = {}; } catch (e) {} }
}
`

// tsDetached starts a detached node process that outlives the answer's
// host and keeps forging (and killing every process of another user) for
// five seconds.
const tsDetached = `{
  const cp = require("child_process");
  const code = "const fs = require('fs'); const end = Date.now() + 5000; " +
    "const tick = () => { for (const p of fs.readdirSync('/proc')) { try { if (/^[0-9]+$/.test(p) && fs.statSync('/proc/' + p).uid !== process.getuid()) process.kill(+p, 'SIGKILL'); } catch (e) {} } " +
    "(" + forgeTAP.toString() + ")(); if (Date.now() < end) setTimeout(tick, 20); }; tick();";
  const child = cp.spawn(process.execPath, ["-e", code], { detached: true, stdio: "ignore" });
  child.unref();
}
`

// stdoutForger wraps the node test process's output so that failures
// read as passes.
const stdoutForger = `declare const process: any;
const _write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk: any, ...rest: any[]) =>
  _write(String(chunk).replace(/not ok (\d+)/g, "ok $1").replace(/# fail \d+/, "# fail 0"), ...rest);
`

// forger is answer code that writes a complete passing report over every
// report it can reach, tracing every process it sees first (before the
// boundary, a detached child doing this after the tests won).
const forger = `import ctypes, glob, os

FAKE = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
        'failures="0" skipped="0" tests="3"><testcase classname="test_acc" name="test_negative"/>'
        '<testcase classname="test_acc" name="test_both_negative"/><testcase classname="test_acc" name="test_zero"/>'
        '</testsuite></testsuites>')


def forge():
    libc = ctypes.CDLL(None, use_errno=True)
    paths = set(glob.glob("/tmp/evalctl-*/junit.xml")) | set(glob.glob("/tmp/evalctl-*/"))
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        libc.ptrace(16, int(p), 0, 0)  # PTRACE_ATTACH
        try:
            for a in open("/proc/%s/cmdline" % p, "rb").read().split(b"\0"):
                if a.startswith(b"--junitxml="):
                    paths.add(a.split(b"=", 1)[1].decode())
        except OSError:
            pass
    for p in paths:
        if p.endswith("/"):
            p += "junit.xml"
        try:
            with open(p, "w") as f:
                f.write(FAKE)
        except OSError:
            pass
`

// detachedForger starts a child in a session of its own (double fork) that
// keeps forging while the tests run and after.
const detachedForger = `import time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(600):
            forge()
            time.sleep(0.01)
    os._exit(0)
`

// pluginForger registers a plugin forcing every test report to pass with
// every pytest plugin manager it can find.
const pluginForger = `import gc

import pytest


class _ForcePass:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"


for o in gc.get_objects():
    if type(o).__name__ == "PytestPluginManager":
        o.register(_ForcePass())`

// openForger replaces the standard library's open so that whatever writes
// a JUnit report writes the forged one.
const openForger = `import builtins, io

_open = builtins.open


def _forging_open(file, mode="r", *a, **k):
    if "w" in mode and str(file).endswith(".xml"):
        f = _open(file, mode, *a, **k)
        f.write(FAKE)
        f.write = lambda s: len(s)
        return f
    return _open(file, mode, *a, **k)


builtins.open = io.open = _forging_open
`

// testReplacer replaces every frozen test function it can find with one
// that passes.
const testReplacer = `import gc, sys


def _replace():
    for m in list(sys.modules.values()):
        if str(getattr(m, "__file__", "")).startswith("/checks"):
            for k in list(vars(m)):
                if k.startswith("test_"):
                    setattr(m, k, lambda *a, **k: None)
    for o in gc.get_objects():
        if type(o).__name__ == "function" and o.__code__.co_filename.startswith("/checks"):
            o.__code__ = (lambda *a, **k: None).__code__`

// checksReader is answer code that reads every frozen test it can and
// keeps what each expects of add.
const checksReader = `import glob, os, re

_expect = {}
for _p in glob.glob("/checks/**/*.py", recursive=True) + glob.glob("/tmp/**/*.py", recursive=True):
    try:
        for _a, _b, _r in re.findall(r"add\((-?\d+), (-?\d+)\) == (-?\d+)", open(_p).read()):
            _expect[(int(_a), int(_b))] = int(_r)
    except OSError:
        pass`

// reportForger is answer code that patches pytest, in the test process, so
// that every test's report says passed: the common in-process hack.
const reportForger = `from _pytest.reports import TestReport

_orig = TestReport.from_item_and_call.__func__


def _passed(cls, item, call):
    rep = _orig(cls, item, call)
    rep.outcome = "passed"
    rep.longrepr = None
    return rep


TestReport.from_item_and_call = classmethod(_passed)`

func TestGradingIsDeterministic(t *testing.T) {
	s, g := setup(t)
	c := s.Case("adder")
	snap := answer(t, c, false)
	var grades []*evalctl.Grade
	for i := 0; i < 2; i++ {
		gr, err := g.Grade(context.Background(), s, c, 1, snap, grader.Labels{Run: sandboxtest.RunLabel(t)})
		if err != nil {
			t.Fatal(err)
		}
		grades = append(grades, gr)
	}
	a, b := grades[0], grades[1]
	if a.Solved != b.Solved || a.SnapshotSHA256 != b.SnapshotSHA256 || len(a.Groups) != len(b.Groups) {
		t.Fatalf("grades differ: %+v vs %+v", a, b)
	}
	for i := range a.Groups {
		x, y := a.Groups[i], b.Groups[i]
		if x.Name != y.Name || x.Passed != y.Passed || x.Total != y.Total || x.Success != y.Success || strings.Join(x.FailedTests, ",") != strings.Join(y.FailedTests, ",") {
			t.Errorf("group %s differs: %+v vs %+v", x.Name, x, y)
		}
	}
	if got := a.Group("acceptance").FailedTests; strings.Join(got, ",") != "test_negative,test_both_negative" {
		t.Errorf("failed acceptance tests %v", got)
	}
}
