"""Bad input to the MAD files: bad send lines (errno, last_error, nothing
of the write sent and nothing queued lost), a line left unfinished at
close, bad umad frames, opens the wrong way round, bad settings
(docs/bad-input.md)."""

import errno
import os
import re
import select
import subprocess

import pytest

import madtext as mt
from madfiles import (Recv, last_error, open_umad, pdir, poll_in, read_text, stats,
                      wait_queued, write_send, write_text)


def _bad_text(m, data):
    with pytest.raises(OSError) as ei:
        write_send(m, data)
    return ei.value.errno, last_error(m)


BAD_LINES = [
    ("unknown key", "class=perf method=get lid=1 foo=1\n", errno.EINVAL,
     r"^line 1: unknown key 'foo' at column 29$"),
    ("bad hex", "class=perf method=get attr=PortCounters lid=1 data=abc\n",
     errno.EINVAL, r"^line 1: bad hex in data= at column \d+"),
    ("missing class", "method=get attr=PortCounters lid=1\n", errno.EINVAL,
     r"^line 1: class= missing"),
    ("missing method", "class=perf attr=PortCounters lid=1\n", errno.EINVAL,
     r"^line 1: method= missing"),
    ("missing lid", "class=perf method=get attr=PortCounters\n", errno.EINVAL,
     r"^line 1: lid= missing"),
    ("out of range", "class=perf method=get lid=1 sl=16\n", errno.EINVAL,
     r"^line 1: sl=16 out of range"),
    ("crlf", "dr=0 method=get attr=NodeInfo\r\n", errno.EINVAL,
     r"^line 1: carriage return at column 30"),
    ("binary junk", b"\x01\x02\xff\xfejunk\x00\n", errno.EINVAL,
     r"^line 1: invalid byte 0x01 at column 1"),
    ("second line bad", "dr=0 method=get attr=NodeInfo\nclass=perf method=get lid=1 foo=1\n",
     errno.EINVAL, r"^line 2: unknown key 'foo'"),
    ("empty write", "\n", errno.EINVAL, r"no MAD line"),
    ("only comments", "# nothing\n   \n", errno.EINVAL, r"no MAD line"),
    # docs/text-format.md: lines longer than 16384 bytes -> EMSGSIZE.
    ("line too long", "class=perf method=get lid=1 data=" + "0" * 16400 + "\n",
     errno.EMSGSIZE, r"^line 1: longer than 16384"),
    # docs/text-format.md: data= larger than the class carries -> EMSGSIZE.
    ("data too big", "dr=0 method=set attr=PortInfo data=" + "00" * 65 + "\n",
     errno.EMSGSIZE, r"data= is 65 bytes; class smi-dr carries at most 64"),
]


@pytest.mark.fuzzed
@pytest.mark.parametrize("name,data,want_errno,want_msg", BAD_LINES,
                         ids=[b[0] for b in BAD_LINES])
def test_bad_send_line(fabric, mount, name, data, want_errno, want_msg):
    m = mount("Hca1")
    with Recv(m) as r:
        # An answer already queued must survive the bad write.
        write_send(m, "dr=0 method=get attr=NodeInfo tid=0x99\n")
        wait_queued(m, 1)
        before = stats(m)
        err, msg = _bad_text(m, data)
        assert (errno.errorcode.get(err), msg) == (errno.errorcode[want_errno], msg)
        assert re.search(want_msg, msg), msg
        after = stats(m)
        assert after["sent"] == before["sent"], "a MAD of the refused write went out"
        assert after["errors"] == before["errors"] + 1
        ln = r.line()
        assert ln.tid == 0x99 and ln["method"] == "getresp"
        r.assert_empty(0.3)     # nothing of the bad write was sent
        # The port still works.
        write_send(m, "dr=0 method=get attr=NodeInfo tid=0x9a\n")
        assert r.line().tid == 0x9a


def test_unfinished_line_is_kept_for_next_write(fabric, mount):
    m = mount("Hca1")
    fd = os.open(pdir(m) / "send", os.O_WRONLY)
    with Recv(m) as r:
        try:
            assert os.write(fd, b"dr=0 method=get ") == 16    # no MAD yet
            r.assert_empty(0.2)
            assert os.write(fd, b"attr=NodeInfo tid=0x61\ndr=0 method=get") == 38
            assert r.line().tid == 0x61
            assert os.write(fd, b" attr=PortInfo attrmod=1 tid=0x62\n") == 34
            ln = r.line()
            assert ln.tid == 0x62 and ln["attr"] == "PortInfo"
            os.write(fd, b"dr=0 method=get attr=NodeInfo")   # left unfinished
        finally:
            os.close(fd)
        assert "unfinished line" in last_error(m)
        r.assert_empty(0.3)


def test_unfinished_line_reason_before_close_returns(fabric, mount):
    """The reason is in last_error once close(2) has returned (FLUSH, not
    RELEASE, which the kernel sends after), each of 200 times, another
    reason in between; from the shell too."""
    m = mount("Hca1")
    send, why = pdir(m) / "send", pdir(m) / "last_error"
    for i in range(200):
        with pytest.raises(OSError):
            write_text(send, "bogus\n")
        fd = os.open(send, os.O_WRONLY)
        os.write(fd, b"dr=0 method=get")
        os.close(fd)
        assert "closed with an unfinished line" in read_text(why), (i, read_text(why))
    script = ('for i in $(seq 50); do echo bogus > "$1"/send 2>/dev/null; '
              'printf "dr=0 method=get" > "$1"/send; cat "$1"/last_error; done')
    p = subprocess.run(["bash", "-c", script, "bash", str(pdir(m))],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 50
    assert all("closed with an unfinished line" in ln for ln in lines), \
        [ln for ln in lines if "unfinished" not in ln][:3]


def test_bad_umad_frames(fabric, mount):
    m = mount("Hca1")
    fd = open_umad(m)
    try:
        os.write(fd, mt.pack_umad(mt.dr_smp(0x11, tid=0x4242)))
        assert poll_in(fd, 3000) & select.POLLIN
        good = mt.pack_umad(mt.dr_smp(0x11, tid=5))
        cases = [
            ("too short", good[:64 + 23], errno.EINVAL, r"shorter"),
            ("header only", good[:64], errno.EINVAL, r"shorter"),
            ("too long for SMP", good + b"\0", errno.EMSGSIZE, r"more than one MAD"),
            ("over 64 KiB", mt.pack_umad(mt.gmp(0x03, 0x11) + b"\0" * 65536),
             errno.EMSGSIZE, r"longer than"),
        ]
        for name, frame, want, msg in cases:
            with pytest.raises(OSError) as ei:
                os.write(fd, frame)
            assert ei.value.errno == want, name
            # The reason is reported in the port's last_error, as for send.
            assert re.search(msg, last_error(m)), (name, last_error(m))
        # The queued answer is still there, and the fd still works.
        hdr, mad = mt.read_frame(fd)
        assert mt.mad_tid(mad) == 0x4242
        os.write(fd, good)
        assert mt.mad_tid(mt.read_frame(fd)[1]) == 5
    finally:
        os.close(fd)


def test_wrong_direction_opens(fabric, mount):
    m = mount("Hca1")
    p = pdir(m)
    for name, flags in (("recv", os.O_WRONLY), ("recv", os.O_RDWR),
                        ("send", os.O_RDONLY), ("send", os.O_RDWR)):
        with pytest.raises(OSError) as ei:
            os.close(os.open(p / name, flags))
        assert ei.value.errno == errno.EACCES, (name, flags)
    # An fd of the right kind used the wrong way: the VFS says EBADF.
    fd = os.open(p / "recv", os.O_RDONLY)
    try:
        with pytest.raises(OSError) as ei:
            os.write(fd, b"dr=0 method=get attr=NodeInfo\n")
        assert ei.value.errno == errno.EBADF
    finally:
        os.close(fd)
    fd = os.open(p / "send", os.O_WRONLY)
    try:
        with pytest.raises(OSError) as ei:
            os.read(fd, 100)
        assert ei.value.errno == errno.EBADF
    finally:
        os.close(fd)
    st = os.stat(p / "send").st_mode & 0o777, os.stat(p / "recv").st_mode & 0o777, \
        os.stat(p / "umad").st_mode & 0o777
    assert st == (0o200, 0o400, 0o600)
    # Nothing of this disturbed the port.
    with Recv(m) as r:
        write_send(m, "dr=0 method=get attr=NodeInfo tid=3\n")
        assert r.line().tid == 3


def test_bad_settings(fabric, mount):
    m = mount("Hca1")
    p = pdir(m)
    for name, val in (("timeout_ms", "-1\n"), ("timeout_ms", "abc\n"),
                      ("retries", "1000\n"), ("retries", "\n")):
        fd = os.open(p / name, os.O_WRONLY)
        try:
            with pytest.raises(OSError) as ei:
                os.write(fd, val.encode())
            assert ei.value.errno == errno.EINVAL
        finally:
            os.close(fd)
        assert name in last_error(m)
    assert read_text(p / "timeout_ms") == "1000\n"
    assert read_text(p / "retries") == "3\n"
