"""Forwards TCP connections on the container's loopback to evalctl's
recording proxy, a Unix socket mounted into the container: the agent's
only way to a model. Usage: forward.py PORT SOCKET (serve), or
forward.py --ready PORT (wait until it listens, at most 10 s)."""
import socket, sys, threading, time

def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

def serve(port, path):
    ln = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ln.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ln.bind(("127.0.0.1", port))
    ln.listen(64)
    while True:
        c, _ = ln.accept()
        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            u.connect(path)
        except OSError:
            c.close()
            continue
        threading.Thread(target=pipe, args=(c, u), daemon=True).start()
        threading.Thread(target=pipe, args=(u, c), daemon=True).start()

def ready(port):
    end = time.time() + 10
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return 0
        except OSError:
            time.sleep(0.05)
    print("the proxy forwarder is not listening on 127.0.0.1:%d" % port, file=sys.stderr)
    return 1

if __name__ == "__main__":
    if sys.argv[1] == "--ready":
        sys.exit(ready(int(sys.argv[2])))
    serve(int(sys.argv[1]), sys.argv[2])
