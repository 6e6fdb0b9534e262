"""Is the routing any good (issue 33): fabric/routing's hop histograms and
DLIDs per switch port, and problem=credit_loop, against ibdmchk run on
opensm's own dump of the same fabric (opensm-subnet.lst, opensm.fdbs,
opensm.mcfdbs): the ring of five switches under opensm's minhop routing
has a credit loop on the ports ibdmchk names; a fat tree routed by updn
has none; an LFT entry set through the mount that closes a cycle raises
one, put back clears it."""

import os
import re
import subprocess
import time

import diags as tm
import madfiles as mf
from checks import need

sweep, problems = tm.sweep, tm.problems


def opensm_dumping(f, host, tmp_path, engine=None):
    """opensm on host, writing its dump files (log_flags 0x43) into a
    directory of the test's own (-> that directory)."""
    d = tmp_path / ("osm-dump-%s" % host)
    d.mkdir()
    conf = d / "opensm.conf"
    tm.tool(f, host, "opensm", "-c", str(conf), check=False)
    txt = conf.read_text()
    txt = re.sub(r"^dump_files_dir .*$", "dump_files_dir %s" % d, txt, flags=re.M)
    txt = re.sub(r"^log_flags .*$", "log_flags 0x43", txt, flags=re.M)
    if engine:
        txt = re.sub(r"^routing_engine .*$", "routing_engine %s" % engine, txt, flags=re.M)
    conf.write_text(txt)
    f.start_opensm(host, ["-F", str(conf)])
    return d


def ibdmchk(d):
    """ibdmchk on opensm's dump in d -> {"min": {hops: pairs}, "lft": ...,
    "dlids": {dlids: ports}, "ports": {(guid, port): dlids}, "loop": the
    ports [(guid, port)] of the cycle it found, or None}."""
    out = subprocess.run(["ibdmchk", "-s", str(d / "opensm-subnet.lst"), "-f",
                          str(d / "opensm.fdbs"), "-m", str(d / "opensm.mcfdbs")],
                         cwd=d, capture_output=True, text=True, timeout=60).stdout
    res = {"text": out}
    for key, title in (("min", "MIN HOP HISTOGRAM"), ("lft", "LFT ROUTE HOP HISTOGRAM"),
                       ("dlids", "NUM DLIDS HISTOGRAM")):
        part = out.split(title, 1)[1].split("\n", 1)[1].split("-----", 1)[0]
        res[key] = {int(a): int(b) for a, b in re.findall(r"^\s*(\d+)\s+(\d+)\s*$", part, re.M)}
    detail = open("/var/cache/ibutils/ibdmchk.sw_out_port_num_dlids").read()
    res["ports"] = {(int(g, 16), int(p)): int(n) for n, g, p in
                    re.findall(r"^\s*(\d+) S([0-9a-fA-F]{16})/U1/P(\d+)", detail, re.M)}
    loop = re.search(r"Found credit loop on: (\S+) VL: (\d+)\n((?:  - BT .*\n)*)", out)
    res["loop"] = None
    if loop:
        names = [loop.group(1)] + re.findall(r"BT credit loop through: (\S+) VL", loop.group(3))
        ports = [(int(g, 16), int(p)) for g, p in
                 (re.match(r"S([0-9a-fA-F]{16})/U1/P(\d+)$", n).groups()
                  for n in names if n.startswith("S"))]
        res["loop"] = set(ports)
    assert ("-E- credit loops in routing" in out) == bool(loop), out
    return res


def routing(m):
    """fabric/routing -> {key: [values...]} (a key per line, repeated)."""
    out = {}
    for ln in open(m.path("fabric", "routing")).read().splitlines():
        k, _, v = ln.partition(" ")
        out.setdefault(k, []).append(v)
    return out


def hist(r, key):
    return {int(a): int(b) for a, b in (v.split() for v in r.get(key, []))}


def cycles(r):
    """fabric/routing's credit_loop lines -> [set of (guid, port)]."""
    out = []
    for v in r.get("credit_loop", []):
        cyc = re.search(r"cycle=(\S+)", v).group(1).split(",")
        out.append({(int(g, 16), int(p)) for g, p in (c.split("/") for c in cyc)})
    return out


def settled(f, m, d, timeout=40):
    """Sweeps until opensm's dump and fabric/routing both stand still over
    a sweep (under updn a spine has no route to another spine's LID: the
    view then reads every table each sweep): -> ibdmchk's verdict."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        sweep(m)
        dump = (d / "opensm.fdbs").read_text() if (d / "opensm.fdbs").exists() else None
        now = (dump, open(m.path("fabric", "routing")).read())
        if dump and now == last:
            return ibdmchk(d)
        last = now
        assert time.monotonic() < deadline, now
        time.sleep(1)


def check_against(r, chk):
    assert hist(r, "hops_lft") == chk["lft"], (r, chk["text"])
    assert hist(r, "hops_min") == chk["min"], (r, chk["text"])
    assert hist(r, "dlids") == chk["dlids"], (r, chk["text"])


def test_ring_credit_loop(tmp_path, make_fabric, mount):
    """The ring of five switches under opensm's minhop: ibdmchk finds a
    credit loop; so does the mount, on the same ports, and its
    histograms are ibdmchk's."""
    need("ibdmchk")
    f = make_fabric("ring5.net")
    d = opensm_dumping(f, "Hca5", tmp_path)
    f.wait_active("Hca1", timeout=30)
    m = mount("Hca1", fabric=f)
    chk = settled(f, m, d)
    r = routing(m)
    check_against(r, chk)
    assert chk["loop"], chk["text"]
    assert chk["loop"] in cycles(r), (r, chk["loop"])
    loops = problems(m, "credit_loop")
    assert len(loops) == int(r["credit_loops"][0]) >= 1, loops
    assert all(p["severity"] == "error" and p["vl"] == "0" for p in loops), loops
    assert {(int(p["guid"], 16), int(p["port"])) for p in loops} == \
        {min(c) for c in cycles(r)}, (loops, r)
    check_far(r, chk)


def check_far(r, chk):
    """The ports fabric/routing names farthest from the mean carry the
    DLIDs ibdmchk's detailed report gives them."""
    assert r["port_far"], r
    for v in r["port_far"]:
        name, dlids = v.split()
        g, p = name.split("/")
        assert chk["ports"][(int(g, 16), int(p))] == int(dlids), (v, chk["ports"])
    assert int(r["switch_ports"][0]) == len(chk["ports"]), (r, chk["ports"])


def test_fat_tree_updn(tmp_path, make_fabric, mount):
    """The bench's quick fat tree routed by updn: no credit loop, by
    ibdmchk and by the mount; the histograms equal."""
    need("ibdmchk")
    net = tmp_path / "fat.net"
    subprocess.run(["python3", tm.GEN, "--leaves", "4", "--spines", "2",
                    "--hcas-per-leaf", "4", str(net)], check=True)
    f = make_fabric(str(net))
    d = opensm_dumping(f, "H0001", tmp_path, engine="updn")
    f.wait_active("H0002", timeout=30)
    m = mount("H0002", fabric=f)
    chk = settled(f, m, d)
    r = routing(m)
    check_against(r, chk)
    check_far(r, chk)
    assert chk["loop"] is None and r["credit_loops"] == ["0"], (r, chk["text"])
    assert "credit_loop" not in r and not problems(m, "credit_loop")
