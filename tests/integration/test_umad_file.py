"""The binary umad file, written and read as the kernel's frames from
Python: an answer per frame on the fd that sent it (all 64 TID bits), short
buffers, O_NONBLOCK, poll/select/epoll readiness, stats, timeouts; four
processes of 1,000 requests each on their own fds, and a reader and a
writer thread sharing one fd."""

import errno
import os
import select
import selectors
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter

import pytest

import madtext as mt
from diags import tool
from madfiles import Recv, open_umad, pdir, poll_in, stats


HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = sys.executable


def test_umad_nodeinfo_frame(fabric, mount):
    m = mount("Hca1")
    fd = open_umad(m)
    try:
        tid = 0xfedcba9876543210     # all 64 bits must come back
        frame = mt.pack_umad(mt.dr_smp(0x11, path=(0, 1), tid=tid), timeout_ms=1000)
        assert os.write(fd, frame) == len(frame)
        hdr, mad = mt.read_frame(fd)
    finally:
        os.close(fd)
    assert hdr["status"] == 0 and hdr["length"] in (256, 320, 64 + 256), hdr
    assert len(mad) == 256
    assert hdr["lid"] == 0xffff and hdr["qpn"] == 0
    assert mt.mad_tid(mad) == tid
    h = mt.mad_header(mad)
    assert (h["class"], h["method"], h["attr"]) == (0x81, 0x81, 0x11)
    peer = mt.parse_diag(tool(fabric, "Hca1", "smpquery", "-D", "nodeinfo", "0,1").stdout)
    ours = mt.decode_nodeinfo(mad[64:104])
    assert ours == {k: peer[k] for k in ours}


def test_umad_short_buffer_keeps_frame(fabric, mount):
    m = mount("Hca1")
    fd = open_umad(m)
    try:
        os.write(fd, mt.pack_umad(mt.dr_smp(0x11, tid=0x1111)))
        assert poll_in(fd, 3000) & select.POLLIN
        for size in (10, 64, 64 + 255):
            with pytest.raises(OSError) as ei:
                os.read(fd, size)
            assert ei.value.errno == errno.EINVAL, size
        assert poll_in(fd, 0) & select.POLLIN, "frame gone after EINVAL"
        hdr, mad = mt.read_frame(fd, 4096)      # a bigger buffer: one frame
        assert mt.mad_tid(mad) == 0x1111 and hdr["status"] == 0
        assert not poll_in(fd, 200) & select.POLLIN
    finally:
        os.close(fd)


def test_umad_nonblock_and_readiness(fabric, mount):
    m = mount("Hca1")
    fd = open_umad(m, os.O_NONBLOCK)
    sel = selectors.DefaultSelector()
    try:
        with pytest.raises(BlockingIOError):
            os.read(fd, 320)
        assert poll_in(fd, 0) == 0
        assert poll_in(fd, 0, select.POLLIN | select.POLLOUT) == select.POLLOUT
        sel.register(fd, selectors.EVENT_READ)
        assert sel.select(timeout=0.2) == []
        r, w, x = select.select([fd], [fd], [], 0)
        assert r == [] and w == [fd]

        t0 = time.monotonic()
        os.write(fd, mt.pack_umad(mt.dr_smp(0x11, tid=0x2222)))
        events = sel.select(timeout=3)
        assert [(k.fd, e) for k, e in events] == [(fd, selectors.EVENT_READ)]
        assert time.monotonic() - t0 < 1
        assert poll_in(fd, 0) & select.POLLIN
        r, w, x = select.select([fd], [], [], 0)
        assert r == [fd]
        hdr, mad = mt.read_frame(fd)
        assert mt.mad_tid(mad) == 0x2222
        assert not poll_in(fd, 0) & select.POLLIN
        assert sel.select(timeout=0) == []
        with pytest.raises(BlockingIOError):
            os.read(fd, 320)
    finally:
        sel.close()
        os.close(fd)


def test_umad_answers_only_on_sending_fd(fabric, mount):
    m = mount("Hca1")
    fd1, fd2 = open_umad(m), open_umad(m)
    try:
        with Recv(m) as r:
            os.write(fd1, mt.pack_umad(mt.dr_smp(0x11, tid=0xa1)))
            os.write(fd2, mt.pack_umad(mt.dr_smp(0x15, attrmod=1, tid=0xa2)))
            os.write(fd1, mt.pack_umad(mt.dr_smp(0x10, tid=0xa3)))
            got1 = [mt.read_frame(fd1)[1] for _ in range(2)]
            got2 = [mt.read_frame(fd2)[1] for _ in range(1)]
            assert sorted(mt.mad_tid(x) for x in got1) == [0xa1, 0xa3]
            assert [mt.mad_tid(x) for x in got2] == [0xa2]
            assert mt.mad_header(got2[0])["attr"] == 0x15
            assert not poll_in(fd1, 300) & select.POLLIN
            assert not poll_in(fd2, 0) & select.POLLIN
            r.assert_empty(0)   # nothing leaks to the text queue either
    finally:
        os.close(fd1)
        os.close(fd2)


def test_umad_traffic_counts_in_stats(fabric, mount):
    """What goes through the port's umad counts in the port's stats, as
    what goes through send and recv does."""
    m = mount("Hca1")
    before = stats(m)
    fd = open_umad(m)
    try:
        for tid in (0xc1, 0xc2, 0xc3):
            os.write(fd, mt.pack_umad(mt.dr_smp(0x11, tid=tid)))
        assert sorted(mt.mad_tid(mt.read_frame(fd)[1]) for _ in range(3)) == \
            [0xc1, 0xc2, 0xc3]
    finally:
        os.close(fd)
    after = stats(m)
    assert after["sent"] - before["sent"] == 3, after
    assert after["received"] - before["received"] == 3, after


def test_umad_answer_for_closed_fd_is_dropped(fabric, mount):
    """Answers for an fd closed meanwhile go nowhere, and nothing breaks."""
    m = mount("Hca1")
    fd = open_umad(m)
    os.write(fd, mt.pack_umad(mt.dr_smp(0x11, path=(0, 1, 3), tid=1),
                              timeout_ms=100, retries=0))
    os.close(fd)
    time.sleep(0.3)
    fd = open_umad(m)
    try:
        assert not poll_in(fd, 0) & select.POLLIN
        os.write(fd, mt.pack_umad(mt.dr_smp(0x11, tid=2)))
        assert mt.mad_tid(mt.read_frame(fd)[1]) == 2
    finally:
        os.close(fd)


def test_umad_timeout_frame(fabric, mount):
    m = mount("Hca1")
    fd = open_umad(m)
    try:
        t0 = time.monotonic()
        os.write(fd, mt.pack_umad(mt.dr_smp(0x11, path=(0, 1, 3), tid=0x123456789),
                                  timeout_ms=80, retries=1))
        hdr, mad = mt.read_frame(fd)
        dt = time.monotonic() - t0
    finally:
        os.close(fd)
    assert hdr["status"] == errno.ETIMEDOUT
    assert mt.mad_tid(mad) == 0x123456789
    assert mt.mad_header(mad)["method"] == 0x01
    assert 0.15 <= dt <= 0.6, dt


WORKER = textwrap.dedent(r"""
    import errno, json, os, select, sys
    sys.path.insert(0, %(here)r)
    import madtext as mt
    path, idx, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    fd = os.open(path, os.O_RDWR)
    print("ready", flush=True)
    sys.stdin.readline()
    tids = [((idx + 1) << 56) | (0xabcd << 32) | (i * 2654435761 + idx) & 0xffffffff
            for i in range(count)]
    want_attr = {t: (0x11 if i %% 2 else 0x15) for i, t in enumerate(tids)}
    got, bad, eagain = [], [], 0
    def read_one():
        hdr, mad = mt.unpack_umad(os.read(fd, 320))
        t = mt.mad_tid(mad)
        got.append(t)
        h = mt.mad_header(mad)
        if hdr["status"] or h["method"] != 0x81 or h["attr"] != want_attr.get(t):
            bad.append((hex(t), hdr["status"], h["method"], h["attr"]))
    for i, t in enumerate(tids):
        frame = mt.pack_umad(mt.dr_smp(want_attr[t], attrmod=1 if want_attr[t] == 0x15 else 0,
                                       tid=t), timeout_ms=5000, retries=0)
        while True:
            try:
                os.write(fd, frame)
                break
            except OSError as e:
                if e.errno != errno.EAGAIN:
                    raise
                eagain += 1
                read_one()
    p = select.poll()
    p.register(fd, select.POLLIN)
    while len(got) < count:
        if not p.poll(10000):
            break
        read_one()
    extra = bool(p.poll(300))
    print(json.dumps({"sent": tids, "got": got, "bad": bad, "eagain": eagain,
                      "extra": extra}), flush=True)
""")


@pytest.mark.load
def test_four_processes_thousand_requests_each(fabric, mount):
    import json
    m = mount("Hca1")
    count = 1000
    script = WORKER % {"here": HERE}
    procs = []
    try:
        for idx in range(4):
            procs.append(subprocess.Popen(
                [PYTHON, "-c", script, str(pdir(m) / "umad"), str(idx), str(count)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        t0 = time.monotonic()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        results = []
        for p in procs:
            out, _ = p.communicate(timeout=45)
            assert p.returncode == 0
            results.append(json.loads(out))
        elapsed = time.monotonic() - t0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    all_sent = set()
    for idx, res in enumerate(results):
        sent, got = res["sent"], res["got"]
        assert len(set(sent)) == count
        all_sent |= set(sent)
        dup = [hex(t) for t, c in Counter(got).items() if c > 1]
        foreign = [hex(t) for t in set(got) - set(sent)]
        lost = len(set(sent) - set(got))
        assert not dup and not foreign and not lost and not res["extra"], \
            "process %d: %d lost, dup %s, foreign %s, extra %s" % (
                idx, lost, dup[:5], foreign[:5], res["extra"])
        assert not res["bad"], res["bad"][:5]
        assert len(got) == count
    assert len(all_sent) == 4 * count
    s = stats(m)
    print("4 x %d requests in %.2fs; stats %s; eagain %s" % (
        count, elapsed, s, [r["eagain"] for r in results]))


@pytest.mark.load
def test_reader_and_writer_threads_share_umad_fd(fabric, mount):
    m = mount("Hca1")
    fd = open_umad(m)
    n = 1000
    got, errors = [], []

    def reader():
        try:
            for _ in range(n):
                got.append(mt.mad_tid(mt.read_frame(fd)[1]))
        except Exception as e:      # noqa: BLE001 - reported below
            errors.append(e)

    def writer():
        try:
            for i in range(n):
                os.write(fd, mt.pack_umad(mt.dr_smp(0x11, tid=0x10000 + i),
                                          timeout_ms=5000))
        except Exception as e:      # noqa: BLE001
            errors.append(e)

    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    time.sleep(0.1)         # the reader is blocked first: the hard case
    wt = threading.Thread(target=writer, daemon=True)
    wt.start()
    wt.join(20)
    rt.join(20)
    try:
        assert not wt.is_alive(), "writer stuck: deadlock on the shared fd"
        assert not rt.is_alive(), "reader stuck after %d frames" % len(got)
        assert not errors, errors
        assert sorted(got) == [0x10000 + i for i in range(n)]
    finally:
        if not rt.is_alive():
            os.close(fd)
