"""Routing as files: each switch's `lft` against ibroute, the paths of
routes/SRC/DST against ibtracert, entries broken by a LinearForwardingTable
Set on the mount's own `send` (a loop, a down port, 255) seen by both and
in `problems` until opensm puts them back, routed_lids against ibroute's
counts, bad names, and when a sweep reads the tables: none when nothing
changed, all after the SM reroutes, a table set by hand within
fabric_routes_max_age."""

import errno
import os
import random
import re
import signal
import time

import diags as tm
import madfiles as mf
from routecmp import switches, lft, ibroute, route, ibtracert, endports
from checks import expect_errno

SW1, SW2 = 0x200000, 0x200001          # two-switch.net's switches
REPAIR_S = 60                          # opensm's repair, at most


sweep, problems, KV = tm.sweep, tm.problems, tm.KV


def route_problems(m):
    """The forwarding tables' own problems (route_unbalanced, a judgement
    of the routing as a whole, is test_routing.py's)."""
    return [p for p in problems(m)
            if p["problem"] in ("route_missing", "route_loop", "route_dead_end")]


def endpoints(f, host):
    """Every endport as (node GUID, port GUID, LID), from ibnetdiscover."""
    return endports(tm.tool(f, host, "ibnetdiscover").stdout)


def check_lfts(f, m, host):
    sweep(m)
    sws = switches(m)
    assert sws
    for guid, lid in sws.items():
        want = ibroute(f, host, lid)
        assert want, "ibroute gave no table for %#x" % guid
        assert lft(m, guid) == want, "switch %#x" % guid
    return sws


def test_lft_equals_ibroute(fabric, mount):
    m = mount("Hca1")
    sws = check_lfts(fabric, m, "Hca1")
    assert set(sws) == {SW1, SW2}
    # Only switches have one.
    for g in os.listdir(m.path("fabric", "nodes")):
        has = os.path.exists(m.path("fabric", "nodes", g, "lft"))
        assert has == (int(g, 16) in sws)


def test_lft_fat_tree(tmp_path, make_fabric, mount):
    f = tm.fat_tree(tmp_path, make_fabric, 6, 3, 5)
    m = mount("H0002", fabric=f)
    assert len(check_lfts(f, m, "H0002")) == 9


def test_routes_equal_ibtracert(tmp_path, make_fabric, mount):
    """200 random pairs of endports, named by LID or by port GUID (the same
    for both tools), switches' ports 0 among them."""
    f = tm.fat_tree(tmp_path, make_fabric, 4, 2, 4)
    m = mount("H0002", fabric=f)
    sweep(m)
    ends = endpoints(f, "H0002")
    assert len(ends) == 4 * 4 + 6
    rng = random.Random(22)
    kinds = {"lid": 0, "guid": 0, "switch": 0}
    for i in range(200):
        a, b = rng.choice(ends), rng.choice(ends)
        by_guid = i % 2 == 1
        src, dst = ("0x%016x" % a[1], "0x%016x" % b[1]) if by_guid else (a[2], b[2])
        ours, res = route(m, src, dst)
        theirs, rc, text = ibtracert(f, "H0002", src, dst, *(("-G",) if by_guid else ()))
        assert rc == 0, text
        assert res == {"result": "ok", "hops": str(len(ours) - 1)}, (src, dst, res)
        assert ours == theirs, (src, dst, ours, text)
        kinds["guid" if by_guid else "lid"] += 1
        kinds["switch"] += a[0] == a[1] or b[0] == b[1]
    assert kinds["switch"] > 0


def mount_sm_fabric(make_fabric, mount):
    """A two-switch fabric of the test's own, opensm on Hca3, the mount on
    Hca2: {name: LID} of the three HCAs and the switches.  Every sweep
    reads every table (fabric_routes_max_age=0): the tests' Sets are
    written behind the SM's back, and no change shows."""
    f = tm.active_fabric(make_fabric)
    m = mount("Hca2", fabric=f, options=("fabric_routes_max_age=0",))
    sweep(m)
    lids = {h: tm.lid_of(f, h) for h in ("Hca1", "Hca2", "Hca3")}
    sws = switches(m)
    lids["Switch1"], lids["Switch2"] = sws[SW1], sws[SW2]
    return f, m, lids


def set_entry(m, sw_guid, sw_lid, changes, answered=True):
    """LinearForwardingTable Set of block 0 of a switch through the mount's
    own send, its entries as lft shows them with changes ({LID: port})
    applied; the answer's status must be 0 (answered=False: a table without
    this host's LID loses the answer on its way back, a timeout)."""
    ans = tm.set_lft_block0(m, sw_guid, sw_lid, changes)
    if answered:
        assert ans["method"] == "getresp" and int(ans["status"], 16) == 0, ans
    else:
        assert ans["method"] == "set" and ans["error"] == "timeout", ans
    sweep(m)


def repair(f, m, sw_name, sw_lid):
    """opensm rewrites a switch's table only when it sees the switch change
    (its SwitchInfo PortStateChange, which ibsim's Baselid raises) or on its
    first sweep as master: raise the flag, ask for a heavy sweep (SIGHUP),
    and wait for routes/ to be whole again."""
    f.command('Baselid "%s"[0] %d' % (sw_name, sw_lid))
    f.opensm["Hca3"][0].send_signal(signal.SIGHUP)
    deadline = time.monotonic() + REPAIR_S
    while True:
        sweep(m)
        if not route_problems(m):
            return
        assert time.monotonic() < deadline, route_problems(m)
        time.sleep(0.5)


def test_dead_end(make_fabric, mount):
    f, m, lids = mount_sm_fabric(make_fabric, mount)
    set_entry(m, SW1, lids["Switch1"], {lids["Hca1"]: 3})   # port 3: no cable
    hops, res = route(m, lids["Hca2"], lids["Hca1"])
    assert res == {"result": "dead_end", "at": "0x%016x" % SW1}
    assert hops[-1] == (SW1, 2, 3)
    theirs, rc, text = ibtracert(f, "Hca2", lids["Hca2"], lids["Hca1"], "--force")
    assert rc != 0 and theirs[-1][0] == SW1, text
    assert "can't reach port" in text
    got = route_problems(m)
    assert [(p["problem"], p["guid"], p["port"], p["lid"], p["found"]) for p in got] == \
        [("route_dead_end", "0x%016x" % SW1, "3", str(lids["Hca1"]), "Down")]
    repair(f, m, "Switch1", lids["Switch1"])
    assert route(m, lids["Hca2"], lids["Hca1"])[1]["result"] == "ok"
    events = open(m.path("fabric", "events.log")).read()
    assert "event=problem_cleared problem=route_dead_end" in events


def test_unrouted(make_fabric, mount):
    f, m, lids = mount_sm_fabric(make_fabric, mount)
    set_entry(m, SW1, lids["Switch1"], {lids["Hca1"]: 255})
    hops, res = route(m, lids["Hca2"], lids["Hca1"])
    assert res == {"result": "unrouted", "at": "0x%016x" % SW1}
    assert hops[-1] == (SW1, 2, None)
    # ibtracert reads Switch1's entry before it prints Switch1's hop, and
    # names the node before it (Hca2) in its message: it stops at Switch1.
    theirs, rc, text = ibtracert(f, "Hca2", lids["Hca2"], lids["Hca1"], "--force")
    assert rc != 0 and [h[0] for h in theirs] == [h[0] for h in hops[:-1]], text
    assert re.search(r"Bad forwarding table entry found at: .* lid entry %d is 255"
                     % lids["Hca1"], text), text
    assert lids["Hca1"] not in lft(m, SW1)
    got = route_problems(m)
    assert [(p["problem"], p["guid"], p["lid"]) for p in got] == \
        [("route_missing", "0x%016x" % SW1, str(lids["Hca1"]))]
    repair(f, m, "Switch1", lids["Switch1"])
    assert lft(m, SW1)[lids["Hca1"]] == 1


def test_loop(make_fabric, mount):
    """Switch1 sends Hca1's LID back up to Switch2, which sends it down to
    Switch1: a loop of the two, found from Hca2 (on Switch1) at Switch1."""
    f, m, lids = mount_sm_fabric(make_fabric, mount)
    set_entry(m, SW1, lids["Switch1"], {lids["Hca1"]: 7})
    hops, res = route(m, lids["Hca2"], lids["Hca1"])
    assert res == {"result": "loop", "at": "0x%016x" % SW1}
    assert [h[0] for h in hops] == [0x100002, SW1, SW2, SW1]
    # ibtracert finds the destination by a LID-routed NodeInfo first, and
    # ibsim hands a MAD that is still looping after 64 switches to the
    # switch it is at: ibtracert then takes that switch of the loop for
    # the destination, and stops there, short of Hca1.
    theirs, rc, text = ibtracert(f, "Hca2", lids["Hca2"], lids["Hca1"], "--force")
    assert theirs[-1][0] in (SW1, SW2) and 0x100000 not in [h[0] for h in theirs], text
    got = route_problems(m)
    assert sorted((p["problem"], p["guid"], p["lid"]) for p in got) == [
        ("route_loop", "0x%016x" % SW1, str(lids["Hca1"])),
        ("route_loop", "0x%016x" % SW2, str(lids["Hca1"]))]
    metrics = open(m.path("fabric", "metrics.prom")).read()
    assert 'umadfs_problem{kind="route_loop",severity="error",guid="0x%016x",' \
        'node_desc="umadfs test switch one",lid="%d"} 1' % (SW1, lids["Hca1"]) in metrics
    repair(f, m, "Switch1", lids["Switch1"])
    assert route(m, lids["Hca2"], lids["Hca1"])[1] == {"result": "ok", "hops": "2"}


def test_table_broken_wholesale(make_fabric, mount):
    """Every entry of a switch gone: one line that counts them, not one per
    LID."""
    f, m, lids = mount_sm_fabric(make_fabric, mount)
    # (The table set, Switch2 cannot send this host its answer.)
    set_entry(m, SW2, lids["Switch2"], {lid: 255 for lid in range(64)}, answered=False)
    got = route_problems(m)
    assert len(got) == 1, got
    assert got[0]["problem"] == "route_missing" and got[0]["guid"] == "0x%016x" % SW2
    assert "lid" not in got[0] and got[0]["lids"] == "5" and got[0]["lid_ranges"] == "1-5"
    assert route(m, lids["Hca3"], lids["Hca1"])[1] == {
        "result": "unrouted", "at": "0x%016x" % SW2}
    repair(f, m, "Switch2", lids["Switch2"])


def test_routed_lids(tmp_path, make_fabric, mount):
    """A leaf's uplinks carry what the leaf forwards upward: routed_lids of
    each port as ibroute's count, the uplinks' sum as its entries on them,
    and metrics.prom the same."""
    f = tm.fat_tree(tmp_path, make_fabric, 4, 2, 4)
    m = mount("H0002", fabric=f)
    sweep(m)
    metrics = open(m.path("fabric", "metrics.prom")).read()
    for guid, lid in switches(m).items():
        table = ibroute(f, "H0002", lid)
        d = m.path("fabric", "nodes", "0x%016x" % guid, "ports")
        ports = sorted(int(p) for p in os.listdir(d))
        for p in ports:
            n = int(open(os.path.join(d, str(p), "routed_lids")).read())
            assert n == sum(1 for v in table.values() if v == p), (guid, p)
            assert re.search(r'^umadfs_port_routed_lids\{guid="0x%016x",[^}]*port="%d"\} %d$'
                             % (guid, p, n), metrics, re.M), (guid, p)
        if ports[-1] == 6:      # a leaf: HCAs on 1..4, spines on 5..6
            up = sum(int(open(os.path.join(d, str(p), "routed_lids")).read())
                     for p in (5, 6))
            assert up == sum(1 for v in table.values() if v in (5, 6)) > 0
    # CA ports have none.
    cas = [e[0] for e in endpoints(f, "H0002") if e[0] != e[1]]
    port = m.path("fabric", "nodes", "0x%016x" % cas[0], "ports", "1")
    assert os.path.isdir(port) and not os.path.exists(os.path.join(port, "routed_lids"))


def test_bad_names(fabric, mount):
    m = mount("Hca1")
    sweep(m)
    routes = m.path("fabric", "routes")
    assert os.listdir(routes) == []
    lid3 = tm.lid_of(fabric, "Hca3")
    assert os.listdir(os.path.join(routes, str(lid3))) == []
    for bad in ("abc/1", "1/0xzz", "0/1", "1/0", "1/0xc000", "1/999",
                "999/1", "1/0x0000000000999999", "1/-1", "1/1/2"):
        expect_errno(errno.ENOENT if bad != "1/1/2" else errno.ENOTDIR,
                     os.stat, os.path.join(routes, bad))
    # A switch's port 0 by its GUID (its node's, in ibsim) or its LID, hex
    # or decimal: both ways.
    sw = "0x%016x" % SW2
    hops, res = route(m, lid3, sw)
    assert res["result"] == "ok" and hops[-1] == (SW2, 1, None)
    hops, res = route(m, sw, "0x%x" % lid3)
    assert res["result"] == "ok" and hops[0] == (SW2, None, 1)
    # The file is read-only.
    expect_errno(errno.EACCES, open, os.path.join(routes, str(lid3), sw), "w")


def test_routes_off(fabric, mount):
    # (Without the traps' agent on either: whether its issm is held when
    # the sweep asks the local port changes the count by one.)
    on = mount("Hca1", options=("fabric_traps=off",))
    off = mount("Hca2", options=("fabric_routes=off", "fabric_traps=off"))
    sweep(on)
    sweep(off)
    kv = [dict(ln.split(" ", 1) for ln in open(x.path("fabric", "sweep")).read().splitlines()
               if " " in ln) for x in (on, off)]
    assert kv[0]["nodes"] == kv[1]["nodes"]
    # One LinearForwardingTable block per switch and its SL-to-VL probe
    # (none without tables), and one MulticastForwardingTable block
    # (opensm's broadcast group's MLID).
    assert (kv[0]["sl2vl_mads"], kv[1]["sl2vl_mads"]) == ("2", "0")
    assert int(kv[0]["mads"]) == int(kv[1]["mads"]) + 2 + 2 + 2
    assert not os.path.exists(off.path("fabric", "routes"))
    g = "0x%016x" % SW1
    assert not os.path.exists(off.path("fabric", "nodes", g, "lft"))
    assert not os.path.exists(off.path("fabric", "nodes", g, "ports", "7", "routed_lids"))
    assert "umadfs_port_routed_lids" not in open(off.path("fabric", "metrics.prom")).read()
    # No table, no judgement of the routing.
    assert open(off.path("fabric", "routing")).read() == ""
    assert "umadfs_credit_loops" not in open(off.path("fabric", "metrics.prom")).read()
    assert open(on.path("fabric", "routing")).read().startswith("pairs ")


# -- when a sweep reads the tables (docs/files.md, "What a sweep asks") --

SETTLE_S = 8        # fabric_routes_settle: the quick tree's SM is done in 1 s
MAX_AGE_S = 10      # fabric_routes_max_age of the Set test
PAIRS = 40          # random pairs of endports whose routes are compared


def sweep_kv(m):
    """A sweep now, and its sweep file as a dict."""
    sweep(m)
    return tm.sweep_kv(m)


def steady(m, timeout=60):
    """Sweeps until one reads no table and finds no route_* problem (the SM
    may be bringing a new fabric up, or routing it again): that sweep's
    key-values, and when the last sweep that read every table started."""
    deadline, read_at = time.monotonic() + timeout, None
    while True:
        t = time.monotonic()
        kv = sweep_kv(m)
        if kv["lfts_read"] == kv["switches"]:
            read_at = t
        if kv["lfts_read"] == "0" and not route_problems(m):
            return kv, read_at
        assert time.monotonic() < deadline, (kv, route_problems(m))
        time.sleep(0.5)


def all_active(m, nlinks):
    """Sweeps until the view has nlinks links, every one Active."""
    deadline = time.monotonic() + 30
    while True:
        kv = sweep_kv(m)
        states = re.findall(r" state=(\S+)$", open(m.path("fabric", "links")).read(), re.M)
        if int(kv["links"]) == nlinks and set(states) == {"Active"}:
            return
        assert time.monotonic() < deadline, (kv, states)
        time.sleep(0.5)


def check_tables(f, m, host, ends, rng):
    """Every switch's lft as ibroute reads it now, and routes/ as
    ibtracert follows it for PAIRS random pairs of endports."""
    for guid, lid in switches(m).items():
        assert lft(m, guid) == ibroute(f, host, lid), "switch %#x" % guid
    for _ in range(PAIRS):
        a, b = rng.choice(ends), rng.choice(ends)
        ours, res = route(m, a[2], b[2])
        theirs, rc, text = ibtracert(f, host, a[2], b[2])
        assert rc == 0 and res["result"] == "ok", (a, b, res, text)
        assert ours == theirs, (a, b, ours, text)


def test_tables_read_when_they_can_change(tmp_path, make_fabric, mount):
    """A repeated sweep with nothing changed reads no table, and asks no
    LinearForwardingTable block: the MADs of a mount without tables (but
    for each switch's SwitchInfo).  A leaf's uplink pulled, then put back:
    the SM routes around it, the sweeps read every table, and the first
    that starts fabric_routes_settle after the view saw the last change
    has every switch's lft as ibroute reads it and the routes ibtracert
    follows; the one after reads none again."""
    f = tm.fat_tree(tmp_path, make_fabric, 4, 2, 4)
    # (Without the traps' agent, whose issm changes what the sweep asks of
    # the local port: the two mounts alike but for the tables.)
    m = mount("H0002", fabric=f, options=("fabric_routes_settle=%d" % (SETTLE_S * 1000),
                                          "fabric_traps=off"))
    off = mount("H0003", fabric=f, options=("fabric_routes=off", "fabric_traps=off"))
    first = sweep_kv(m)
    nsw, nlinks = int(first["switches"]), int(first["links"])
    assert (nsw, nlinks) == (6, 24) and first["lfts_read"] == "6", first
    steady(m)
    ends = endpoints(f, "H0002")
    rng = random.Random(30)
    for cmd, links in ((None, nlinks), ('Unlink "L002"[5]', nlinks - 1),
                       ('ReLink "L002"[5]', nlinks)):
        if cmd:
            f.command(cmd)
            # Seen (the SM's trap and a refresh, or this sweep itself):
            # every table read, by every sweep within the settling time.
            kv = sweep_kv(m)
            assert kv["lfts_read"] == str(nsw), (cmd, kv)
            all_active(m, links)
            time.sleep(SETTLE_S + 1)
            kv = sweep_kv(m)
            assert kv["lfts_read"] == str(nsw), (cmd, kv)
        check_tables(f, m, "H0002", ends, rng)
        sweep(off)          # (its first sweep since the change asks more)
        kv, kv_off = sweep_kv(m), sweep_kv(off)
        assert kv["lfts_read"] == "0", (cmd, kv)
        # (less the detail counters' Gets: each mount's slice of its own)
        assert int(kv["mads"]) - int(kv["detail_mads"]) == \
            int(kv_off["mads"]) - int(kv_off["detail_mads"]) + nsw, (cmd, kv, kv_off)


def set_block0(m, lid, block):
    with mf.Recv(m) as rx:
        mf.write_send(m, "class=smi method=set attr=0x0019 attrmod=0 lid=%d data=%s\n"
                      % (lid, bytes(block).hex()))
        ans = rx.line(timeout=10)
    assert ans["method"] == "getresp" and int(ans["status"], 16) == 0, ans


def test_table_set_by_hand(tmp_path, make_fabric, mount):
    """An entry set behind the SM's back and the view's (a
    LinearForwardingTable Set by another mount: the other uplink for a
    remote HCA's LID, which breaks no route) is not read at once - the
    table is the sweep before's - and shows within fabric_routes_max_age;
    one set through the mount's own send is read by the next sweep, that
    switch's table alone."""
    f = tm.fat_tree(tmp_path, make_fabric, 4, 2, 4)
    m = mount("H0002", fabric=f, options=("fabric_routes_max_age=%d" % (MAX_AGE_S * 1000),))
    other = mount("H0003", fabric=f)
    _, read_at = steady(m)
    cas = {e[2] for e in endpoints(f, "H0002") if e[0] != e[1]}
    # A leaf (HCAs on 1..4, spines on 5..6) sending a CA's LID up port 5.
    guid, lid, target = next((g, sl, t) for g, sl in sorted(switches(m).items())
                             for t, p in sorted(lft(m, g).items()) if p == 5 and t in cas)
    before = lft(m, guid)
    block = [255] * 64
    for k, p in before.items():
        block[k] = p
    block[target] = 6
    set_block0(other, lid, block)
    assert ibroute(f, "H0002", lid)[target] == 6
    kv = sweep_kv(m)
    if time.monotonic() < read_at + MAX_AGE_S / 2:     # not due yet
        assert kv["lfts_read"] == "0" and lft(m, guid) == before, kv
    while lft(m, guid)[target] != 6:
        assert time.monotonic() < read_at + MAX_AGE_S + 2, "not read within the bound"
        time.sleep(0.5)
        sweep(m)
    assert lft(m, guid) == ibroute(f, "H0002", lid)
    # Put back through the mount's own send: read by the next sweep.
    block[target] = 5
    set_block0(m, lid, block)
    assert ibroute(f, "H0002", lid)[target] == 5
    kv = sweep_kv(m)
    assert kv["lfts_read"] == "1" and lft(m, guid) == ibroute(f, "H0002", lid), kv
