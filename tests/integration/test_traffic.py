"""Where traffic waits (issue 31): a fabric port's detail counters
(PortRcvErrorDetails, PortXmitDiscardDetails, PortVLXmitWaitCounters)
against perfquery -E, -D and --vlxmitcounters on ports set with ibsim's
PerformanceSet."""

import errno
import os
import re

import diags as tm

SW1, HCA2 = 0x200000, 0x100002      # Switch1, Hca2 of two-switch.net

# sysfs-style name (counters/) -> (ibsim's PerformanceSet attribute and
# field, perfquery's option and field)
RCV = {
    "port_local_physical_errors": "PortLocalPhysicalErrors",
    "port_malformed_packet_errors": ("PortMalformedPacketErrors", "PortMalformedPktErrors"),
    "port_buffer_overrun_errors": "PortBufferOverrunErrors",
    "port_dlid_mapping_errors": "PortDLIDMappingErrors",
    "port_vl_mapping_errors": "PortVLMappingErrors",
    "port_looping_errors": "PortLoopingErrors",
}
XMIT = {
    "port_inactive_discards": "PortInactiveDiscards",
    "port_neighbor_mtu_discards": "PortNeighborMTUDiscards",
    "port_sw_lifetime_limit_discards": "PortSwLifetimeLimitDiscards",
    "port_sw_hoq_lifetime_limit_discards": "PortSwHOQLifetimeLimitDiscards",
}


def names(table):
    """{our name: (ibsim's field, perfquery's field)}"""
    return {k: v if isinstance(v, tuple) else (v, v) for k, v in table.items()}


def set_details(f, node, port, base):
    """Every detail counter of node[port] set to a value of its own (from
    base), and the summaries they detail moved: -> {our name: value}."""
    want = {}
    for attr, table in (("PortRcvErrorDetails", RCV), ("PortXmitDiscardDetails", XMIT)):
        for i, (ours, (sim, _)) in enumerate(names(table).items()):
            want[ours] = base + 10 * len(want) + i
            tm.perf_set(f, node, port, attr, {sim: want[ours]})
    for vl in range(8):
        want["port_xmit_wait_vl%d" % vl] = base + 1000 + vl * 7
        tm.perf_set(f, node, port, "PortVLXmitWaitCounters",
                    {"PortVLXmitWaitCounters%d" % vl: want["port_xmit_wait_vl%d" % vl]})
    tm.perf_set(f, node, port, "PortCounters",
                {"PortRcvErrors": base, "PortXmitDiscards": base + 1,
                 "PortXmitWait": base + 2})
    return want


def counters(m, guid, port):
    cdir = m.path("fabric", "nodes", "0x%016x" % guid, "ports", str(port), "counters")
    return {n: int(open(os.path.join(cdir, n)).read()) for n in os.listdir(cdir)
            if n != "reset"}


def detail(m, guid, port, name):
    """One detail counter, or None while its attribute is not answered
    (EOPNOTSUPP)."""
    try:
        return int(open(m.path("fabric", "nodes", "0x%016x" % guid, "ports", str(port),
                               "counters", name)).read())
    except OSError as e:
        assert e.errno == errno.EOPNOTSUPP, e
        return None


def peer(f, lid, port):
    """perfquery -E, -D and --vlxmitcounters of lid's port, by our names."""
    e = tm.perfquery(f, "Hca1", "-E", str(lid), str(port))
    d = tm.perfquery(f, "Hca1", "-D", str(lid), str(port))
    v = tm.perfquery(f, "Hca1", "--vlxmitcounters", str(lid), str(port))
    out = {ours: e[pq] for ours, (_, pq) in names(RCV).items()}
    out.update({ours: d[pq] for ours, (_, pq) in names(XMIT).items()})
    out.update({"port_xmit_wait_vl%d" % vl: v["PortVLXmitWait%d" % vl]
                for vl in range(16)})
    return out


def test_details_equal_perfquery(make_fabric, mount):
    """A switch port and a CA port: each detail counter in counters/ and
    metrics.prom (-o fabric_metrics=all+details) equals perfquery's, one
    file per VL of the port's OperationalVLs (VL0-7 under ibsim); a detail
    asked again when its summary moves, kept while it does not."""
    f = tm.quiet_fabric(make_fabric)
    ports = ((SW1, "Switch1", 7, 100), (HCA2, "Hca2", 1, 300))
    for guid, node, port, base in ports:
        set_details(f, node, port, base)
    m = mount("Hca1", fabric=f, options=("fabric_metrics=all+details",))
    tm.sweep(m)
    prom = open(m.path("fabric", "metrics.prom")).read()
    for guid, node, port, base in ports:
        lid = tm.lid_of(f, node)
        theirs = peer(f, lid, port)
        ours = counters(m, guid, port)
        mine = {k: v for k, v in ours.items() if k in theirs}
        assert sorted(mine) == sorted(list(names(RCV)) + list(names(XMIT)) +
                                      ["port_xmit_wait_vl%d" % vl for vl in range(8)])
        for k, v in mine.items():
            assert v == theirs[k] and v >= base, (k, v, theirs[k])
        labels = r'\{guid="0x%016x",[^}]*port="%d"' % (guid, port)
        mm = re.search(r'umadfs_port_looping_errors_total%s\} (\d+)\n' % labels, prom)
        assert mm and int(mm.group(1)) == theirs["port_looping_errors"], prom[:2000]
        for vl in range(8):
            mm = re.search(r'umadfs_port_vl_transmit_wait_total%s,vl="%d"\} (\d+)\n'
                           % (labels, vl), prom)
            assert mm and int(mm.group(1)) == theirs["port_xmit_wait_vl%d" % vl]
        assert not re.search(r'umadfs_port_vl_transmit_wait_total%s,vl="8"' % labels, prom)
    # A detail whose summary moved is asked again; one whose summary
    # stands is the snapshot before's until its turn in the rotation.
    tm.perf_set(f, "Switch1", 7, "PortRcvErrorDetails", {"PortLoopingErrors": 4321})
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"PortRcvErrors": 555})
    tm.perf_set(f, "Switch1", 7, "PortXmitDiscardDetails", {"PortInactiveDiscards": 999})
    tm.sweep(m)
    ours = counters(m, SW1, 7)
    assert ours["port_looping_errors"] == 4321
    assert ours["port_inactive_discards"] != 999
    assert tm.perfquery(f, "Hca1", "-D", str(tm.lid_of(f, "Switch1")), "7")[
        "PortInactiveDiscards"] == 999
    # Without details in fabric_metrics=, metrics.prom has none.
    m2 = mount("Hca2", fabric=f)
    tm.sweep(m2)
    assert "transmit_wait_total{" in open(m2.path("fabric", "metrics.prom")).read()
    assert "vl_transmit_wait" not in open(m2.path("fabric", "metrics.prom")).read()


def kv_lines(text):
    return dict(ln.split(" ", 1) for ln in text.splitlines())


def fabric_rates(m):
    """fabric/rates as {(guid, port): {key: value}}."""
    out = {}
    for ln in open(m.path("fabric", "rates")).read().splitlines():
        d = dict(tm.KV.findall(ln))
        out[(int(d["guid"], 16), int(d["port"]))] = d
    return out


def test_rates_equal_perfquery_difference(make_fabric, mount):
    """ports/N/rates and fabric/rates: none before two sweeps (said, not
    zeros); then PortXmitData, PortRcvData and PortXmitWait raised by
    PerformanceSet between two sweeps give the perfquery (-x) difference
    over the time between the sweeps, within 1%, and the utilisation of
    the link's rate (4X SDR: 10 Gb/s)."""
    import time
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    tm.sweep(m)
    rates = m.path("fabric", "nodes", "0x%016x" % SW1, "ports", "7", "rates")
    assert open(rates).read().startswith("none: no rates yet: they need two sweeps")
    assert open(m.path("fabric", "rates")).read().startswith("none: no rates yet")
    lid = str(tm.lid_of(f, "Switch1"))
    tm.perf_set(f, "Switch1", 7, "PortCountersExtended",
                {"PortXmitData": 10 ** 9, "PortRcvData": 3 * 10 ** 9})
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"PortXmitWait": 1000})
    t0 = time.monotonic()
    tm.sweep(m)
    t1 = time.monotonic()
    before_x = tm.perfquery(f, "Hca1", "-x", lid, "7")
    before = tm.perfquery(f, "Hca1", lid, "7")
    time.sleep(2)
    tm.perf_set(f, "Switch1", 7, "PortCountersExtended",
                {"PortXmitData": 10 ** 9 + 5 * 10 ** 8, "PortRcvData": 3 * 10 ** 9 + 10 ** 8})
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"PortXmitWait": 1000 + 60000})
    t2 = time.monotonic()
    tm.sweep(m)
    t3 = time.monotonic()
    after_x = tm.perfquery(f, "Hca1", "-x", lid, "7")
    after = tm.perfquery(f, "Hca1", lid, "7")
    ours = kv_lines(open(rates).read())
    secs = int(ours["interval_ms"]) / 1000
    assert t2 - t1 <= secs <= t3 - t0, (secs, t0, t1, t2, t3)
    for key, field, scale, table in (
            ("xmit_bytes_per_second", "PortXmitData", 4, (before_x, after_x)),
            ("rcv_bytes_per_second", "PortRcvData", 4, (before_x, after_x)),
            ("xmit_wait_per_second", "PortXmitWait", 1, (before, after))):
        want = (table[1][field] - table[0][field]) * scale / secs
        assert abs(float(ours[key]) - want) <= 0.01 * want, (key, ours[key], want)
    rate_bps = 10e9 / 8      # the port's rate file: 10 Gb/sec (4X SDR)
    assert "10 Gb/sec" in open(os.path.join(os.path.dirname(rates), "rate")).read()
    assert abs(float(ours["xmit_utilisation"]) -
               float(ours["xmit_bytes_per_second"]) / rate_bps) < 1e-5
    line = fabric_rates(m)[(SW1, 7)]
    for key in ("xmit_bytes_per_second", "rcv_bytes_per_second", "xmit_utilisation",
                "interval_ms"):
        assert line[key] == ours[key], (key, line, ours)
    # Every linked port has a line (each end of two-switch.net's 5 links).
    assert len(fabric_rates(m)) == 10
    # Counters cleared between two sweeps (perfquery -R): said, not a rate.
    tm.tool(f, "Hca1", "perfquery", "-R", lid, "7")
    tm.sweep(m)
    assert open(rates).read() == ("none: no rates: the port's counters were "
                                  "cleared between the sweeps\n")
    assert fabric_rates(m)[(SW1, 7)]["xmit_bytes_per_second"] == "-"


def ibroute_lids_out(f, lid, port):
    """The LIDs ibroute prints for the switch at lid out of port."""
    out = tm.tool(f, "Hca1", "ibroute", str(lid)).stdout
    return sum(1 for ln in out.splitlines()
               if re.match(r"^0x[0-9a-f]+ %03d : " % port, ln))


def test_port_congested(make_fabric, mount, tmp_path):
    """PortXmitWait stepped up on one switch port between two sweeps:
    port_congested on that port only, with its rate, the busiest VL and
    the LIDs routed out of it (ibroute's count); cleared at the next sweep
    where it stops growing; not raised on a mount whose threshold
    (PortXmitWaitPerSecond in its thresholds file) is above the rate; the
    alert fires on the mount's series (promtool test rules)."""
    import json
    import subprocess
    import time
    f = tm.quiet_fabric(make_fabric)
    high = tmp_path / "thresholds"
    high.write_text("# umadfs's own name\nPortXmitWaitPerSecond=900000000\n")
    m = mount("Hca1", fabric=f, options=("fabric_metrics=all+details",))
    m2 = mount("Hca2", fabric=f, options=("fabric_thresholds=%s" % high,))

    def both():
        tm.sweep(m)
        tm.sweep(m2)
    both()
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"PortXmitWait": 1000})
    tm.perf_set(f, "Switch1", 7, "PortVLXmitWaitCounters",
                {"PortVLXmitWaitCounters1": 900, "PortVLXmitWaitCounters3": 100})
    both()
    assert not tm.problems(m, "port_congested")
    time.sleep(1)
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"PortXmitWait": 1000 + 200000000})
    tm.perf_set(f, "Switch1", 7, "PortVLXmitWaitCounters",
                {"PortVLXmitWaitCounters1": 1900, "PortVLXmitWaitCounters3": 30100})
    both()
    got = tm.problems(m, "port_congested")
    assert [(p["guid"], p["port"]) for p in got] == [("0x%016x" % SW1, "7")], got
    p = got[0]
    assert p["severity"] == "warning"
    rates = kv_lines(open(m.path("fabric", "nodes", "0x%016x" % SW1, "ports", "7",
                                 "rates")).read())
    assert p["xmit_wait_per_second"] == "%.0f" % float(rates["xmit_wait_per_second"])
    assert float(p["xmit_wait_per_second"]) > 12500000 == int(p["threshold"])
    assert abs(float(p["wait_share"]) - float(p["xmit_wait_per_second"]) * 8e-9) < 1e-4
    assert p["busiest_vl"] == "3"      # grew by 30,000; VL1 is higher, by 1,000
    lid = tm.lid_of(f, "Switch1")
    assert int(p["routed_lids"]) == ibroute_lids_out(f, lid, 7) > 0
    assert p["peer_guid"] and p["peer_port"]
    assert not tm.problems(m2, "port_congested"), tm.problems(m2)
    prom = open(m.path("fabric", "metrics.prom")).read()
    series = [{"series": s, "values": "%sx20" % v} for s, v in
              re.findall(r'^(umadfs_problem\{kind="port_congested"[^}]*\}) (\S+)$',
                         prom, re.M)]
    assert len(series) == 1, prom[:3000]
    rules = os.path.join(os.path.dirname(__file__), "..", "..", "packaging",
                         "prometheus", "umadfs-alerts.yml")
    test = {"rule_files": [os.path.abspath(rules)], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series,
                       "alert_rule_test": [{"eval_time": "16m",
                                            "alertname": "UmadfsPortCongested",
                                            "exp_alerts": []}]}]}
    tf = tmp_path / "congested.yml"
    tf.write_text(json.dumps(test))
    r = subprocess.run(["promtool", "test", "rules", str(tf)], capture_output=True,
                       text=True, timeout=60)
    # Expecting none, promtool prints what did fire: the port, its labels.
    assert r.returncode == 1 and 'alertname="UmadfsPortCongested"' in r.stdout + r.stderr
    assert 'port="7"' in (r.stdout + r.stderr).split("got:")[1]
    # It stops growing: cleared.
    both()
    assert not tm.problems(m, "port_congested"), tm.problems(m)


def test_guide_promql_for_rates(tmp_path):
    """The user guide's PromQL of "Where traffic waits" passes promtool
    (each expression as a recording rule), and the first, the share of a
    link's rate, evaluates to what the counters say on two samples."""
    import json
    import subprocess
    guide = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                              "user-guide.md")).read()
    section = guide.split("\n## Where traffic waits\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```promql\n(.*?)^```$", section, re.M | re.S)
    assert len(blocks) == 1, blocks
    exprs, cur = [], []
    for ln in blocks[0].splitlines() + ["#"]:
        if ln.startswith("#"):
            if cur:
                exprs.append(" ".join(cur))
            cur = []
        else:
            cur.append(ln.strip())
    assert len(exprs) == 3, exprs
    rules = {"groups": [{"name": "guide", "rules": [
        {"record": "guide:expr%d" % i, "expr": e} for i, e in enumerate(exprs)]}]}
    rf = tmp_path / "guide-rules.yml"
    rf.write_text(json.dumps(rules))
    r = subprocess.run(["promtool", "check", "rules", str(rf)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    labels = 'guid="0x0000000000200000",node_desc="sw",node_type="switch",port="7"'
    test = {"rule_files": [str(rf)], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [
            # 1.25e9 bytes/s of link; 125e6 bytes a second sent: 0.1
            {"series": "umadfs_port_data_transmitted_bytes_total{%s}" % labels,
             "values": "0+7500000000x10"},
            {"series": "umadfs_port_rate_bytes_per_second{%s}" % labels,
             "values": "1250000000x10"}],
        "promql_expr_test": [{"expr": exprs[0], "eval_time": "10m",
                              "exp_samples": [{"labels": "{%s}" % labels,
                                               "value": 0.1}]}]}]}
    tf = tmp_path / "guide-test.yml"
    tf.write_text(json.dumps(test))
    r = subprocess.run(["promtool", "test", "rules", str(tf)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_details_rotation(make_fabric, mount):
    """The first sweep asks every port's three attributes (a fabric of up
    to 4,096 ports); with nothing moving, the next 32 sweeps ask each
    port's once between them (a slice each), so that a detail changed
    behind a summary that did not move shows within 32 sweeps."""
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    kv = kv_lines(open(m.path("fabric", "sweep")).read())
    first = int(kv["detail_mads"])
    ports = sum(1 for n in os.listdir(m.path("fabric", "nodes"))
                for p in os.listdir(m.path("fabric", "nodes", n, "ports")) if p != "0")
    assert first == 3 * ports, (first, ports)
    tm.perf_set(f, "Switch2", 8, "PortXmitDiscardDetails", {"PortInactiveDiscards": 77})
    seen, total = None, 0
    for i in range(32):
        tm.sweep(m)
        kv = kv_lines(open(m.path("fabric", "sweep")).read())
        total += int(kv["detail_mads"])
        assert int(kv["detail_mads"]) % 3 == 0 and int(kv["detail_mads"]) < 3 * ports
        c = detail(m, 0x200001, 8, "port_inactive_discards")
        if c == 77 and seen is None:
            seen = i
    assert total == 3 * ports, (total, ports)
    assert seen is not None
