"""adder.py of an honest answer that leaves System V IPC objects behind in
every test run: 200 MiB of touched shared memory, a semaphore set and a
message queue, which outlive its processes unless the grader removes them
(TestIPCLeftBehindIsReclaimed)."""
import ctypes

_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
_libc.shmat.restype = ctypes.c_void_p
_IPC_CREAT = 0o1000
for _ in range(2):
    _id = _libc.shmget(0, 100 << 20, _IPC_CREAT | 0o600)
    if _id < 0:
        break
    _p = _libc.shmat(_id, None, 0)
    if _p is None or _p == ctypes.c_void_p(-1).value:
        break
    ctypes.memset(_p, 1, 100 << 20)
_libc.semget(0, 1, _IPC_CREAT | 0o600)
_libc.msgget(0, _IPC_CREAT | 0o600)


def add(a, b):
    return a + b
