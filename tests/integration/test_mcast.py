"""fabric/mcast/0xMLID/{mgid,members} and each switch's mft against
`saquery -g`, `saquery --smkey 1 -m` and `ibroute -M`, with ports joined
by MCMemberRecord Sets written to the mount's own send (docs/files.md,
"What a sweep asks").  See README.md for the fixtures."""

import ipaddress
import os
import re
import subprocess
import time

import simfabric as sim
from diags import KV, active_fabric, lid_of, problems, sweep, sweep_kv

CAS = ("Hca1", "Hca2", "Hca3")
SWITCHES = ("Switch1", "Switch2")
BROADCAST = "ff12:401b:ffff::ffff:ffff"     # opensm's IPoIB group, MLID 0xC000
OTHER = "ff12:601b:ffff::4d43"              # a group a test creates
JOIN_FULL = 1


def read(path):
    with open(path, "rb") as f:
        return f.read().decode()


def port_guid(f, host):
    return int(f.ibstat(host)["ports"][1]["Port GUID"], 16)


def sm_lid(f, host):
    out = f.run_tool(["smpquery", "portinfo", "-D", "0"], host).stdout
    return int(re.search(r"^SMLid:\.+(\d+)", out, re.M).group(1))


def mcmember(m, f, method, mgid, host, comp_mask, join_state=JOIN_FULL):
    """An MCMemberRecord Set (join) or Delete (leave) of host's port 1 for
    mgid, sent through m's send as a proxy (SM_Key 1): the SA's status."""
    data = ipaddress.IPv6Address(mgid).packed.hex()
    data += "fe80000000000000%016x" % port_guid(f, host)
    # Q_Key (opensm's default for a new group), MLID, MTU, TClass, PKey 0xffff, Rate, PacketLifeTime,
    # SL/FlowLabel/HopLimit, Scope/JoinState, ProxyJoin
    data += "00000b1b" + "0000" + "00" + "00" + "ffff" + "00" + "00" + "00000000"
    data += "%02x" % join_state + "000000"
    with open(m.path("ibsim0", "ports", "1", "send"), "w") as s:
        s.write("class=sa method=%s attr=MCMemberRecord lid=%d smkey=1 comp_mask=0x%x "
                "data=%s\n" % (method, sm_lid(f, "Hca1"), comp_mask, data))
    with open(m.path("ibsim0", "ports", "1", "recv")) as r:
        line = r.readline()
    return int(re.search(r"status=(0x[0-9a-f]+)", line).group(1), 16)


# component mask bits: MGID, PortGID, JoinState; creating a group also
# needs Q_Key, TClass, PKey, SL and FlowLabel (opensm's rule)
JOIN = 0x1 | 0x2 | 0x10000
CREATE = JOIN | 0x4 | 0x40 | 0x80 | 0x1000 | 0x2000


def joined(make_fabric, mount, options=()):
    """Hca1 and Hca2 full members of the broadcast group, Hca3 of a new one
    (3 member records: what one RMPP segment holds, all umad2sim hands a
    client)."""
    f = active_fabric(make_fabric)
    m = mount("Hca1", fabric=f, options=options)
    assert mcmember(m, f, "set", BROADCAST, "Hca1", JOIN) == 0
    assert mcmember(m, f, "set", BROADCAST, "Hca2", JOIN) == 0
    assert mcmember(m, f, "set", OTHER, "Hca3", CREATE) == 0
    settled(f)
    sweep(m)
    return f, m


def settled(f, mlids=1):
    """Waits until opensm has programmed the switches' multicast tables
    after the joins (it does so after it answers them): ibroute -M the
    same three times, half a second apart, with mlids groups forwarded
    (twice the same was not enough under the ASan daemon: a Set right
    after was undone by the SM).  (Hca3's group of one member is
    forwarded nowhere.)"""
    seen, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline:
        now = [ibroute_mft(f, sw) for sw in SWITCHES]
        seen = seen[-2:] + [now]
        if len(seen) == 3 and seen.count(now) == 3 and \
                len({g for t in now for g in t}) >= mlids:
            return
        time.sleep(0.5)
    raise AssertionError("opensm did not settle: %s" % seen)


def saquery_records(f, args):
    """saquery's records as dicts of their dotted fields."""
    out = f.run_tool(["saquery"] + args, "Hca1").stdout
    recs = []
    for ln in out.splitlines():
        if ln.startswith("MCMemberRecord"):
            recs.append({})
        mt = re.match(r"\s+(\w+)\.+(.*)$", ln)
        if mt and recs:
            recs[-1][mt.group(1)] = mt.group(2).strip()
    return recs


def gid(text):
    return ipaddress.IPv6Address(text)


def ibroute_mft(f, switch):
    """`ibroute -M` of a switch (directed route 0 from it) as {MLID: ports},
    the columns of its Ports header."""
    out = f.run_tool(["ibroute", "-M", "-D", "0"], switch).stdout
    lines = out.splitlines()
    head = next(ln for ln in lines if ln.strip().startswith("Ports:"))
    cols = {mt.start(): int(mt.group()) for mt in re.finditer(r"\d+", head)}
    table = {}
    for ln in lines:
        if re.match(r"0x[0-9a-f]{4}\s", ln):
            table[int(ln[:6], 16)] = sorted(p for c, p in cols.items()
                                            if c < len(ln) and ln[c] == "x")
    assert re.search(r"^%d valid mlids dumped" % len(table), out, re.M), out
    return table


def fabric_mft(m, f, switch):
    guid = "0x%016x" % int(f.ibstat(switch)["Node GUID"], 16)
    text = read(m.path("fabric", "nodes", guid, "mft"))
    table = {}
    for ln in text.splitlines():
        mlid, *ports = ln.split(" ")
        table[int(mlid, 16)] = [int(p) for p in ports]
    return table


def test_mcast_equals_saquery(make_fabric, mount):
    f, m = joined(make_fabric, mount)
    groups = saquery_records(f, ["-g"])
    assert {g["MGID"] for g in groups} == {BROADCAST, OTHER}
    ours = sorted(os.listdir(m.path("fabric", "mcast")))
    assert ours == sorted("0x%04x" % int(g["Mlid"], 16) for g in groups)
    assert "0xc000" in ours
    for g in groups:
        d = m.path("fabric", "mcast", "0x%04x" % int(g["Mlid"], 16))
        assert gid(read(d / "mgid").strip()) == gid(g["MGID"])
    members = saquery_records(f, ["--smkey", "1", "-m"])
    assert len(members) == 3, members
    want = {}
    for r in members:
        want.setdefault(int(r["Mlid"], 16), set()).add(
            (gid(r["PortGid"]), int(r["ScopeState"], 16) & 0xf))
    descs = {port_guid(f, h): f.run_tool(["smpquery", "nodedesc", "-D", "0"], h).stdout
             for h in CAS}
    for mlid, mem in want.items():
        lines = read(m.path("fabric", "mcast", "0x%04x" % mlid, "members")).splitlines()
        got = set()
        for ln in lines:
            mt = re.match(r'gid=(\S+) join_state=(\S+) node_desc="(.*)"$', ln)
            assert mt, ln
            g = gid(mt.group(1))
            assert mt.group(1) == g.exploded, ln
            got.add((g, {"full": 1, "non": 2, "send-only": 4}[mt.group(2)]))
            assert mt.group(3) in descs[int(g) & (2 ** 64 - 1)], (ln, descs)
        assert got == mem, (mlid, lines, members)
    s = sweep_kv(m)
    assert (s["mcast_groups"], s["mcast_members"], s["mcast_sa"]) == ("2", "3", "ok"), s


def test_mft_equals_ibroute(make_fabric, mount):
    f, m = joined(make_fabric, mount)
    forwarding = 0
    for sw in SWITCHES:
        want = ibroute_mft(f, sw)
        assert fabric_mft(m, f, sw) == want, sw
        forwarding += sum(len(ports) >= 2 for ports in want.values())
    assert forwarding, "no switch forwards a group between two ports"


def test_mft_without_groups(make_fabric, mount):
    """Before any join opensm has the broadcast group and no member: no
    switch forwards it, every mft empty, as ibroute -M says."""
    f = active_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sweep(m)
    assert os.listdir(m.path("fabric", "mcast")) == ["0xc000"]
    assert read(m.path("fabric", "mcast", "0xc000", "members")) == ""
    for sw in SWITCHES:
        assert ibroute_mft(f, sw) == {}
        assert fabric_mft(m, f, sw) == {}


def test_truncated_answer_said(make_fabric, mount):
    """A fourth member: the SA's answer needs two RMPP segments, and
    umad2sim hands the first only (saquery sees 3 records too): the sweep
    file says so."""
    f, m = joined(make_fabric, mount)
    assert mcmember(m, f, "set", OTHER, "Hca1", JOIN) == 0
    sweep(m)
    assert len(saquery_records(f, ["--smkey", "1", "-m"])) == 3
    s = sweep_kv(m)
    assert (s["mcast_members"], s["mcast_sa"]) == ("3", "truncated"), s


def linked_to(m, guid):
    """The (switch GUID, port) a CA's port 1 is linked to, by links."""
    for ln in read(m.path("fabric", "links")).splitlines():
        d = {k: v for k, v in KV.findall(ln)}
        for a, b in (("", "peer_"), ("peer_", "")):
            if int(d[a + "guid"], 16) == guid and d[a + "port"] == "1":
                return int(d[b + "guid"], 16), int(d[b + "port"])
    raise AssertionError("no link of 0x%x" % guid)


def mft_block(m, lid, data=None):
    """Block 0, position 0 (MLIDs 0xc000-0xc01f, ports 0-15) of the
    switch at lid: Get, or Set to data, through the mount's send."""
    line = "class=smi method=%s attr=MulticastForwardingTable attrmod=0 lid=%d" % (
        "set" if data else "get", lid)
    with open(m.path("ibsim0", "ports", "1", "send"), "w") as s:
        s.write(line + (" data=" + data.hex() if data else "") + "\n")
    with open(m.path("ibsim0", "ports", "1", "recv")) as r:
        ans = r.readline()
    assert "status=0x0000" in ans, ans
    mad = bytes.fromhex(ans.split(" mad=")[1].strip())
    return bytearray(mad[64:128])


def test_member_unreachable(make_fabric, mount):
    """Hca2's port taken out of the broadcast group's entry on its switch
    (a MulticastForwardingTable Set through send, ibroute -M confirms):
    mcast_member_unreachable names Hca2, sent to by Hca1; put back, it
    clears.  (fabric_routes_max_age=0: every sweep reads the tables.)"""
    f, m = joined(make_fabric, mount, options=("fabric_routes_max_age=0",))
    assert not problems(m, "mcast_member_unreachable"), problems(m)
    assert not problems(m, "mcast_loop")
    hca2 = int(f.ibstat("Hca2")["Node GUID"], 16)
    sw, port = linked_to(m, hca2)
    name = next(h for h in SWITCHES if int(f.ibstat(h)["Node GUID"], 16) == sw)
    lid = lid_of(f, name)
    block = mft_block(m, lid)
    entry = block[0] << 8 | block[1]                       # MLID 0xc000
    assert entry >> port & 1 and port in ibroute_mft(f, name)[0xc000]
    cut = bytearray(block)
    cut[0:2] = (entry & ~(1 << port)).to_bytes(2, "big")
    # opensm may still write the group's tables for a while after the
    # joins answered (under a loaded machine it undid a Set made right
    # after settled()): Set until the entry stays out for a second.
    deadline = time.monotonic() + 30
    while True:
        mft_block(m, lid, bytes(cut))
        time.sleep(1)
        if port not in ibroute_mft(f, name).get(0xc000, []):
            break
        assert time.monotonic() < deadline, "the Set did not take"
    sweep(m)
    assert fabric_mft(m, f, name) == ibroute_mft(f, name)
    found = problems(m, "mcast_member_unreachable")
    assert [(int(p["guid"], 16), p["port"], p["mlid"]) for p in found] == \
        [(hca2, "1", "0xc000")], found
    assert int(found[0]["peer_guid"], 16) == int(f.ibstat("Hca1")["Node GUID"], 16)
    assert found[0]["severity"] == "error"
    prom = read(m.path("fabric", "metrics.prom"))
    assert re.search(r'^umadfs_problem\{kind="mcast_member_unreachable",severity="error",'
                     r'guid="0x%016x",.*,mlid="0xc000"\} 1$' % hca2, prom, re.M), prom
    mft_block(m, lid, bytes(block))
    sweep(m)
    assert fabric_mft(m, f, name) == ibroute_mft(f, name)
    assert not problems(m, "mcast_member_unreachable"), problems(m)


def test_broadcast_group_not_empty_under_opensm(make_fabric, mount):
    """opensm's IPoIB broadcast group before any join, as saquery -g and
    saquery --smkey 1 -m see it (a group, no member): the SM's own, made
    whether or not a host runs IPoIB, it is not judged mcast_group_empty
    (opensm removes any other group with its last full member)."""
    f = active_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sweep(m)
    assert saquery_records(f, ["--smkey", "1", "-m"]) == []
    assert [g["Mlid"] for g in saquery_records(f, ["-g"])] == ["0xC000"]
    assert read(m.path("fabric", "mcast", "0xc000", "members")) == ""
    assert not problems(m, "mcast_group_empty"), problems(m)


def test_group_members_metric(make_fabric, mount):
    """-o fabric_metrics=all+mcast: umadfs_mcast_group_members{mgid,mlid}
    for each group saquery -g lists, its count saquery --smkey 1 -m's;
    promtool check metrics passes; the default text has no such series."""
    f, m = joined(make_fabric, mount, options=("fabric_metrics=all+mcast",))
    prom = read(m.path("fabric", "metrics.prom"))
    got = {(gid(a), int(b, 16)): int(c) for a, b, c in re.findall(
        r'^umadfs_mcast_group_members\{mgid="([0-9a-f:]+)",mlid="(0x[0-9a-f]{4})"\} (\d+)$',
        prom, re.M)}
    want = {(gid(g["MGID"]), int(g["Mlid"], 16)): 0 for g in saquery_records(f, ["-g"])}
    for r in saquery_records(f, ["--smkey", "1", "-m"]):
        want[(gid(r["MGID"]), int(r["Mlid"], 16))] += 1
    assert got == want and sum(got.values()) == 3, (got, want)
    with open(m.path("fabric", "metrics.prom")) as mf:
        r = subprocess.run(["promtool", "check", "metrics"], stdin=mf,
                           capture_output=True, text=True,
                           env=sim.go_peer_env())
    assert r.returncode == 0, r.stdout + r.stderr
    m2 = mount("Hca2", fabric=f)
    assert "umadfs_mcast_group_members" not in read(m2.path("fabric", "metrics.prom"))


def events_since(m, offset):
    with open(m.path("fabric", "events.log")) as f:
        f.seek(offset)
        return [ln for ln in f.read().splitlines() if " event=mcast_" in ln]


def test_join_and_leave_events(make_fabric, mount):
    """Hca2 leaves the broadcast group (an MCMemberRecord Delete through
    send; saquery --smkey 1 -m no longer lists it): the next sweep writes
    event=mcast_leave for it; it joins again: event=mcast_join."""
    f, m = joined(make_fabric, mount)
    hca2 = ipaddress.IPv6Address(0xfe80 << 112 | port_guid(f, "Hca2"))

    def listed():
        return {gid(r["PortGid"]) for r in saquery_records(f, ["--smkey", "1", "-m"])
                if int(r["Mlid"], 16) == 0xc000}
    assert hca2 in listed()
    log = m.path("fabric", "events.log")
    start = os.stat(log).st_size
    assert mcmember(m, f, "delete", BROADCAST, "Hca2", JOIN) == 0
    assert hca2 not in listed()
    sweep(m)
    lines = events_since(m, start)
    assert len(lines) == 1, lines
    d = dict(KV.findall(lines[0]))
    assert (d["event"], d["mlid"], gid(d["mgid"]), gid(d["gid"]), d["join_state"],
            d["node_desc"]) == ("mcast_leave", "0xc000", gid(BROADCAST), hca2, "full",
                                '"Hca2"'), lines
    start = os.stat(log).st_size
    assert mcmember(m, f, "set", BROADCAST, "Hca2", JOIN) == 0
    assert hca2 in listed()
    sweep(m)
    lines = events_since(m, start)
    assert [dict(KV.findall(ln))["event"] for ln in lines] == ["mcast_join"], lines
    assert gid(dict(KV.findall(lines[0]))["gid"]) == hca2


def test_group_traps_make_a_sweep(make_fabric, mount):
    """Subscribed to the SM's traps 66 and 67: a group created (Hca3 joins
    a new one) is trap 66 with its MGID, and the sweep it asks writes
    event=mcast_join with no sweep written by hand; the group deleted (its
    last member leaves) is trap 67 and event=mcast_leave."""
    f = active_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    deadline = time.monotonic() + 30
    while sweep_kv(m)["traps"] != "subscribed" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sweep_kv(m)["traps"] == "subscribed", sweep_kv(m)
    log = m.path("fabric", "events.log")

    def wait(start, want):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(log) as lf:
                lf.seek(start)
                got = [dict(KV.findall(ln)) for ln in lf.read().splitlines()]
            if want <= {(d["event"], d.get("trap")) for d in got}:
                return got
            time.sleep(0.2)
        raise AssertionError("no %s in %s" % (want, got))
    hca3 = ipaddress.IPv6Address(0xfe80 << 112 | port_guid(f, "Hca3"))
    start = os.stat(log).st_size
    assert mcmember(m, f, "set", OTHER, "Hca3", CREATE) == 0
    got = wait(start, {("trap", "66"), ("mcast_join", None)})
    trap = next(d for d in got if d.get("trap") == "66")
    assert gid(trap["mgid"]) == gid(OTHER)
    join = next(d for d in got if d["event"] == "mcast_join")
    assert (gid(join["mgid"]), gid(join["gid"])) == (gid(OTHER), hca3)
    start = os.stat(log).st_size
    assert mcmember(m, f, "delete", OTHER, "Hca3", JOIN) == 0
    assert OTHER not in {g["MGID"] for g in saquery_records(f, ["-g"])}
    got = wait(start, {("trap", "67"), ("mcast_leave", None)})
    assert gid(next(d for d in got if d.get("trap") == "67")["mgid"]) == gid(OTHER)
