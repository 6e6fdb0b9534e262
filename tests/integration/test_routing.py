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

import pytest

import diags as tm
from diags import sweep_kv
import madfiles as mf
import simfabric as sim
from checks import need

sweep, problems = tm.sweep, tm.problems


def opensm_dumping(f, host, tmp_path, engine=None, qos=False):
    """opensm on host, writing its dump files (log_flags 0x43) into a
    directory of the test's own (-> that directory); qos: its QoS on
    (the SL-to-VL tables as lash and dfsssp need them)."""
    d = tmp_path / ("osm-dump-%s" % host)
    d.mkdir()
    conf = d / "opensm.conf"
    tm.tool(f, host, "opensm", "-c", str(conf), check=False)
    txt = conf.read_text()
    txt = re.sub(r"^dump_files_dir .*$", "dump_files_dir %s" % d, txt, flags=re.M)
    txt = re.sub(r"^log_flags .*$", "log_flags 0x43", txt, flags=re.M)
    if engine:
        txt = re.sub(r"^routing_engine .*$", "routing_engine %s" % engine, txt, flags=re.M)
    if qos:
        txt = re.sub(r"^qos FALSE$", "qos TRUE", txt, flags=re.M)
    conf.write_text(txt)
    f.start_opensm(host, ["-F", str(conf)])
    return d


def ibdmchk(d, *more):
    """ibdmchk on opensm's dump in d (more: its other options) -> {"min": {hops: pairs}, "lft": ...,
    "dlids": {dlids: ports}, "ports": {(guid, port): dlids}, "loop": the
    ports [(guid, port)] of the cycle it found, or None}."""
    out = subprocess.run(["ibdmchk", "-s", str(d / "opensm-subnet.lst"), "-f",
                          str(d / "opensm.fdbs"), "-m", str(d / "opensm.mcfdbs"), *more],
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
        # The backtrace goes on past the cycle, to where its search began.
        bt = re.findall(r"BT credit loop through: (\S+) VL", loop.group(3))
        names = [loop.group(1)] + bt[:bt.index(loop.group(1))]
        res["loop"] = {(int(g, 16), int(p)) for g, p in
                       (re.match(r"S([0-9a-fA-F]{16})/U1/P(\d+)$", n).groups()
                        for n in names)}
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
        # A port is GUID/PORT, GUID/PORT/VL where the fabric has several.
        cyc = re.search(r"cycle=(\S+)", v).group(1).split(",")
        out.append({(int(c.split("/")[0], 16), int(c.split("/")[1])) for c in cyc})
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
    histograms are ibdmchk's.  Having found it, the mount asked the SA
    the 20 pairs' SLs (a small fabric): all SL 0, as saquery says, so the
    loop stands."""
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
    # minhop's routes are the shortest: none longer than the minimum.
    assert chk["lft"] == chk["min"] and not problems(m, "route_not_minimal")
    loops = problems(m, "credit_loop")
    assert len(loops) == int(r["credit_loops"][0]) >= 1, loops
    assert all(p["severity"] == "error" and p["vl"] == "0" for p in loops), loops
    assert {(int(p["guid"], 16), int(p["port"])) for p in loops} == \
        {min(c) for c in cycles(r)}, (loops, r)
    sls = path_sls(f, "Hca1", ring_cas(f))
    assert r["path_sls"] == [str(len(sls))] and r["path_sls_unknown"] == ["0"], r
    assert r["sls"] == [" ".join(str(s) for s in sorted(set(sls.values())))] == ["0"], r
    # A sweep that reads no table keeps the verdict unjudged, and the
    # pairs' SLs unasked.
    deadline = time.monotonic() + 30
    while True:
        sweep(m)
        kv = dict(ln.split(" ", 1) for ln in open(m.path("fabric", "sweep")).read().splitlines()
                  if " " in ln)
        if kv["lfts_read"] == "0":
            break
        assert time.monotonic() < deadline, kv
    assert kv["routing_us"] == "0" and routing(m) == r and problems(m, "credit_loop") == loops
    assert kv["pathsl_mads"] == "0", kv
    check_metrics(m, r)
    check_far(r, chk)


def test_tables_read_again_the_same(tmp_path, make_fabric, mount):
    """With every table read at every sweep (fabric_routes_max_age=0), the
    ring's tables under minhop come back the same: no table changed, so
    the routing verdict, its credit loops and the pairs' SLs are kept,
    not judged or asked again; ibdmchk's loop stands in it."""
    need("ibdmchk")
    f = make_fabric("ring5.net")
    d = opensm_dumping(f, "Hca5", tmp_path)
    f.wait_active("Hca1", timeout=30)
    m = mount("Hca1", fabric=f, options=("fabric_routes_max_age=0",))
    chk = settled(f, m, d)
    r = routing(m)
    assert chk["loop"] and chk["loop"] in cycles(r), (r, chk["text"])
    for _ in range(3):
        sweep(m)
        kv = sweep_kv(m)
        assert kv["lfts_read"] == "5" and kv["tables_changed"] == "0", kv
        assert kv["routing_us"] == "0" and kv["pathsl_mads"] == "0", kv
        assert routing(m) == r


def check_metrics(m, r):
    """metrics.prom's umadfs_credit_loops and umadfs_route_pairs say what
    fabric/routing says."""
    prom = open(m.path("fabric", "metrics.prom")).read()
    assert re.findall(r"^umadfs_credit_loops (\d+)$", prom, re.M) == r["credit_loops"]
    pairs = {}
    for by, h, n in re.findall(r'^umadfs_route_pairs\{by="(\w+)",hops="(\d+)"\} (\d+)$',
                               prom, re.M):
        pairs.setdefault(by, {})[int(h)] = int(n)
    assert pairs == {"lft": hist(r, "hops_lft"), "min": hist(r, "hops_min")}, prom


def check_far(r, chk):
    """The ports fabric/routing names farthest from the mean carry the
    DLIDs ibdmchk's detailed report gives them."""
    assert r["port_far"], r
    for v in r["port_far"]:
        name, dlids = v.split()
        g, p = name.split("/")
        assert chk["ports"][(int(g, 16), int(p))] == int(dlids), (v, chk["ports"])
    assert int(r["switch_ports"][0]) == len(chk["ports"]), (r, chk["ports"])


def updn_tree(tmp_path, make_fabric):
    """The bench's quick fat tree (4 leaves, 2 spines, 4 HCAs a leaf),
    routed by opensm's updn on H0001, dumping -> (fabric, dump dir)."""
    need("ibdmchk")
    net = tmp_path / "fat.net"
    subprocess.run(["python3", tm.GEN, "--leaves", "4", "--spines", "2",
                    "--hcas-per-leaf", "4", str(net)], check=True)
    f = make_fabric(str(net))
    d = opensm_dumping(f, "H0001", tmp_path, engine="updn")
    f.wait_active("H0002", timeout=30)
    return f, d


def test_fat_tree_updn(tmp_path, make_fabric, mount):
    """The bench's quick fat tree routed by updn: no credit loop, by
    ibdmchk and by the mount; the histograms equal."""
    f, d = updn_tree(tmp_path, make_fabric)
    m = mount("H0002", fabric=f)
    chk = settled(f, m, d)
    r = routing(m)
    check_against(r, chk)
    check_far(r, chk)
    assert chk["loop"] is None and r["credit_loops"] == ["0"], (r, chk["text"])
    check_metrics(m, r)
    assert "credit_loop" not in r and not problems(m, "credit_loop")
    assert not problems(m, "route_not_minimal") and not problems(m, "route_unbalanced")


def fat_tree_map(m):
    """The view's fat tree: ({leaf: {spine: port}}, {spine: {leaf: port}},
    {CA LID: its leaf}, {switch: LID})."""
    links = re.findall(r"^guid=(\S+) port=(\d+) .*?peer_guid=(\S+) peer_port=(\d+) ",
                       open(m.path("fabric", "links")).read(), re.M)
    sws = {}
    for g in os.listdir(m.path("fabric", "nodes")):
        if open(m.path("fabric", "nodes", g, "node_type")).read().startswith("2"):
            sws[int(g, 16)] = int(open(m.path("fabric", "nodes", g, "ports", "0", "lid")).read(), 16)
    ends = {}   # switch -> {peer: port}
    cas = {}
    for a, pa, b, pb in links:
        a, b, pa, pb = int(a, 16), int(b, 16), int(pa), int(pb)
        for x, px, y, py in ((a, pa, b, pb), (b, pb, a, pa)):
            if x in sws:
                ends.setdefault(x, {})[y] = px
            elif y in sws:
                lid = int(open(m.path("fabric", "nodes", "0x%016x" % x, "ports",
                                      str(px), "lid")).read(), 16)
                cas[lid] = y
    leaves = {s for s in sws if any(c == s for c in cas.values())}
    up = {l: {s: p for s, p in ends[l].items() if s in sws} for l in leaves}
    down = {s: {l: p for l, p in ends[s].items() if l in leaves}
            for s in sws if s not in leaves}
    return up, down, cas, sws


def closing_sets(m):
    """Entries that, set in turn, close a credit loop, each route still
    arriving: the leaves send X up to spine A and Z up to B; A sends X
    down to leaf La, which sends it up to B (on to X's leaf); B sends Z
    down to Lb, which sends it up to A.  Then A/La -> La/B (Z from La)
    -> B/Lb -> Lb/A (X from Lb) -> A/La -> [(switch, LID, port, was)]."""
    up, down, cas, sws = fat_tree_map(m)
    t = {s: tm.lft(m, s) for s in sws}
    spine_of = {l: {p: s for s, p in up[l].items()} for l in up}
    for la in sorted(up):
        for lb in sorted(up):
            for x in sorted(cas):
                for z in sorted(cas):
                    if la == lb or {cas[x], cas[z]} & {la, lb}:
                        continue
                    a, b = spine_of[la].get(t[la][x]), spine_of[la].get(t[la][z])
                    if not a or not b or a == b or t[lb][x] != up[lb][a]:
                        continue
                    sets = [(a, x, down[a][la]), (la, x, up[la][b]),
                            (b, z, down[b][lb]), (lb, z, up[lb][a])]
                    return [(sw, lid, port, t[sw][lid]) for sw, lid, port in sets], sws
    raise AssertionError("no entries close a loop: %r" % t)


def dump_with(d, sets, out):
    """opensm's dump in d copied into out with the entries of sets changed,
    for ibdmchk."""
    out.mkdir()
    text = (d / "opensm.fdbs").read_text()
    for sw, lid, port, _ in sets:
        head = "dump_ucast_routes: Switch 0x%016x\n" % sw
        a = text.index(head)
        b = text.find("dump_ucast_routes", a + 1)
        b = len(text) if b < 0 else b
        block, n = re.subn(r"^(0x%04X : )\d{3}" % lid, r"\g<1>%03d" % port, text[a:b],
                           flags=re.M | re.I)
        assert n == 1, block
        text = text[:a] + block + text[b:]
    (out / "opensm.fdbs").write_text(text)
    for name in ("opensm-subnet.lst", "opensm.mcfdbs"):
        (out / name).write_text((d / name).read_text())
    return out


def test_set_closes_a_loop(tmp_path, make_fabric, mount):
    """Entries set in turn through the mount's own send (closing_sets())
    turn the updn tree's routes down and up again: after each, the mount
    and ibdmchk, on opensm's dump with the same entries, agree whether
    there is a credit loop; after the last there is one, on the ports
    ibdmchk names; put back, it is gone (and problem_cleared).  Each
    step's routes are longer than the minimum (ibdmchk's histograms,
    equal to fabric/routing's): route_not_minimal names the spines whose
    entry sends a LID down to a leaf not its own."""
    f, d = updn_tree(tmp_path, make_fabric)
    # Every sweep reads every table: the Sets are behind the SM's back.
    m = mount("H0002", fabric=f, options=("fabric_routes_max_age=0",))
    # A routing engine that does not claim minimal paths.
    off = mount("H0003", fabric=f, options=("fabric_routes_max_age=0",
                                            "fabric_routes_minimal=off"))
    assert settled(f, m, d)["loop"] is None
    assert not problems(m, "route_not_minimal")
    sets, sws = closing_sets(m)
    up = fat_tree_map(m)[0]
    for i, (sw, lid, port, _) in enumerate(sets):
        ans = tm.set_lft_block0(m, sw, sws[sw], {lid: port})
        assert ans["method"] == "getresp" and int(ans["status"], 16) == 0, ans
        sweep(m)
        assert tm.lft(m, sw)[lid] == port
        chk = ibdmchk(dump_with(d, sets[:i + 1], tmp_path / ("dump%d" % i)))
        r = routing(m)
        assert (chk["loop"] is not None) == (r["credit_loops"] != ["0"]), (r, chk["text"])
        check_against(r, chk)
        # A spine's entry alone loops (the leaf sends the LID back up);
        # with the leaf's the routes arrive, longer than the minimum by
        # ibdmchk's two histograms, and the spine is named.
        if i % 2:
            assert max(chk["lft"]) > max(chk["min"]), chk["text"]
            assert {int(p["guid"], 16) for p in problems(m, "route_not_minimal")} == \
                {sw for sw, _, _, _ in sets[:i + 1] if sw not in up}
            sweep(off)
            assert routing(off) == r and not problems(off, "route_not_minimal")
    assert chk["loop"] and chk["loop"] in cycles(r), (r, chk["loop"])
    assert problems(m, "credit_loop"), r
    for sw, lid, _, was in sets:
        tm.set_lft_block0(m, sw, sws[sw], {lid: was})
    sweep(m)
    assert routing(m)["credit_loops"] == ["0"] and not problems(m, "credit_loop")
    assert not problems(m, "route_not_minimal")
    events = open(m.path("fabric", "events.log")).read()
    assert "event=problem_cleared problem=credit_loop" in events


def lft_balance(f, host, tmp_path):
    """check_lft_balance on dump_lfts and ibnetdiscover --cache of the
    fabric now -> the GUIDs of the switches it calls unbalanced."""
    cache, lfts = tmp_path / "ibnd.cache", tmp_path / "lfts.txt"
    if cache.exists():
        cache.unlink()
    tm.tool(f, host, "ibnetdiscover", "--cache", str(cache))
    lfts.write_text(tm.tool(f, host, "dump_lfts").stdout)
    # (It runs iblinkinfo --load-cache, which opens a port all the same.)
    out = tm.tool(f, host, "check_lft_balance", "-l", str(lfts), "-i", str(cache)).stdout
    return {int(g, 16) for g in re.findall(r"^Unbalanced Switch Port Usage: .*, (0x[0-9a-f]+)$",
                                            out, re.M)}, out


def unbalanced(m):
    return {int(p["guid"], 16) for p in problems(m, "route_unbalanced")}


def test_unbalanced_as_check_lft_balance(tmp_path, make_fabric, mount):
    """route_unbalanced names the switches check_lft_balance names: none
    on the updn tree; a leaf whose entry for one CA's LID is moved to its
    other uplink (7 LIDs up one, 5 up the other); none again once put
    back."""
    need("ibdmchk", "check_lft_balance")
    f, d = updn_tree(tmp_path, make_fabric)
    m = mount("H0002", fabric=f, options=("fabric_routes_max_age=0",))
    settled(f, m, d)
    theirs, out = lft_balance(f, "H0002", tmp_path)
    assert unbalanced(m) == theirs == set(), out
    up, _, cas, sws = fat_tree_map(m)
    leaf = sorted(up)[0]
    ports = sorted(up[leaf].values())
    t = tm.lft(m, leaf)
    lid = next(x for x in sorted(cas) if cas[x] != leaf and t[x] == ports[0])
    for port in (ports[1], ports[0]):
        ans = tm.set_lft_block0(m, leaf, sws[leaf], {lid: port})
        assert ans["method"] == "getresp" and int(ans["status"], 16) == 0, ans
        sweep(m)
        theirs, out = lft_balance(f, "H0002", tmp_path)
        assert unbalanced(m) == theirs == ({leaf} if port == ports[1] else set()), \
            (problems(m, "route_unbalanced"), out)


def ring_switches(f, host="Hca1"):
    """The ring's switches from host, by smpquery over directed routes
    (Hca1 on Switch1's port 1, then port 2 round the ring) -> [(GUID,
    LID, path)] from Switch1."""
    out = []
    for i in range(5):
        path = "0,1" + ",2" * i
        ni = sim.parse_smpquery(tm.tool(f, host, "smpquery", "-D", "nodeinfo", path).stdout)
        assert "Guid" in ni, ni
        out.append((int(ni["Guid"], 16), tm.lid_of(f, host, path), path))
    return out


def sl2vl_tables(f, sws, host="Hca1"):
    """smpquery sl2vl of every switch's ports -> {(guid, in, out): [VL of
    SL 0..15]}."""
    out = {}
    for guid, lid, _ in sws:
        for port in range(1, 5):
            text = tm.tool(f, host, "smpquery", "sl2vl", str(lid), str(port)).stdout
            for i, o, vls in re.findall(r"^ports: in\s+(\d+), out\s+(\d+): \|(.*)\|$",
                                        text, re.M):
                out[(guid, int(i), int(o))] = [int(v) for v in vls.split("|")]
    return out


def ibdmchk_sl2vl(d, tables, out):
    """ibdmchk's -d file (swguid inport outport 0x(sl0)(sl1) ...) of tables
    beside a copy of opensm's dump in out -> ibdmchk's verdict with it."""
    out.mkdir()
    lines = []
    for (g, i, o), vls in sorted(tables.items()):
        pairs = " ".join("0x%x%x" % (vls[k], vls[k + 1]) for k in range(0, 16, 2))
        lines.append("0x%016x %d %d %s" % (g, i, o, pairs))
    (out / "sl2vl.txt").write_text("\n".join(lines) + "\n")
    for name in ("opensm-subnet.lst", "opensm.fdbs", "opensm.mcfdbs"):
        (out / name).write_text((d / name).read_text())
    return ibdmchk(out, "-d", str(out / "sl2vl.txt"))


def set_sl0(m, lid, inport, outport, vls, vl):
    """An SLtoVLMappingTable Set through the mount's own send: SL 0 of the
    switch's (inport, outport) table to vl, the other SLs as vls."""
    vls = [vl] + vls[1:]
    data = bytes(vls[k] << 4 | vls[k + 1] for k in range(0, 16, 2))
    with mf.Recv(m) as rx:
        mf.write_send(m, "class=smi method=set attr=0x0017 attrmod=%d lid=%d data=%s\n"
                      % (inport << 8 | outport, lid, data.hex()))
        ans = rx.line(timeout=10)
    assert ans["method"] == "getresp" and int(ans["status"], 16) == 0, ans


def test_sl2vl_splits_the_loop(tmp_path, make_fabric, mount):
    """The ring's credit loops (all port 2s, all port 3s, on VL 0) are cut
    when Switch1's SL-to-VL tables for a packet passing round the ring
    (in 3 out 2, in 2 out 3) map SL 0 to VL 1, a dateline as torus-2QoS
    makes one: set through the mount's send, the sweep reads every table
    (`vls 2`); the first Set cuts the cycle of the port 2s only, the
    second that of the port 3s too, as ibdmchk says with the same tables
    (-d, from smpquery sl2vl); put back, the loops are back on VL 0 and
    the sweep asks one table a switch again."""
    need("ibdmchk")
    f = make_fabric("ring5.net")
    d = opensm_dumping(f, "Hca5", tmp_path)
    f.wait_active("Hca1", timeout=30)
    m = mount("Hca1", fabric=f, options=("fabric_routes_max_age=0",))
    settled(f, m, d)
    sws = ring_switches(f)
    tables = sl2vl_tables(f, sws)
    assert all(v[0] == 0 for v in tables.values()), tables
    chk = ibdmchk_sl2vl(d, tables, tmp_path / "chk0")
    r = routing(m)
    assert chk["loop"] and chk["loop"] in cycles(r) and r["vls"] == ["1"], (r, chk["text"])
    # One VL: a probe a switch, no more.
    assert sweep_kv(m)["sl2vl_mads"] == "5", sweep_kv(m)
    guid, lid, _ = sws[0]
    # In 3 out 2 first: the cycle of the port 2s is cut, that of the port
    # 3s stands; then in 2 out 3 cuts it too; then both back on VL 0.
    steps = (([(3, 2)], 1, 1), ([(2, 3)], 1, 0), ([(3, 2), (2, 3)], 0, 2))
    for n, (pairs, vl, loops) in enumerate(steps):
        for i, o in pairs:
            set_sl0(m, lid, i, o, tables[(guid, i, o)], vl)
        sweep(m)
        now = sl2vl_tables(f, sws)
        assert all(now[(guid, i, o)][0] == vl for i, o in pairs), now
        chk = ibdmchk_sl2vl(d, now, tmp_path / ("chk%d" % (n + 1)))
        r = routing(m)
        kv = sweep_kv(m)
        assert r["credit_loops"] == [str(loops)], (r, chk["text"])
        assert (chk["loop"] is None) == (loops == 0), (r, chk["text"])
        if loops:
            assert chk["loop"] in cycles(r), (r, chk["text"])
        if vl:
            # Every switch's tables from each Active port to each Active
            # port to a switch: 3 x 2 - 2 = 4 a switch.
            assert r["vls"] == ["2"] and kv["sl2vl_mads"] == "20", (r, kv)
        else:
            assert r["vls"] == ["1"] and kv["sl2vl_mads"] == "5", (r, kv)
        if loops == 1:
            assert all(c == "%d" % 3 for c in
                       (x.split("/")[1] for x in re.search(
                           r"cycle=(\S+)", r["credit_loop"][0]).group(1).split(","))), r
    events = open(m.path("fabric", "events.log")).read()
    assert "event=problem_cleared problem=credit_loop" in events


def test_sl2vl_own_set_read(tmp_path, make_fabric, mount):
    """With the tables' default age, a repeated sweep shares every
    SL-to-VL table (no Get); one set through the mount's own send is read
    by the next sweep: the dateline's VL shows (`vls 2`) and the verdict
    is ibdmchk's on the same tables; put back, VL 0 again."""
    need("ibdmchk")
    f = make_fabric("ring5.net")
    d = opensm_dumping(f, "Hca5", tmp_path)
    f.wait_active("Hca1", timeout=30)
    m = mount("Hca1", fabric=f)
    settled(f, m, d)
    sweep(m)
    assert sweep_kv(m)["sl2vl_mads"] == "0", sweep_kv(m)
    sws = ring_switches(f)
    tables = sl2vl_tables(f, sws)
    guid, lid, _ = sws[0]
    for vl, loops in ((1, 1), (0, 2)):
        set_sl0(m, lid, 3, 2, tables[(guid, 3, 2)], vl)
        sweep(m)
        now = sl2vl_tables(f, sws)
        assert now[(guid, 3, 2)][0] == vl, now
        r = routing(m)
        chk = ibdmchk_sl2vl(d, now, tmp_path / ("own%d" % vl))
        assert r["vls"] == [str(vl + 1)] and r["credit_loops"] == [str(loops)], r
        assert chk["loop"] in cycles(r), (r, chk["text"])


def path_sls(f, host, cas):
    """saquery's PathRecord from each CA's LID of cas ({LID: NodeGUID}) to
    each other's (-p --src-to-dst) -> {(source NodeGUID, DLID): SL}, the
    lines of ibdmchk's -c."""
    out = {}
    for a in cas:
        for b in cas:
            if a == b:
                continue
            text = tm.tool(f, host, "saquery", "-p", "--src-to-dst", "%d:%d" % (a, b)).stdout
            kv = dict(re.findall(r"^\s*(\w+)\.+(\S+)$", text, re.M))
            assert (int(kv["slid"]), int(kv["dlid"])) == (a, b), text
            out[(cas[a], b)] = int(kv["sl"], 16)
    return out


def ring_cas(f):
    """The ring's HCAs -> {LID: NodeGUID}, by smpquery on each."""
    out = {}
    for i in range(1, 6):
        ni = sim.parse_smpquery(tm.tool(f, "Hca%d" % i, "smpquery", "-D", "nodeinfo", "0").stdout)
        out[int(f.portinfo("Hca%d" % i, 1)["Lid"])] = int(ni["Guid"], 16)
    return out


@pytest.mark.parametrize("engine", ["lash", "dfsssp"])
def test_ring_vl_engines(tmp_path, make_fabric, mount, engine):
    """The ring routed by opensm's lash or dfsssp (QoS on): they give some
    pairs SLs other than 0 (the SA's PathRecords) and their SL-to-VL
    tables send each SL on its own VL, so ibdmchk, given the pairs' SLs
    (-c, from saquery PR) and the tables (-d, from smpquery sl2vl), finds
    no credit loop; without -c, every route on SL 0, it finds the ring's
    cycle.  The mount, finding that cycle on SL 0, asks the SA the pairs'
    SLs (the same as saquery's) and every switch's tables, and finds none
    either (files.md, "Routing")."""
    need("ibdmchk")
    f = make_fabric("ring5.net")
    d = opensm_dumping(f, "Hca5", tmp_path, engine=engine, qos=True)
    f.wait_active("Hca1", timeout=30)
    m = mount("Hca1", fabric=f)
    settled(f, m, d)
    sls = path_sls(f, "Hca1", ring_cas(f))
    assert len(set(sls.values())) > 1, sls
    tables = ring_switches(f)
    tables = sl2vl_tables(f, tables)
    chk = ibdmchk_sl2vl(d, tables, tmp_path / "sl0")
    (tmp_path / "sl0" / "psl.txt").write_text(
        "".join("0x%016x %d %d\n" % (g, lid, sl) for (g, lid), sl in sorted(sls.items())))
    full = ibdmchk(tmp_path / "sl0", "-d", str(tmp_path / "sl0" / "sl2vl.txt"),
                   "-c", str(tmp_path / "sl0" / "psl.txt"))
    assert re.search(r"Credit Loops [2-9] SLs", full["text"]) and full["loop"] is None, \
        full["text"]
    assert chk["loop"], chk["text"]
    r = routing(m)
    assert r["credit_loops"] == ["0"] and not cycles(r) and \
        not problems(m, "credit_loop"), (r, full["text"])
    assert r["path_sls"] == [str(len(sls))] and r["path_sls_unknown"] == ["0"], r
    # dfsssp answers each PathRecord with an SL drawn at random from the
    # pair's layer's split (opensm's get_dfsssp_sl: any of them is free of
    # deadlock), so two askings differ; lash's are fixed.
    assert len(r["sls"][0].split()) > 1, r
    if engine == "lash":
        assert r["sls"] == [" ".join(str(s) for s in sorted(set(sls.values())))], (r, sls)
    assert int(r["vls"][0]) >= 2, r
    # The next sweep that reads no forwarding table keeps them: no Get.
    deadline = time.monotonic() + 30
    while True:
        sweep(m)
        kv = sweep_kv(m)
        if kv["lfts_read"] == "0" and kv["sl2vl_mads"] == "0":
            break
        assert time.monotonic() < deadline, kv
    assert kv["pathsl_mads"] == "0" and routing(m) == r, (kv, routing(m), r)
