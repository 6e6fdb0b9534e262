"""Attribute files of umadfs against ibstat/smpquery on the same simulated
port.  See README.md for the fixtures."""

import errno
import os
import shutil
import stat
import subprocess
import time

import pytest

import simfabric as sim

CA_ATTRS = ["node_type", "node_guid", "sys_image_guid", "fw_ver", "hw_rev",
            "hca_type", "ca_name", "num_ports", "board_id"]
PORT_ATTRS = ["state", "phys_state", "rate", "lid", "sm_lid", "lid_mask_count",
              "sm_sl", "cap_mask", "link_layer", "port_guid", "gid_prefix",
              "port_num", "ca_name"]

NODE_TYPE = {"CA": "1: CA", "Switch": "2: switch", "Router": "3: router"}
# ibstat's word (libibumad/ibstat table) -> kernel sysfs text
PORT_STATE = {"Down": "1: DOWN", "Initializing": "2: INIT", "Armed": "3: ARMED",
              "Active": "4: ACTIVE", "ActiveDefer": "5: ACTIVE_DEFER"}
PHYS_STATE = {"Sleep": "1: Sleep", "Polling": "2: Polling",
              "Disabled": "3: Disabled",
              "PortConfigurationTraining": "4: PortConfigurationTraining",
              "LinkUp": "5: LinkUp", "LinkErrorRecovery": "6: LinkErrorRecovery",
              "PhyTest": "7: Phy Test", "Phy Test": "7: Phy Test"}
# smpquery LinkSpeed(Ext)Active text -> (kernel rate*10 per lane, suffix).
# Current kernels (drivers/infiniband/core/sysfs.c rate_show) print " SDR"
# for SDR ("10 Gb/sec (4X SDR)"); very old kernels and umad2sim's fake
# sysfs print nothing there ("10 Gb/sec (4X)").  We follow the kernel.
SPEED = {"2.5 Gbps": (25, " SDR"), "5.0 Gbps": (50, " DDR"),
         "10.0 Gbps": (100, " QDR")}
SPEED_EXT = {"14.0625 Gbps": (140, " FDR"), "25.78125 Gbps": (250, " EDR"),
             "53.125 Gbps": (500, " HDR"), "106.25 Gbps": (1000, " NDR")}


def colon_guid(x):
    v = int(x, 16)
    return ":".join("%04x" % ((v >> s) & 0xffff) for s in (48, 32, 16, 0))


def kernel_rate(pi):
    """Kernel sysfs `rate` text from smpquery portinfo fields."""
    width = int(pi["LinkWidthActive"].rstrip("X"))
    ext = pi.get("LinkSpeedExtActive", "No Extended Speed")
    if ext in SPEED_EXT:
        per, suffix = SPEED_EXT[ext]
    else:
        per, suffix = SPEED[pi["LinkSpeedActive"]]
    r = per * width
    return "%d%s Gb/sec (%dX%s)" % (r // 10, ".5" if r % 10 else "", width, suffix)


def read(path):
    with open(path, "rb") as f:
        return f.read().decode()


def expected_tree(f, sim_host):
    """{relative path: expected content} for the one CA a client on sim_host
    sees, built from ibstat and smpquery."""
    ib = f.ibstat(sim_host)
    ca = ib["ca_name"]
    exp = {
        "node_type": NODE_TYPE[ib["kind"]],
        "node_guid": colon_guid(ib["Node GUID"]),
        "sys_image_guid": colon_guid(ib["System image GUID"]),
        "fw_ver": ib["Firmware version"],
        "hw_rev": ib["Hardware version"],
        "hca_type": ib.get("CA type", ib.get("Switch type")),
        # umad2sim's sysfs has no board_id: the CA type stands in.
        "board_id": ib.get("CA type", ib.get("Switch type")),
        "ca_name": ca,
        "num_ports": ib["Number of ports"],
    }
    for n, p in ib["ports"].items():
        pi = f.portinfo(sim_host, n)
        d = "ports/%d/" % n
        exp.update({
            d + "state": PORT_STATE[p["State"]],
            d + "phys_state": PHYS_STATE[p["Physical state"]],
            d + "rate": kernel_rate(pi),
            d + "lid": "0x%x" % int(p["Base lid"]),
            d + "sm_lid": "0x%x" % int(p["SM lid"]),
            d + "lid_mask_count": str(int(p["LMC"])),
            d + "sm_sl": str(int(pi["SMSL"])),
            d + "cap_mask": p["Capability mask"],
            d + "link_layer": p["Link layer"],
            d + "port_guid": "0x%016x" % int(p["Port GUID"], 16),
            d + "gid_prefix": "0x%016x" % int(pi["GidPrefix"], 16),
            d + "port_num": str(n),
            d + "ca_name": ca,
        })
        # ibstat's "Rate: 10" is the same number as the kernel text's
        assert exp[d + "rate"].split()[0] == p["Rate"], (exp[d + "rate"], p)
    return ib, {k: v + "\n" for k, v in exp.items()}


def compare_tree(m, f, sim_host):
    ib, exp = expected_tree(f, sim_host)
    cadir = m.path(ib["ca_name"])
    got = {}
    for rel in exp:
        try:
            got[rel] = read(cadir / rel)
        except OSError as e:
            got[rel] = "<%s>" % e
    diffs = {k: (got[k], exp[k]) for k in exp if got[k] != exp[k]}
    assert not diffs, "file: (umadfs, expected from ibstat/smpquery): %r" % diffs
    return ib


# ----------------------------------------------------------------------------

@pytest.mark.parametrize("sim_host", ["Hca1", "Switch1"])
def test_attrs_match_ibstat(fabric, mount, sim_host):
    m = mount(sim_host)
    ib = compare_tree(m, fabric, sim_host)
    assert os.listdir(m.mountpoint) == [ib["ca_name"], "fabric"]
    if sim_host.startswith("Switch"):
        assert list(ib["ports"]) == [0]


def test_listing_and_modes(fabric, mount):
    m = mount("Hca1")
    ib = fabric.ibstat("Hca1")
    cadir = m.path("ibsim0")
    assert sorted(os.listdir(m.mountpoint)) == ["fabric", "ibsim0"]
    names = set(os.listdir(cadir))
    assert set(CA_ATTRS) | {"ports"} <= names, names
    assert sorted(os.listdir(cadir / "ports")) == sorted(str(n) for n in ib["ports"])
    pdir = cadir / "ports" / "1"
    pnames = set(os.listdir(pdir))
    assert set(PORT_ATTRS) | {"pkeys"} <= pnames, pnames
    # `ls` agrees with listdir
    ls = subprocess.run(["ls", "-1", str(pdir)], capture_output=True,
                        text=True, timeout=10)
    assert ls.returncode == 0, ls.stderr
    assert set(ls.stdout.split()) == pnames

    for d in (m.mountpoint, cadir, cadir / "ports", pdir, pdir / "pkeys"):
        st = os.stat(d)
        assert stat.S_ISDIR(st.st_mode), d
        if d != m.mountpoint:
            assert stat.S_IMODE(st.st_mode) == 0o555, (d, oct(st.st_mode))
    files = [cadir / a for a in CA_ATTRS] + [pdir / a for a in PORT_ATTRS] \
        + [pdir / "pkeys" / "0"]
    for p in files:
        st = os.stat(p)
        assert stat.S_ISREG(st.st_mode), p
        assert stat.S_IMODE(st.st_mode) == 0o444, (p, oct(st.st_mode))
        data = open(p, "rb").read()
        assert data.endswith(b"\n") and data.count(b"\n") == 1, (p, data)
        assert st.st_size in (0, len(data)), (p, st.st_size, data)
        # a second open gives the same complete content, also byte by byte
        fd = os.open(p, os.O_RDONLY)
        try:
            small = b""
            while True:
                b = os.read(fd, 1)
                if not b:
                    break
                small += b
                assert len(small) <= 4096, p
        finally:
            os.close(fd)
        assert small == data, (p, small, data)
        # pread at an offset
        fd = os.open(p, os.O_RDONLY)
        try:
            assert os.pread(fd, 100, 2) == data[2:], p
            assert os.pread(fd, 100, len(data) + 10) == b"", p
        finally:
            os.close(fd)

    # directories are not files
    with pytest.raises(IsADirectoryError):
        open(pdir, "rb").read()
    with pytest.raises(FileNotFoundError):
        os.stat(pdir / "no_such_attr")
    with pytest.raises(FileNotFoundError):
        os.stat(cadir / "ports" / "77")


def test_shell_tools(fabric, mount):
    m = mount("Hca1")
    pdir = m.path("ibsim0", "ports", "1")
    state = read(pdir / "state")

    def sh(*argv):
        cp = subprocess.run(list(map(str, argv)), capture_output=True,
                            timeout=10)
        return cp.returncode, cp.stdout

    assert sh("cat", pdir / "state") == (0, state.encode())
    assert sh("head", "-c", "3", pdir / "state") == (0, state.encode()[:3])
    rc, out = sh("wc", "-c", pdir / "state")
    assert rc == 0 and int(out.split()[0]) == len(state.encode())
    rc, out = sh("grep", "-c", "ACTIVE", pdir / "state")
    assert (rc, out) == (0, b"1\n"), state
    rc, out = sh("grep", "-x", "0x[0-9a-f]*", pdir / "lid")
    assert rc == 0, out
    rc, out = sh("cat", m.path("ibsim0", "node_guid"), m.path("ibsim0", "fw_ver"))
    assert rc == 0 and out.count(b"\n") == 2
    rc, out = sh("find", m.mountpoint, "-type", "f")
    assert rc == 0
    found = {os.path.relpath(p.decode(), m.path("ibsim0")) for p in out.split()}
    want = set(CA_ATTRS) | {"ports/1/" + a for a in PORT_ATTRS} | {"ports/1/pkeys/0"}
    assert want <= found, want - found
    rc, out = sh("find", m.mountpoint, "-type", "d")
    assert rc == 0
    dirs = {os.path.relpath(p.decode(), m.mountpoint) for p in out.split()}
    assert {".", "ibsim0", "ibsim0/ports", "ibsim0/ports/1",
            "ibsim0/ports/1/pkeys"} <= dirs, dirs


PERMISSION_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.EBADF,
                     errno.EINVAL, errno.ENOTSUP}


def test_writes_fail(fabric, mount):
    m = mount("Hca1")
    targets = [m.path("ibsim0", "node_guid"), m.path("ibsim0", "ports", "1", "lid"),
               m.path("ibsim0", "ports", "1", "pkeys", "0")]
    for p in targets:
        before = read(p)
        for flags in (os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC,
                      os.O_WRONLY | os.O_APPEND):
            with pytest.raises(OSError) as ei:
                fd = os.open(p, flags)
                try:
                    os.write(fd, b"0x1234\n")
                finally:
                    os.close(fd)
            assert ei.value.errno in PERMISSION_ERRNOS, (p, flags, ei.value)
            assert read(p) == before, (p, flags)
        with pytest.raises(OSError):
            os.truncate(p, 0)
        with pytest.raises(OSError):
            os.chmod(p, 0o666)
        assert read(p) == before
    with pytest.raises(OSError):
        open(m.path("ibsim0", "new_file"), "w").close()
    with pytest.raises(OSError):
        os.mkdir(m.path("ibsim0", "newdir"))
    with pytest.raises(OSError):
        os.unlink(m.path("ibsim0", "fw_ver"))
    assert "fw_ver" in os.listdir(m.path("ibsim0"))


@pytest.mark.parametrize("sim_host,port", [("Hca1", 1), ("Switch1", 0)])
def test_pkeys(fabric, mount, sim_host, port):
    m = mount(sim_host)
    table = fabric.pkeys(sim_host, port)
    assert table and table[0] == 0xffff
    pk = m.path("ibsim0", "ports", str(port), "pkeys")
    names = os.listdir(pk)
    assert "0" in names
    assert read(pk / "0") == "0xffff\n"
    idx = sorted(int(n) for n in names)
    assert idx == list(range(len(idx))), idx     # 0..n-1, no gaps
    for i in idx:
        if i < len(table):
            assert read(pk / str(i)) == "0x%04x\n" % table[i], i


def smp_guids(f, sim_host):
    """GUIDInfo as `smpquery -D GI 0` prints it: (the GUIDs, its capacity)."""
    out = f.run_tool(["smpquery", "-D", "GI", "0"], sim_host).stdout
    guids, cap = [], None
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].endswith(":") and words[0][:-1].isdigit():
            assert int(words[0][:-1]) == len(guids), line
            guids += [int(w, 16) for w in words[1:]]
        elif "guids capacity" in line:
            cap = int(words[0])
    return guids, cap


def kernel_gid(prefix, guid):
    """The kernel's gids/N line ("%pI6"); an unset GUID is the zero GID."""
    v = (prefix << 64 | guid) if guid else 0
    return ":".join("%04x" % ((v >> s) & 0xffff) for s in range(112, -16, -16)) + "\n"


@pytest.mark.parametrize("sim_host,port", [("Hca1", 1), ("Switch1", 0)])
def test_gids(fabric, mount, sim_host, port):
    """gids/N: PortInfo's GidPrefix and GUIDInfo's GUID N, as many as its
    GUIDCap, equal to smpquery's portinfo and GUIDInfo."""
    m = mount(sim_host)
    guids, cap = smp_guids(fabric, sim_host)
    pi = fabric.portinfo(sim_host, port)
    prefix = int(pi["GidPrefix"], 16)
    assert cap == int(pi["GuidCap"]) and len(guids) >= cap, (cap, pi["GuidCap"])
    gd = m.path("ibsim0", "ports", str(port), "gids")
    assert stat.S_IMODE(os.stat(gd).st_mode) == 0o555
    names = os.listdir(gd)
    assert sorted(int(n) for n in names) == list(range(cap)), names
    got = {i: read(gd / str(i)) for i in range(cap)}
    exp = {i: kernel_gid(prefix, guids[i]) for i in range(cap)}
    assert got == exp
    # GID 0 is the port's own: its GUID is port_guid's
    assert guids[0] == int(read(m.path("ibsim0", "ports", str(port), "port_guid")), 16)
    assert got[0].startswith("fe80:0000:0000:0000:"), got[0]
    with pytest.raises(FileNotFoundError):
        os.stat(gd / str(cap))


def _read_until(path, want, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        got = read(path)
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def test_live_values(fresh_fabric, mount):
    """state/lid follow the fabric without remounting.

    Note: umad2sim writes its fake sysfs ONCE, when the client starts, so a
    daemon that reads state/lid through umad_get_port() sees the values of
    its start time under the simulator; live values need a PortInfo query
    (a real kernel's sysfs is live)."""
    f = fresh_fabric
    m = mount("Hca2", fabric=f)
    pdir = m.path("ibsim0", "ports", "1")
    assert read(pdir / "state") == "2: INIT\n"
    assert read(pdir / "lid") == "0x0\n"

    f.start_opensm("Hca1")
    ib = f.wait_active("Hca2", timeout=20)
    lid = int(ib["ports"][1]["Base lid"])
    sm_lid = int(ib["ports"][1]["SM lid"])
    assert lid != 0
    # the daemon may cache for a short while: allow up to 5 s
    assert _read_until(pdir / "state", "4: ACTIVE\n", 5) == "4: ACTIVE\n", \
        "state not live (umad2sim sysfs snapshot?)"
    assert read(pdir / "lid") == "0x%x\n" % lid
    assert read(pdir / "sm_lid") == "0x%x\n" % sm_lid

    # opensm's next sweep (10 s) would put the LID back: stop it first
    f.stop_opensm("Hca1")
    new = 0x123
    reply = f.command('Baselid "Hca2"[1] 0x%x' % new)
    assert "bad" not in reply and "can't" not in reply, reply
    assert f.ibstat("Hca2")["ports"][1]["Base lid"] == str(new)
    assert _read_until(pdir / "lid", "0x%x\n" % new, 5) == "0x%x\n" % new


def test_live_values_switch(fresh_fabric, mount):
    f = fresh_fabric
    f.start_opensm("Hca1")
    f.wait_active("Hca2", timeout=20)
    m = mount("Switch2", fabric=f)
    lid = int(f.ibstat("Switch2")["ports"][0]["Base lid"])
    p = m.path("ibsim0", "ports", "0", "lid")
    assert read(p) == "0x%x\n" % lid
    f.stop_opensm("Hca1")
    reply = f.command('Baselid "Switch2"[0] 0x77')
    assert not reply, reply
    assert f.ibstat("Switch2")["ports"][0]["Base lid"] == str(0x77)
    assert _read_until(p, "0x77\n", 5) == "0x77\n"


def test_dual_port_hca(make_fabric, mount):
    f = make_fabric("dual-port-hca.net")
    f.start_opensm("Hca2")
    ib = f.wait_active("DualHca", timeout=20)
    m = mount("DualHca", fabric=f)
    # umad2sim presents only the node's first port: the tree must show
    # exactly the ports ibstat shows.
    assert sorted(os.listdir(m.path("ibsim0", "ports"))) == \
        sorted(str(n) for n in ib["ports"])
    compare_tree(m, f, "DualHca")


def test_two_mounts_same_fabric(fabric, mount):
    a = mount("Hca1")
    b = mount("Hca2")
    ga = read(a.path("ibsim0", "ports", "1", "port_guid"))
    gb = read(b.path("ibsim0", "ports", "1", "port_guid"))
    assert ga != gb
    assert ga == "0x%016x\n" % int(fabric.ibstat("Hca1")["ports"][1]["Port GUID"], 16)
    assert gb == "0x%016x\n" % int(fabric.ibstat("Hca2")["ports"][1]["Port GUID"], 16)


def test_unmount_with_sigterm(fabric, tmp_path):
    """SIGTERM unmounts cleanly and the daemon exits 0."""
    m = sim.Mount(fabric, "Hca1", tmp_path / "mnt", workdir=tmp_path)
    m.start()
    try:
        assert read(m.path("ibsim0", "ca_name")) == "ibsim0\n"
        rc = m.sigterm(10)
        mounted = sim.is_mounted(m.mountpoint)
    finally:
        m.unmount()
    assert rc == 0, (rc, m.log_text())
    assert not mounted, "SIGTERM left the mount in place"
    assert not [p for p in m.problems() if "log" in p], m.log_text()


# The MAD files and channel directories are streams, not values: a copy of
# the tree leaves them out (recv would wait for a MAD).
# Left out of a copy (files.md): streams, and counters/reset, which has
# no read bit (its open for reading fails, root's too).
NOT_VALUES = {"send", "recv", "umad", "agents", "rq", "reset"}
# Counters the daemon's own queries move (each read of a counter sends
# PerfMgt MADs through the port): a copy shows a value between two reads.
MOVING = {"port_xmit_data", "port_rcv_data", "port_xmit_packets",
          "port_rcv_packets", "unicast_xmit_packets", "unicast_rcv_packets"}


def value_files(top):
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in NOT_VALUES]
        for name in filenames:
            if name not in NOT_VALUES:
                p = os.path.join(dirpath, name)
                if os.stat(p).st_mode & stat.S_IRUSR:
                    yield os.path.relpath(p, top)


def check_copy(src, dst, rels, how):
    for rel in rels:
        got = open(os.path.join(dst, rel)).read()
        before = open(os.path.join(src, rel)).read()
        assert got or not before, f"{how}: {rel} copied empty"
        if os.path.basename(rel) in MOVING:
            assert got.endswith("\n") and got[:-1].isdigit(), (how, rel, got)
            continue
        assert got == before, (how, rel, got, before)


def test_copies_get_every_value(fabric, mount, tmp_path):
    """shutil.copyfile (sendfile), tar and cp -r copy what cat reads,
    counters and node_desc included (their value comes from a MAD)."""
    m = mount("Hca1")
    ca = m.path("ibsim0")
    rels = sorted(value_files(ca))
    assert "node_desc" in rels and "ports/1/counters/symbol_error" in rels
    for rel in rels:
        assert os.stat(os.path.join(ca, rel)).st_size == \
            len(open(os.path.join(ca, rel), "rb").read()) or \
            os.path.basename(rel) in MOVING, rel

    py = tmp_path / "py"
    for rel in rels:
        (py / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(ca, rel), py / rel)
    check_copy(ca, py, rels, "shutil.copyfile")

    tarred = tmp_path / "tar"
    tarred.mkdir()
    excl = [f"--exclude={n}" for n in NOT_VALUES]
    tar = subprocess.run(["tar", "-c", "-f", "-", "-C", str(ca), *excl, "."],
                         capture_output=True, timeout=60)
    assert tar.returncode == 0, tar.stderr
    subprocess.run(["tar", "-x", "-f", "-", "-C", str(tarred)],
                   input=tar.stdout, check=True, timeout=60)
    check_copy(ca, tarred, rels, "tar")

    cp = tmp_path / "cp"
    cp.mkdir()
    for sub in ("ports/1/counters", "ports/1/pkeys"):
        done = subprocess.run(["cp", "-r", os.path.join(ca, sub), cp / os.path.basename(sub)],
                              capture_output=True, text=True, timeout=60)
        # Every value copied; the write-only counters/reset refused alone.
        assert (done.returncode, done.stderr) == (0, "") if sub.endswith("pkeys") else \
            (done.returncode == 1 and done.stderr.count("\n") == 1 and
             "counters/reset' for reading: Permission denied" in done.stderr), done
    copied = [rel[len("ports/1/"):] for rel in rels
              if rel.startswith(("ports/1/counters/", "ports/1/pkeys/"))]
    assert len(copied) > 10
    check_copy(os.path.join(ca, "ports/1"), cp, copied, "cp -r")
