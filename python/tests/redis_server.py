"""A private redis-server for the Python tests: on a free port of
127.0.0.1, no persistence (`redis-server --port P --save '' --appendonly
no`), in a temporary directory; started and stopped by the test's
fixture. AVAILABLE is False (and SKIP the reason) when redis-server is
not on the PATH.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

AVAILABLE = shutil.which("redis-server") is not None
SKIP = "redis-server is not installed (apt-get install redis-server)"


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on (just now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(port, *args, timeout=5.0):
    """One command over a fresh connection, in RESP; the reply's first
    line ("+OK", ":1", "-WRONGTYPE ...", "$3"). redis-cli would do, but
    costs a process a command."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        req = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            req += b"$%d\r\n%s\r\n" % (len(a), a)
        s.sendall(req)
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply.split(b"\r\n", 1)[0].decode()


class RedisServer:
    """redis-server on 127.0.0.1:port (url: "redis://127.0.0.1:port")."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="bc-pyredis-")
        self.port = free_port()
        self.url = "redis://127.0.0.1:%d" % self.port
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", self.dir,
             "--daemonize", "no", "--logfile",
             os.path.join(self.dir, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if command(self.port, "PING") == "+PONG":
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("redis-server did not start on port %d"
                           % self.port)

    def command(self, *args):
        return command(self.port, *args)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # in case a test stopped it
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
