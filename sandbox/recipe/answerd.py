"""The answer's host in a grading container: `python3 -I -B answerd.py SOCKET WORKSPACE HARNESS_UID`.

Runs as the command user (never the harness user), loads the answer's
modules on request and serves the frozen tests' calls into them over SOCKET
(see boundary.py). It is started before each test run and killed, with
everything the answer started, when the run ends. Nothing here is trusted:
the answer's code runs in this process and may change anything in it; what
it cannot change is the test process, which only ever sees plain values and
handles from here.

The host has one client: the test process. It accepts a connection only
from a process of the harness user (HARNESS_UID, by the socket's peer
credentials), and only from the process that connected first: the programs
the tests run (run here, as the command user) and the answer's own code
cannot connect, so the only way to the tests' side is the connections the
test process opened, on which it serves only what it handed the answer.
"""
import os
import socket
import struct
import sys
import threading

sys.path.insert(0, "/opt/evalctl")
import boundary  # noqa: E402

sock_path, workspace = sys.argv[1], sys.argv[2]
harness_uid = int(sys.argv[3]) if len(sys.argv) > 3 else 1001
client_pid = None
os.umask(0)
os.chdir(workspace)
# Like the test process before the boundary: the answer's directory comes
# after the standard library, so an answer module cannot shadow it.
sys.path.append(workspace)
session = boundary.Session(owner=False)
boundary.share_sqlite()


def peer(conn):
    """The connecting process's pid and uid (SO_PEERCRED)."""
    pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def accepted(conn):
    """Whether conn comes from the test process: the harness user's first
    client and no other process."""
    global client_pid
    try:
        pid, uid = peer(conn)
    except OSError:
        return False
    if uid != harness_uid:
        return False
    if client_pid is None:
        client_pid = pid
    return pid == client_pid


def handle(conn):
    ep = boundary.Endpoint(session, conn)
    try:
        hello = ep.recv()
        if hello.get("hello") == "service":
            session.service = ep
            return
        while True:
            msg = ep.recv()
            if "op" not in msg:
                return
            ep.serve(msg)
    except (boundary.BoundaryError, OSError):
        conn.close()


try:
    os.unlink(sock_path)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sock_path + ".new")
os.chmod(sock_path + ".new", 0o777)
srv.listen(64)
os.rename(sock_path + ".new", sock_path)
while True:
    conn, _ = srv.accept()
    # Checked here, one connection at a time, before anything is read.
    if not accepted(conn):
        conn.close()
        continue
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
