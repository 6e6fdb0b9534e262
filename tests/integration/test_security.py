"""Who may use what, checked as a real unprivileged user.

The test makes a system user and a group if they are missing (and leaves
them: another run on this machine may be using them) and runs small
python3 snippets as that user with setpriv, choosing its supplementary
groups per call: with the mad group (a member) or without (everyone
else).  The mounts use allow_other at a mount point under a 0755 dir.

- Default: attributes and counters read as root reads them; send, recv,
  umad, register, the settings and mkdir in agents/ are refused (EACCES,
  by the kernel: default_permissions).
- -o mad_group=G: members send and receive GSI MADs (a PerfMgt Get to
  another node, compared with perfquery) but an SMP or a Set/Delete is
  refused with EPERM and a reason; non-members still get EACCES.
- -o mad_group=G,mad_group_smi: members may send SMPs and Sets too.
- What a descriptor may send is its opener's: root writing to a member's
  descriptor (passed over a socket) is refused an SMP too.
"""

import errno
import grp
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

import simfabric as sim
import madtext as mt
from checks import need
from diags import lid_of

PORT = "ibsim0/ports/1"
USER = "umadfs-test"
GROUP = "umadfs-mad"
OTHER = "nobody"            # a second member, for the sticky agents/
SYMBOL_ERRORS = {"Hca1": 321, "Hca2": 1234}   # set on each PMA: non-zero values


def _ensure(check, create):
    try:
        return check()
    except KeyError:
        pass
    # Another run may create it at the same moment: then it exists.
    subprocess.run(create, capture_output=True, text=True)
    return check()


@pytest.fixture(scope="module")
def ids():
    if os.geteuid() != 0:
        pytest.skip("needs root to make a user and switch to it")
    need("setpriv", "useradd", "groupadd")
    gid = _ensure(lambda: grp.getgrnam(GROUP).gr_gid,
                  ["groupadd", "--system", GROUP])
    pw = _ensure(lambda: pwd.getpwnam(USER),
                 ["useradd", "--system", "--no-create-home", "--user-group",
                  "--shell", "/usr/sbin/nologin", USER])
    other = pwd.getpwnam(OTHER)
    return {"uid": pw.pw_uid, "gid": pw.pw_gid, "mad_gid": gid,
            "other_uid": other.pw_uid, "other_gid": other.pw_gid}


@pytest.fixture(scope="module")
def sec_fabric():
    """A quiet fabric of this module's own: ports made ACTIVE by opensm,
    which is then stopped, so counters stay put; the PMAs of Hca1 and
    Hca2 count a few symbol errors, so a counter compared is not 0."""
    f = sim.Fabric("two-switch.net").start()
    try:
        f.start_opensm("Hca3")
        for h in ("Hca1", "Hca2", "Hca3", "Switch1", "Switch2"):
            f.wait_active(h, timeout=30)
        f.stop_opensm("Hca3")
        for node, v in SYMBOL_ERRORS.items():
            out = f.command('PerformanceSet "%s"[1] PortCounters.SymbolErrorCounter=%d'
                            % (node, v))
            assert "has been set to %d" % v in out, out
        yield f
    finally:
        f.stop()


@pytest.fixture
def open_mount(sec_fabric):
    """open_mount(*options) -> a Mount on Hca1 with allow_other and the
    options, at a mount point other users can reach."""
    if not (os.path.exists("/dev/fuse") and os.access("/dev/fuse", os.R_OK | os.W_OK)):
        pytest.skip("/dev/fuse missing or not accessible")
    made = []

    def make(*options):
        d = Path(tempfile.mkdtemp(prefix="umadfs-sec-"))
        os.chmod(d, 0o755)
        m = sim.Mount(sec_fabric, "Hca1", d / "mnt", workdir=d,
                      options=("allow_other",) + options)
        made.append((d, m))
        return m.start()

    yield make
    problems = []
    for d, m in made:
        m.unmount()
        if m.problems():
            problems += m.problems() + ["---- daemon log ----", m.log_excerpt()]
        shutil.rmtree(d, ignore_errors=True)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# Helpers the snippets run with (as the user): each result is "ok", a
# value, or the errno's name.
PRELUDE = r'''
import errno, json, os, select, sys, time
P = sys.argv[1]
def attempt(fn, *a):
    try:
        r = fn(*a)
        return "ok" if r is None else r
    except OSError as e:
        return errno.errorcode[e.errno]
def open_close(path, flags):
    os.close(os.open(path, flags))
def write(path, data, flags=os.O_WRONLY):
    fd = os.open(path, flags)
    try:
        return os.write(fd, data)
    finally:
        os.close(fd)
def read(path):
    with open(path, "rb") as f:
        return f.read().decode()
def recv_line(d, timeout=5.0):
    fd = os.open(d + "/recv", os.O_RDONLY | os.O_NONBLOCK)
    try:
        p = select.poll()
        p.register(fd, select.POLLIN)
        if not p.poll(int(timeout * 1000)):
            return "no line"
        buf = b""
        while not buf.endswith(b"\n"):
            buf += os.read(fd, 65536)
        return buf.decode().rstrip("\n")
    finally:
        os.close(fd)
def umad_exchange(d, frame_hex, timeout=5.0):
    fd = os.open(d + "/umad", os.O_RDWR)
    try:
        os.write(fd, bytes.fromhex(frame_hex))
        p = select.poll()
        p.register(fd, select.POLLIN)
        if not p.poll(int(timeout * 1000)):
            return "no frame"
        return os.read(fd, 4096).hex()
    finally:
        os.close(fd)
def queued(d):
    return int(dict(l.split() for l in read(d + "/stats").splitlines())["queued"])
out = {}
'''


def run_as(ids, m, code, member=True, who="user", args=()):
    """Runs PRELUDE + code as the test user (or `nobody` for who="other")
    with P = the port directory; returns the snippet's `out` dict."""
    uid, gid = (ids["uid"], ids["gid"]) if who == "user" else \
        (ids["other_uid"], ids["other_gid"])
    groups = ["--groups=%d" % ids["mad_gid"]] if member else ["--clear-groups"]
    argv = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, *groups, "--",
            "/usr/bin/python3", "-c",
            PRELUDE + code + "\nprint(json.dumps(out))\n",
            str(m.path(PORT)), *args]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    cp = subprocess.run(argv, cwd="/", env=env, stdin=subprocess.DEVNULL,
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 0, "snippet as uid %d failed (%d):\n%s\n%s" % (
        uid, cp.returncode, cp.stdout, cp.stderr)
    return json.loads(cp.stdout.strip().splitlines()[-1])


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode()


def symbol_errors(line):
    ln = mt.parse_line(line)
    assert ln["class"] == "perf" and ln["method"] == "getresp", line
    assert ln["status"] == "0x0000", line
    return mt.decode_fields(ln.mad[mt.PMA_DATA:], mt.PORT_COUNTERS)["SymbolErrorCounter"]


def perfquery_symbol_errors(f, lid):
    """perfquery, run as root from Hca3, of port 1 of the node at lid."""
    out = mt.parse_diag(f.run_tool(["perfquery", str(lid), "1"], "Hca3").stdout)
    return int(out["SymbolErrorCounter"], 0)


def mode_of(path):
    st = os.stat(path)
    return stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid


SMI_REASON = "is subnet management: root only (mount option mad_group_smi"
SET_REASON = "changes state: root only (mount option mad_group_smi"


# ---------------------------------------------------------------------------
# the default: attributes for everyone, MAD files root's


def test_default_user_reads_attributes_not_mad_files(ids, open_mount):
    m = open_mount()
    p = m.path(PORT)
    opts = sim.mount_entry(m.mountpoint)
    super_opts = opts[-1].split(",")
    assert "allow_other" in super_opts and "default_permissions" in super_opts, opts
    mounts = [ln.split() for ln in read_text("/proc/mounts").splitlines()]
    line = [ln for ln in mounts if ln[1] == str(m.mountpoint)][-1]
    assert {"allow_other", "default_permissions"} <= set(line[3].split(",")), line

    files = ["lid", "state", "phys_state", "rate", "sm_lid", "port_guid",
             "counters/symbol_error", "counters/link_downed", "last_error",
             "stats"]
    root = {f: read_text(p / f) for f in files}
    root["node_guid"] = read_text(m.path("ibsim0", "node_guid"))
    out = run_as(ids, m, """
for f in %r:
    out[f] = attempt(read, P + "/" + f)
out["node_guid"] = attempt(read, P + "/../../node_guid")
for name, flags in (("send", os.O_WRONLY), ("recv", os.O_RDONLY),
                    ("umad", os.O_RDWR), ("register", os.O_WRONLY),
                    ("timeout_ms", os.O_WRONLY), ("retries", os.O_WRONLY)):
    out["open " + name] = attempt(open_close, P + "/" + name, flags)
out["mkdir"] = attempt(os.mkdir, P + "/agents/x")
out["listdir agents"] = attempt(lambda: [os.listdir(P + "/agents")] and None)
""" % files, member=False)
    assert int(root["counters/symbol_error"]) == SYMBOL_ERRORS["Hca1"]
    for f, v in root.items():
        assert out[f] == v, (f, out[f], v)
    for name in ("send", "recv", "umad", "register", "timeout_ms", "retries"):
        assert out["open " + name] == "EACCES", (name, out)
    assert out["mkdir"] == "EACCES" and out["listdir agents"] == "ok", out
    # Membership of a group means nothing without mad_group=.
    out = run_as(ids, m, """
out["send"] = attempt(open_close, P + "/send", os.O_WRONLY)
out["mkdir"] = attempt(os.mkdir, P + "/agents/x")
""", member=True)
    assert out == {"send": "EACCES", "mkdir": "EACCES"}, out
    assert not os.path.exists(p / "agents" / "x")
    # Modes and owners as documented in files.md.
    assert mode_of(p / "send") == (0o200, 0, 0)
    assert mode_of(p / "recv") == (0o400, 0, 0)
    assert mode_of(p / "umad") == (0o600, 0, 0)
    assert mode_of(p / "agents") == (0o755, 0, 0)
    # Root is unaffected: it still makes channels.
    os.mkdir(p / "agents" / "r")
    assert mode_of(p / "agents" / "r") == (0o755, 0, 0)
    os.rmdir(p / "agents" / "r")


# ---------------------------------------------------------------------------
# -o mad_group=G: GSI for members, SMPs and Sets still root's


def test_group_member_sends_gsi_not_smp_or_set(ids, sec_fabric, open_mount):
    f = sec_fabric
    m = open_mount("mad_group=" + GROUP)
    p = m.path(PORT)
    g = ids["mad_gid"]
    assert mode_of(p / "send") == (0o220, 0, g)
    assert mode_of(p / "recv") == (0o440, 0, g)
    assert mode_of(p / "umad") == (0o660, 0, g)
    assert mode_of(p / "register") == (0o660, 0, g)
    assert mode_of(p / "timeout_ms") == (0o660, 0, g)
    assert mode_of(p / "retries") == (0o660, 0, g)
    assert mode_of(p / "last_error") == (0o444, 0, 0)
    assert mode_of(p / "agents") == (0o1770, 0, g)
    assert mode_of(p / "state") == (0o444, 0, 0)

    lid2 = lid_of(f, "Hca2")
    get = "class=perf method=get attr=PortCounters lid=%d data=00010000 tid=0x77\n" % lid2
    pma_frame = mt.pack_umad(mt.gmp(0x04, 0x12, tid=0x78, data=bytes([0, 1])),
                             lid=lid2, qpn=1, qkey=0x80010000, timeout_ms=1000,
                             retries=2).hex()
    smp_frame = mt.pack_umad(mt.dr_smp(0x11, tid=0x79), timeout_ms=1000).hex()
    out = run_as(ids, m, r"""
get, pma_frame, smp_frame = sys.argv[2:5]
out["get"] = attempt(write, P + "/send", get.encode())
out["get line"] = recv_line(P)
# A queued answer survives refused writes.
write(P + "/send", get.replace("tid=0x77", "tid=0x7a").encode())
deadline = time.monotonic() + 5
while queued(P) < 1 and time.monotonic() < deadline:
    time.sleep(0.01)
refused = {
    "smp": "class=smi-dr method=get attr=NodeInfo dr=0,1\n",
    "lid smp": "class=smi method=get attr=PortInfo lid=1\n",
    "perf set": get.replace("method=get", "method=set"),
    "sa delete": "class=sa method=delete attr=ServiceRecord lid=1\n",
    "set second": get + "class=perf method=set attr=PortCounters lid=1\n",
}
for k, line in refused.items():
    out[k] = attempt(write, P + "/send", line.encode())
    out[k + " why"] = read(P + "/last_error")
out["queued after"] = recv_line(P)
time.sleep(0.3)     # an answer to a refused Get would be queued by now
out["queued left"] = queued(P)
out["umad pma"] = attempt(umad_exchange, P, pma_frame)
out["umad smp"] = attempt(umad_exchange, P, smp_frame)
out["umad smp why"] = read(P + "/last_error")
# Serving: a GetResp of a GSI class goes out (nobody waits for it here).
out["getresp"] = attempt(write, P + "/send",
                         get.replace("method=get", "method=getresp").encode())
out["stats"] = read(P + "/stats")
""", args=(get, pma_frame, smp_frame))
    assert out["get"] == len(get), out
    assert symbol_errors(out["get line"]) == SYMBOL_ERRORS["Hca2"] == \
        perfquery_symbol_errors(f, lid2)
    assert mt.parse_line(out["queued after"]).tid == 0x7a, out
    assert out["queued left"] == 0, out
    for k, why in (("smp", "line 1: class smi-dr (0x81) " + SMI_REASON),
                   ("lid smp", "line 1: class smi (0x01) " + SMI_REASON),
                   ("perf set", "line 1: method set (0x02) " + SET_REASON),
                   ("sa delete", "line 1: method delete (0x15) " + SET_REASON),
                   ("set second", "line 2: method set (0x02) " + SET_REASON)):
        assert out[k] == "EPERM", (k, out)
        assert out[k + " why"].startswith(why), (k, out[k + " why"])
    hdr, mad = mt.unpack_umad(bytes.fromhex(out["umad pma"]))
    assert hdr["status"] == 0 and mt.mad_header(mad)["method"] == 0x81, hdr
    assert mt.decode_fields(mad[mt.PMA_DATA:], mt.PORT_COUNTERS)[
        "SymbolErrorCounter"] == SYMBOL_ERRORS["Hca2"]
    assert out["umad smp"] == "EPERM", out
    assert out["umad smp why"].startswith("frame not sent: class smi-dr (0x81) " +
                                          SMI_REASON), out
    assert out["getresp"] > 0, out
    st = dict(ln.split() for ln in out["stats"].splitlines())
    # The five refused writes and the umad frame (its error shows in the
    # last_error of the directory the fd was opened in).
    assert int(st["errors"]) == 6, st

    # Root is not held to it.
    with open(p / "send", "w") as w:
        w.write("class=smi-dr method=get attr=NodeInfo dr=0,1 tid=0x80\n")
    fd = os.open(p / "recv", os.O_RDONLY)
    try:
        ln = mt.parse_line(os.read(fd, 65536).decode())
    finally:
        os.close(fd)
    assert ln.tid == 0x80 and ln["method"] == "getresp", ln


def test_group_non_member_refused(ids, open_mount):
    m = open_mount("mad_group=" + GROUP)
    out = run_as(ids, m, """
for name, flags in (("send", os.O_WRONLY), ("recv", os.O_RDONLY),
                    ("umad", os.O_RDWR), ("register", os.O_WRONLY),
                    ("timeout_ms", os.O_WRONLY)):
    out[name] = attempt(open_close, P + "/" + name, flags)
out["mkdir"] = attempt(os.mkdir, P + "/agents/x")
out["listdir"] = attempt(lambda: [os.listdir(P + "/agents")] and None)
out["state"] = attempt(read, P + "/state")
""", member=False)
    assert out.pop("state") == read_text(m.path(PORT, "state"))
    assert set(out.values()) == {"EACCES"}, out


def test_group_member_channels(ids, open_mount):
    """Members make channels (their own, group-shared), may not register
    an SMI class, and cannot remove another member's channel (agents/ is
    sticky)."""
    m = open_mount("mad_group=" + GROUP)
    p = m.path(PORT)
    out = run_as(ids, m, """
a = P + "/agents/u"
out["mkdir"] = attempt(os.mkdir, a)
out["register smi"] = attempt(write, a + "/register", b"class=smi-dr methods=get\\n")
out["why"] = read(a + "/last_error")
out["register port smi"] = attempt(write, P + "/register", b"class=smi methods=trap\\n")
out["register vendor"] = attempt(write, a + "/register",
                                 b"class=0x32 oui=0x1405 methods=get\\n")
out["registered"] = read(a + "/register")
""")
    assert out["mkdir"] == "ok" and out["register smi"] == "EPERM", out
    assert out["why"].startswith("register line 1: class smi-dr (0x81) " + SMI_REASON), out
    assert out["register port smi"] == "EPERM", out
    assert out["register vendor"] > 0 and "class=0x32" in out["registered"], out
    a = p / "agents" / "u"
    assert mode_of(a) == (0o770, ids["uid"], ids["mad_gid"])
    assert mode_of(a / "send") == (0o220, ids["uid"], ids["mad_gid"])
    assert mode_of(a / "umad") == (0o660, ids["uid"], ids["mad_gid"])
    assert mode_of(a / "stats") == (0o444, ids["uid"], 0)
    # Another member may use it, not remove it; its owner may.
    out = run_as(ids, m, """
out["rmdir"] = attempt(os.rmdir, P + "/agents/u")
out["send"] = attempt(open_close, P + "/agents/u/send", os.O_WRONLY)
""", who="other")
    assert out == {"rmdir": "EPERM", "send": "ok"}, out
    out = run_as(ids, m, 'out["rmdir"] = attempt(os.rmdir, P + "/agents/u")')
    assert out["rmdir"] == "ok" and not a.exists(), out


# ---------------------------------------------------------------------------
# -o mad_group_smi: members may send everything


def test_group_smi_option(ids, sec_fabric, open_mount):
    m = open_mount("mad_group=%d" % ids["mad_gid"], "mad_group_smi")
    assert mode_of(m.path(PORT, "send")) == (0o220, 0, ids["mad_gid"])
    lid2 = lid_of(sec_fabric, "Hca2")
    # CounterSelect 0: a Set that clears nothing.
    pset = "class=perf method=set attr=PortCounters lid=%d data=00010000 tid=0x91\n" % lid2
    out = run_as(ids, m, """
out["smp"] = attempt(write, P + "/send", b"class=smi-dr method=get attr=NodeInfo dr=0,1 tid=0x90\\n")
out["smp line"] = recv_line(P)
out["set"] = attempt(write, P + "/send", sys.argv[2].encode())
out["set line"] = recv_line(P)
""", args=(pset,))
    ln = mt.parse_line(out["smp line"])
    assert ln.tid == 0x90 and ln["method"] == "getresp" and ln["class"] == "smi-dr", out
    assert mt.decode_nodeinfo(ln.mad[mt.SMP_DATA:])["NodeType"] == "Switch"
    ln = mt.parse_line(out["set line"])
    assert ln.tid == 0x91 and ln["method"] == "getresp", out
    assert symbol_errors(out["set line"]) == SYMBOL_ERRORS["Hca2"]
    # Still members only.
    out = run_as(ids, m, 'out["send"] = attempt(open_close, P + "/send", os.O_WRONLY)',
                 member=False)
    assert out["send"] == "EACCES", out


# ---------------------------------------------------------------------------
# the opener's credentials, not the writer's


def test_privilege_is_the_openers(ids, sec_fabric, open_mount):
    """A member opens send and hands the descriptor to root (SCM_RIGHTS):
    root writing an SMP to it is refused, as the kernel judges write() by
    the file's opener (f_cred); a GSI Get goes out."""
    m = open_mount("mad_group=" + GROUP)
    p = m.path(PORT)
    lid2 = lid_of(sec_fabric, "Hca2")
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        uid, gid = ids["uid"], ids["gid"]
        code = PRELUDE + """
import socket
s = socket.socket(fileno=int(sys.argv[2]))
fd = os.open(P + "/send", os.O_WRONLY)
socket.send_fds(s, [b"x"], [fd])
"""
        cp = subprocess.run(
            ["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid,
             "--groups=%d" % ids["mad_gid"], "--", "/usr/bin/python3", "-c", code,
             str(p), str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), cwd="/", env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        assert cp.returncode == 0, cp.stderr
        _, fds, _, _ = socket.recv_fds(mine, 16, 1)
    finally:
        mine.close()
        theirs.close()
    fd = fds[0]
    try:
        with pytest.raises(OSError) as ei:
            os.write(fd, b"class=smi-dr method=get attr=NodeInfo dr=0,1\n")
        assert ei.value.errno == errno.EPERM
        assert read_text(p / "last_error").startswith(
            "line 1: class smi-dr (0x81) " + SMI_REASON)
        line = b"class=perf method=get attr=PortCounters lid=%d data=00010000 tid=0xa0\n" % lid2
        assert os.write(fd, line) == len(line)
    finally:
        os.close(fd)
    rfd = os.open(p / "recv", os.O_RDONLY)
    try:
        ln = os.read(rfd, 65536).decode()
    finally:
        os.close(rfd)
    assert mt.parse_line(ln).tid == 0xa0 and symbol_errors(ln) == SYMBOL_ERRORS["Hca2"]


# ---------------------------------------------------------------------------
# fabric/: world-readable; sweep and interval_ms root's and the group's


FABRIC_CODE = r"""
F = P + "/../../../fabric"
out["sweep_read"] = attempt(lambda: read(F + "/sweep").count("\n"))
out["links"] = attempt(lambda: read(F + "/links").count("\n"))
out["metrics"] = attempt(lambda: len(read(F + "/metrics.prom")) > 0)
out["sweep"] = attempt(write, F + "/sweep", b"1\n")
out["interval"] = attempt(write, F + "/interval_ms", b"0\n")
out["topology"] = attempt(write, F + "/topology", b"x\n")
"""


def test_fabric_files_for_everyone_settings_for_the_group(ids, open_mount):
    m = open_mount("mad_group=" + GROUP)
    g = ids["mad_gid"]
    fdir = m.path("fabric")
    assert mode_of(fdir / "sweep") == (0o664, 0, g)
    assert mode_of(fdir / "interval_ms") == (0o664, 0, g)
    assert mode_of(fdir / "expected") == (0o664, 0, g)
    for name in ("topology", "links", "metrics.prom", "events", "events.log",
                 "last_error", "problems", "sm"):
        assert mode_of(fdir / name) == (0o444, 0, 0)
    lines = (fdir / "sweep").read_text().count("\n")    # root's read
    member = run_as(ids, m, FABRIC_CODE)
    assert member["sweep_read"] == lines and member["links"] == 5, member
    assert member["metrics"] is True
    assert (member["sweep"], member["interval"]) == (2, 2), member
    assert member["topology"] == "EACCES"
    other = run_as(ids, m, FABRIC_CODE, member=False)
    assert other["sweep_read"] == lines and other["links"] == 5, other
    assert (other["sweep"], other["interval"], other["topology"]) == \
        ("EACCES", "EACCES", "EACCES"), other


def test_fabric_settings_root_only_without_group(ids, open_mount):
    m = open_mount()
    fdir = m.path("fabric")
    assert mode_of(fdir / "sweep") == (0o644, 0, 0)
    out = run_as(ids, m, FABRIC_CODE)
    assert out["links"] == 5 and out["sweep"] == "EACCES" and \
        out["interval"] == "EACCES", out


# Acting on the fabric: root's, and -o fabric_admin_group='s alone.
ACTION_CODE = r'''
F = os.path.join(P, "..", "..", "..", "fabric")
port = os.path.join(F, "nodes", "0x0000000000200001", "ports", "1")   # Switch2's
out["sweep"] = len(read(os.path.join(F, "sweep")).splitlines())
out["admin_read"] = attempt(read, os.path.join(port, "admin"))
out["admin"] = attempt(write, os.path.join(port, "admin"), b"enable\n")
out["reset"] = attempt(write, os.path.join(port, "counters", "reset"), b"1\n")
out["local_reset"] = attempt(write, os.path.join(P, "counters", "reset"), b"1\n")
# Refused by the daemon (this host's route enters Switch2 by port 7; a bad
# word; a bad value), or by the kernel first (EACCES).
uplink = os.path.join(F, "nodes", "0x0000000000200001", "ports", "7", "admin")
out["busy"] = attempt(write, uplink, b"disable\n")
out["bad_word"] = attempt(write, os.path.join(port, "admin"), b"foo\n")
out["bad_local"] = attempt(write, os.path.join(P, "counters", "reset"), b"2\n")
'''


def action_lines(m):
    return [ln for ln in read_text(m.path("fabric", "events.log")).splitlines()
            if "event=action" in ln]


def test_actions_root_only_without_admin_group(ids, open_mount):
    m = open_mount("mad_group=" + GROUP, "mad_group_smi")
    port = m.path("fabric", "nodes", "0x0000000000200001", "ports", "1")
    read_text(m.path("fabric", "sweep"))
    assert mode_of(port / "admin") == (0o644, 0, 0)
    assert mode_of(port / "counters" / "reset") == (0o200, 0, 0)
    assert mode_of(m.path(PORT, "counters", "reset")) == (0o200, 0, 0)
    out = run_as(ids, m, ACTION_CODE)     # a member of mad_group, even with smi
    assert out["admin_read"].splitlines(True)[0] in ("5: LinkUp\n", "2: Polling\n"), out
    assert (out["admin"], out["reset"], out["local_reset"], out["busy"],
            out["bad_word"], out["bad_local"]) == ("EACCES",) * 6, out
    assert action_lines(m) == []
    assert "refused" not in m.log_text()      # the kernel's: never reaches us


def test_actions_for_the_admin_group(ids, open_mount):
    m = open_mount("fabric_admin_group=" + GROUP)
    g = ids["mad_gid"]
    port = m.path("fabric", "nodes", "0x0000000000200001", "ports", "1")
    read_text(m.path("fabric", "sweep"))
    assert mode_of(port / "admin") == (0o664, 0, g)
    assert mode_of(port / "counters" / "reset") == (0o220, 0, g)
    assert mode_of(m.path(PORT, "counters", "reset")) == (0o220, 0, g)
    # The MAD files stay root's: the admin group is not mad_group.
    assert mode_of(m.path(PORT, "send")) == (0o200, 0, 0)
    member = run_as(ids, m, ACTION_CODE)
    assert (member["admin"], member["reset"], member["local_reset"]) == (7, 2, 2), member
    other = run_as(ids, m, ACTION_CODE, member=False)
    assert (other["admin"], other["reset"], other["local_reset"]) == \
        ("EACCES", "EACCES", "EACCES"), other
    assert (member["busy"], member["bad_word"], member["bad_local"]) == \
        ("EBUSY", "EINVAL", "EINVAL"), member
    lines = action_lines(m)
    assert len(lines) == 3 and all(" uid=%d result=ok" % ids["uid"] in ln
                                   for ln in lines), lines
    # The refusals are no actions, but the journal has who tried what.
    log = m.log_text()
    u, sw2 = ids["uid"], "0x0000000000200001"
    for line in ("fabric: uid %d: admin of %s port 7 refused (EBUSY): admin: disable "
                 "of %s port 7 would cut this host's route to it" % (u, sw2, sw2),
                 "fabric: uid %d: admin of %s port 1 refused (EINVAL): admin: "
                 "expected disable, enable or reset" % (u, sw2),
                 "ibsim0/1: uid %d: counters reset refused (EINVAL): expected 1" % u):
        assert "warning: " + line in log, (line, log)
    other_uid = "uid %d:" % ids["other_uid"]
    assert other_uid not in log, log
