"""fabric/expected: the expected topology.  Without -o fabric_expected= the
first complete sweep (compared with ibnetdiscover); `cp fabric/topology
fabric/expected` and ibnetdiscover's own output (-f and -g too) written and
read back with the same nodes and links; malformed texts refused with
EINVAL, by the write that carries a bad line or else by close(), the line
and column in last_error, the old expectation kept; the word clear back
to the next sweep, an open that writes nothing or a blank text changing
nothing; -o
fabric_expected=PATH loaded at mount, each write saved there atomically,
a malformed PATH refusing the mount; another fabric entirely."""

import errno
import grp
import os
import re
import subprocess

import pytest

import diags as tm
import simfabric as sim
from checks import expect_errno

LINK_SPEC = re.compile(r"^(?:\d+x|\?+)(?:[A-Z0-9]+|\?*)$")


def parse_topo(text):
    """A reading of ibnetdiscover's format, for texts known to be good:
    ({guid: (type, nports, desc)}, {frozenset of the two (guid, port)},
    {(guid, port): the link comment's 4xSDR, or None})."""
    nodes, names, refs, pending = {}, {}, [], None
    cur = None
    for line in text.splitlines():
        m = re.match(r"(switch|ca|rt)guid=0x([0-9a-f]+)", line)
        if m:
            pending = int(m.group(2), 16)
            continue
        m = re.match(r'(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"(?:\s*#\s*"(.*)")?', line)
        if m:
            guid = pending or int(m.group(3)[2:], 16)
            pending = None
            nodes[guid] = (m.group(1), int(m.group(2)), m.group(4) or "")
            names[m.group(3)] = guid
            cur = guid
            continue
        m = re.match(r'\[(\d+)\](?:\[ext \d+\])?(?:\([0-9a-f]+\))?\s*"([^"]+)"\[(\d+)\]', line)
        if m:
            after = line.rsplit('"', 1)[-1] if "#" in line else ""
            spec = [w for w in after.split() if LINK_SPEC.match(w)]
            refs.append((cur, int(m.group(1)), m.group(2), int(m.group(3)),
                         spec[0] if spec else None))
    links, specs = set(), {}
    for guid, port, name, peer_port, spec in refs:
        peer = (names[name], peer_port)
        links.add(frozenset(((guid, port), peer)))
        specs[(guid, port)] = spec
    return nodes, links, specs


def read(m, name):
    with open(m.path("fabric", name)) as f:
        return f.read()


def last_error(m):
    return read(m, "last_error")


def write_text(path, text, chunk=None, flags=os.O_WRONLY | os.O_TRUNC):
    """text written to path in writes of chunk bytes (one if None), then
    closed: errors of the writes and of close() raise."""
    data = text.encode() if isinstance(text, str) else text
    fd = os.open(path, flags)
    try:
        step = chunk or max(len(data), 1)
        for i in range(0, len(data), step):
            assert os.write(fd, data[i:i + step]) == len(data[i:i + step])
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)


def sweep_now(m):
    with open(m.path("fabric", "sweep"), "w") as f:
        f.write("1\n")
    return dict(line.split(" ", 1) if " " in line else (line, "")
                for line in read(m, "sweep").splitlines())


def ibnetdiscover(f, host="Hca1", *args):
    return f.run_tool(["ibnetdiscover"] + list(args), host).stdout


def foreign_fabric(switches=20, ports=36, cas_per_switch=30):
    """An ibnetdiscover text of a fabric that shares no GUID with the
    simulated ones: a line of switches (port 1 to the one before, port 2
    to the next), each with CAs on ports 3 and up, at 4xEDR."""
    sw = lambda i: 0xf000000000000000 + i                  # noqa: E731
    ca = lambda i, j: 0xe000000000000000 + i * 1000 + j     # noqa: E731
    out = ["# another fabric"]
    for i in range(switches):
        out += ["", "vendid=0x2c9", "devid=0xcf08", "sysimgguid=0x%x" % sw(i),
                "switchguid=0x%x(%x)" % (sw(i), sw(i)),
                'Switch\t%d "S-%016x"\t\t# "switch %d" base port 0 lid %d lmc 0'
                % (ports, sw(i), i, i + 1)]
        if i:
            out.append('[1]\t"S-%016x"[2]\t\t# "switch %d" lid %d 4xEDR'
                       % (sw(i - 1), i - 1, i))
        if i + 1 < switches:
            out.append('[2]\t"S-%016x"[1]\t\t# "switch %d" lid %d 4xEDR'
                       % (sw(i + 1), i + 1, i + 2))
        for j in range(cas_per_switch):
            out.append('[%d]\t"H-%016x"[1](%x) \t\t# "ca %d.%d" lid 0 4xEDR'
                       % (3 + j, ca(i, j), ca(i, j) + 1, i, j))
    for i in range(switches):
        for j in range(cas_per_switch):
            out += ["", "caguid=0x%x" % ca(i, j),
                    'Ca\t1 "H-%016x"\t\t# "ca %d.%d"' % (ca(i, j), i, j),
                    '[1](%x) \t"S-%016x"[%d]\t\t# lid 0 lmc 0 "switch %d" lid %d 4xEDR'
                    % (ca(i, j) + 1, sw(i), 3 + j, i, i + 1)]
    return "\n".join(out) + "\n"


def test_default_is_the_first_complete_sweep(make_fabric, mount):
    """Without the option: the first sweep's topology (equal to
    ibnetdiscover's nodes and links), kept when a cable is pulled later."""
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    st = os.stat(m.path("fabric", "expected"))
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o644, 0, 0)
    first = read(m, "expected")             # waits for the first sweep
    assert first == read(m, "topology")
    assert os.stat(m.path("fabric", "expected")).st_size == len(first)
    nodes, links, specs = parse_topo(first)
    peer_nodes, peer_links, peer_specs = parse_topo(ibnetdiscover(f))
    assert nodes == peer_nodes and links == peer_links and specs == peer_specs
    assert len(links) == 5 and set(specs.values()) == {"4xSDR"}
    f.command('Unlink "Hca2"[1]')
    assert sweep_now(m)["links"] == "4"
    assert len(parse_topo(read(m, "topology"))[1]) == 4
    assert read(m, "expected") == first


def test_cp_topology_round_trips(fabric, mount, tmp_path):
    m = mount("Hca1")
    topo = read(m, "topology")
    want = parse_topo(topo)
    for cmd in (["cp", str(m.path("fabric", "topology")), str(m.path("fabric", "expected"))],
                ["sh", "-c", 'cat "$1" > "$2"', "sh", str(m.path("fabric", "topology")),
                 str(m.path("fabric", "expected"))]):
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        assert cp.returncode == 0, cp
        assert parse_topo(read(m, "expected")) == want
    assert last_error(m) == ""
    # And out again: what it reads is taken back as it is.
    out = tmp_path / "saved.topo"
    subprocess.run(["cp", str(m.path("fabric", "expected")), str(out)], check=True)
    write_text(m.path("fabric", "expected"), out.read_text(), chunk=4096)
    assert parse_topo(read(m, "expected")) == want


@pytest.mark.parametrize("args", [(), ("-f",), ("-g",)])
def test_ibnetdiscover_output_is_taken(fabric, mount, args):
    """The tool's own text, in writes of 97 bytes: read back with its
    nodes (type, ports, description) and links."""
    m = mount("Hca1")
    text = ibnetdiscover(fabric, "Hca2", *args)
    write_text(m.path("fabric", "expected"), text, chunk=97)
    got = read(m, "expected")
    assert parse_topo(got) == parse_topo(text)
    assert "# Initiated from node 0000000000100002 port 0000000000100003\n" in got


def bad_at(text, old, new):
    """text with the first `old` replaced by `new`, and the line and column
    (from 1) where it starts."""
    i = text.index(old)
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return text[:i] + new + text[i + len(old):], line, col


def test_malformed_writes_keep_the_old(fabric, mount):
    m = mount("Hca1")
    old = read(m, "expected")
    path = m.path("fabric", "expected")
    good = ibnetdiscover(fabric)
    speed = "unknown link speed in '4xSDQ' (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR)"
    cases = [
        (bad_at(good, "4xSDR", "4xSDQ"), speed),
        (bad_at(good, '8 "S-0000000000200001"', '300 "S-0000000000200001"'),
         "expected the number of ports, 1 to 254"),
        # Switch one's port 7 to switch two's port 6, which switch two's
        # lines (before) leave free, while its port 7 goes to one's 7.
        (bad_at(good, '"S-0000000000200001"[7]', '"S-0000000000200001"[6]'),
         'port 7 is linked to "S-0000000000200001"[7] by that node\'s line'),
        (bad_at(good, '"H-0000000000100004"[1]', '"H-0000000000100009"[1]'),
         'no node is called "H-0000000000100009"'),
    ]
    for (text, line, col), why in cases:
        expect_errno(errno.EINVAL, write_text, path, text, 97)
        assert last_error(m) == "expected: line %d column %d: %s\n" % (line, col, why)
        assert read(m, "expected") == old
    # A bad line fails the write that carries it; what needs the whole
    # text (a peer a later line may name) fails the close.
    for ((text, line, col), _), at_write in zip(cases, (True, True, False, False)):
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        cut = len("\n".join(text.split("\n")[:line])) + 1      # to the bad line's end
        try:
            if at_write:
                assert os.write(fd, text[:cut - 1].encode()) == cut - 1
                expect_errno(errno.EINVAL, os.write, fd, b"\n")
            else:
                assert os.write(fd, text.encode()) == len(text.encode())
        finally:
            expect_errno(errno.EINVAL, os.close, fd)
        assert read(m, "expected") == old
    # Not text at all.
    expect_errno(errno.EINVAL, write_text, path, b"Ca 1 \"H-1\"\n\x00\x01")
    assert last_error(m) == "expected: line 2 column 1: a NUL byte\n"
    # Appending is refused at open; so is a write that skips ahead.
    expect_errno(errno.EINVAL, os.open, path, os.O_WRONLY | os.O_APPEND)
    assert last_error(m) == ("expected: appending is refused: write a whole "
                             "topology (>, not >>)\n")
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        expect_errno(errno.EINVAL, os.pwrite, fd, good.encode(), 10)
        # The open is spoilt: a later write, and the close, fail too.
        expect_errno(errno.EINVAL, os.write, fd, good.encode())
    finally:
        expect_errno(errno.EINVAL, os.close, fd)
    assert last_error(m) == ("expected: a write at offset 10: a text is written "
                             "whole, in order (0 bytes so far)\n")
    assert read(m, "expected") == old
    # A good text after all that is taken.
    write_text(path, good)
    assert parse_topo(read(m, "expected")) == parse_topo(good)


def test_too_long_a_text(fabric, mount):
    m = mount("Hca1")
    old = read(m, "expected")
    fd = os.open(m.path("fabric", "expected"), os.O_WRONLY | os.O_TRUNC)
    chunk = ("#" * 1023 + "\n").encode() * 1024            # 1 MiB of comments
    try:
        for _ in range(64):
            assert os.write(fd, chunk) == len(chunk)
        expect_errno(errno.EFBIG, os.write, fd, b"#\n")
    finally:
        expect_errno(errno.EFBIG, os.close, fd)
    assert last_error(m) == "expected: a text longer than 64 MiB\n"
    assert read(m, "expected") == old


def test_clear_means_the_next_sweep(fabric, mount):
    """`echo clear > expected` clears it: empty until the next complete
    sweep, which is the expectation then.  An open that writes nothing
    (`: > expected`, `truncate -s 0`, touch) changes nothing, nor does a
    blank text (`echo > expected`: refused at close, the reason in
    last_error)."""
    m = mount("Hca1")
    assert read(m, "topology")              # the first sweep is done
    path = m.path("fabric", "expected")
    foreign = foreign_fabric(2, 8, 2)
    write_text(path, foreign)
    for nothing in (": > \"$1\"", "truncate -s 0 \"$1\"", "touch \"$1\"",
                    "echo > \"$1\"", "printf '# only a comment\\n\\n' > \"$1\""):
        subprocess.run(["sh", "-c", nothing, "sh", str(path)], check=True)
        assert parse_topo(read(m, "expected")) == parse_topo(foreign), nothing
    assert last_error(m) == ("expected: a text without a node line: the expected "
                             "topology is kept (write the word clear to clear it)\n")
    expect_errno(errno.EINVAL, write_text, path, "\n")
    for clear in ("echo clear > \"$1\"", "printf '# why\\nclear' > \"$1\""):
        write_text(path, foreign)
        subprocess.run(["sh", "-c", clear, "sh", str(path)], check=True)
        assert read(m, "expected") == ""
        assert os.stat(path).st_size == 0
        sweep_now(m)
        assert read(m, "expected") == read(m, "topology") != ""


def test_option_loads_and_saves(fabric, mount, tmp_path):
    """-o fabric_expected=PATH: missing, the first sweep is the expectation
    and PATH is made at the first write; each accepted write replaces PATH
    by a rename (a new inode, nothing else left in its directory), a
    refused one leaves it; another mount loads it."""
    d = tmp_path / "etc"
    d.mkdir()
    path = d / "expected.topo"
    m = mount("Hca1", options=("fabric_expected=%s" % path,))
    assert read(m, "expected") == read(m, "topology")
    assert not path.exists()
    text = ibnetdiscover(fabric, "Hca2")
    write_text(m.path("fabric", "expected"), text, chunk=1000)
    assert path.read_text() == text
    st = path.stat()
    assert st.st_mode & 0o7777 == 0o644
    foreign = foreign_fabric(3, 8, 2)
    write_text(m.path("fabric", "expected"), foreign)
    assert path.read_text() == foreign and path.stat().st_ino != st.st_ino
    expect_errno(errno.EINVAL, write_text, m.path("fabric", "expected"), "junk\n")
    assert path.read_text() == foreign
    assert os.listdir(d) == ["expected.topo"]
    m2 = mount("Hca2", options=("fabric_expected=%s" % path,))
    assert parse_topo(read(m2, "expected")) == parse_topo(foreign)
    # Cleared, PATH holds the word; loaded, it is no expectation: the
    # first sweep then.  So is an empty file.
    write_text(m.path("fabric", "expected"), "clear\n")
    assert path.read_text() == "clear\n"
    m3 = mount("Hca3", options=("fabric_expected=%s" % path,))
    assert read(m3, "expected") == read(m3, "topology")
    path.write_text("")
    m4 = mount("Switch1", options=("fabric_expected=%s" % path,))
    assert read(m4, "expected") == read(m4, "topology")


def test_option_save_failure_changes_nothing(fabric, mount, tmp_path):
    """A write that cannot be saved to PATH (its directory gone) fails at
    close() with that errno and the reason, and is not taken."""
    d = tmp_path / "gone"
    d.mkdir()
    path = d / "expected.topo"
    m = mount("Hca1", options=("fabric_expected=%s" % path,))
    old = read(m, "expected")
    d.rmdir()
    expect_errno(errno.ENOENT, write_text, m.path("fabric", "expected"),
                 foreign_fabric(2, 8, 2))
    assert last_error(m) == ("expected: saving %s: No such file or directory\n"
                             % path)
    assert read(m, "expected") == old


def run_umadfs(opt, mnt):
    try:
        return subprocess.run([sim.umadfs_bin(), "-f", "-o", opt, str(mnt)],
                              capture_output=True, text=True, timeout=10)
    finally:
        if sim.is_mounted(mnt):
            subprocess.run(["fusermount3", "-uz", str(mnt)])


def test_option_malformed_refuses_the_mount(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    bad = tmp_path / "bad.topo"
    bad.write_text("# fine\nswitchguid=0x10\nSwitch 8 \"S-10\"\n[9] \"S-10\"[1]\n")
    for path, why in (
            (bad, "line 4 column 2: port 9: this node has ports 1 to 8"),
            (tmp_path, "not a regular file"),
            (tmp_path / "no" / "such", "its directory: No such file or directory"),
            (str(tmp_path) + "/", "expected the path of a file")):
        cp = run_umadfs("fabric_expected=%s" % path, mnt)
        assert cp.returncode == 2 and \
            "umadfs: fabric_expected=%s: %s\n" % (path, why) in cp.stderr, cp


def test_another_fabric_entirely(fabric, mount):
    """A topology that shares nothing with the fabric swept: taken, read
    back, and sweeps and their files go on."""
    m = mount("Hca1")
    text = foreign_fabric()
    write_text(m.path("fabric", "expected"), text)
    nodes, links, specs = parse_topo(read(m, "expected"))
    assert len(nodes) == 20 + 20 * 30 and len(links) == 19 + 20 * 30
    assert (nodes, links, specs) == parse_topo(text)
    assert set(specs.values()) == {"4xEDR"}
    kv = sweep_now(m)
    assert kv["ok"] == "1" and kv["nodes"] == "5"
    assert len(read(m, "topology")) > 0
    if os.path.exists(m.path("fabric", "problems")):
        read(m, "problems")


def test_group_may_write(fabric, mount):
    group = grp.getgrnam("daemon")
    m = mount("Hca1", options=("allow_other", "mad_group=daemon"))
    st = os.stat(m.path("fabric", "expected"))
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o664, 0, group.gr_gid)
