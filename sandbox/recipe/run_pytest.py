"""Run pytest for the evalctl grader.

Started as `python3 -I -B /opt/evalctl/run_pytest.py ARGS`: isolated mode keeps
PYTHONPATH, the user site and the current directory off sys.path, so nothing
in the answer is imported before pytest and the standard library. The answer's
directory is appended, after them, so its modules can be imported by the
tests but cannot shadow pytest or the standard library.

A session cut short (pytest.exit, even with returncode=0, or a
KeyboardInterrupt raised by the code under test) leaves a report of the
tests run so far that looks like a pass; it exits with status 3 instead.

The process ends with os._exit once pytest returns: exit handlers the code
under test registered (atexit, finalizers) never run, so none can rewrite
the written report or change the exit status after the fact.

The functions of pytest's and pluggy's machinery (running tests, making and
writing reports) are noted before the run and compared after it: code under
test that replaced one of them (to turn failures into passes, say) makes
the run exit with status 3. Deliberate tampering can still hide itself;
this stops the common hack.
"""
import importlib
import os
import sys
import types

_os_exit = os._exit
sys.path.append(os.environ.get("EVALCTL_WORKSPACE", "/workspace"))

import pytest  # noqa: E402

_WATCHED = [
    "pytest", "_pytest.python_api", "_pytest.recwarn", "_pytest.runner", "_pytest.reports", "_pytest.junitxml", "_pytest.main", "_pytest.python",
    "_pytest.nodes", "_pytest.outcomes", "_pytest.skipping", "_pytest.fixtures", "_pytest.config",
    "pluggy", "pluggy._hooks", "pluggy._callers", "pluggy._manager", "pluggy._result",
]
_KINDS = (types.FunctionType, classmethod, staticmethod, property)


def _machinery():
    """The functions and methods of the watched modules, by dotted name."""
    out = {}
    for name in _WATCHED:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        for k, v in list(vars(mod).items()):
            if isinstance(v, _KINDS):
                out[name + "." + k] = v
            elif isinstance(v, type) and v.__module__ == name:
                for kk, vv in list(vars(v).items()):
                    if isinstance(vv, _KINDS):
                        out[name + "." + k + "." + kk] = vv
    return out


class _Guard:
    """Notes a session that pytest.exit or KeyboardInterrupt ended early."""

    def __init__(self):
        self.cut_short = None

    def pytest_keyboard_interrupt(self, excinfo):
        self.cut_short = excinfo.exconly()


def _exit(code):
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    _os_exit(code)


_before = _machinery()
_guard = _Guard()
_code = pytest.main(sys.argv[1:], plugins=[_guard])
_after = _machinery()
_changed = sorted(k for k in _before if _after.get(k) is not _before[k])
if _changed:
    sys.stderr.write("evalctl: the code under test replaced pytest's own functions (%s); the run does not count\n" % ", ".join(_changed[:5]))
    _exit(3)
if _guard.cut_short is not None:
    sys.stderr.write("evalctl: the test session was cut short (%s); it does not count as a pass\n" % _guard.cut_short)
    _exit(3)
_exit(int(_code))
