"""Reads blocked in recv and umad when something else happens: a signal
(EINTR at once, the mount still answers), SIGTERM to the daemon and a lazy
unmount (ENODEV, or EIO/ENOTCONN from the kernel, within 2 s; the daemon
exits 0)."""

import errno
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time

import simfabric as sim
from madfiles import Recv, pdir, write_send


PYTHON = sys.executable

SIGINT_READER = textwrap.dedent(r"""
    import os, signal, sys, time
    class Interrupted(Exception):
        pass
    def handler(sig, frame):
        raise Interrupted()
    signal.signal(signal.SIGINT, handler)
    fd = os.open(sys.argv[1], os.O_RDONLY)
    print("ready", flush=True)
    try:
        data = os.read(fd, 65536)
        print("data %d" % len(data), flush=True)
    except Interrupted:
        print("interrupted", flush=True)
    except OSError as e:
        print("oserror %d" % e.errno, flush=True)
""")


def blocked_in_read(pid, timeout=3.0):
    """Wait until pid is asleep in read(2) (x86_64 syscall 0)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/syscall" % pid) as fh:
                sc = fh.read().split()
            with open("/proc/%d/stat" % pid) as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            if sc and sc[0] == "0" and state in "SD":
                return True
        except OSError:
            pass
        time.sleep(0.01)
    return False


def test_sigint_interrupts_blocked_recv(fabric, mount):
    m = mount("Hca1")
    p = subprocess.Popen([PYTHON, "-c", SIGINT_READER, str(pdir(m) / "recv")],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        assert blocked_in_read(p.pid), "reader never blocked in read"
        time.sleep(0.1)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        r, _, _ = select.select([p.stdout], [], [], 2)
        dt = time.monotonic() - t0
        assert r, "reader still blocked 2s after SIGINT"
        assert p.stdout.readline().strip() == "interrupted"
        assert dt < 0.1, "SIGINT took %.3fs" % dt
        assert p.wait(5) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # The mount still answers, nothing was lost or left parked.
    with Recv(m) as r:
        write_send(m, "dr=0 method=get attr=NodeInfo tid=0x31\n")
        ln = r.line()
        assert ln.tid == 0x31 and ln["method"] == "getresp"


def start_blocked_readers(m):
    """Two threads blocked in read: recv and a umad fd.  Returns
    (threads, results) where results[name] = (errno or data, time)."""
    results = {}
    fds = {"recv": os.open(pdir(m) / "recv", os.O_RDONLY),
           "umad": os.open(pdir(m) / "umad", os.O_RDWR)}

    def reader(name, fd):
        try:
            data = os.read(fd, 4096)
            results[name] = ("data %r" % data[:60], time.monotonic())
        except OSError as e:
            results[name] = (e.errno, time.monotonic())
        finally:
            try:
                os.close(fd)
            except OSError:
                pass

    threads = [threading.Thread(target=reader, args=(n, fd), daemon=True)
               for n, fd in fds.items()]
    for t in threads:
        t.start()
    time.sleep(0.3)
    assert not results, results
    return threads, results


def test_sigterm_with_blocked_readers(fabric, mount):
    m = mount("Hca1")
    threads, results = start_blocked_readers(m)
    t0 = time.monotonic()
    rc = m.sigterm(2.0)
    dt = time.monotonic() - t0
    for t in threads:
        t.join(max(0.1, 2.0 - (time.monotonic() - t0)))
    assert rc == 0, "daemon not gone (rc %r) 2s after SIGTERM" % rc
    assert dt <= 2.0
    for name in ("recv", "umad"):
        assert name in results, "%s reader still blocked after SIGTERM" % name
        err, when = results[name]
        assert err in (errno.ENODEV, errno.EIO, errno.ENOTCONN), (name, err)
        assert when - t0 <= 2.0, (name, when - t0)
    deadline = time.monotonic() + 2
    while sim.is_mounted(m.mountpoint) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sim.is_mounted(m.mountpoint)


def test_lazy_unmount_with_blocked_readers(fabric, mount):
    m = mount("Hca1")
    threads, results = start_blocked_readers(m)
    t0 = time.monotonic()
    cp = subprocess.run(["fusermount3", "-uz", str(m.mountpoint)],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 0, cp.stderr
    for t in threads:
        t.join(max(0.1, 2.0 - (time.monotonic() - t0)))
    for name in ("recv", "umad"):
        assert name in results, "%s reader still blocked 2s after umount -l" % name
        err, when = results[name]
        assert err in (errno.ENODEV, errno.EIO, errno.ENOTCONN), (name, err)
        assert when - t0 <= 2.0
    try:
        rc = m.proc.wait(max(0.1, 2.5 - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        rc = None
    assert rc == 0, "daemon still running (or failed) after lazy unmount: %r" % rc
