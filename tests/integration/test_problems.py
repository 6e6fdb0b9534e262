"""fabric/problems: what is wrong, judged from the sweep, compared with the
peers that answer the same questions (ibqueryerrors for thresholds,
sminfo for the SM) and with what the simulator was told to break."""

import os
import re

import pytest

import diags as tm

GUID_SW1, GUID_SW2 = "0x0000000000200000", "0x0000000000200001"


sweep, problems, KV = tm.sweep, tm.problems, tm.KV


def ibqueryerrors(f, host, *args):
    """{(guid, port, counter)} ibqueryerrors reports, less its `port ALL`
    lines: a switch's GUID from its header, a CA's from its port line."""
    r = tm.tool(f, host, "ibqueryerrors", *args, check=False)
    assert r.returncode in (0, 1), r.stderr
    found = set()
    for ln in r.stdout.splitlines():
        mm = re.match(r"\s*GUID (0x[0-9a-f]+) port (\d+):(.*)$", ln)
        if not mm:
            continue
        for counter in re.findall(r"\[(\w+) == \d+", mm.group(3)):
            found.add((int(mm.group(1), 16), int(mm.group(2)), counter))
    return found, r.stdout


def ours(m, f):
    """{(port GUID, port, counter)} of counter_over_threshold problems, the
    node GUID made the port's as ibqueryerrors names ports (a CA's port
    GUID; a switch's port 0's, which is its node GUID in ibsim)."""
    got = set()
    for p in problems(m, "counter_over_threshold"):
        guid = int(p["guid"], 16)
        kind = open(m.path("fabric", "nodes", p["guid"], "node_type")).read()
        if not kind.startswith("2"):   # a CA: ibsim's port GUID is node + port
            guid += int(p["port"])
        got.add((guid, int(p["port"]), p["counter"]))
    return got


def test_counter_over_threshold_equals_ibqueryerrors(make_fabric, mount, tmp_path):
    f = tm.active_fabric(make_fabric)
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"SymbolErrorCounter": 5,
                                                 "LinkDownedCounter": 3})
    tm.perf_set(f, "Switch2", 8, "PortCounters", {"PortRcvErrors": 12})
    tm.perf_set(f, "Hca1", 1, "PortCounters", {"VL15Dropped": 2,
                                              "SymbolErrorCounter": 200})
    m = mount("Hca1", fabric=f)
    sweep(m)
    theirs, out = ibqueryerrors(f, "Hca2")
    assert {c for _, _, c in theirs} >= {"SymbolErrorCounter", "LinkDownedCounter",
                                         "PortRcvErrors", "VL15Dropped"}, out
    assert ours(m, f) == theirs, out

    # The same file for both: thresholds hide some, not others.
    th = tmp_path / "thresholds"
    th.write_text("# as ibqueryerrors reads it\nSymbolErrorCounter=100\n"
                  "LinkDownedCounter=3\n\nPortRcvErrors=11\n")
    m2 = mount("Hca2", fabric=f, options=["fabric_thresholds=%s" % th])
    sweep(m2)
    theirs, out = ibqueryerrors(f, "Hca2", "--threshold-file", str(th))
    assert ("SymbolErrorCounter" in {c for _, _, c in theirs} and
            "LinkDownedCounter" not in {c for _, _, c in theirs}), out
    assert ours(m2, f) == theirs, out
    p = [p for p in problems(m2, "counter_over_threshold")
         if p["counter"] == "SymbolErrorCounter"]
    assert [(q["value"], q["threshold"], q["severity"]) for q in p] == \
        [("200", "100", "error")], p


def guid_of(f, host):
    """host's node GUID, by smpquery, as fabric/ writes it."""
    import simfabric as sim
    ni = sim.parse_smpquery(tm.tool(f, host, "smpquery", "-D", "nodeinfo", "0").stdout)
    return "0x%016x" % int(ni["Guid"], 16)


def keys(ps, *names):
    return sorted(tuple(p.get(n) for n in names) for p in ps)


def test_duplicate_guid_and_lid(make_fabric, mount):
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sweep(m)
    assert not problems(m, "duplicate_lid") and not problems(m, "duplicate_guid")
    lid1 = tm.lid_of(f, "Hca1")
    out = f.command('Baselid "Hca3"[1] %d' % lid1)
    assert tm.lid_of(f, "Hca3") == lid1, out
    sweep(m)
    dup = problems(m, "duplicate_lid")
    g1, g3 = guid_of(f, "Hca1"), guid_of(f, "Hca3")
    assert keys(dup, "guid", "port", "lid", "peer_guid") == [
        (g1, "1", str(lid1), g3), (g3, "1", str(lid1), g1)], dup
    assert all(p["severity"] == "error" for p in dup)

    # Hca2 takes Hca1's node GUID: two nodes answer with one.  (A port's
    # GUID changes across a reset, which takes its link down: here,
    # ibportstate's, or the sweep would take Hca2, behind a link that
    # stands, from the one before: files.md, "What a sweep asks".)
    f.command('Guid "Hca2" %s' % g1)
    assert guid_of(f, "Hca2") == g1
    port_down(f, "Hca1", "0,1", 2)
    sweep(m)
    dup = problems(m, "duplicate_guid")
    assert [p["guid"] for p in dup] == [g1], problems(m)
    # Both places it was found: Switch1's ports 1 and 2.
    assert set(re.findall(r"\[(\d)\]", dup[0]["found"])) == {"1", "2"}, dup


def port_down(f, host, dr_path, port):
    """ibportstate's `down`: ibsim puts both ends of the link in INIT."""
    out = tm.tool(f, host, "ibportstate", "-D", dr_path, str(port), "down").stdout
    assert "Initialize" in tm.tool(f, host, "ibportstate", "-D", dr_path,
                                   str(port), "query").stdout, out


def test_sm_missing_collapses_port_not_active(make_fabric, mount):
    f = tm.quiet_fabric(make_fabric)          # opensm gone: no master SM
    m = mount("Hca1", fabric=f)
    port_down(f, "Hca1", "0,1", 7)            # Switch1[7] and Switch2[7]: INIT
    sweep(m)
    sweep(m)
    ps = problems(m)
    # (ibsim counts the packets the down link discards: counter kinds.)
    errors = [p for p in ps if p["severity"] == "error" and
              not p["problem"].startswith("counter_")]
    assert [p["problem"] for p in errors if p["problem"] != "node_unresponsive"] == \
        ["sm_missing"], ps
    assert not problems(m, "port_not_active")
    # Switch2 and Hca3 answer their PMA Gets over the link in INIT (their
    # routes back by LID cross it): lost, as perfquery's are.
    sw2, hca3 = tm.lid_of(f, "Hca1", "0,1,8"), tm.lid_of(f, "Hca1", "0,1,8,1")
    assert {p["guid"] for p in errors if p["problem"] == "node_unresponsive"} == \
        {guid_of(f, "Switch2"), guid_of(f, "Hca3")}, ps
    for lid in (sw2, hca3):
        assert tm.tool(f, "Hca1", "perfquery", str(lid), check=False).returncode


def test_port_not_active_when_the_sm_leaves_it(make_fabric, mount):
    f = make_fabric("two-switch.net")
    f.start_opensm("Hca3", extra_args=("-s", "0"))   # one sweep, no more
    for h in tm.HOSTS:
        f.wait_active(h, timeout=30)
    m = mount("Hca1", fabric=f)
    sweep(m)
    assert not problems(m, "sm_missing") and not problems(m, "port_not_active")
    port_down(f, "Hca1", "0,1", 7)
    sweep(m)
    assert not problems(m, "port_not_active"), "one sweep is not two"
    sweep(m)
    got = problems(m, "port_not_active")
    assert keys(got, "guid", "port", "found") == [
        (GUID_SW1, "7", "Init"), (GUID_SW2, "7", "Init")], problems(m)


@pytest.mark.parametrize("text,msg", [
    ("SymbolErrorCounter=10\nSymbolErrors=3\n",
     "line 2: 'SymbolErrors' is not a counter ibqueryerrors checks"),
    ("PortRcvErrors=ten\n", "line 1: PortRcvErrors: 'ten' is not a number"),
    ("# ok\nVL15Dropped=010\n", "line 2: VL15Dropped: '010' has a leading 0"),
    ("LinkDownedCounter\n", "line 1: expected Name=value"),
    ("# congestion\nPortXmitWaitPerSecond=0\n",
     "line 2: PortXmitWaitPerSecond: 0 is out of range (1 to 1000000000"),
    ("PortXmitWaitPerSecond=2000000000\n",
     "line 1: PortXmitWaitPerSecond: 2000000000 is out of range"),
    ("PortXmitWaitPerSecond=lots\n",
     "line 1: PortXmitWaitPerSecond: 'lots' is not a number"),
    ("LinkFlapCount=3\nLinkFlapWindowSeconds=0\n",
     "line 2: LinkFlapWindowSeconds: 0 is out of range (1 to 604800)"),
    ("# flaps\nLinkFlapCount=17\n", "line 2: LinkFlapCount: 17 is out of range (1 to 16)"),
    (None, "No such file or directory"),
])
def test_bad_threshold_file_fails_the_mount(tmp_path, text, msg):
    import subprocess
    import simfabric as sim
    th = tmp_path / "thresholds"
    if text is not None:
        th.write_text(text)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        cp = subprocess.run([sim.umadfs_bin(), "-f", "-o", "fabric_thresholds=%s" % th,
                             str(mnt)], capture_output=True, text=True, timeout=10)
    finally:
        if sim.is_mounted(mnt):
            subprocess.run(["fusermount3", "-uz", str(mnt)])
    assert cp.returncode == 2, cp
    assert "fabric_thresholds=%s: " % th in cp.stderr and msg in cp.stderr, cp.stderr


def ends(ps):
    return sorted((p["guid"], p["port"], p["peer_guid"], p["peer_port"]) for p in ps)


def test_cables_pulled_moved_and_back(make_fabric, mount):
    """Against the first complete sweep (the default expectation): a
    switch-to-switch cable and an HCA's pulled, then put back, then one
    moved; the problems and their events, the ports still listed."""
    f = tm.active_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sweep(m)
    assert not [p for p in problems(m) if p["severity"] == "error"], problems(m)
    g2 = guid_of(f, "Hca2")
    fd = os.open(m.path("fabric", "events"), os.O_RDONLY | os.O_NONBLOCK)
    try:
        f.command('Unlink "Switch1"[7]')
        f.command('Unlink "Hca2"[1]')
        sweep(m)
        gone = problems(m, "link_missing")
        assert ends(gone) == sorted([
            (GUID_SW1, "7", GUID_SW2, "7"), (GUID_SW2, "7", GUID_SW1, "7"),
            (GUID_SW1, "2", g2, "1"), (g2, "1", GUID_SW1, "2")]), problems(m)
        assert [p["guid"] for p in problems(m, "node_missing")] == [g2]
        # The switch ports are there, Down, with their series.
        state = open(m.path("fabric", "nodes", GUID_SW1, "ports", "7", "state")).read()
        assert state.startswith("1:"), state
        metrics = open(m.path("fabric", "metrics.prom")).read()
        assert re.search(r'^umadfs_port_state\{guid="%s",[^}]*port="7"\} 1$' % GUID_SW1,
                         metrics, re.M)
        assert re.search(r'^umadfs_node_up\{guid="%s",[^}]*\} 0$' % g2, metrics, re.M)
        assert re.search(r'^umadfs_problem\{kind="link_missing",severity="error",'
                         r'guid="%s",node_desc="[^"]*",port="7",peer_guid="%s",'
                         r'peer_port="7"\} 1$' % (GUID_SW1, GUID_SW2), metrics, re.M)

        f.command('ReLink "Switch1"[7]')
        f.command('ReLink "Hca2"[1]')
        f.wait_active("Hca2", timeout=30)
        sweep(m)
        assert not problems(m, "link_missing") and not problems(m, "node_missing")
        ev = [dict((k, v.strip('"')) for k, v in KV.findall(ln))
              for ln in os.read(fd, 1 << 20).decode().splitlines()]
        raised = [e for e in ev if e["event"] == "problem_raised"
                  and e["problem"] == "link_missing"]
        cleared = [e for e in ev if e["event"] == "problem_cleared"
                   and e["problem"] == "link_missing"]
        assert ends(raised) == ends(cleared) == ends(gone), ev

        # A cable moved: Switch1[8]-Switch2[8] to Switch1[8]-Switch2[5].
        f.command('Unlink "Switch1"[8]')
        f.command('Link "Switch1"[8] "Switch2"[5]')
        sweep(m)
        moved = problems(m, "link_moved")
        assert [(p["guid"], p["port"], p["expected"], p["found"]) for p in moved] == [
            (GUID_SW1, "8", "%s[8]-%s[8]" % (GUID_SW1, GUID_SW2),
             "%s[8]-%s[5]" % (GUID_SW1, GUID_SW2))], problems(m)
        assert not problems(m, "link_missing") and not problems(m, "link_unexpected")
    finally:
        os.close(fd)


def test_link_below_the_expected_width(make_fabric, mount):
    """Hca3's link trained at 1x (its LinkWidthEnabled set to 1x by
    ibportstate, which ibsim applies to the link at once; no SM to set it
    back) where the expected topology says 4xSDR."""
    f = tm.quiet_fabric(make_fabric)
    tm.tool(f, "Hca3", "ibportstate", "-D", "0", "1", "width", "1")
    m = mount("Hca1", fabric=f)
    sweep(m)
    g3 = guid_of(f, "Hca3")
    topo = open(m.path("fabric", "topology")).read()
    assert topo.count("1xSDR") == 2, topo       # both ends of Hca3's link
    with open(m.path("fabric", "expected"), "w") as e:
        e.write(topo.replace("1xSDR", "4xSDR"))
    sweep(m)
    bad = problems(m, "link_degraded")
    assert [(p["guid"], p["port"], p["expected"], p["found"], p["basis"])
            for p in bad] == [(g3, "1", "4xSDR", "1xSDR", "expected")], problems(m)
    assert bad[0]["peer_guid"] == GUID_SW2 and bad[0]["peer_port"] == "1"
    # The fabric port files say why: enabled 1x at the HCA's end.
    port = m.path("fabric", "nodes", g3, "ports", "1")
    assert open(os.path.join(port, "link_width")).read() == "1X\n"
    assert "1X" in open(os.path.join(port, "link_width_enabled")).read()


def test_expected_of_another_fabric(tmp_path, make_fabric, mount):
    """An expected topology of another fabric: every expected node
    node_missing once, the links found link_unexpected, bounded."""
    f = tm.active_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sweep(m)
    shift = 0xff00000000                    # every GUID another
    other = open(m.path("fabric", "topology")).read()
    other = re.sub(r'"([SHR])-([0-9a-f]{16})"',
                   lambda g: '"%s-%016x"' % (g[1], int(g[2], 16) + shift), other)
    other = re.sub(r"(guid=0x)([0-9a-f]+)",
                   lambda g: "%s%x" % (g[1], int(g[2], 16) + shift), other)
    other = re.sub(r"\(([0-9a-f]+)\)",
                   lambda g: "(%x)" % (int(g[1], 16) + shift), other)
    assert '"H-0000000000100000"' not in other, other
    with open(m.path("fabric", "expected"), "w") as e:
        e.write(other)
    sweep(m)
    ps = problems(m)
    assert len(problems(m, "node_missing")) == 5, ps
    assert len(problems(m, "link_unexpected")) == 5, ps
    assert not problems(m, "link_missing") and not problems(m, "link_moved")
    assert len(ps) <= 5 + 5 + 2, ps


def test_a_dual_hcas_down_port_stays_listed(make_fabric, mount):
    """An HCA still found through one port keeps its other port, Down,
    with its series, and that port's link is link_missing."""
    f = make_fabric("dual-port-hca.net")
    f.start_opensm("Hca2")
    f.wait_active("Hca2", timeout=30)
    m = mount("Hca2", fabric=f)
    sweep(m)
    dual = guid_of(f, "DualHca")
    f.command('Unlink "DualHca"[2]')
    sweep(m)
    port2 = m.path("fabric", "nodes", dual, "ports", "2")
    assert open(os.path.join(port2, "state")).read().startswith("1:")
    assert not os.path.lexists(os.path.join(port2, "peer"))
    metrics = open(m.path("fabric", "metrics.prom")).read()
    assert re.search(r'^umadfs_port_state\{guid="%s",[^}]*port="2"\} 1$' % dual,
                     metrics, re.M), metrics
    missing = problems(m, "link_missing")
    assert sorted((p["guid"], p["port"]) for p in missing) == sorted(
        [(dual, "2"), (GUID_SW1, "2")]), problems(m)
