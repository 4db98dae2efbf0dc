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
"""
import os
import sys

sys.path.append(os.environ.get("EVALCTL_WORKSPACE", "/workspace"))

import pytest  # noqa: E402


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
    os._exit(code)


_guard = _Guard()
_code = pytest.main(sys.argv[1:], plugins=[_guard])
if _guard.cut_short is not None:
    sys.stderr.write("evalctl: the test session was cut short (%s); it does not count as a pass\n" % _guard.cut_short)
    _exit(3)
_exit(int(_code))
