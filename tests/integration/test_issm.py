"""ports/N/issm: holding it open for writing sets the port's IsSM capability
as holding the kernel's issm device does, as `smpquery portinfo` sees it;
one holder at a time (a second opener waits, EAGAIN with O_NONBLOCK, EINTR
on a signal); released when the holder dies.  See README.md for the
fixtures."""

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

IS_SM = 1 << 1          # PortInfo CapabilityMask bit 1 (IsSM)
NO_TRAPS = ("fabric_traps=off",)   # no agent registered: nothing else holds it

# A holder in its own process: opens issm for writing, says so, waits.
HOLDER = r"""
import os, signal, sys, time
flags = os.O_WRONLY | (os.O_NONBLOCK if sys.argv[2] == "nonblock" else 0)
class Interrupted(Exception):
    pass
def on_usr1(sig, frame):
    raise Interrupted()
signal.signal(signal.SIGUSR1, on_usr1)
print("opening", flush=True)
try:
    fd = os.open(sys.argv[1], flags)
except Interrupted:
    print("interrupted", flush=True)
    sys.exit(0)
except OSError as e:
    print("error", e.errno, flush=True)
    sys.exit(0)
print("held", os.getpid(), flush=True)
time.sleep(120)
"""


def read(path):
    with open(path, "rb") as f:
        return f.read().decode()


def capmask(fabric, host="Hca2"):
    return int(fabric.portinfo(host, 1)["CapMask"], 16)


def wait_for(what, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        v = what()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(0.1)


def holder(path, mode="block"):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), mode],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "opening\n"
    return p


def held_by(p):
    """The words of the line the holder p prints next: ["held", PID] once
    it holds (pytest's timeout, if any, bounds the wait)."""
    return p.stdout.readline().split()


@pytest.fixture
def hca2(fabric, mount):
    m = mount("Hca2", options=NO_TRAPS)
    return m, m.path("ibsim0", "ports", "1", "issm")


def test_issm_sets_and_clears(fabric, hca2):
    m, issm = hca2
    st = os.stat(issm)
    assert (st.st_mode & 0o777, st.st_uid) == (0o600, 0)
    assert read(issm) == "0\n"
    assert not capmask(fabric) & IS_SM
    fd = os.open(issm, os.O_WRONLY)
    try:
        assert read(issm) == "1 %d\n" % os.getpid()
        assert capmask(fabric) & IS_SM, "IsSM not set while held"
        # the cap_mask file says the same
        assert int(read(m.path("ibsim0", "ports", "1", "cap_mask")), 16) & IS_SM
        # nothing to write, nothing to read on the holder's open
        with pytest.raises(OSError) as e:
            os.write(fd, b"1\n")
        assert e.value.errno == errno.EINVAL
    finally:
        os.close(fd)
    # The hold goes with the file's RELEASE, which the kernel sends after
    # close(2) has returned (as the issm device's goes with its release).
    assert wait_for(lambda: read(issm) == "0\n", 5), read(issm)
    assert not capmask(fabric) & IS_SM, "IsSM not cleared at close"
    # O_RDWR holds it too (opensm opens its issm device so)
    fd = os.open(issm, os.O_RDWR)
    assert capmask(fabric) & IS_SM
    os.close(fd)
    assert wait_for(lambda: not capmask(fabric) & IS_SM, 5)


def test_issm_second_opener_waits(fabric, hca2):
    m, issm = hca2
    first = holder(issm)
    try:
        assert held_by(first)[0] == "held"
        # O_NONBLOCK: EAGAIN at once, as the kernel's issm device
        with pytest.raises(BlockingIOError):
            os.open(issm, os.O_WRONLY | os.O_NONBLOCK)
        second = holder(issm)
        try:
            time.sleep(1.0)
            assert second.poll() is None
            assert read(issm) == "1 %d\n" % first.pid   # still the first's
            first.kill()                                 # -9: RELEASE
            first.wait()
            assert held_by(second) == ["held", str(second.pid)]
            assert read(issm) == "1 %d\n" % second.pid
            assert capmask(fabric) & IS_SM
        finally:
            second.kill()
            second.wait()
        assert wait_for(lambda: read(issm) == "0\n", 5), read(issm)
        assert not capmask(fabric) & IS_SM
    finally:
        first.kill()
        first.wait()


def test_issm_released_when_holder_killed(fabric, hca2):
    m, issm = hca2
    p = holder(issm)
    try:
        assert held_by(p) == ["held", str(p.pid)]
        assert capmask(fabric) & IS_SM
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    finally:
        p.kill()
        p.wait()
    assert wait_for(lambda: read(issm) == "0\n", 5), read(issm)
    assert not capmask(fabric) & IS_SM, "IsSM kept after its holder died"


def test_issm_wait_interrupted(fabric, hca2):
    """A waiter's signal ends its open with EINTR; it is no holder later."""
    m, issm = hca2
    fd = os.open(issm, os.O_WRONLY)
    try:
        waiter = holder(issm)
        time.sleep(0.5)
        assert waiter.poll() is None
        waiter.send_signal(signal.SIGUSR1)
        assert waiter.stdout.readline() == "interrupted\n"
        waiter.wait(timeout=10)
        assert read(issm) == "1 %d\n" % os.getpid()   # still ours
    finally:
        os.close(fd)
    # The interrupted waiter was not handed the hold: once ours goes (with
    # the RELEASE that follows close(2)), nobody holds it.
    ours = "1 %d\n" % os.getpid()
    now = wait_for(lambda: (lambda v: v if v != ours else None)(read(issm)), 5)
    assert now == "0\n", now
    assert not capmask(fabric) & IS_SM


def test_issm_waiter_at_unmount(fabric, mount):
    """A waiter still parked when the daemon is told to stop fails (ENODEV)
    and the daemon exits cleanly."""
    m = mount("Hca2", options=NO_TRAPS)
    issm = m.path("ibsim0", "ports", "1", "issm")
    fd = os.open(issm, os.O_WRONLY)
    waiter = holder(issm)
    try:
        time.sleep(0.5)
        assert waiter.poll() is None
        rc = m.sigterm(timeout=10)
        assert waiter.stdout.readline() == "error %d\n" % errno.ENODEV
        assert rc == 0, m.log_text()
    finally:
        waiter.kill()
        waiter.wait()
        try:
            os.close(fd)
        except OSError:
            pass


def test_issm_root_only(fabric, hca2):
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to another user")
    m, issm = hca2
    for flags in ("os.O_RDONLY", "os.O_WRONLY"):
        cp = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
             sys.executable, "-c",
             "import os, sys\ntry:\n    os.open(sys.argv[1], %s)\n"
             "    print('opened')\nexcept OSError as e:\n    print(e.errno)\n" % flags,
             str(issm)], capture_output=True, text=True, timeout=30)
        assert cp.stdout.strip() == str(errno.EACCES), (flags, cp.stdout, cp.stderr)
    assert not capmask(fabric) & IS_SM


def test_issm_shared_with_agents(fabric, mount):
    """Under the simulator the daemon's own agents (the trap subscription)
    hold IsSM by the same hold: the file's holder comes and goes beside
    it, and the bit stays."""
    m = mount("Hca2")
    issm = m.path("ibsim0", "ports", "1", "issm")
    # the subscription's agent is registered once the view has swept
    # (its first reader asks the sweep)
    assert "ok 1" in read(m.path("fabric", "sweep"))
    assert wait_for(lambda: read(issm) == "1 umadfs\n", 30), read(issm)
    assert capmask(fabric) & IS_SM
    fd = os.open(issm, os.O_WRONLY)
    assert read(issm) == "1 %d\n" % os.getpid()
    os.close(fd)
    assert wait_for(lambda: read(issm) == "1 umadfs\n", 5), read(issm)   # after RELEASE
    assert capmask(fabric) & IS_SM, "the agents' hold went with the file's"
