"""adder.py of an answer that drives the boundary's protocol by hand from
the answer's side (TestAnswerCannotDriveTheProtocol): each attempt must be
refused; one that is not makes add() return what got through, so the
acceptance tests fail and the grade says which."""
import os as _os
import socket as _socket
import sys as _sys

_reached = []


def _raw(ep, op, args, kw=()):
    """Sends one raw request and returns (ok, value): the way an answer
    drives the protocol by hand, with references it made up."""
    ep.seq += 1
    ep.send({"q": ep.seq, "op": op, "args": args, "kw": list(kw)})
    msg = ep.recv()
    ep.apply_sync(msg.get("sync") or [])
    return "ok" in msg, msg


def _probe():
    main = _sys.modules["__main__"]
    ep = main.session.endpoint()
    # The trusted side's builtins and classes, named by the answer.
    for target in (str, type, object, getattr, exec, __import__, print, open):
        for name in ("format", "__subclasses__", "mro", "__globals__", "__self__", "join"):
            try:
                ep.request("getattr", (target, name))
                _reached.append("getattr %r.%s" % (target, name))
            except PermissionError:
                pass
    for op, args in (("call", (str.format, "{0.__class__}", 1)), ("call", (getattr, 1, "real")),
                     ("import", ("os",)), ("run", (["true"],)), ("dir", (1,)), ("callmethod", ("x", "format", "{0}", 1))):
        try:
            ep.request(op, args)
            _reached.append("%s %r" % (op, args[:1]))
        except PermissionError:
            pass
    # References made up by number: whatever the tests' side sent (floats,
    # lists, classes described by value, exceptions) is no target.
    for n in list(range(-40, 0)) + list(range(1, 80)):
        for op, args in (("getattr", [["r", n], "__class__"]), ("getattr", [["r", n], "format"]), ("call", [["r", n]]),
                         ("str", [["r", n]]), ("callmethod", [["r", n], "format", "{0.__traceback__}", ["r", n]])):
            ok, msg = _raw(ep, op, args)
            if ok:
                _reached.append("%s r%d" % (op, n))
    # Keyword arguments named like the protocol's own parameters are data.
    ok, msg = _raw(ep, "call", [["B", "exec"]], [["op", "import"], ["f", "x"], ["self", 1]])
    if ok:
        _reached.append("call with protocol keywords")
    # A failed lookup's exception crosses by value: nothing of it answers.
    try:
        ep.request("getattr", (str, "nope"))
    except PermissionError as e:
        for name in ("__traceback__", "obj", "args", "__context__"):
            try:
                ep.request("getattr", (e, name))
                _reached.append("exception getattr %s" % name)
            except (PermissionError, RuntimeError):
                pass
    # A second client on the host's socket is closed unheard.
    c = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        c.connect(_sys.argv[1])
        c.sendall(b"\x00\x00\x00\x11" + b'{"hello":"call"}')
        c.sendall(b"\x00\x00\x00\x2a" + b'{"q":1,"op":"import","args":["os"],"kw":[]}')
        c.settimeout(10)
        if c.recv(1):
            _reached.append("second client answered")
    except OSError:
        pass
    finally:
        c.close()
    # The checks and the running test's name are out of reach.
    for root in ("/checks", "/checks/acceptance"):
        try:
            _os.listdir(root) and root != "/checks" and _reached.append("listed " + root)
        except OSError:
            pass
    try:
        open("/checks/acceptance/test_acc.py").read()
        _reached.append("read the checks")
    except OSError:
        pass
    for d, subdirs, files in _os.walk("/tmp"):
        for n in subdirs + files:
            if "test_" in n:
                _reached.append("test name in /tmp: " + n)
    for k, v in _os.environ.items():
        if "test_" in v or k == "PYTEST_CURRENT_TEST":
            _reached.append("test name in the environment: " + k)


_probed = []


def add(a, b):
    if not _probed:
        _probed.append(1)
        _probe()
    if _reached:
        return "reached: " + "; ".join(_reached)
    return a + b
