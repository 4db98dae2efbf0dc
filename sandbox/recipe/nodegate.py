"""The door of the node answer's host: `python3 -I -B nodegate.py SOCKET HARNESS_UID`.

Runs as the command user. It listens on SOCKET and accepts a connection
only from a process of the harness user (HARNESS_UID, by the socket's peer
credentials, SO_PEERCRED, which node cannot read): the test processes
(node --test runs one per test file). Each accepted connection gets a
fresh answer's host of its own (`node answerd.js --serve`, the connection
as its fd 3), as answerd.js describes. A connection of any other user (the
answer's own code, the programs it starts) is closed unheard, so nothing
but the tests' side ever speaks to a host.
"""
import os
import signal
import socket
import struct
import subprocess
import sys

sock_path = sys.argv[1]
harness_uid = int(sys.argv[2]) if len(sys.argv) > 2 else 1001
os.umask(0)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # hosts are reaped as they end


def peer_uid(conn):
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid


def serve(conn):
    """Start a host with conn as its fd 3."""
    fd = conn.fileno()

    def as_fd3():
        # dup2 makes fd 3 inheritable; every other descriptor of this
        # process is not (Python's default), so the host gets only it.
        if fd == 3:
            os.set_inheritable(3, True)
        else:
            os.dup2(fd, 3)

    try:
        subprocess.Popen(["node", "/opt/evalctl/answerd.js", "--serve"], stdin=subprocess.DEVNULL, cwd="/workspace",
                         preexec_fn=as_fd3, close_fds=False)
    except OSError:
        pass


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
    try:
        # Checked before anything is read or any host started.
        if peer_uid(conn) == harness_uid:
            serve(conn)
    except OSError:
        pass
    conn.close()
