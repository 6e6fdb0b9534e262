"""agents/: private channels that register MAD classes and serve
unsolicited MADs, against infiniband-diags' ibping as the peer under the
same simulator.  See README.md for the fixtures.

Layout (session fabric, two-switch.net): the daemon under test runs on
Hca1; Hca2 is the peer (ibping client or `ibping -S` server); Hca3 runs
opensm and serves as a third node.

Simulator notes:
- ibsim hands an unsolicited GSI request only to a client of the
  destination node that holds its port's issm device.  umadfs opens issm
  (under the simulator only) while something is registered.  `ibping -S`
  never opens it, so tests/tools/sim_issm.c, preloaded after umad2sim,
  does (see that file).
- Holding issm sets the port's IsSM capability bit, so opensm then sends
  SubnGet(SMInfo) (class 0x81) to the holder.  umad2sim's receiver thread
  crashes (NULL fd_data) on a MAD of a class that no agent of the process
  registered, so a holder must have an agent for the SMI classes.
- umad2sim keeps one agent per class: unregistering any agent of a class
  makes it forget the class (then the same NULL crash on its next MAD).
- More than about 200 MADs in flight deadlocks umad2sim with ibsim (see
  WINDOW below).

Run alone: UMADFS_BIN=build/src/umadfs /usr/bin/python3 -m pytest -v \
    tests/integration/test_agents.py   (UMADFS_SIM_ISSM=path to use a built
    sim_issm.so instead of compiling tests/tools/sim_issm.c with cc)
"""

import errno
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

import simfabric as sim
import madtext as mt
from checks import expect_errno, need
from madfiles import OpenFile, last_error, pdir, read_text, stats, write_text

HERE = Path(__file__).resolve().parent
SIM_ISSM_SRC = HERE.parent / "tools" / "sim_issm.c"

CHANNEL_FILES = {"send", "recv", "umad", "timeout_ms", "retries", "decode",
                 "last_error", "stats", "register"}
PING_CLASS = 0x32           # IB_VENDOR_OPENIB_PING_CLASS
PING_OUI = 0x001405
PING_REG = "class=0x32 methods=get oui=0x1405\n"
VENDOR2_DATA = 40           # data offset of vendor range 2 classes
AGENTS_MAX = 32             # per port, as the kernel's IB_UMAD_MAX_AGENTS
SMINFO_WAIT = 3.0           # s for opensm to probe a new issm holder
SM_HOST = "Hca3"            # opensm's node in the session fabric (conftest)


# ---------------------------------------------------------------------------
# helpers

def register(d, text):
    return write_text(Path(d) / "register", text)


def registrations(d):
    """The `register` file of channel dir d as a list of dicts."""
    out = []
    for line in read_text(Path(d) / "register").splitlines():
        out.append(dict(tok.split("=", 1) for tok in line.split()))
    return out


def parse_line(text):
    """A recv line -> {key: value}, plus '_mad' (bytes)."""
    d = {}
    for k, v in mt.split_tokens(text):
        assert k not in d, "duplicate key %r in %r" % (k, text[:200])
        d[k] = v
    assert "mad" in d, text[:200]
    d["_mad"] = bytes.fromhex(d["mad"])
    assert len(d["_mad"]) == int(d["len"]), text[:200]
    return d


class Lines(OpenFile):
    """A channel's recv file read as lines, with poll() timeouts."""

    def __init__(self, path):
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.buf = b""

    def _fill(self, timeout):
        p = select.poll()
        p.register(self.fd, select.POLLIN)
        if not p.poll(max(0, timeout) * 1000):
            return False
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return True     # woken, but another reader took it
        assert chunk, "%s: EOF" % self.path
        self.buf += chunk
        return True

    def take(self, n, timeout=5.0):
        """Up to n parsed lines, as many as come within timeout s."""
        deadline = time.monotonic() + timeout
        out = []
        while True:
            while b"\n" in self.buf and len(out) < n:
                line, self.buf = self.buf.split(b"\n", 1)
                out.append(parse_line(line.decode("ascii")))
            if len(out) == n:
                return out
            left = deadline - time.monotonic()
            if not self._fill(left) and left <= 0:
                return out

    def lines(self, n, timeout=5.0):
        out = self.take(n, timeout)
        assert len(out) == n, "%s: %d of %d lines after %.1fs" % (
            self.path, len(out), n, timeout)
        return out

    def assert_empty(self):
        """Nothing buffered, and a non-blocking read says EAGAIN."""
        assert not self.buf, self.buf[:300]
        with pytest.raises(BlockingIOError):
            data = os.read(self.fd, 4096)
            pytest.fail("%s: unexpected data %r" % (self.path, data[:300]))


class Responder(threading.Thread):
    """Answers every request read from a channel's recv by writing the same
    line back to its send with method=getresp (the address keys name the
    requester, so the answer goes back to it)."""

    def __init__(self, chan_dir):
        super().__init__(daemon=True)
        self.dir = Path(chan_dir)
        self.stop_ev = threading.Event()
        self.answered = 0
        self.requests = []
        self.error = None
        # Opened here, so that the files are open once start() returns.
        self.recv = Lines(self.dir / "recv")
        self.send_fd = os.open(self.dir / "send", os.O_WRONLY)

    def run(self):
        try:
            while not self.stop_ev.is_set():
                for ln in self.recv.take(64, timeout=0.1):
                    self.requests.append(ln)
                    text = " ".join("%s=%s" % (k, v) for k, v in ln.items()
                                    if not k.startswith("_"))
                    assert " method=get " in text, text[:200]
                    reply = text.replace(" method=get ", " method=getresp ", 1)
                    os.write(self.send_fd, (reply + "\n").encode())
                    self.answered += 1
        except Exception as e:  # reported by stop()
            self.error = e

    def stop(self):
        self.stop_ev.set()
        self.join(5)
        assert not self.is_alive(), "responder thread stuck"
        self.recv.close()
        os.close(self.send_fd)
        if self.error:
            raise self.error


class UmadResponder(threading.Thread):
    """A binary server as a C program ported from libibumad writes it:
    reads request frames from a channel's umad, writes each back on the
    same open file as a GetResp (the received address names the
    requester; QP1's well-known Q_Key, as libibmad's mad_respond sets)."""

    def __init__(self, chan_dir):
        super().__init__(daemon=True)
        self.stop_ev = threading.Event()
        self.answered = 0
        self.error = None
        self.fd = os.open(Path(chan_dir) / "umad", os.O_RDWR | os.O_NONBLOCK)

    def answer(self, frame):
        hdr, mad = mt.unpack_umad(frame)
        h = mt.mad_header(mad)
        assert (h["class"], h["method"]) == (PING_CLASS, 0x01), h
        assert mad[37:40] == PING_OUI.to_bytes(3, "big"), mad[:40].hex()
        reply = bytearray(mad)
        reply[3] = 0x81                         # GetResp
        out = mt.pack_umad(reply, lid=hdr["lid"], qpn=hdr["qpn"],
                           qkey=0x80010000, sl=hdr["sl"], timeout_ms=0,
                           pkey_index=hdr["pkey_index"])
        assert os.write(self.fd, out) == len(out)
        self.answered += 1

    def run(self):
        p = select.poll()
        p.register(self.fd, select.POLLIN)
        try:
            while not self.stop_ev.is_set():
                if not p.poll(100):
                    continue
                try:
                    frame = os.read(self.fd, mt.UMAD_HDR + mt.MAD_SIZE)
                except BlockingIOError:
                    continue        # another reader took it
                self.answer(frame)
        except Exception as e:  # reported by stop()
            self.error = e

    def stop(self):
        self.stop_ev.set()
        self.join(5)
        assert not self.is_alive(), "umad responder thread stuck"
        os.close(self.fd)
        if self.error:
            raise self.error


def hca_lid(f, host):
    return int(f.ibstat(host)["ports"][1]["Base lid"], 0)


def mount_lid(m):
    return int(read_text(pdir(m) / "lid").strip(), 0)


def assert_daemon_alive(m):
    rc = m.proc.poll()
    assert rc is None, "daemon exited with status %s; log:\n%s" % (
        rc, m.log_text()[-3000:])


def ping_stats(out):
    mm = re.search(r"(\d+) packets transmitted, (\d+) received, "
                   r"(\d+)% packet loss", out)
    assert mm, out
    return tuple(int(x) for x in mm.groups())


def ibping_served(f, chan, m, count=3, host="Hca2"):
    """`ibping -c count -f` from host to the mount's LID, answered by a
    Responder on channel dir chan; returns ibping's CompletedProcess."""
    resp = Responder(chan)
    resp.start()
    try:
        cp = f.run_tool(["ibping", "-c", str(count), "-f", str(mount_lid(m))],
                        host, check=False)
    finally:
        resp.stop()
    return cp


# ---------------------------------------------------------------------------
# sim_issm shim and ibping -S

@pytest.fixture(scope="session")
def sim_issm_lib(tmp_path_factory):
    """tests/tools/sim_issm.c built with cc into a tmp dir (or the library
    UMADFS_SIM_ISSM names)."""
    given = os.environ.get("UMADFS_SIM_ISSM")
    if given:
        return given
    need("cc")
    cc = shutil.which("cc")
    out = tmp_path_factory.mktemp("sim_issm") / "sim_issm.so"
    cp = subprocess.run([cc, "-Wall", "-shared", "-fPIC", "-o", str(out),
                         str(SIM_ISSM_SRC), "-libumad", "-ldl"],
                        capture_output=True, text=True)
    assert cp.returncode == 0, "building sim_issm.so:\n" + cp.stderr
    return str(out)


class PingServer:
    """`ibping -S` on a node, holding the node's issm through sim_issm."""

    def __init__(self, f, host, lib):
        self.f, self.host = f, host
        env = f.client_env(host)
        env["LD_PRELOAD"] = sim.UMAD2SIM_LIB + " " + lib
        self.errpath = f.workdir / ("ibping-S-%s-%d.err" % (host, time.monotonic_ns()))
        f.clientdir.mkdir(parents=True, exist_ok=True)
        with open(self.errpath, "wb") as err:
            # Not through a shell: the shim would run in the shell too.
            self.proc = subprocess.Popen(
                ["ibping", "-S"], env=env, cwd=f.clientdir,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=err, start_new_session=True)

    def stderr(self):
        try:
            return self.errpath.read_text()
        except OSError:
            return ""

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        sim._stop_process(self.proc)


@pytest.fixture
def ping_server(fabric, sim_issm_lib):
    """`ibping -S` on Hca2, checked to answer a plain ibping from Hca3 and
    to survive opensm's SMInfo probe of the new issm holder."""
    srv = PingServer(fabric, "Hca2", sim_issm_lib)
    try:
        lid = hca_lid(fabric, "Hca2")
        deadline = time.monotonic() + 10
        while True:
            assert srv.alive(), "ibping -S died (%s): %s" % (
                srv.proc.returncode, srv.stderr())
            cp = fabric.run_tool(["ibping", "-c", "1", "-t", "200", str(lid)],
                                 "Hca3", check=False)
            if ping_stats(cp.stdout)[1] == 1:
                break
            assert time.monotonic() < deadline, \
                "ibping -S on Hca2 does not answer:\n%s\n%s" % (cp.stdout, srv.stderr())
        yield srv, lid
        assert srv.alive(), "ibping -S died (%s): %s" % (srv.proc.returncode,
                                                        srv.stderr())
    finally:
        srv.stop()


# ---------------------------------------------------------------------------
# 1. a channel serves ibping

def test_channel_answers_ibping(fabric, mount):
    m = mount("Hca1")
    p = pdir(m)
    c = p / "agents" / "pong"
    os.mkdir(c)
    assert register(c, PING_REG) == len(PING_REG)
    with Lines(p / "recv") as port_recv:
        resp = Responder(c)
        resp.start()
        try:
            cp = fabric.run_tool(["ibping", "-c", "10", "-f",
                                  str(mount_lid(m))], "Hca2", check=False)
            slow = fabric.run_tool(["ibping", "-c", "2", str(mount_lid(m))],
                                   "Hca3", check=False)
        finally:
            resp.stop()
        assert ping_stats(cp.stdout) == (10, 10, 0), cp.stdout + cp.stderr
        assert ping_stats(slow.stdout) == (2, 2, 0), slow.stdout + slow.stderr
        port_recv.assert_empty()
    assert resp.answered == 12
    lids = {hca_lid(fabric, "Hca2"): 10, hca_lid(fabric, "Hca3"): 2}
    for ln in resp.requests:
        assert ln["class"] == "0x32" and ln["method"] == "get", ln
        assert ln["oui"] == "0x%06x" % PING_OUI and ln["qp"] == "1", ln
        assert ln["_mad"][1] == PING_CLASS and ln["_mad"][37:40] == b"\x00\x14\x05"
    seen = {}
    for ln in resp.requests:
        seen[int(ln["lid"], 0)] = seen.get(int(ln["lid"], 0), 0) + 1
    assert seen == lids
    s = stats(c)
    assert (s["received"], s["sent"], s["dropped"], s["queued"], s["errors"]) == \
        (12, 12, 0, 0, 0), s
    assert_daemon_alive(m)


def test_register_survives_sm_probe(make_fabric, mount):
    """A registration makes the daemon the port's issm holder, which sets
    the port's IsSM capability bit: opensm then probes it at once with
    SubnGet(SMInfo) by directed route.  The daemon must survive that even
    when it never sent anything on the port (no SMI agent of its own yet).
    A fresh fabric: in the session one, a daemon that died holding issm
    stays attached in ibsim and would take the probe instead."""
    f = make_fabric("two-switch.net")
    f.start_opensm(SM_HOST)
    for h in ("Hca1", "Hca2", SM_HOST):
        f.wait_active(h, timeout=30)
    m = mount("Hca1", fabric=f)
    c = pdir(m) / "agents" / "a"
    os.mkdir(c)
    register(c, PING_REG)
    # In case opensm ignores the trap: a heavy sweep (SIGHUP) probes too.
    os.kill(f.opensm[SM_HOST][0].pid, signal.SIGHUP)
    deadline = time.monotonic() + SMINFO_WAIT
    while time.monotonic() < deadline:
        assert_daemon_alive(m)
        time.sleep(0.05)
    assert registrations(c)[0]["class"] == "0x32"
    # ... and still serves.
    cp = ibping_served(f, c, m)
    assert ping_stats(cp.stdout) == (3, 3, 0), cp.stdout + cp.stderr
    assert_daemon_alive(m)


# ---------------------------------------------------------------------------
# 2. requests from a channel reach ibping -S; answers come back to it

def test_umad_serves_ibping(fabric, mount):
    """A named channel's umad reads the unsolicited MADs of its
    registrations as frames; responses written on it go out through the
    channel's agent; both directions count in the channel's stats."""
    m = mount("Hca1")
    p = pdir(m)
    c = p / "agents" / "upong"
    os.mkdir(c)
    assert register(c, PING_REG) == len(PING_REG)
    before = stats(c)
    with Lines(p / "recv") as port_recv:
        resp = UmadResponder(c)
        resp.start()
        try:
            cp = fabric.run_tool(["ibping", "-c", "10", "-f",
                                  str(mount_lid(m))], "Hca2", check=False)
        finally:
            resp.stop()
        assert ping_stats(cp.stdout) == (10, 10, 0), cp.stdout + cp.stderr
        port_recv.assert_empty()
    assert resp.answered == 10
    after = stats(c)
    assert after["received"] - before["received"] == 10, after
    assert after["sent"] - before["sent"] == 10, after
    assert after["queued"] == 0 and after["dropped"] == 0, after
    assert last_error(c) == ""
    assert_daemon_alive(m)


def test_recv_and_umad_share_unsolicited(fabric, mount):
    """recv and umad of one channel are two views of one queue: each
    unsolicited MAD goes to one reader, whichever takes it first."""
    m = mount("Hca1")
    c = pdir(m) / "agents" / "both"
    os.mkdir(c)
    register(c, PING_REG)
    text, binary = Responder(c), UmadResponder(c)
    text.start()
    binary.start()
    try:
        cp = fabric.run_tool(["ibping", "-c", "20", "-f", str(mount_lid(m))],
                             "Hca2", check=False)
    finally:
        text.stop()
        binary.stop()
    assert ping_stats(cp.stdout) == (20, 20, 0), cp.stdout + cp.stderr
    assert text.answered + binary.answered == 20
    assert stats(c)["sent"] == 20 and stats(c)["received"] == 20


def ping_frame(lid, tid):
    mad = bytearray(mt.MAD_SIZE)
    mad[0:4] = bytes((1, PING_CLASS, 1, 0x01))
    mad[8:16] = tid.to_bytes(8, "big")
    mad[37:40] = PING_OUI.to_bytes(3, "big")
    return mt.pack_umad(mad, lid=lid, qpn=1, qkey=0x80010000, timeout_ms=1000,
                        retries=1)


def test_answers_go_to_the_view_that_asked(fabric, mount, ping_server):
    """An answer to a request written on a umad open comes back on that
    open only; one to a `send` line to the text readers only."""
    srv, srv_lid = ping_server
    m = mount("Hca1")
    c = pdir(m) / "agents" / "ask"
    os.mkdir(c)
    fd = os.open(c / "umad", os.O_RDWR | os.O_NONBLOCK)
    other = os.open(c / "umad", os.O_RDWR | os.O_NONBLOCK)
    try:
        with Lines(c / "recv") as r:
            os.write(fd, ping_frame(srv_lid, 0x5151))
            p = select.poll()
            p.register(fd, select.POLLIN)
            assert p.poll(5000), "no answer on the umad open that asked"
            hdr, mad = mt.read_frame(fd)
            assert hdr["status"] == 0 and mt.mad_tid(mad) == 0x5151
            assert mad[3] == 0x81
            write_text(c / "send", "class=0x32 method=get oui=0x1405 lid=%d "
                       "tid=0x5252\n" % srv_lid)
            ln = r.lines(1, timeout=5)[0]
            assert int(ln["tid"], 16) == 0x5252 and ln["method"] == "getresp"
            time.sleep(0.2)
            r.assert_empty()
            for f in (fd, other):
                with pytest.raises(BlockingIOError):
                    os.read(f, 4096)
    finally:
        os.close(fd)
        os.close(other)
    s = stats(c)
    assert s["sent"] == 2 and s["received"] == 2 and s["queued"] == 0, s


def test_channel_requests_reach_ibping_server(fabric, mount, ping_server):
    srv, srv_lid = ping_server
    m = mount("Hca1")
    p = pdir(m)
    c = p / "agents" / "cli"
    os.mkdir(c)
    # A channel registered for the same class, version, method and OUI
    # gets requests, not the answers to another channel's requests.
    os.mkdir(p / "agents" / "srv")
    register(p / "agents" / "srv", PING_REG)
    n = 8
    text = "".join("class=0x32 method=get oui=0x1405 lid=%d tid=0x%x\n"
                   % (srv_lid, 0xabc00 + i) for i in range(n))
    with Lines(c / "recv") as r, Lines(p / "recv") as port_recv, \
            Lines(p / "agents" / "srv" / "recv") as srv_recv:
        assert write_text(c / "send", text) == len(text)
        got = r.lines(n, timeout=10)
        time.sleep(0.2)     # a duplicate or stray answer would come now
        port_recv.assert_empty()
        srv_recv.assert_empty()
        r.assert_empty()
    host = socket.gethostname().encode()
    assert sorted(int(ln["tid"], 16) for ln in got) == [0xabc00 + i for i in range(n)]
    for ln in got:
        assert "error" not in ln, ln
        assert ln["class"] == "0x32" and ln["method"] == "getresp", ln
        assert ln["status"] == "0x0000" and ln["oui"] == "0x001405", ln
        assert int(ln["lid"], 0) == srv_lid and ln["qp"] == "1", ln
        # ibping -S answers with "hostname.domainname" in the data area.
        data = ln["_mad"][VENDOR2_DATA:]
        assert data.startswith(host + b"."), data[:80]
    s = stats(c)
    assert (s["sent"], s["received"], s["timeouts"], s["queued"]) == (n, n, 0, 0), s
    assert srv.alive()
    assert_daemon_alive(m)


# ---------------------------------------------------------------------------
# 3. eight channels, 500 requests each, concurrently
#
# Each channel keeps WINDOW requests in flight (batched writes, reads as the
# answers come).  More than about 200 in flight at once deadlocks the
# simulator, not the daemon: umad2sim holds its global mutex across a
# blocking write to ibsim, which (ibsim-utils 0.10) retries its write of an
# answer to us for ever while our receive socket is full, and umad2sim's
# receiver thread, which would empty it, waits for that mutex.

WINDOW = 16


@pytest.mark.load
def test_eight_channels_get_their_own_answers(fabric, mount):
    m = mount("Hca1")
    p = pdir(m)
    nchan, per = 8, 500
    chans = [p / "agents" / ("c%d" % i) for i in range(nchan)]
    for c in chans:
        os.mkdir(c)
    results = [None] * nchan
    errors = []
    go = threading.Barrier(nchan)

    def worker(i):
        try:
            c = chans[i]
            tids = [(i + 1) << 24 | j for j in range(per)]
            got = []
            with Lines(c / "recv") as r:
                fd = os.open(c / "send", os.O_WRONLY)
                try:
                    go.wait(10)
                    sent = 0
                    while sent < per:
                        k = min(per, len(got) + WINDOW) - sent
                        text = "".join("dr=0 method=get attr=NodeInfo tid=0x%x\n" % t
                                       for t in tids[sent:sent + k])
                        assert os.write(fd, text.encode()) == len(text)
                        sent += k
                        more = r.take(1, timeout=10)
                        assert more, "channel c%d: no answer in 10s (%d sent, %d back)" % (
                            i, sent, len(got))
                        got += more
                finally:
                    os.close(fd)
                got += r.take(per - len(got), timeout=10)
                time.sleep(0.2)     # a duplicate would come now
                got += r.take(1, timeout=0)
                results[i] = got
        except BaseException as e:
            errors.append((i, e))

    with Lines(p / "recv") as port_recv:
        t0 = time.monotonic()
        threads = [threading.Thread(target=worker, args=(i,), daemon=True)
                   for i in range(nchan)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(40)
        elapsed = time.monotonic() - t0
        assert not errors, errors
        port_recv.assert_empty()
    for i, got in enumerate(results):
        want = [(i + 1) << 24 | j for j in range(per)]
        tids = [int(ln["tid"], 16) for ln in got]
        assert len(tids) == per, "channel c%d: %d answers (want %d), %d distinct" % (
            i, len(tids), per, len(set(tids)))
        assert sorted(tids) == want, "channel c%d: foreign/duplicate tids %r" % (
            i, sorted(set(tids) ^ set(want))[:10])
        bad = [ln for ln in got if "error" in ln or ln["method"] != "getresp"
               or ln["attr"] != "NodeInfo" or ln["status"] != "0x0000"]
        assert not bad, bad[:2]
        s = stats(chans[i])
        assert (s["sent"], s["received"], s["timeouts"], s["dropped"],
                s["queued"]) == (per, per, 0, 0, 0), (i, s)
    print("8 x %d DR NodeInfo round trips in %.2fs" % (per, elapsed))
    assert_daemon_alive(m)


# ---------------------------------------------------------------------------
# 4. mkdir/rmdir and registrations

BAD_NAMES = ["two\nlines", "ctl\x01", "with space", "caf\u00e9", ".hidden",
             "tab\t", "x" * 64]


def test_user_made_directory_names(mount):
    """agents/ and rq/ take ASCII letters, digits, '-', '_' and '.' (not
    first), 1-63 bytes; anything else is EINVAL and leaves no trace."""
    m = mount("Hca1")
    # rq/ exists only with a verbs device (the VM tier): the check is
    # the dispatcher's, one for both.
    parents = [p for p in (pdir(m) / "agents", pdir(m) / "rq") if p.exists()]
    assert parents
    for parent in parents:
        for name in BAD_NAMES:
            expect_errno(errno.EINVAL, os.mkdir, parent / name)
        assert os.listdir(parent) == []
    a = pdir(m) / "agents"
    good = ["a", "cron-health_1.2", "X" * 63, "9"]
    for name in good:
        os.mkdir(a / name)
    assert sorted(os.listdir(a)) == sorted(good)
    for name in good:
        os.rmdir(a / name)


def test_mkdir_rmdir_lifecycle(mount):
    m = mount("Hca1")
    a = pdir(m) / "agents"
    assert os.listdir(a) == []
    os.mkdir(a / "x")
    assert set(os.listdir(a / "x")) == CHANNEL_FILES
    assert set(os.listdir(pdir(m))) >= CHANNEL_FILES | {"agents"}
    expect_errno(errno.EEXIST, os.mkdir, a / "x")
    for name, flags in (("recv", os.O_RDONLY), ("send", os.O_WRONLY),
                        ("umad", os.O_RDWR)):
        fd = os.open(a / "x" / name, flags)
        try:
            expect_errno(errno.EBUSY, os.rmdir, a / "x")
            assert os.listdir(a) == ["x"]
        finally:
            os.close(fd)
    # Settings and reports held open do not pin the directory.
    register(a / "x", PING_REG)
    assert len(registrations(a / "x")) == 1
    os.rmdir(a / "x")
    assert os.listdir(a) == []
    expect_errno(errno.ENOENT, os.stat, a / "x")
    os.mkdir(a / "x")
    assert set(os.listdir(a / "x")) == CHANNEL_FILES
    assert registrations(a / "x") == []
    s = stats(a / "x")
    assert s == {"sent": 0, "received": 0, "timeouts": 0, "errors": 0,
                 "dropped": 0, "queued": 0, "queue_limit": 4096}, s
    # The old registration went with the old directory: it can be made again.
    register(a / "x", PING_REG)
    os.rmdir(a / "x")


def test_rmdir_right_after_close(mount):
    """close(2) returns before the kernel sends the file's RELEASE: a
    script that closes its files and removes the channel at once must not
    get EBUSY (the vendor responder example does just that)."""
    m = mount("Hca1")
    a = pdir(m) / "agents"
    for i in range(30):
        os.mkdir(a / "c")
        register(a / "c", PING_REG)
        fds = [os.open(a / "c" / name, flags) for name, flags in
               (("recv", os.O_RDONLY), ("send", os.O_WRONLY), ("umad", os.O_RDWR))]
        for fd in fds:
            os.close(fd)
        os.rmdir(a / "c")
    assert os.listdir(a) == []


def test_register_lists_agents(mount):
    m = mount("Hca1")
    c = pdir(m) / "agents" / "r"
    os.mkdir(c)
    text = ("class=0x32 methods=get oui=0x1405\n"
            "class=perf version=1 methods=get,set\n"
            "class=0x31 methods=get,0x10 oui=0x2c9 rmpp=1\n")
    assert register(c, text) == len(text)
    regs = registrations(c)
    assert len(regs) == 3, regs
    ids = [int(r["agent"]) for r in regs]
    assert len(set(ids)) == 3 and all(0 <= i < AGENTS_MAX for i in ids), regs
    by_class = {r["class"]: r for r in regs}
    assert by_class["0x32"] == {"agent": by_class["0x32"]["agent"], "class": "0x32",
                                "version": "1", "methods": "get",
                                "oui": "0x001405", "rmpp": "0"}
    assert by_class["0x04"]["methods"] == "get,set"
    assert by_class["0x04"]["version"] == "1" and by_class["0x04"]["rmpp"] == "0"
    assert by_class["0x31"]["methods"] == "get,0x10"
    assert by_class["0x31"]["oui"] == "0x0002c9" and by_class["0x31"]["rmpp"] == "1"
    # The exact text of one line.
    line = [ln for ln in read_text(c / "register").splitlines() if "0x32" in ln][0]
    assert line == "agent=%s class=0x32 version=1 methods=get oui=0x001405 rmpp=0" % \
        by_class["0x32"]["agent"]
    # Another channel's file lists only its own.
    os.mkdir(pdir(m) / "agents" / "other")
    assert registrations(pdir(m) / "agents" / "other") == []
    assert registrations(pdir(m)) == []


def test_register_conflicts_between_channels(mount):
    m = mount("Hca1")
    a = pdir(m) / "agents"
    os.mkdir(a / "one")
    os.mkdir(a / "two")
    register(a / "one", "class=0x32 methods=get,set oui=0x1405\n")
    errs_before = stats(a / "two")["errors"]
    expect_errno(errno.EINVAL, register, a / "two",
                 "class=0x32 methods=get oui=0x1405\n")
    err = last_error(a / "two")
    assert err.startswith("register line 1:"), err
    assert "already registered" in err, err
    assert stats(a / "two")["errors"] == errs_before + 1
    assert registrations(a / "two") == []
    # One method in common is enough.
    expect_errno(errno.EINVAL, register, a / "two",
                 "class=0x32 methods=send,set oui=0x1405\n")
    # The port's own channel ("default") conflicts the same way.
    expect_errno(errno.EINVAL, register, pdir(m), "class=0x32 methods=set oui=0x1405\n")
    assert "already registered" in last_error(pdir(m))
    # Another method, another OUI, another version: no conflict.
    register(a / "two", "class=0x32 methods=send oui=0x1405\n")
    register(a / "two", "class=0x32 methods=get oui=0x1406\n")
    register(a / "two", "class=0x32 version=2 methods=get oui=0x1405\n")
    assert len(registrations(a / "two")) == 3
    # The holder goes: its methods are free again.
    os.rmdir(a / "one")
    register(a / "two", "class=0x32 methods=get,set oui=0x1405\n")
    regs = registrations(a / "two")
    assert len(regs) == 4
    assert any(r["methods"] == "get,set" and r["oui"] == "0x001405" and r["version"] == "1"
               for r in regs), regs


def test_rmdir_keeps_other_registrations_of_the_class(fabric, mount):
    """Two channels hold methods of the ping class; rmdir of one must leave
    the other serving.  (umad2sim forgets a whole class when any one agent
    of it is unregistered, and then crashes on the next MAD of the class.)"""
    m = mount("Hca1")
    a = pdir(m) / "agents"
    os.mkdir(a / "keep")
    os.mkdir(a / "gone")
    register(a / "gone", "class=0x32 methods=set oui=0x1405\n")
    register(a / "keep", PING_REG)
    os.rmdir(a / "gone")
    cp = ibping_served(fabric, a / "keep", m)
    assert ping_stats(cp.stdout) == (3, 3, 0), cp.stdout + cp.stderr
    assert_daemon_alive(m)


@pytest.mark.parametrize("line,why", [
    ("class=0x32 methods=get\n", r"vendor class 0x32 needs an oui="),
    ("class=0x4f methods=get\n", r"vendor class 0x4f needs an oui="),
    ("class=perf methods=get rmpp=1\n", r"class 0x04 has no RMPP"),
    ("class=smi methods=get rmpp=1\n", r"class 0x01 has no RMPP"),
    ("class=perf methods=get foo=1\n", r"unknown key 'foo'"),
    ("class=perf methods=getresp\n", r"response"),
    ("class=perf\n", r"no method"),
    ("methods=get\n", r"class= missing"),
    ("class=nosuch methods=get\n", r"unknown class"),
    ("class=perf methods=nosuch\n", r"unknown method"),
])
def test_register_refused(mount, line, why):
    m = mount("Hca1")
    c = pdir(m) / "agents" / "e"
    os.mkdir(c)
    expect_errno(errno.EINVAL, register, c, line)
    err = last_error(c)
    assert err.startswith("register line 1: "), err
    assert re.search(why, err), err
    assert registrations(c) == []


def test_register_stops_at_bad_line(mount):
    m = mount("Hca1")
    c = pdir(m) / "agents" / "e"
    os.mkdir(c)
    text = "class=perf methods=get\nclass=0x33 methods=get\nclass=bm methods=get\n"
    fd = os.open(c / "register", os.O_WRONLY)
    try:
        n = os.write(fd, text.encode())
    finally:
        os.close(fd)
    # The first line was registered, the write stopped at the second.
    assert n == len("class=perf methods=get\n"), n
    assert last_error(c).startswith("register line 2: "), last_error(c)
    assert [r["class"] for r in registrations(c)] == ["0x04"]


def test_register_runs_out_of_agents(mount):
    m = mount("Hca1")
    a = pdir(m) / "agents"
    os.mkdir(a / "hog")
    classes = list(range(0x33, 0x50))       # 29 vendor range 2 classes
    classes += [0x09, 0x0a, 0x0b, 0x0c]     # + 4 vendor range 1: 33 > 32
    ok = 0
    for cl in classes:
        try:
            register(a / "hog", "class=0x%02x methods=get oui=0x1\n" % cl
                     if cl >= 0x30 else "class=0x%02x methods=get\n" % cl)
            ok += 1
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
            break
    else:
        pytest.fail("%d registrations on one port, no ENOSPC" % ok)
    assert 0 < ok <= AGENTS_MAX
    assert re.search(r"agents are all in use", last_error(a / "hog")), \
        last_error(a / "hog")
    ids = [int(r["agent"]) for r in registrations(a / "hog")]
    assert len(ids) == ok and len(set(ids)) == ok
    # Another channel cannot register either; after rmdir it can.
    os.mkdir(a / "late")
    expect_errno(errno.ENOSPC, register, a / "late", "class=perf methods=get\n")
    os.rmdir(a / "hog")
    register(a / "late", "class=perf methods=get\n")
    register(a / "late", "class=0x33 methods=get oui=0x1\n")
    assert len(registrations(a / "late")) == 2


# ---------------------------------------------------------------------------
# 5. queue overflow under a flood

def flood(sender, target_lid, n, tid0=0, batch=200):
    """n unsolicited ping-class gets from the sender mount's port to
    target_lid, expecting no answer (timeout=0)."""
    fd = os.open(pdir(sender) / "send", os.O_WRONLY)
    try:
        for k in range(0, n, batch):
            text = "".join(
                "class=0x32 method=get oui=0x1405 lid=%d timeout=0 tid=0x%x\n"
                % (target_lid, tid0 + i) for i in range(k, min(n, k + batch)))
            assert os.write(fd, text.encode()) == len(text)
    finally:
        os.close(fd)


def wait_stat(d, key, value, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        s = stats(d)
        if s[key] >= value or time.monotonic() > deadline:
            return s
        time.sleep(0.05)


def flood_and_drain(sender, recv_mount, chan, n, limit, tid0):
    s0 = stats(chan)
    flood(sender, mount_lid(recv_mount), n, tid0)
    s = wait_stat(chan, "received", s0["received"] + n)
    time.sleep(0.2)     # nothing more should come
    s = stats(chan)
    assert s["received"] - s0["received"] == n, (s0, s)
    assert s["queued"] == limit, s
    assert s["queue_limit"] == limit, s
    assert s["dropped"] - s0["dropped"] == n - limit, (s0, s)
    with Lines(chan / "recv") as r:
        got = r.take(limit, timeout=5)
        r.assert_empty()
    # The oldest were kept: the newest were the ones dropped.  (The upper
    # 32 bits of a request's TID are the sending agent's, as with the kernel.)
    assert [int(ln["tid"], 16) & 0xffffffff for ln in got] == \
        [tid0 + i for i in range(limit)]
    assert stats(chan)["queued"] == 0
    return s


@pytest.mark.load
def test_queue_overflow_drops_newest(fabric, mount):
    """-o queue_len=256; 20 rounds of 2000 unsolicited requests from a
    second mount on Hca2 with nobody reading: each round 256 queued (the
    oldest), the rest dropped and counted, then drained.  The daemon's RSS
    must stay flat: glibc keeps some freed memory in its per-thread arenas
    (here RSS settles some 1.5-2 MiB above the start after about 20 rounds
    and stays there), so the bound is 4 MiB; leaking only the dropped MADs
    would add about 12 MiB."""
    limit, n, rounds = 256, 2000, 20
    rm = mount("Hca1", options=("queue_len=%d" % limit,))
    sender = mount("Hca2")
    c = pdir(rm) / "agents" / "q"
    os.mkdir(c)
    register(c, PING_REG)
    rss = [rm.rss_kib()]
    with Lines(pdir(rm) / "recv") as port_recv:
        t0 = time.monotonic()
        for k in range(rounds):
            flood_and_drain(sender, rm, c, n, limit, 0x100000 * (k + 1))
            rss.append(rm.rss_kib())
        elapsed = time.monotonic() - t0
        port_recv.assert_empty()
    s = stats(c)
    assert s["dropped"] == rounds * (n - limit), s
    assert s["errors"] == 0 and s["queued"] == 0, s
    print("queue_limit %d, %d requests per round, %.2fs per round; VmRSS KiB "
          "at start and after each round: %s (%+d KiB)"
          % (limit, n, elapsed / rounds, rss, rss[-1] - rss[0]))
    if not sim.memory_is_instrumented():
        assert rss[-1] - rss[0] < 4096, "daemon RSS grew %d KiB over %d floods: %s" % (
            rss[-1] - rss[0], rounds, rss)
    assert_daemon_alive(rm)


@pytest.mark.load
def test_queue_default_limit(fabric, mount):
    """The default queue is 4096 MADs: 5000 unsolicited requests, 904
    dropped (the newest)."""
    limit, n = 4096, 5000
    rm = mount("Hca1")
    sender = mount("Hca2")
    c = pdir(rm) / "agents" / "q"
    os.mkdir(c)
    register(c, PING_REG)
    assert stats(c)["queue_limit"] == limit
    rss0 = rm.rss_kib()
    t0 = time.monotonic()
    flood_and_drain(sender, rm, c, n, limit, 0x10000)
    print("queue_limit %d: %d requests in %.2fs; VmRSS %d KiB before, %d KiB "
          "after (drained)" % (limit, n, time.monotonic() - t0, rss0,
                               rm.rss_kib()))
    s = stats(c)
    assert (s["received"], s["dropped"], s["queued"]) == (n, n - limit, 0), s
    assert_daemon_alive(rm)
