"""What a port carries: a switch port's routed_endports against
ibfindnodesusing (both directions) and ibroute, on the two-switch fabric
and a sample of the bench's 1k tree; the dry run a read of admin gives
against ibtracert."""

import os
import random
import re
import time

import pytest

import diags as tm

SW1, SW2 = 0x200000, 0x200001          # two-switch.net's switches
FINDNODES = "/usr/sbin/ibfindnodesusing"
# ibfindnodesusing keeps ibnetdiscover's output in a cache directory of
# its own (/var/cache/infiniband-diags): each run here gets its own, so
# that fabrics of other tests do not meet there.
FINDNODES_RUN = ('use IBswcountlimits; $IBswcountlimits::cache_dir = shift @ARGV;'
                 ' $0 = shift @ARGV; do $0; die $@ if $@;')
KV = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


def endports(m, guid, port):
    """routed_endports as [(direction, guid, port, lid, desc)]."""
    text = open(m.path("fabric", "nodes", "0x%016x" % guid, "ports", str(port),
                       "routed_endports")).read()
    out = []
    for ln in text.splitlines():
        kv = dict(KV.findall(ln))
        assert list(kv) == ["direction", "guid", "port", "lid", "node_desc"], ln
        out.append((kv["direction"], int(kv["guid"], 16), int(kv["port"]),
                    int(kv["lid"]), kv["node_desc"][1:-1]))
    return out


def compress(names):
    """ibfindnodesusing's compress_hostlist, as its Perl does it: the
    names grouped by what precedes their last digits, each group's
    numbers as ranges (`Hx1-3`), the groups by name, joined by spaces
    (its `@hosts` printed; its list starts with an undef, which makes an
    empty first name)."""
    names = [""] + names
    keyed = sorted(((n, re.match(r"(.*?)(\d*)$", n).groups()) for n in names),
                   key=lambda x: int(x[1][1] or 0))
    groups = {}
    for _, (pre, num) in keyed:
        runs = groups.setdefault(pre, [])
        if runs and runs[-1][-1] != "" and num != "" and int(runs[-1][-1]) == int(num) - 1:
            runs[-1].append(num)
        else:
            runs.append([num])
    out = []
    for pre in sorted(groups):
        out += [pre + ("%s-%s" % (r[0], r[-1]) if len(r) > 1 else r[0])
                for r in groups[pre]]
    return " ".join(",".join(out).split(","))


def findnodes(f, host, cache, guid, port):
    """ibfindnodesusing GUID PORT: its two host lists, (out, in); with -R
    (ibnetdiscover run again) the first time it is given cache."""
    fresh = not os.path.isdir(cache)
    os.makedirs(cache, exist_ok=True)
    r = tm.tool(f, host, "perl", "-e", FINDNODES_RUN, cache, FINDNODES,
                *(("-R",) if fresh else ()), "0x%016x" % guid, str(port))
    lines = r.stdout.split("\n")
    assert "==>>" in lines[0] and "<<==" in lines[3], r.stdout
    return lines[1], lines[4]


def ibroute_cas(f, host, guid):
    """ibroute -G: {port: [CA descriptions]} as ibfindnodesusing reads it."""
    out = tm.tool(f, host, "ibroute", "-G", "0x%016x" % guid).stdout
    got = {}
    for p, desc in re.findall(r"^\w+\s+(\d+)\s+:\s+\(Channel Adapter.*:\s+'(.*)'\)", out, re.M):
        got.setdefault(int(p), []).append(desc)
    return got


def ca_descs(lines, direction):
    return [ln[4] for ln in lines if ln[0] == direction and ln[2] != 0]


def check_port(f, m, host, cache, guid, port):
    ours = endports(m, guid, port)
    want_out, want_in = findnodes(f, host, cache, guid, port)
    assert compress(ca_descs(ours, "out")) == want_out, (guid, port, ours)
    assert compress(ca_descs(ours, "in")) == want_in, (guid, port, ours)
    return ours


def test_routed_endports_two_switch(fabric, mount, tmp_path):
    """Every inter-switch port, both ways, as ibfindnodesusing lists its
    CAs; with the switches' own LIDs, as ibroute lists the table."""
    m = mount("Hca1")
    tm.sweep(m)
    for guid, peer in ((SW1, SW2), (SW2, SW1)):
        table = {}
        out = tm.tool(fabric, "Hca1", "ibroute", "-G", "0x%016x" % guid).stdout
        for lid, p in re.findall(r"^(0x[0-9a-f]+) (\d+) ", out, re.M):
            table.setdefault(int(p), set()).add(int(lid, 16))
        for port in (7, 8):
            ours = check_port(fabric, m, "Hca1", str(tmp_path / "cache"), guid, port)
            assert {ln[3] for ln in ours if ln[0] == "out"} == table.get(port, set())
            assert [ln[3] for ln in ours if ln[0] == "out"] == sorted(
                ln[3] for ln in ours if ln[0] == "out")
        # A CA's port: its CA out, everything else in.
    ours = endports(m, SW1, 1)
    hca1 = [ln for ln in ours if ln[0] == "out"]
    assert [(ln[2], ln[4]) for ln in hca1] == [(1, "umadfs-node1 HCA-1")]
    ins = [ln for ln in ours if ln[0] == "in"]
    assert len(ins) == 4 and hca1[0][3] not in [ln[3] for ln in ins]


def switches(m):
    """{GUID: node_desc} of the view's switches."""
    sws = {}
    for g in os.listdir(m.path("fabric", "nodes")):
        d = m.path("fabric", "nodes", g)
        if open(os.path.join(d, "node_type")).read().startswith("2"):
            sws[int(g, 16)] = open(os.path.join(d, "node_desc")).read().strip()
    return sws


def settled(m, nlinks, timeout=90):
    """Sweeps until the view has nlinks links, every one Active, and no
    route_* problem: opensm done with the tree."""
    deadline = time.monotonic() + timeout
    while True:
        tm.sweep(m)
        links = open(m.path("fabric", "links")).read()
        states = set(re.findall(r" state=(\S+)$", links, re.M))
        probs = [p for p in tm.problems(m) if p["problem"].startswith("route_")]
        if links.count("\n") == nlinks and states == {"Active"} and not probs:
            return
        assert time.monotonic() < deadline, (links.count("\n"), states, probs[:3])
        time.sleep(1)


@pytest.mark.load
@pytest.mark.watchdog(600)
def test_routed_endports_1k_tree(tmp_path, make_fabric, mount):
    """The bench's 1k tree (gen-fabric.py's default: 40 leaves of 24 HCAs,
    12 spines): 50 inter-switch ports drawn at random, leaves' uplinks and
    spines' downlinks, as ibfindnodesusing lists them both ways."""
    f = tm.fat_tree(tmp_path, make_fabric, 40, 12, 24)
    m = mount("H0002", fabric=f)
    settled(m, 40 * 24 + 40 * 12)
    sws = switches(m)
    ports = [(g, p) for g, desc in sws.items()
             for p in (range(25, 37) if desc.startswith("leaf") else range(1, 41))]
    assert len(sws) == 52 and len(ports) == 2 * 40 * 12
    rng = random.Random(31)
    cache = str(tmp_path / "cache")
    counted = 0
    for guid, port in rng.sample(ports, 50):
        ours = check_port(f, m, "H0002", cache, guid, port)
        counted += len(ours)
    assert counted > 50 * 24, counted   # not empty lists compared
    # admin's dry run of the same ports: a read each, its time reported.
    took = []
    for guid, port in rng.sample(ports, 10):
        t0 = time.monotonic()
        state, dry = admin(m, guid, port)
        took.append(time.monotonic() - t0)
        assert state == "5: LinkUp" and dry["disable_isolated"] == 0, dry
        assert dry["disable_pair_routes"] > 0, (guid, port, dry)
    print("admin read with its dry run, 1k tree: median %.1f ms, max %.1f ms"
          % (sorted(took)[5] * 1e3, max(took) * 1e3))


def admin(m, guid, port):
    """A read of admin: its state line and the dry run's key values."""
    lines = open(m.path("fabric", "nodes", "0x%016x" % guid, "ports", str(port),
                        "admin")).read().splitlines()
    return lines[0], {k: int(v) for k, v in (ln.split(" ") for ln in lines[1:])}


def discover(f, host):
    """ibnetdiscover's endports as {port GUID: (node GUID, LID)} and links
    as {(node GUID, port): (peer node GUID, peer port)}."""
    out = tm.tool(f, host, "ibnetdiscover").stdout
    ends, links, node = {}, {}, None
    for ln in out.splitlines():
        mm = re.match(r'(?:Switch|Ca)\s+\d+\s+"[SH]-([0-9a-f]+)"', ln)
        if mm:
            node = int(mm.group(1), 16)
        mm = re.match(r'switchguid=0x([0-9a-f]+)\(([0-9a-f]+)\)', ln)
        if mm:
            sw_port_guid = int(mm.group(2), 16)
        mm = re.match(r'Switch\s.*\blid (\d+) lmc', ln)
        if mm:
            ends[sw_port_guid] = (node, int(mm.group(1)))
        mm = re.match(r'\[(\d+)\](?:\(([0-9a-f]+)\))?\s+"[SH]-([0-9a-f]+)"\[(\d+)\]', ln)
        if mm:
            links[(node, int(mm.group(1)))] = (int(mm.group(3), 16), int(mm.group(4)))
            lid = re.search(r"# lid (\d+) lmc", ln)
            if mm.group(2) and lid:
                ends[int(mm.group(2), 16)] = (node, int(lid.group(1)))
    return ends, links


def tracert(f, host, src, dst):
    """ibtracert SRC DST (LIDs) as [(node GUID, in, out)]."""
    r = tm.tool(f, host, "ibtracert", str(src), str(dst))
    hops = tm.tracert_hops(r.stdout)
    assert hops, r.stdout
    return hops


def isolated(ends, links, host_node, guid, port):
    """Endports no link but (guid, port)'s joins to host_node."""
    cut = {(guid, port), links[(guid, port)]}
    seen, todo = {host_node}, [host_node]
    while todo:
        n = todo.pop()
        for (a, p), (b, _) in links.items():
            if a == n and (a, p) not in cut and b not in seen:
                seen.add(b)
                todo.append(b)
    return sum(1 for node, _ in ends.values() if node not in seen)


def check_dry_runs(f, m, host, ports):
    """admin's dry run of each (switch GUID, port) against ibtracert's
    paths between every two endports and ibnetdiscover's links."""
    ends, links = discover(f, host)
    host_lid = tm.lid_of(f, host)
    host_node = [n for n, lid in ends.values() if lid == host_lid][0]
    lids = sorted(lid for _, lid in ends.values())
    paths = {(a, b): tracert(f, host, a, b) for a in lids for b in lids if a != b}
    for guid, port in ports:
        uses = lambda path: any(h[0] == guid and port in (h[1], h[2])  # noqa: E731
                                for h in path)
        state, dry = admin(m, guid, port)
        assert state == "5: LinkUp"
        want = {"disable_host_routes": sum(uses(paths[(host_lid, b)])
                                           for b in lids if b != host_lid),
                "disable_pair_routes": sum(uses(p) for p in paths.values()),
                "disable_isolated": isolated(ends, links, host_node, guid, port)}
        assert dry == want, (guid, port)
        # The LIDs ibfindnodesusing's lists come from: every route to an
        # endport routed_endports names out of the port and that reaches
        # the switch crosses it.
        outs = {ln[3] for ln in endports(m, guid, port) if ln[0] == "out"}
        for (a, b), p in paths.items():
            if b in outs and any(h[0] == guid for h in p[:-1]):
                assert uses(p), (a, b, p)
    return paths


def test_admin_dry_run_two_switch(fabric, mount):
    m = mount("Hca1")
    tm.sweep(m)
    ports = [(SW1, 1), (SW1, 2), (SW1, 7), (SW1, 8), (SW2, 1), (SW2, 7), (SW2, 8)]
    check_dry_runs(fabric, m, "Hca1", ports)
    # A port without a cable: nothing to cut.
    assert admin(m, SW1, 3)[1] == {"disable_host_routes": 0, "disable_pair_routes": 0,
                                   "disable_isolated": 0}
    # Without the tables, what no rerouting gives back alone: from Hca2,
    # Hca1's link isolates Hca1.
    off = mount("Hca2", options=("fabric_routes=off",))
    tm.sweep(off)
    assert admin(off, SW1, 1)[1] == {"disable_isolated": 1}
    assert admin(off, SW1, 2)[1] == {"disable_isolated": 4}


@pytest.mark.load
@pytest.mark.watchdog(300)
def test_admin_dry_run_fat_tree(tmp_path, make_fabric, mount):
    """A leaf's HCA port and uplinks, a spine's downlink, on a 4-leaf tree:
    every pair of its 22 endports traced."""
    f = tm.fat_tree(tmp_path, make_fabric, 4, 2, 4)
    m = mount("H0002", fabric=f)
    settled(m, 4 * 4 + 4 * 2)
    sws = switches(m)
    leaf = min(g for g, desc in sws.items() if desc.startswith("leaf"))
    spine = min(g for g, desc in sws.items() if desc.startswith("spine"))
    check_dry_runs(f, m, "H0002", [(leaf, 1), (leaf, 5), (leaf, 6), (spine, 2)])


# link_flapping: a short window from the thresholds file.
FLAP_WINDOW_S = 70


def flap_mount(f, mount, tmp_path, window_s=FLAP_WINDOW_S):
    th = tmp_path / "thresholds"
    th.write_text("# link_flapping\nLinkFlapCount=3\nLinkFlapWindowSeconds=%d\n" % window_s)
    m = mount("Hca1", fabric=f, options=("fabric_thresholds=%s" % th,))
    tm.sweep(m)
    return m


def flapping(m):
    return {(int(p["guid"], 16), int(p["port"])): p for p in tm.problems(m, "link_flapping")}


def link_downs(m, guid, port):
    """The view's own link_down lines of a port in events.log."""
    return sum(1 for ln in open(m.path("fabric", "events.log")).read().splitlines()
               if " event=link_down guid=0x%016x port=%d " % (guid, port) in ln)


@pytest.mark.watchdog(240)
def test_link_flapping_by_events(make_fabric, mount, tmp_path):
    """Three Unlink/ReLink of one cable (Switch1[7] - Switch2[7]) within
    the window raise link_flapping on both its ends, as many flaps as
    events.log's link_down lines; raised through a quiet minute inside the
    window, cleared once the window has passed since the last flap; in
    metrics.prom meanwhile."""
    f = tm.quiet_fabric(make_fabric)    # Active, then no SM
    m = flap_mount(f, mount, tmp_path)
    for i in range(3):
        assert not flapping(m), i
        f.command('Unlink "Switch1"[7]')
        tm.sweep(m)
        last = time.monotonic()
        if i < 2:
            f.command('ReLink "Switch1"')
            tm.sweep(m)
    got = flapping(m)
    assert set(got) == {(SW1, 7), (SW2, 7)}, tm.problems(m)
    for (guid, port), p in got.items():
        assert p["severity"] == "error" and p["seen_by"] == "events", p
        assert int(p["flaps"]) == link_downs(m, guid, port) == 3, p
        assert p["window_s"] == str(FLAP_WINDOW_S)
    prom = open(m.path("fabric", "metrics.prom")).read()
    assert re.search(r'^umadfs_problem\{kind="link_flapping",severity="error",'
                     r'guid="0x%016x",[^}]*port="7"[^}]*\} 1$' % SW1, prom, re.M), prom
    f.command('ReLink "Switch1"')
    # Quiet: a minute inside the window, still raised.
    while time.monotonic() < last + 60:
        time.sleep(5)
        tm.sweep(m)
        assert set(flapping(m)) == {(SW1, 7), (SW2, 7)}, time.monotonic() - last
    time.sleep(max(0.0, last + FLAP_WINDOW_S + 1 - time.monotonic()))
    tm.sweep(m)
    assert not flapping(m), tm.problems(m, "link_flapping")
    assert "link_flapping" not in open(m.path("fabric", "metrics.prom")).read()


@pytest.mark.watchdog(120)
def test_link_flapping_by_counter(make_fabric, mount, tmp_path):
    """ibsim leaves LinkDownedCounter alone on Unlink: PerformanceSet
    raises it on one port by 3 between two sweeps, as perfquery reads it;
    link_flapping names that port alone, counted by the counter.  Up by 2
    it is not raised."""
    f = tm.quiet_fabric(make_fabric)    # Active, then no SM
    m = flap_mount(f, mount, tmp_path, window_s=20)
    lid = tm.lid_of(f, "Hca1", "0,1")            # Switch1
    before = tm.perfquery(f, "Hca1", str(lid), "8")["LinkDownedCounter"]
    tm.perf_set(f, "Switch1", 2, "PortCounters", {"LinkDownedCounter": before + 2})
    tm.perf_set(f, "Switch1", 8, "PortCounters", {"LinkDownedCounter": before + 3})
    tm.sweep(m)
    rise = tm.perfquery(f, "Hca1", str(lid), "8")["LinkDownedCounter"] - before
    assert rise == 3
    got = flapping(m)
    assert list(got) == [(SW1, 8)], tm.problems(m)
    assert got[(SW1, 8)]["seen_by"] == "LinkDownedCounter"
    assert int(got[(SW1, 8)]["flaps"]) == rise
    time.sleep(21)
    tm.sweep(m)
    assert not flapping(m)
