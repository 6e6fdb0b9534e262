"""Reading and writing umadfs's MAD files from the tests: the port
directory, the report files (stats, last_error; a wait for the queue to
fill), one-write sends, the umad file opened and polled, and the recv
stream as parsed lines.  Shared by the test modules; a path or a Mount
(its port 1 directory) is accepted wherever a directory is."""

import os
import select
import time
from pathlib import Path

import madtext as mt

PORT = "ibsim0/ports/1"


def pdir(m):
    """The port directory of a Mount."""
    return m.path(PORT)


def _dir(where):
    return Path(where) if isinstance(where, (str, os.PathLike)) else pdir(where)


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode()


def stats(where):
    """The stats file of a MAD directory as {name: int}."""
    return {k: int(v) for k, v in
            (ln.split() for ln in read_text(_dir(where) / "stats").splitlines())}


def last_error(where):
    return read_text(_dir(where) / "last_error").strip()


def wait_queued(m, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while stats(m)["queued"] < n:
        assert time.monotonic() < deadline, stats(m)
        time.sleep(0.01)


def open_umad(m, flags=0):
    return os.open(pdir(m) / "umad", os.O_RDWR | flags)


def poll_in(fd, timeout_ms, events=select.POLLIN):
    """poll(2) revents of fd (0 on timeout).  POLLOUT is always ready on
    these files, so wait for POLLIN alone unless told otherwise."""
    p = select.poll()
    p.register(fd, events)
    ev = dict(p.poll(timeout_ms))
    return ev.get(fd, 0)


def write_text(path, text):
    """One write(2) of text (str or bytes) to path; returns what write
    returned, raises OSError."""
    data = text.encode() if isinstance(text, str) else text
    fd = os.open(path, os.O_WRONLY)
    try:
        return os.write(fd, data)
    finally:
        os.close(fd)


def write_send(m, text, fd=None, path=None):
    """One write(2) of text to an open fd, to path, or to the port's send
    file of Mount m."""
    if fd is not None:
        return os.write(fd, text.encode() if isinstance(text, str) else text)
    return write_text(path or pdir(m) / "send", text)


class OpenFile:
    """An fd closed once, by close() or at the end of a with block."""

    fd = None

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Recv(OpenFile):
    """A recv file (the port's, of a Mount, or a path) read as a stream of
    parsed lines, with poll() timeouts."""

    def __init__(self, where, bufsize=1 << 20):
        path = where if isinstance(where, (str, os.PathLike)) else pdir(where) / "recv"
        self.fd = os.open(path, os.O_RDONLY)
        self.buf = b""
        self.bufsize = bufsize

    def ready(self, timeout):
        p = select.poll()
        p.register(self.fd, select.POLLIN)
        return bool(p.poll(max(0, timeout) * 1000))

    def lines(self, n, timeout=5.0):
        """Exactly n lines (parsed), or AssertionError after timeout s."""
        deadline = time.monotonic() + timeout
        out = []
        while True:
            while b"\n" in self.buf and len(out) < n:
                line, self.buf = self.buf.split(b"\n", 1)
                out.append(mt.parse_line(line.decode("ascii")))
            if len(out) == n:
                return out
            left = deadline - time.monotonic()
            assert left > 0 and self.ready(left), \
                "recv: %d of %d lines after %.1fs: %r" % (len(out), n, timeout, out)
            chunk = os.read(self.fd, self.bufsize)
            assert chunk, "recv returned EOF"
            self.buf += chunk

    def line(self, timeout=5.0):
        return self.lines(1, timeout)[0]

    def assert_empty(self, wait=0.3):
        assert not self.buf and not self.ready(wait), \
            "unexpected recv data: %r" % (self.buf or os.read(self.fd, 4096))
