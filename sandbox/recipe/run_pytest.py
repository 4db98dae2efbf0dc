"""Run pytest for the evalctl grader, on the trusted side of the boundary.

Started as the harness user: `python3 -I -B /opt/evalctl/run_pytest.py ARGS`
with EVALCTL_ANSWER_SOCKET naming the socket of the answer's host
(answerd.py, running as the command user). This process never loads the
answer's code: the answer's modules (the workspace's top-level modules and
packages, imported from a test file) are proxy modules whose every use is
forwarded to the answer's host (see boundary.py), and programs the tests run
with subprocess.run are run there too, as the command user. Nothing of the
answer is on sys.path, so no answer module can shadow the standard library,
pytest or a plugin, and there is nothing in this process for the answer to
patch, register into or exit from. The answer cannot signal, trace or write
to this process, and the report is written where it cannot write.

The guards from before the boundary stay as a second line: a session cut
short exits with status 3; the process ends with os._exit once pytest
returns; pytest's and pluggy's machinery is compared before and after the
run. A test module that could not be collected (an import error of the
answer: a name the tests import that it lacks) is not a session cut short,
though pytest ends that session with its Interrupted, a KeyboardInterrupt:
it exits with status 6 and says "the tests could not be collected".
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import time
import types

_os_exit = os._exit
os.umask(0)  # files the tests write are the answer's to read and change (tmp_path)
sys.path.insert(0, "/opt/evalctl")
import boundary  # noqa: E402

_WORKSPACE = os.environ.get("EVALCTL_WORKSPACE", "/workspace")
# The report's directory: made here, by the harness user, readable and
# writable by nobody else (it must not exist yet).
if os.environ.get("EVALCTL_REPORT_DIR"):
    os.mkdir(os.environ["EVALCTL_REPORT_DIR"], 0o700)
_SOCKET = os.environ.get("EVALCTL_ANSWER_SOCKET", "")
_session = boundary.Session(owner=True)
boundary.share_sqlite()


def _connect(role="call"):
    deadline = time.monotonic() + 30
    while True:
        try:
            sock = boundary.connect_unix(_SOCKET)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise boundary.BoundaryError("evalctl: the answer's host did not start")
            time.sleep(0.01)
    ep = boundary.Endpoint(_session, sock)
    ep.send({"hello": role})
    return ep.sock


_service_started = False


def _start_service():
    """Serves calls the answer makes from threads of its own."""
    global _service_started
    if _service_started:
        return
    _service_started = True
    import threading
    ep = boundary.Endpoint(_session, _connect("service"))

    def loop():
        try:
            while True:
                ep.serve(ep.recv())
        except Exception:
            pass

    threading.Thread(target=loop, daemon=True).start()


def _connect_call():
    _start_service()
    return _connect("call")


_session.connect = _connect_call


def _answer_names():
    names = set()
    try:
        entries = os.listdir(_WORKSPACE)
    except OSError:
        return names
    for e in entries:
        full = os.path.join(_WORKSPACE, e)
        if e.endswith(".py") and os.path.isfile(full):
            names.add(e[:-3])
        elif os.path.isdir(full) and e.isidentifier():
            names.add(e)
    return {n for n in names if n.isidentifier() and n not in sys.stdlib_module_names}


_ANSWER_NAMES = _answer_names()


def _from_tests():
    """Whether the import being resolved was asked for by a test file (not
    by the standard library or pytest looking up an optional module)."""
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith("<frozen") and "importlib" not in fn:
            return fn.startswith("/checks/") or fn.startswith(_WORKSPACE + "/")
        f = f.f_back
    return False


class _ProxyModule(types.ModuleType):
    def __getattr__(self, name):
        d = self.__dict__
        if (name.startswith("__") and name not in boundary._NAMED_DUNDERS) or "_ev_remote" not in d:
            raise AttributeError(name)
        return boundary.remote_getattr(d["_ev_remote"], name, d.setdefault("_ev_methods", {}))

    # Setting an attribute of the answer's module (monkeypatch.setattr, say)
    # sets it in the answer's module; the import system's own attributes
    # (dunders) stay on this stand-in.
    def __setattr__(self, name, value):
        d = self.__dict__
        if name.startswith("__") or "_ev_remote" not in d:
            return super().__setattr__(name, value)
        d.setdefault("_ev_methods", {}).pop(name, None)
        _session.endpoint().request("setattr", (d["_ev_remote"], name, value))

    def __delattr__(self, name):
        d = self.__dict__
        if name.startswith("__") or "_ev_remote" not in d:
            return super().__delattr__(name)
        d.setdefault("_ev_methods", {}).pop(name, None)
        _session.endpoint().request("delattr", (d["_ev_remote"], name))


class _AnswerFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in _ANSWER_NAMES or not _from_tests():
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        ep = _session.endpoint()
        remote = ep.request("import", (spec.name,))
        mod = _ProxyModule(spec.name)
        mod.__dict__["_ev_remote"] = remote
        return mod

    def exec_module(self, module):
        module.__path__ = []


def _importing_checks_dir():
    """The directory of the checks' file asking for the import being
    resolved (a test module, or a helper of theirs), else None."""
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith("<frozen") and "importlib" not in fn:
            return os.path.dirname(fn) if fn.startswith("/checks/") else None
        f = f.f_back
    return None


class _ChecksFinder(importlib.abc.MetaPathFinder):
    """A module beside a test file (test_utils.py, a helper the tests
    import) is part of the tests: it is loaded here, on the trusted side,
    from the checks, and wins over an answer module of the same name.
    pytest's importlib import mode puts no test directory on sys.path, so
    without this the tests could not import it at all."""

    def find_spec(self, name, path=None, target=None):
        if path is not None or "." in name:
            return None
        d = _importing_checks_dir()
        if d is None:
            return None
        mod = os.path.join(d, name + ".py")
        if os.path.isfile(mod):
            return importlib.util.spec_from_file_location(name, mod)
        pkg = os.path.join(d, name)
        if os.path.isfile(os.path.join(pkg, "__init__.py")):
            return importlib.util.spec_from_file_location(name, os.path.join(pkg, "__init__.py"), submodule_search_locations=[pkg])
        return None


sys.meta_path.append(_ChecksFinder())
sys.meta_path.append(_AnswerFinder())


def _run(args, *, cwd=None, input=None, capture_output=False, timeout=None, check=False, env=None,
         stdout=None, stderr=None, text=None, universal_newlines=None, encoding=None, errors=None, **other):
    """subprocess.run for the tests: the program runs in the answer's host,
    as the command user (the tests run the answer as a program)."""
    if other or not (capture_output or (stdout == subprocess.PIPE and stderr == subprocess.PIPE)):
        raise RuntimeError("evalctl: a graded test may run a program only as subprocess.run(..., capture_output=True)")
    argv = [os.fspath(a) if not isinstance(a, str) else a for a in ([args] if isinstance(args, (str, bytes)) else args)]
    argv = [str(a) for a in argv]
    texts = bool(text or universal_newlines or encoding or errors)
    enc, errs = encoding or "utf-8", errors or "strict"
    if texts and isinstance(input, str):
        input = input.encode(enc, errs)
    if env is not None:
        # Nothing of the tests' own process reaches the answer's programs
        # through an environment the tests passed on (the running test's
        # name, say).
        env = {str(k): str(v) for k, v in env.items() if not str(k).startswith(("PYTEST_", "EVALCTL_"))}
    got = _session.endpoint().request("run", (argv,), {"cwd": None if cwd is None else str(cwd), "input": input,
                                                       "timeout": timeout, "env": env})
    if type(got) is not list or len(got) != 3 or type(got[1]) is not bytes or type(got[2]) is not bytes:
        raise boundary.BoundaryError("malformed program result")
    if got[0] == "timeout":
        raise subprocess.TimeoutExpired(argv, timeout, output=got[1], stderr=got[2])
    if type(got[0]) is not int:
        raise boundary.BoundaryError("malformed exit status")
    out, err = got[1], got[2]
    if texts:
        out = out.decode(enc, errs).replace("\r\n", "\n").replace("\r", "\n")
        err = err.decode(enc, errs).replace("\r\n", "\n").replace("\r", "\n")
    res = subprocess.CompletedProcess(argv, got[0], out, err)
    if check:
        res.check_returncode()
    return res


def _refuse(*a, **k):
    raise RuntimeError("evalctl: the test process starts no program itself (use subprocess.run)")


subprocess.run = _run
subprocess.Popen = _refuse
for _n in ("system", "posix_spawn", "posix_spawnp", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "popen"):
    if hasattr(os, _n):
        setattr(os, _n, _refuse)

import pytest  # noqa: E402
from _pytest import tmpdir as _tmpdir  # noqa: E402

_getbasetemp, _mktemp = _tmpdir.TempPathFactory.getbasetemp, _tmpdir.TempPathFactory.mktemp


def _shared(p):
    """tmp_path and its parents: the answer (another user) reads and writes
    there, as it would in a test process of its own."""
    try:
        os.chmod(p, 0o777)
    except OSError:
        pass
    return p


_tmpdir.TempPathFactory.getbasetemp = lambda self: _shared(_getbasetemp(self))
_tmpdir.TempPathFactory.mktemp = lambda self, basename, numbered=True: _shared(_mktemp(self, basename, numbered))
# tmp_path is named for no test (pytest names it after the running test):
# the answer reads and writes there, and must not learn which test runs.
_tmpdir._mk_tmp = lambda request, factory: factory.mktemp("t", numbered=True)

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


# Exit status of a session whose test modules could not be collected.
COLLECTION_ERROR = 6


def _last_error_line(text):
    """The exception line of a collection report ("ImportError: cannot
    import name 'x' from 'solution'"), else its last line."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    errs = [l[1:].strip() for l in lines if l.startswith("E ")]
    return (errs or lines or ["unknown error"])[-1]


class _Guard:
    """Notes a session that pytest.exit or KeyboardInterrupt ended early,
    and the collection errors pytest ends a session with."""

    def __init__(self):
        self.cut_short = None
        self.collection = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection.append("%s: %s" % (report.nodeid or "?", _last_error_line(report.longrepr)))

    def pytest_keyboard_interrupt(self, excinfo):
        # pytest raises Session.Interrupted ("N errors during collection")
        # after collection errors; any other interrupt cuts the session short.
        if self.collection and excinfo.typename == "Interrupted" and "during collection" in str(excinfo.value):
            return
        self.cut_short = excinfo.exconly()


def _exit(code):
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    _os_exit(code)


# The property a failed test carries when the boundary could not represent
# what the tests handed the answer (boundary.unrepresentable): its value is
# the grader's nonce (EVALCTL_NONCE, which no process of the answer's is
# given) and what could not be carried, so only this process can write it.
UNREPRESENTABLE = "evalctl_unrepresentable"
_NONCE = os.environ.pop("EVALCTL_NONCE", "")


class _Unrepresentable:
    """Marks a failed test during which the boundary met a construct of
    the tests' it cannot carry (a failure that says nothing of the answer)."""

    def pytest_runtest_logstart(self, nodeid, location):
        del boundary.unrepresentable[:]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        if _NONCE and rep.failed and boundary.unrepresentable and not getattr(item, "_ev_unrepresentable", False):
            item._ev_unrepresentable = True
            what = "; ".join(sorted(set(boundary.unrepresentable)))
            item.user_properties.append((UNREPRESENTABLE, _NONCE + " " + what))
            rep.user_properties = list(item.user_properties)


_before = _machinery()
_guard = _Guard()
_code = pytest.main(sys.argv[1:], plugins=[_guard, _Unrepresentable()])
_after = _machinery()
_changed = sorted(k for k in _before if _after.get(k) is not _before[k])
if _changed:
    sys.stderr.write("evalctl: the code under test replaced pytest's own functions (%s); the run does not count\n" % ", ".join(_changed[:5]))
    _exit(3)
if _guard.cut_short is not None:
    sys.stderr.write("evalctl: the test session was cut short (%s); it does not count as a pass\n" % _guard.cut_short)
    _exit(3)
if _guard.collection:
    sys.stderr.write("evalctl: the tests could not be collected: %s\n" % "; ".join(_guard.collection))
    _exit(COLLECTION_ERROR)
_exit(int(_code))
