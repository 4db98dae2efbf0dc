"""evalctl's warm interpreter: `python3 -I -B forkserver.py FD MODULES_JSON`, FD its control socket.

Started by the command runner (execd) of one user on request, it imports the
modules named (pytest, say: a quarter of a second on every start of a test
process) and then, for each request on the control socket, forks a child
that runs a Python script exactly as `python3 -I -B SCRIPT ARGS...` would,
but without paying for the imports again. A request is one JSON message,
{"argv": [SCRIPT, ARGS...], "orig": the whole command line, "cwd": DIR,
"env": {NAME: VALUE}}, carrying the child's standard input, output and
error as three descriptors; the answer is {"pid": PID} at once and
{"exit": STATUS} (a wait status) when the child ends. One child at a time:
the runner runs one command at a time.

The child is the script's own process: a session of its own (the runner
kills its group at the timeout), its descriptors 0-2 the three it was
handed and no other, the working directory and environment of the request,
sys.argv as the script's command line, a fresh random seed. What differs
from a fresh interpreter is only that the preloaded modules are already in
sys.modules, imported before the script ran, that what they made is frozen
out of the cyclic collector's sight (gc.freeze: gc.get_objects() leaves it
out), and that the interpreter's start-up settings (locale, hash seed) are
this process's. The modules are imported here and nothing else runs here:
no script's state reaches a later one, as each child is a fork of this
pristine process.
"""
import array
import atexit
import builtins
import gc
import importlib.machinery
import json
import os
import socket
import sys
import traceback
import types

MAX_MESSAGE = 1 << 20


def set_dumpable(on):
    """PR_SET_DUMPABLE. This process is not dumpable, as the runner is not:
    a command cannot open its control socket through /proc and forge a
    command's exit. A child is made dumpable again, as an exec makes a
    fresh interpreter, so that it can read its own /proc files."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 1 if on else 0, 0, 0, 0)
    except Exception:
        pass


def receive(ctl):
    fds = array.array("i")
    data, anc, _, _ = ctl.recvmsg(MAX_MESSAGE, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, body in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(body[:len(body) - (len(body) % fds.itemsize)])
    return data, list(fds)


def send(ctl, msg):
    ctl.send(json.dumps(msg).encode())


def exit_code(e):
    """The exit status of a SystemExit, as the interpreter computes it."""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def run_main(path):
    """Runs the script at path as the interpreter runs `python3 SCRIPT`: as
    module __main__, an uncaught exception through sys.excepthook (this
    module's frame left out), SystemExit as the exit status."""
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main.__cached__ = None
    main.__spec__ = None
    sys.modules["__main__"] = main
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        exec(code, main.__dict__)
        return 0
    except SystemExit as e:
        return exit_code(e)
    except BaseException as e:
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
        e.__traceback__ = tb
        try:
            sys.excepthook(type(e), e, tb)
        except BaseException:
            traceback.print_exception(type(e), e, tb)
        return 1


def child(ctl, req, fds):
    """Becomes the script's process; never returns."""
    code = 1
    try:
        os.setsid()
        for i, fd in enumerate(fds):
            os.dup2(fd, i)
        ctl.close()
        os.closerange(3, min(os.sysconf("SC_OPEN_MAX"), 1 << 16))
        set_dumpable(True)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        if "random" in sys.modules:
            sys.modules["random"].seed()
        sys.argv = list(req["argv"])
        sys.orig_argv = list(req.get("orig") or sys.argv)
        try:
            os.close(os.open(sys.argv[0], os.O_RDONLY))
        except OSError as e:
            # As the interpreter says it.
            sys.stderr.write("python3: can't open file %r: [Errno %d] %s\n" % (sys.argv[0], e.errno, e.strerror))
            code = 2
            return
        code = run_main(sys.argv[0])
        atexit._run_exitfuncs()
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
    finally:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException:
                pass
        os._exit(code)


def main():
    set_dumpable(False)
    ctl = socket.socket(fileno=int(sys.argv[1]))
    try:
        for name in json.loads(sys.argv[2]):
            __import__(name)
    except BaseException as e:
        send(ctl, {"ready": False, "error": "%s: %s" % (type(e).__name__, e)})
        return
    # What the imports made is kept out of the collector's sight: each child
    # would otherwise walk it at every full collection, and writing to it
    # there copies every page it is on (a fork's memory is shared until
    # written). A fresh process walks it too, so the child is faster than
    # a fresh one, not only than a fork that did not freeze.
    gc.collect()
    gc.freeze()
    send(ctl, {"ready": True})
    while True:
        data, fds = receive(ctl)
        if not data:
            return  # the runner is gone
        try:
            req = json.loads(data)
            if len(fds) != 3 or type(req.get("argv")) is not list or not req["argv"]:
                raise ValueError("malformed request")
            pid = os.fork()
        except Exception as e:
            for fd in fds:
                os.close(fd)
            send(ctl, {"error": "%s: %s" % (type(e).__name__, e)})
            continue
        if pid == 0:
            child(ctl, req, fds)
        for fd in fds:
            os.close(fd)
        send(ctl, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        send(ctl, {"exit": status})


main()
