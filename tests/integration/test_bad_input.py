"""Bad input that docs/bad-input.md lists and no other test file covers:
the errno each gets, the reason in last_error, and that the mount keeps
working.  The rest of the table is tested where the feature is (see the
"tested in" column of docs/bad-input.md).
"""

import errno
import os
import select
import subprocess

import pytest

import simfabric as sim
import madtext as mt
from checks import expect_errno
from madfiles import last_error, pdir, read_text, stats

LINE_MAX = 16384


def write_once(path, data, flags=os.O_WRONLY):
    fd = os.open(path, flags)
    try:
        return os.write(fd, data)
    finally:
        os.close(fd)


def open_close(path, flags):
    os.close(os.open(path, flags))


def read_frame(fd, timeout_ms=5000):
    p = select.poll()
    p.register(fd, select.POLLIN)
    assert p.poll(timeout_ms), "no frame on umad within %d ms" % timeout_ms
    return mt.read_frame(fd, 4096)


# ---------------------------------------------------------------------------
# send: the line length limit, empty writes


def test_send_line_length_limit(fabric, mount):
    """16384 bytes without the newline are accepted, 16385 are not; also
    when the over-long line is an unfinished tail (no newline yet)."""
    m = mount("Hca1")
    p = pdir(m)
    base = "dr=0 method=get attr=NodeInfo timeout=0 tid=0x5"
    line = base + " " * (LINE_MAX - len(base))
    s0 = stats(p)
    assert write_once(p / "send", (line + "\n").encode()) == LINE_MAX + 1
    assert stats(p)["sent"] == s0["sent"] + 1
    expect_errno(errno.EMSGSIZE, write_once, p / "send", (line + " \n").encode())
    assert last_error(p) == "line 1: longer than 16384 bytes"
    # The second line of a write, counted as such.
    expect_errno(errno.EMSGSIZE, write_once, p / "send",
                 (base + "\n" + line + " \n").encode())
    assert last_error(p) == "line 2: longer than 16384 bytes"
    # No newline at all: refused once the tail alone is over the limit.
    expect_errno(errno.EMSGSIZE, write_once, p / "send", b"x" * (LINE_MAX + 1))
    assert last_error(p) == "line 1: longer than 16384 bytes"
    assert stats(p)["sent"] == s0["sent"] + 1, "a refused write sent something"


def test_send_empty_write(fabric, mount):
    """write(fd, "", 0) never reaches the daemon: it returns 0 and sends
    nothing (a write of only "\\n" is EINVAL: test_madfiles_bad_input.py)."""
    m = mount("Hca1")
    p = pdir(m)
    s0 = stats(p)
    assert write_once(p / "send", b"") == 0
    s1 = stats(p)
    assert (s1["sent"], s1["errors"]) == (s0["sent"], s0["errors"])
    assert last_error(p) == ""


# ---------------------------------------------------------------------------
# umad: the exact reasons (src/umadframe.c), RMPP without Active


def test_umad_frame_reasons(fabric, mount):
    m = mount("Hca1")
    p = pdir(m)
    fd = os.open(p / "umad", os.O_RDWR)
    try:
        good = mt.pack_umad(mt.dr_smp(0x11, tid=5))
        sa = bytearray(mt.gmp(0x03, 0x11, method=0x12, version=2) + bytes(44))
        sa[26] = 0x04                           # RMPP flags: Last, not Active
        sa_frame = mt.pack_umad(bytes(sa), lid=1, qpn=1, qkey=0x80010000)
        cases = [
            (good[:87], errno.EINVAL, "frame of 87 bytes: shorter than the "
             "64-byte umad header and a MAD header"),
            (b"", None, None),
            (good + b"\0", errno.EMSGSIZE, "frame of 321 bytes: more than "
             "one MAD needs an RMPP class and RMPP Active"),
            (sa_frame, errno.EMSGSIZE, "frame of 364 bytes: more than one "
             "MAD needs an RMPP class and RMPP Active"),
            (good + bytes(65536 - 320 + 1), errno.EMSGSIZE,
             "frame of 65537 bytes: longer than 65536"),
        ]
        for frame, want, why in cases:
            if not frame:
                # A zero-length write is not passed to FUSE at all.
                assert os.write(fd, frame) == 0
                continue
            expect_errno(want, os.write, fd, frame)
            assert last_error(p) == why, (len(frame), last_error(p))
        # 88 bytes (umad header + MAD header) is a whole request: it is
        # sent zero-padded to one MAD and answered on this fd.  (A PMA
        # ClassPortInfo Get to our own LID: a DR SMP cut to 24 bytes has
        # DrSLID = DrDLID = 0, which ibsim drops without a timeout.)
        lid = int(read_text(p / "lid"), 16)
        short = mt.pack_umad(mt.gmp(0x04, 0x01, tid=0x88)[:24], lid=lid, qpn=1,
                             qkey=0x80010000, timeout_ms=500, retries=1)
        assert len(short) == 88
        assert os.write(fd, short) == 88
        hdr, mad = read_frame(fd)
        assert mt.mad_tid(mad) == 0x88 and hdr["status"] == 0, hdr
        assert mt.mad_header(mad)["method"] == 0x81, mad[:24].hex()
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# recv is a stream


def test_streams_cannot_seek(fabric, mount):
    """send and umad have no file position (recv has one that moves
    nothing: test_recv_readers.py::test_recv_seek_moves_nothing)."""
    m = mount("Hca1")
    for name, flags in (("umad", os.O_RDWR), ("send", os.O_WRONLY)):
        fd = os.open(pdir(m) / name, flags)
        try:
            expect_errno(errno.ESPIPE, os.lseek, fd, 0, os.SEEK_SET)
        finally:
            os.close(fd)


# ---------------------------------------------------------------------------
# the tree: nothing to create or remove outside agents/


def test_tree_is_read_only(fabric, mount):
    m = mount("Hca1")
    ca, p = m.path("ibsim0"), pdir(m)
    for d in (m.mountpoint, ca, ca / "ports", p, p / "pkeys"):
        expect_errno(errno.EACCES, os.mkdir, d / "new")
        expect_errno(errno.EACCES, open_close, d / "newfile",
                     os.O_WRONLY | os.O_CREAT)
    expect_errno(errno.EACCES, os.unlink, ca / "fw_ver")
    expect_errno(errno.EACCES, os.rename, ca / "fw_ver", ca / "fw")
    expect_errno(errno.EACCES, os.symlink, "fw_ver", ca / "link")
    expect_errno(errno.EACCES, os.link, ca / "fw_ver", ca / "hard")
    # Attribute files: no write open, no truncate, no chmod (root too).
    for f in (ca / "node_guid", p / "lid", p / "pkeys" / "0", p / "last_error",
              p / "stats"):
        expect_errno(errno.EACCES, open_close, f, os.O_WRONLY)
        expect_errno(errno.EACCES, open_close, f, os.O_RDWR)
        expect_errno(errno.EACCES, os.truncate, f, 0)
        expect_errno(errno.EPERM, os.chmod, f, 0o666)
    # Directories cannot be removed either (rmdir outside agents/).
    expect_errno(errno.EACCES, os.rmdir, p / "pkeys")
    expect_errno(errno.EACCES, os.rmdir, p / "agents")


def test_agents_mkdir_rmdir_misuse(fabric, mount):
    m = mount("Hca1")
    a = pdir(m) / "agents"
    expect_errno(errno.ENOENT, os.rmdir, a / "nosuch")
    expect_errno(errno.EINVAL, os.mkdir, a / ".hidden")
    expect_errno(errno.EINVAL, os.mkdir, a / ("n" * 64))
    os.mkdir(a / ("n" * 63))
    os.rmdir(a / ("n" * 63))
    os.mkdir(a / "c")
    try:
        expect_errno(errno.EEXIST, os.mkdir, a / "c")
        # A channel directory takes no subdirectories or new files.
        expect_errno(errno.EACCES, os.mkdir, a / "c" / "sub")
        expect_errno(errno.EACCES, open_close, a / "c" / "new",
                     os.O_WRONLY | os.O_CREAT)
        expect_errno(errno.ENOTDIR, os.rmdir, a / "c" / "send")
        expect_errno(errno.EACCES, os.unlink, a / "c" / "send")
        expect_errno(errno.ENOENT, open_close, a / "c" / "nosuch", os.O_RDONLY)
    finally:
        os.rmdir(a / "c")
    expect_errno(errno.ENOENT, os.rmdir, a / "c")
    expect_errno(errno.ENOENT, open_close, a / "c" / "send", os.O_WRONLY)


def test_unknown_files(fabric, mount):
    m = mount("Hca1")
    for path in (m.path("nosuchca"), m.path("ibsim0", "ports", "2"),
                 m.path("ibsim0", "ports", "1", "counters", "nosuch"),
                 m.path("ibsim0", "ports", "1", "pkeys", "99999")):
        expect_errno(errno.ENOENT, os.stat, path)
        expect_errno(errno.ENOENT, open_close, path, os.O_RDONLY)


def test_counters_without_lid(fresh_fabric, mount):
    """No SM has run: the port has no LID, so a counter (a PMA query to
    the port's own LID) cannot be read."""
    m = mount("Hca1", fabric=fresh_fabric)
    c = pdir(m) / "counters"
    assert "symbol_error" in os.listdir(c)
    for name in ("symbol_error", "port_xmit_data"):
        expect_errno(errno.ENETDOWN, open_close, c / name, os.O_RDONLY)
    assert read_text(pdir(m) / "lid") == "0x0\n"


# ---------------------------------------------------------------------------
# settings at their bounds


@pytest.mark.parametrize("name,ok,bad", [
    ("timeout_ms", ["0", "3600000", "0x10"], ["3600001", "-1", "1e3", "5 5",
                                              "1" * 40, ""]),
    ("retries", ["0", "100"], ["101", "-1", "three"]),
], ids=["timeout_ms", "retries"])
def test_setting_bounds(fabric, mount, name, ok, bad):
    m = mount("Hca1")
    f = pdir(m) / name
    for v in ok:
        assert write_once(f, (v + "\n").encode()) == len(v) + 1
        assert read_text(f) == "%d\n" % int(v, 0)
    for v in bad:
        expect_errno(errno.EINVAL, write_once, f, (v + "\n").encode())
        assert last_error(pdir(m)).startswith(name + ": "), last_error(pdir(m))
    assert read_text(f) == "%d\n" % int(ok[-1], 0)


def test_setting_number_grammar(fabric, mount):
    """Settings read numbers as every umadfs interface does (number.h):
    leading zeros are decimal, no sign."""
    m = mount("Hca1")
    f = pdir(m) / "retries"
    assert write_once(f, b"010\n") == 4
    assert read_text(f) == "10\n"
    for v in ("+5", " 5", "0x"):
        expect_errno(errno.EINVAL, write_once, f, (v + "\n").encode())
    assert read_text(f) == "10\n"


# ---------------------------------------------------------------------------
# the command line


def run_daemon(args, timeout=10):
    return subprocess.run([sim.umadfs_bin(), *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args,status,msg", [
    ([], 2, "no mount point given"),
    (["-f"], 2, "no mount point given"),
    (["-o", "attrs=bogus", "MNT"], 2, "attrs=bogus: expected auto, sysfs or smp"),
    (["-o", "attrs=", "MNT"], 2, "expected auto, sysfs or smp"),
    (["-o", "queue_len=1000001", "MNT"], 2, "queue_len=1000001: expected a number from 1 to 1000000"),
    (["-o", "queue_len=abc", "MNT"], 2, "queue_len=abc: expected a number from 1 to 1000000"),
    (["-o", "queue_len=-1", "MNT"], 2, "queue_len=-1: expected a number from 1 to 1000000"),
    (["-o", "queue_len=0", "MNT"], 2, "queue_len=0: expected a number from 1 to 1000000"),
    (["-o", "queue_len=4294967301", "MNT"], 2, "queue_len=4294967301: expected a number"),
    (["-o", "allow_other,mad_group=no-such-group-umadfs", "MNT"], 2,
     "umadfs: mad_group=no-such-group-umadfs: no such group"),
    (["-o", "allow_other,mad_group=12x", "MNT"], 2,
     "umadfs: mad_group=12x: expected a group name or a GID below 4294967295"),
    (["-o", "allow_other,mad_group=", "MNT"], 2, "umadfs: mad_group=: no such group"),
    (["-o", "mad_group=root", "MNT"], 2, "umadfs: mad_group=root needs allow_other"),
    (["-o", "allow_other,mad_group_smi", "MNT"], 2,
     "umadfs: mad_group_smi needs mad_group=GROUP"),
    (["-o", "fabric_traps=maybe", "MNT"], 2,
     "umadfs: fabric_traps=maybe: expected off or on"),
    (["-o", "fabric_routes_minimal=yes", "MNT"], 2,
     "umadfs: fabric_routes_minimal=yes: expected off or on"),
    (["-o", "fabric_light_sweep=500", "MNT"], 2,
     "umadfs: fabric_light_sweep=500: below 1000 ms (a light sweep runs every "
     "1000 ms); 0 turns light sweeps off"),
    (["-o", "fabric_light_sweep=soon", "MNT"], 2,
     "umadfs: fabric_light_sweep=soon: expected milliseconds from 0 to 86400000"),
    (["-o", "fabric_metrics=state+bogus", "MNT"], 2,
     "umadfs: fabric_metrics=state+bogus: 'bogus' is not one of sweep, problems, "
     "nodes, state, links, routes, routing, errors, xmit_wait, data, details, partitions, mcast, all "
     "(joined by +)"),
    (["-o", "fabric_metrics=", "MNT"], 2,
     "umadfs: fabric_metrics=: '' is not one of sweep, problems, nodes, state"),
    (["-o", "fabric_metrics=state,errors", "MNT"], 2,
     "umadfs: -o errors: a group of fabric_metrics=?  Join the groups with + "
     "(fabric_metrics=state+errors): a comma begins another mount option"),
    (["-o", "allow_other,fabric_admin_group=no-such-group-umadfs", "MNT"], 2,
     "umadfs: fabric_admin_group=no-such-group-umadfs: no such group"),
    (["-o", "fabric_admin_group=root", "MNT"], 2,
     "umadfs: fabric_admin_group= needs allow_other"),
], ids=["no-mountpoint", "only-f", "attrs-bogus", "attrs-empty",
        "queue_len-too-big", "queue_len-not-a-number", "queue_len-negative",
        "queue_len-zero", "queue_len-wraps", "mad_group-unknown",
        "mad_group-bad-number", "mad_group-empty", "mad_group-without-allow_other",
        "mad_group_smi-alone", "fabric_traps-bogus", "fabric_routes_minimal-bogus",
        "fabric_light_sweep-short",
        "fabric_light_sweep-bogus", "fabric_metrics-bogus", "fabric_metrics-empty",
        "fabric_metrics-comma", "fabric_admin_group-unknown",
        "fabric_admin_group-without-allow_other"])
def test_command_line_misuse(tmp_path, args, status, msg):
    """Refused before anything is scanned or mounted: no fabric needed."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    cp = run_daemon([str(mnt) if a == "MNT" else a for a in args])
    assert cp.returncode == status, cp.stderr
    assert msg in cp.stderr, cp.stderr
    assert not sim.is_mounted(mnt)


def test_command_line_unknown_option(tmp_path):
    """Unknown options are libfuse's: refused, but with status 1, after
    the CAs were scanned (fuse_session_new() is what rejects them)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    cp = run_daemon(["-f", "-o", "bogus_opt", str(mnt)])
    assert cp.returncode == 1, cp.stderr
    assert "unknown option(s): `-o bogus_opt'" in cp.stderr, cp.stderr
    assert not sim.is_mounted(mnt)


@pytest.mark.parametrize("option", ["fabric_thresholds", "fabric_expected"])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_option_file_not_regular(tmp_path, option, kind):
    """A file option naming a FIFO or a device is refused at once, not
    read: a FIFO's open would wait for a writer, and the mount with it."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    path = tmp_path / "fifo"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = "/dev/null"
    cp = run_daemon(["-f", "-o", "%s=%s" % (option, path), str(mnt)])
    assert cp.returncode == 2, cp.stderr
    assert "umadfs: %s=%s: not a regular file\n" % (option, path) in cp.stderr, cp.stderr
    assert not sim.is_mounted(mnt)


def test_queue_len_applies(fabric, mount):
    m = mount("Hca1", options=("queue_len=77",))
    assert stats(pdir(m))["queue_limit"] == 77
