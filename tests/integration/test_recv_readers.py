"""Reading recv as its readers do: bash's `read` loops, the shell's line
readers (head, sed, awk, read, Python) taking one line each, seeks that
move nothing, one-byte and small-buffer reads, two processes on one shared
descriptor, O_NONBLOCK and poll; the header fields of received lines.
(docs/files.md, "Reading recv".)"""

import errno
import os
import re
import select
import subprocess
import sys
import time

import pytest

import madtext as mt
from checks import need
from diags import lid_of
from madfiles import Recv, open_umad, pdir, poll_in, stats, wait_queued, write_send


@pytest.mark.load
def test_bash_while_read_gets_every_line(fabric, mount):
    m = mount("Hca1")
    n = 40
    req = "".join("dr=0%s method=get attr=%s tid=%d\n" % (
        ",1" if i % 2 else "", "NodeInfo" if i % 3 else "PortInfo attrmod=1", 500 + i)
        for i in range(n))
    out = m.mountpoint.parent / "bash-lines.txt"
    script = ('i=0; while [ $i -lt %d ] && IFS= read -r line; do '
              'printf "%%s\\n" "$line"; i=$((i+1)); done < "$1" > "$2"' % n)
    bash = subprocess.Popen(["bash", "-c", script, "bash", str(pdir(m) / "recv"), str(out)])
    try:
        time.sleep(0.2)     # bash is reading (1 byte at a time) before data comes
        write_send(m, req)
        assert bash.wait(20) == 0
    finally:
        if bash.poll() is None:
            bash.kill()
            bash.wait()
    text = out.read_text()
    assert text.endswith("\n")
    lines = mt.parse_lines(text)
    assert len(lines) == n
    assert sorted(ln.tid for ln in lines) == list(range(500, 500 + n))
    for ln in lines:
        assert ln["method"] == "getresp" and ln.int("len") == 256
        assert len(ln["mad"]) == 512 and mt.mad_tid(ln.mad) == ln.tid
        i = ln.tid - 500
        assert ln["attr"] == ("NodeInfo" if i % 3 else "PortInfo")
        assert ln["dr"] == ("0,1" if i % 2 else "0")
    # Same content as a Python reader of the same requests would see.
    with Recv(m) as r:
        write_send(m, req)
        again = {ln.tid: ln for ln in r.lines(n)}
    for ln in lines:
        assert again[ln.tid].mad[:224] == ln.mad[:224]   # 224+: umad2sim junk
        # pkey_index: umad2sim leaves it undefined (see
        # test_received_header_fields_are_defined).
        assert again[ln.tid].with_keys(mad=None, pkey_index=None) == \
            ln.with_keys(mad=None, pkey_index=None)


# The shell's line readers, each taking one line per run: what a read
# hands a reader is gone from the channel, so it must be no more than the
# reader uses (docs/files.md, "Reading recv").  `sed -n 1p` and mawk
# without -W interactive read on to the end of the file, which a stream
# never has: they wait, as they do on a FIFO (documented there).
LINE_READERS = {
    "head": 'head -n1 "$1"',
    "sed": 'sed q "$1"',
    "sed-p": "sed -n '1{p;q}' \"$1\"",
    "awk": "awk -W interactive 'NR==1{print;exit}' \"$1\"",
    "read": 'IFS= read -r line < "$1" && printf "%s\\n" "$line"',
    "python": 'python3 -c "import sys; print(open(sys.argv[1]).readline(), end=\'\')" "$1"',
}


@pytest.mark.parametrize("tool", sorted(LINE_READERS))
def test_shell_line_readers_take_one_line_each(fabric, mount, tool):
    m = mount("Hca1")
    recv = pdir(m) / "recv"
    write_send(m, "".join("dr=0 method=get attr=NodeInfo tid=%d\n" % (700 + i)
                          for i in range(3)))
    wait_queued(m, 3)
    got = []
    for _ in range(3):
        p = subprocess.run(["bash", "-c", LINE_READERS[tool], "bash", str(recv)],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 0 and p.stderr == "", (tool, p.returncode, p.stderr)
        assert p.stdout.count("\n") == 1, (tool, p.stdout[:200])
        got.append(mt.parse_line(p.stdout.rstrip("\n")).tid)
    assert got == [700, 701, 702]
    s = stats(m)
    assert s["received"] == 3 and s["queued"] == 0 and s["dropped"] == 0, s
    # Nothing else was queued, and nothing is left or lost.
    fd = os.open(recv, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(BlockingIOError):
            os.read(fd, 4096)
    finally:
        os.close(fd)


def test_bash_read_loop_reads_in_chunks(fabric, mount, tmp_path):
    """`echo > send; read -r l < recv` reads a line in a few read() calls,
    not one per byte (bash reads in chunks from a file it can seek)."""
    need("strace")
    m = mount("Hca1")
    n = 100
    out, trace = tmp_path / "lines.txt", tmp_path / "strace.txt"
    script = ('for i in $(seq %d); do echo "dr=0 method=get attr=NodeInfo tid=$i" > "$1"/send; '
              'IFS= read -r l < "$1"/recv; printf "%%s\\n" "$l"; done > "$2"' % n)
    subprocess.run(["strace", "-f", "-c", "-e", "trace=read", "-o", str(trace),
                    "bash", "-c", script, "bash", str(pdir(m)), str(out)],
                   check=True, timeout=60)
    lines = mt.parse_lines(out.read_text())
    assert [ln.tid for ln in lines] == list(range(1, n + 1))
    assert all(ln.int("len") == 256 for ln in lines)
    calls = int(re.search(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?read$",
                          trace.read_text(), re.M).group(1))
    # ~970 bytes a line: one read() per byte would be ~97,000 calls.
    assert calls < 10 * n, trace.read_text()


def test_recv_seek_moves_nothing(fabric, mount):
    """recv can be seeked (line readers ask where they are), but reads go
    on where the channel stands; umad is a stream and cannot."""
    m = mount("Hca1")
    fd = os.open(pdir(m) / "recv", os.O_RDONLY)
    try:
        write_send(m, "dr=0 method=get attr=NodeInfo tid=1\ndr=0 method=get attr=NodeInfo tid=2\n")
        wait_queued(m, 2)
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0
        first = os.read(fd, 4096)
        assert mt.parse_line(first.decode().rstrip("\n")).tid == 1
        assert os.lseek(fd, 0, os.SEEK_CUR) == len(first)
        os.lseek(fd, 0, os.SEEK_SET)          # back to the start: moves nothing
        second = os.read(fd, 4096)
        assert mt.parse_line(second.decode().rstrip("\n")).tid == 2
        os.lseek(fd, 1 << 20, os.SEEK_SET)    # far ahead: moves nothing either
        assert stats(m)["queued"] == 0 and stats(m)["dropped"] == 0
    finally:
        os.close(fd)
    ufd = open_umad(m)
    try:
        with pytest.raises(OSError) as ei:
            os.lseek(ufd, 0, os.SEEK_CUR)
        assert ei.value.errno == errno.ESPIPE
    finally:
        os.close(ufd)


def test_recv_one_byte_reads_and_batches(fabric, mount):
    """A 1-byte buffer takes a line byte by byte and nothing of the next;
    a 64 KiB read takes every whole line queued."""
    m = mount("Hca1")
    fd = os.open(pdir(m) / "recv", os.O_RDONLY)
    try:
        write_send(m, "".join("dr=0 method=get attr=NodeInfo tid=%d\n" % (800 + i)
                              for i in range(4)))
        wait_queued(m, 4)
        line = b""
        while not line.endswith(b"\n"):
            b = os.read(fd, 1)
            assert len(b) == 1
            line += b
        assert mt.parse_line(line.decode().rstrip("\n")).tid == 800
        batch = os.read(fd, 1 << 16)
        assert [ln.tid for ln in mt.parse_lines(batch.decode())] == [801, 802, 803]
    finally:
        os.close(fd)


def test_two_processes_share_one_recv_fd(fabric, mount):
    """Two processes reading lines from one shared descriptor: each line
    goes to one of them, none twice, none lost."""
    m = mount("Hca1")
    n = 20
    fd = os.open(pdir(m) / "recv", os.O_RDONLY)
    reader = ("import os, sys\nfd = int(sys.argv[1])\nfor _ in range(%d):\n"
              "    sys.stdout.write(os.read(fd, 4096).decode())\n" % (n // 2))
    try:
        write_send(m, "".join("dr=0 method=get attr=NodeInfo tid=%d\n" % (900 + i)
                              for i in range(n)))
        wait_queued(m, n)
        procs = [subprocess.Popen([sys.executable, "-c", reader, str(fd)], pass_fds=(fd,),
                                  stdout=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=20)[0] for p in procs]
    finally:
        os.close(fd)
    assert all(p.returncode == 0 for p in procs)
    tids = [[ln.tid for ln in mt.parse_lines(o)] for o in outs]
    assert all(len(t) == n // 2 for t in tids), tids
    assert sorted(tids[0] + tids[1]) == list(range(900, 900 + n))


def test_recv_small_buffer_reads(fabric, mount):
    """A buffer smaller than a line gets the first part, the rest next."""
    m = mount("Hca1")
    fd = os.open(pdir(m) / "recv", os.O_RDONLY)
    try:
        write_send(m, "dr=0 method=get attr=NodeInfo tid=1\ndr=0 method=get attr=NodeInfo tid=2\n")
        wait_queued(m, 2)
        first = os.read(fd, 100)
        assert len(first) == 100 and first.startswith(b"tid=0x1 ")
        rest = b""
        while not rest.endswith(b"\n"):
            rest += os.read(fd, 97)
        line1 = mt.parse_line((first + rest).decode())
        assert line1.tid == 1
        big = os.read(fd, 1 << 16)
        assert big.count(b"\n") == 1 and big.endswith(b"\n")
        assert mt.parse_line(big.decode()).tid == 2
    finally:
        os.close(fd)


def test_recv_nonblock_and_poll(fabric, mount):
    m = mount("Hca1")
    fd = os.open(pdir(m) / "recv", os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(BlockingIOError):
            os.read(fd, 4096)
        assert poll_in(fd, 0) == 0
        assert poll_in(fd, 0, select.POLLIN | select.POLLOUT) == select.POLLOUT
        t0 = time.monotonic()
        write_send(m, "dr=0 method=get attr=NodeInfo tid=0x44\n")
        assert poll_in(fd, 3000) & select.POLLIN
        assert time.monotonic() - t0 < 1
        data = os.read(fd, 1 << 16)
        assert data.count(b"\n") == 1 and mt.parse_line(data.decode()).tid == 0x44
        assert poll_in(fd, 0) == 0
        with pytest.raises(BlockingIOError):
            os.read(fd, 4096)
    finally:
        os.close(fd)


def test_received_header_fields_are_defined(fabric, mount):
    """Received lines: keys in the documented order, no GRH keys (umad2sim
    says grh_present=0), sl=0.  NOT pkey_index: umad2sim returns frames from
    an uninitialised malloc() of its own and never sets pkey_index (nor
    gid_index ... flow_label), so under the simulator pkey_index= shows
    whatever was there (seen: 8192, 57153) -- like MAD bytes 224-255."""
    m = mount("Hca1")
    n = 60
    req = "".join("dr=0%s method=get attr=%s tid=%d\n" % (
        ",1,7" if i % 2 else "", "NodeInfo" if i % 3 else "NodeDescription", 900 + i)
        for i in range(n))
    slid = lid_of(fabric, "Hca1", "0,1")
    req += "class=perf method=get attr=PortCounters lid=%d data=00010000 tid=2000\n" % slid
    with Recv(m) as r:
        write_send(m, req)
        lines = r.lines(n + 1)
    bad = [(ln.tid, ln["sl"]) for ln in lines if ln["sl"] != "0"]
    assert not bad, "lines with undefined header fields: %s" % bad[:10]
    for ln in lines:
        assert not {"gid", "gid_index", "hop_limit", "traffic_class",
                    "flow_label", "path_bits"} & set(ln), ln.text
        assert ln.keys_in_order == [k for k in mt.LINE_KEY_ORDER if k in ln]
