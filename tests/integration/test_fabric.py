"""fabric/: the sweep against the real tools (ibnetdiscover, iblinkinfo),
peer links both ways, and the written topology back through ibsim."""

import errno
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

import simfabric as sim
from diags import sweep_kv

HERE = os.path.dirname(os.path.abspath(__file__))


def port_to_node(out):
    """CA port GUID -> node GUID, from ibnetdiscover's topology output."""
    node, m = None, {}
    for line in out.splitlines():
        g = re.match(r"caguid=0x([0-9a-f]+)", line)
        if g:
            node = int(g.group(1), 16)
        p = re.match(r"\[\d+\]\(([0-9a-f]+)\)", line)
        if p and node is not None:
            m[int(p.group(1), 16)] = node
    return m


def ibnd(fabric, host):
    """ibnetdiscover's node GUIDs by type and its links, as sets; -p names
    a CA by its port GUID, mapped back to the node's."""
    out = fabric.run_tool(["ibnetdiscover"], host).stdout
    switches = {int(g, 16) for g in re.findall(r"^switchguid=0x([0-9a-f]+)", out, re.M)}
    cas = {int(g, 16) for g in re.findall(r"^caguid=0x([0-9a-f]+)", out, re.M)}
    node_of = port_to_node(out)
    links = set()
    for line in fabric.run_tool(["ibnetdiscover", "-p"], host).stdout.splitlines():
        f = line.split()
        if " - " in line and len(f) >= 11:
            a = (int(f[3], 16), int(f[2]))
            b = (int(f[10], 16), int(f[9]))
            a = (node_of.get(a[0], a[0]), a[1])
            b = (node_of.get(b[0], b[0]), b[1])
            links.add(tuple(sorted((a, b))))
    return switches, cas, links


def our_links(m):
    links = set()
    for line in open(m.path("fabric", "links")).read().splitlines():
        kv = dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', line))
        a = (int(kv["guid"], 16), int(kv["port"]))
        b = (int(kv["peer_guid"], 16), int(kv["peer_port"]))
        links.add(tuple(sorted((a, b))))
    return links


def check_against_ibnetdiscover(fabric, m, host):
    switches, cas, links = ibnd(fabric, host)
    kv = sweep_kv(m)
    assert kv["ok"] == "1", kv
    assert int(kv["switches"]) == len(switches)
    assert int(kv["cas"]) == len(cas)
    assert int(kv["nodes"]) == len(switches) + len(cas)
    assert int(kv["links"]) == len(links)
    names = {int(n, 16) for n in os.listdir(m.path("fabric", "nodes"))}
    assert names == switches | cas
    assert our_links(m) == links
    for g in switches:
        t = open(m.path("fabric", "nodes", "0x%016x" % g, "node_type")).read()
        assert t == "2: switch\n"


def check_peers(m):
    """Every peer link resolves, and its peer's peer is the port itself."""
    nodes = m.path("fabric", "nodes")
    seen = 0
    for g in os.listdir(nodes):
        for p in os.listdir(os.path.join(nodes, g, "ports")):
            port = os.path.join(nodes, g, "ports", p)
            peer = os.path.join(port, "peer")
            if not os.path.lexists(peer):
                continue
            back = os.path.join(os.path.realpath(peer), "peer")
            assert os.path.realpath(back) == os.path.realpath(port)
            seen += 1
    return seen


def test_sweep_equals_ibnetdiscover(fabric, mount):
    m = mount("Hca1")
    check_against_ibnetdiscover(fabric, m, "Hca1")
    assert check_peers(m) == 2 * int(sweep_kv(m)["links"])
    cls = m.path("fabric", "class", "infiniband")
    for g in os.listdir(cls):
        assert os.path.realpath(os.path.join(cls, g)) == \
            os.path.realpath(m.path("fabric", "nodes", g))


def test_links_equal_iblinkinfo(fabric, mount):
    m = mount("Hca2")
    node_of = port_to_node(fabric.run_tool(["ibnetdiscover"], "Hca2").stdout)
    out = fabric.run_tool(["iblinkinfo", "--line"], "Hca2").stdout
    # "0x...  "desc"  LID  PORT[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>  0x... LID PORT[ ] ..."
    want = {}
    for line in out.splitlines():
        mm = re.match(r'\s*0x([0-9a-f]+)\s+".*?"\s+\d+\s+(\d+)\[.*?==\(\s*(\d+X)\s+'
                      r'([\d.]+) Gbps\s+(\w+)/', line)
        if mm:
            g = int(mm.group(1), 16)
            want[(node_of.get(g, g), int(mm.group(2)))] = (
                mm.group(3).lower(), mm.group(4), mm.group(5))
    assert want
    speeds = {"2.5": "SDR", "5.0": "DDR", "10.0": "QDR"}
    for line in open(m.path("fabric", "links")).read().splitlines():
        kv = dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', line))
        for end in (("guid", "port"), ("peer_guid", "peer_port")):
            w, s, st = want[(int(kv[end[0]], 16), int(kv[end[1]]))]
            assert (kv["width"], kv["speed"], kv["state"]) == (w, speeds[s], st)


def test_dual_homed_hca_peers(make_fabric, mount):
    f = make_fabric("dual-port-hca.net")
    f.start_opensm("Hca2")
    f.wait_active("Hca2", timeout=30)
    m = mount("Hca2", fabric=f)
    check_against_ibnetdiscover(f, m, "Hca2")
    assert check_peers(m) == 6
    dual = [g for g in os.listdir(m.path("fabric", "nodes"))
            if open(m.path("fabric", "nodes", g, "node_desc")).read().startswith("umadfs-dual")]
    assert len(dual) == 1
    for p in ("1", "2"):
        peer = os.readlink(m.path("fabric", "nodes", dual[0], "ports", p, "peer"))
        assert peer.endswith("/ports/" + p)


def test_generated_fat_tree(tmp_path, make_fabric, mount):
    import diags as tm
    f = tm.fat_tree(tmp_path, make_fabric, 6, 3, 5)
    m = mount("H0002", fabric=f)
    check_against_ibnetdiscover(f, m, "H0002")
    assert check_peers(m) == 2 * (30 + 18)


def test_topology_round_trip(tmp_path, fabric, mount, make_fabric):
    m = mount("Hca1")
    net = tmp_path / "written.net"
    net.write_text(open(m.path("fabric", "topology")).read())
    links = our_links(m)
    names = set(os.listdir(m.path("fabric", "nodes")))
    f2 = make_fabric(str(net))
    f2.start_opensm("H-0000000000100004")
    f2.wait_active("H-0000000000100002", timeout=30)
    m2 = mount("H-0000000000100002", fabric=f2)
    assert sweep_kv(m2)["ok"] == "1"
    assert set(os.listdir(m2.path("fabric", "nodes"))) == names
    assert our_links(m2) == links


def test_sweep_write_and_interval(fabric, mount):
    m = mount("Hca1")
    first = sweep_kv(m)["time"]
    time.sleep(1.1)
    with open(m.path("fabric", "sweep"), "w") as f:
        f.write("1\n")
    assert sweep_kv(m)["time"] != first
    with pytest.raises(OSError):
        with open(m.path("fabric", "interval_ms"), "w") as f:
            f.write("-1\n")
    assert open(m.path("fabric", "interval_ms")).read() == "0\n"
    with pytest.raises(OSError):
        open(m.path("fabric", "topology"), "w")


def test_counters_equal_perfquery(make_fabric, mount):
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    sw1, hca2 = 0x200000, 0x100002      # Switch1, Hca2 of two-switch.net
    for node, port in (("Switch1", 7), ("Hca2", 1)):
        tm.perf_set(f, node, port, "PortCounters", tm.ERROR_VALUES)
        tm.perf_set(f, node, port, "PortCountersExtended", tm.EXT_VALUES)
    m = mount("Hca1", fabric=f)
    assert sweep_kv(m)["ok"] == "1"     # the first read starts the sweep
    for guid, port in ((sw1, 7), (hca2, 1)):
        cdir = m.path("fabric", "nodes", "0x%016x" % guid, "ports", str(port),
                      "counters")
        ours = {n: int(open(os.path.join(cdir, n)).read()) for n in os.listdir(cdir)
                if n != "reset"}    # the action (test_actions.py), not a counter
        lid = tm.lid_of(f, "Switch1" if guid == sw1 else "Hca2")
        peer = tm.perfquery(f, "Hca1", str(lid), str(port))
        peer_x = tm.perfquery(f, "Hca1", "-x", str(lid), str(port))
        for name, key in tm.SYSFS_BASIC.items():
            if name != "port_xmit_wait":
                assert ours[name] == peer[key], (name, ours, peer)
        for name, key in tm.SYSFS_EXT.items():
            # The sweep's own MADs cross these ports: traffic only grows.
            assert tm.EXT_VALUES[key] <= ours[name] <= peer_x[key] or \
                key == "PortMulticastRcvPkts", (name, ours, peer_x)
    prom = open(m.path("fabric", "metrics.prom")).read()
    assert re.search(r'umadfs_port_symbol_error_total\{guid="0x0000000000200000",'
                     r'[^}]*port="7"[^}]*\} 1234\n', prom)
    # That text was read: the next snapshot's is made right after its
    # sweep, from that snapshot.
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"SymbolErrorCounter": 4321})
    sweep_now(m)
    prom = open(m.path("fabric", "metrics.prom")).read()
    assert re.search(r'umadfs_port_symbol_error_total\{guid="0x0000000000200000",'
                     r'[^}]*port="7"[^}]*\} 4321\n', prom)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PROM_LINE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$', re.M)


def prom_series(text, name):
    """{frozenset of (label, value)}: value, of metric name's series."""
    return {frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels)): v
            for n, labels, v in PROM_LINE.findall(text) if n == name}


def port_of(series, guid, port):
    """The one series of the port (labels as a dict, value)."""
    got = [(dict(k), v) for k, v in series.items()
           if dict(k)["guid"] == guid and dict(k)["port"] == port]
    assert len(got) <= 1, got
    return got[0] if got else (None, None)


def iso_epoch(iso):
    import calendar
    return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def test_metrics_labels_timestamp_and_port0(fabric, mount):
    """Port series carry stable labels only (guid, node_desc, node_type,
    port), every port with PortInfo has them (a switch's port 0 too), and
    umadfs_link_info{peer_*} is there once per linked port; the sweep's
    timestamp is to the millisecond."""
    m = mount("Hca1")
    kv = sweep_kv(m)
    prom = open(m.path("fabric", "metrics.prom")).read()
    state = prom_series(prom, "umadfs_port_state")
    assert {k for labels in state for k, _ in labels} == \
        {"guid", "node_desc", "node_type", "port"}
    assert len(state) == int(kv["ports"]) + int(kv["switches"])
    labels, v = port_of(state, "0x0000000000200000", "0")
    assert labels and labels["node_type"] == "switch" and v == "4", state
    assert port_of(prom_series(prom, "umadfs_port_symbol_error_total"),
                   "0x0000000000200000", "0")[0]
    links = prom_series(prom, "umadfs_link_info")
    assert len(links) == 2 * int(kv["links"]) and set(links.values()) == {"1"}
    labels, _ = port_of(links, "0x0000000000200000", "7")
    assert (labels["peer_guid"], labels["peer_port"], labels["peer_node_desc"]) \
        == ("0x0000000000200001", "7", "umadfs test switch two"), labels
    ts = re.search(r"^umadfs_sweep_timestamp_seconds (\d+)\.(\d{3})$", prom, re.M)
    assert ts and int(ts.group(1)) == iso_epoch(kv["time"]), prom[:800]


def test_metrics_link_down_keeps_the_port_series(make_fabric, mount):
    """A link going down changes no label of its ports' series (an alert
    on them keeps its series); only their umadfs_link_info goes, and comes
    back with the link."""
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sw1 = "0x0000000000200000"

    def metrics():
        text = open(m.path("fabric", "metrics.prom")).read()
        return (port_of(prom_series(text, "umadfs_port_state"), sw1, "7"),
                port_of(prom_series(text, "umadfs_link_info"), sw1, "7")[0])
    (before, v), link = metrics()
    assert v == "4" and link and link["peer_guid"] == "0x0000000000200001"
    f.command('Unlink "Switch1"[7]')
    assert sweep_now(m)["links"] == "4"
    (after, v), link = metrics()
    assert after == before and v == "1" and link is None
    f.command('ReLink "Switch1"[7]')
    assert sweep_now(m)["links"] == "5"
    assert metrics()[1]["peer_port"] == "7"


@pytest.mark.promtool
def test_metrics_pass_promtool(fabric, mount):
    m = mount("Hca1")
    with open(m.path("fabric", "metrics.prom")) as f:
        r = subprocess.run(["promtool", "check", "metrics"], stdin=f,
                           capture_output=True, text=True,
                           env=sim.go_peer_env())
    assert r.returncode == 0, r.stdout + r.stderr
    prom = open(m.path("fabric", "metrics.prom")).read()
    assert "umadfs_port_data_received_bytes_total{" in prom
    assert re.search(r"^umadfs_sweep_ok 1$", prom, re.M)
    assert re.search(r'^umadfs_port_state\{[^}]*port="3"[^}]*\} 1$', prom, re.M)


def test_metrics_read_anywhere(fabric, mount, tmp_path):
    """metrics.prom is made as it is read, a chunk at a time: its size is
    exact (a copy by sendfile, as Python's shutil makes, takes st_size
    bytes), reads at any offset and of any size give the text's bytes
    there (pread, tail -c, a second open read in turns)."""
    m = mount("Hca1")
    path = m.path("fabric", "metrics.prom")
    whole = open(path, "rb").read()
    assert os.stat(path).st_size == len(whole) > 32768
    shutil.copyfile(path, tmp_path / "copy.prom")
    assert (tmp_path / "copy.prom").read_bytes() == whole
    tail = subprocess.run(["tail", "-c", "1000", path], capture_output=True,
                          check=True).stdout
    assert tail == whole[-1000:]
    a, b = os.open(path, os.O_RDONLY), os.open(path, os.O_RDONLY)
    try:
        for off in (0, 1, 32767, 32768, 40000, len(whole) - 10, len(whole),
                    len(whole) + 5):
            assert os.pread(a, 70000, off) == whole[off:off + 70000], off
        got, off = [], 0
        while True:         # two opens, each taking a bit in turn
            piece = os.pread(b if len(got) % 2 else a, 4093, off)
            if not piece:
                break
            got.append(piece)
            off += len(piece)
        assert b"".join(got) == whole
        assert os.read(a, 1) == whole[:1] and os.read(a, 10) == whole[1:11]
    finally:
        os.close(a)
        os.close(b)


def family_series(prom):
    """{family: series}: the lines of each # TYPE's family."""
    out, family = {}, None
    for ln in prom.splitlines():
        if ln.startswith("# TYPE "):
            family = ln.split()[2]
            out[family] = 0
        elif not ln.startswith("#"):
            assert ln.split("{")[0].split(" ")[0] == family, ln
            out[family] += 1
    return out


@pytest.mark.promtool
def test_metrics_series_per_group(tmp_path, make_fabric, mount):
    """On a generated fat tree each group of -o fabric_metrics= has the
    series tests/bench/series.py counts (the user guide's table), and a
    mount that selects groups has their families only, promtool's check
    passing."""
    import diags as tm
    series = tm.series()
    f = tm.fat_tree(tmp_path, make_fabric, 6, 3, 5)
    m = mount("H0002", fabric=f)
    m2 = mount("H0003", fabric=f, options=("fabric_metrics=state+errors",))
    assert sweep_kv(m)["ok"] == "1"
    got = family_series(open(m.path("fabric", "metrics.prom")).read())
    # (the SM may still be bringing ports up: problems of the moment)
    want = series.series(6, 3, 5, got["umadfs_problem"])
    assert sorted(got) == sorted(sum(series.FAMILIES.values(), ())), got
    for group, families in series.FAMILIES.items():
        assert sum(got[n] for n in families) == want[group], group
    assert sum(got.values()) == want["all"]
    prom = open(m2.path("fabric", "metrics.prom")).read()
    got = family_series(prom)
    assert list(got) == list(series.FAMILIES["state"] + series.FAMILIES["errors"])
    assert sum(got.values()) == want["state"] + want["errors"]
    assert os.stat(m2.path("fabric", "metrics.prom")).st_size == len(prom)
    r = subprocess.run(["promtool", "check", "metrics"], input=prom,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def guide_rules():
    """The Prometheus rules of the user guide (its ```yaml block with a
    `groups:` key)."""
    guide = open(os.path.join(HERE, "..", "..", "docs", "user-guide.md")).read()
    blocks = re.findall(r"^```yaml\n(.*?)^```$", guide, re.M | re.S)
    rules = [b for b in blocks if b.startswith("groups:")]
    assert len(rules) == 1, blocks
    return rules[0]


@pytest.mark.promtool
def test_guide_rules_join_a_counter_with_its_peer(fabric, mount, tmp_path):
    """The user guide's recording rule (a port counter joined with its
    umadfs_link_info) under `promtool test rules`, on series as
    metrics.prom has them: the result is the counter with the peer's
    labels."""
    import json
    m = mount("Hca1")
    prom = open(m.path("fabric", "metrics.prom")).read()
    sw1 = "0x0000000000200000"
    rules = tmp_path / "rules.yml"
    rules.write_text(guide_rules())
    series = []
    for name in ("umadfs_port_symbol_error_total", "umadfs_link_info"):
        for labels, v in prom_series(prom, name).items():
            series.append({"series": "%s{%s}" % (name, ",".join(
                '%s="%s"' % kv for kv in sorted(labels))), "values": "%s %s" % (v, v)})
    counter, v = port_of(prom_series(prom, "umadfs_port_symbol_error_total"), sw1, "7")
    link, _ = port_of(prom_series(prom, "umadfs_link_info"), sw1, "7")
    want = dict(counter, **link)
    record = re.search(r"record: (\S+)", guide_rules()).group(1)
    test = {"rule_files": [str(rules)], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [{
            "expr": '%s{guid="%s",port="7"}' % (record, sw1), "eval_time": "1m",
            "exp_samples": [{"labels": "%s{%s}" % (record, ",".join(
                '%s="%s"' % kv for kv in sorted(want.items()))),
                "value": float(v)}]}]}]}
    tf = tmp_path / "test.yml"
    tf.write_text(json.dumps(test))
    r = subprocess.run(["promtool", "check", "rules", str(rules)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(["promtool", "test", "rules", str(tf)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def node_exporter(sysfs, tmp_path, *args):
    """One scrape of a node_exporter run by hand on 127.0.0.1."""
    import urllib.request
    port = free_port()
    log = open(tmp_path / "node_exporter.log", "a")
    p = subprocess.Popen(["prometheus-node-exporter", "--path.sysfs=%s" % sysfs,
                          "--collector.disable-defaults", "--collector.infiniband",
                          *args, "--web.listen-address=127.0.0.1:%d" % port],
                         stdout=subprocess.DEVNULL, stderr=log,
                         env=sim.go_peer_env())
    try:
        for _ in range(50):
            try:
                return urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                              timeout=5).read().decode()
            except OSError:
                time.sleep(0.1)
    finally:
        p.terminate()
        p.wait()
    return None


@pytest.mark.node_exporter
def test_node_exporter_both_ways(fabric, mount, tmp_path):
    m = mount("Hca1")
    assert sweep_kv(m)["ok"] == "1"
    text = node_exporter(m.path("fabric"), tmp_path, "--collector.textfile",
                         "--collector.textfile.directory=%s" % m.path("fabric"))
    assert text
    assert 'node_scrape_collector_success{collector="infiniband"} 1' in text
    assert 'node_scrape_collector_success{collector="textfile"} 1' in text
    assert re.search(r"^umadfs_sweep_ok 1$", text, re.M)
    for g in os.listdir(m.path("fabric", "nodes")):
        assert 'device="%s"' % g in text
    sym = open(m.path("fabric", "nodes", "0x0000000000200000", "ports", "7",
                      "counters", "port_xmit_packets")).read().strip()
    mm = re.search(r'^node_infiniband_port_packets_transmitted_total\{device='
                   r'"0x0000000000200000",port="7"\} (\S+)$', text, re.M)
    assert mm and float(mm.group(1)) == float(sym)


def read_events(fd, want, timeout=5.0):
    """Lines from the events fd (O_NONBLOCK) until want of them or timeout."""
    import select
    buf, deadline = b"", time.monotonic() + timeout
    while buf.count(b"\n") < want and time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], max(0, deadline - time.monotonic()))
        if r:
            buf += os.read(fd, 65536)
    return [dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', ln))
            for ln in buf.decode().splitlines()]


def sweep_now(m):
    with open(m.path("fabric", "sweep"), "w") as f:
        f.write("1\n")
    return sweep_kv(m)


def test_events_unlink_relink_and_errors(make_fabric, mount):
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    assert sweep_kv(m)["links"] == "5"
    peer7 = m.path("fabric", "nodes", "0x0000000000200000", "ports", "7", "peer")
    assert os.path.islink(peer7)
    fd = os.open(m.path("fabric", "events"), os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(BlockingIOError):
            os.read(fd, 4096)
        f.command('Unlink "Switch1"[7]')
        assert sweep_now(m)["links"] == "4"
        ev = read_events(fd, 2)
        downs = {(e["guid"], e["port"], e["peer_guid"], e["peer_port"])
                 for e in ev if e["event"] == "link_down"}
        assert downs == {("0x0000000000200000", "7", "0x0000000000200001", "7"),
                         ("0x0000000000200001", "7", "0x0000000000200000", "7")}, ev
        assert not os.path.lexists(peer7)
        assert "port=7 " not in open(m.path("fabric", "links")).read().replace(
            "peer_port=7 ", "")
        f.command('ReLink "Switch1"[7]')
        assert sweep_now(m)["links"] == "5"
        ups = [e for e in read_events(fd, 2) if e["event"] == "link_up"]
        assert len(ups) == 2 and os.path.islink(peer7)
        # Switch1's counters: with no SM the link put back stays Init, and
        # Switch2's answers to this host, routed over it, are lost (as
        # perfquery's are).
        sw2 = tm.lid_of(f, "Hca1", "0,1,8")
        assert tm.tool(f, "Hca1", "perfquery", str(sw2), "8", check=False).returncode
        f.command('PerformanceSet "Switch1"[8] PortCounters.SymbolErrorCounter=7')
        sweep_now(m)
        # (The Unlink's discards on port 7 show too: only symbol_error here.)
        ev = [e for e in read_events(fd, 1) if e["event"] == "counter_increased"
              and e["counter"] == "symbol_error"]
        assert [(e["guid"], e["port"], e["counter"], e["delta"]) for e in ev] == \
            [("0x0000000000200000", "8", "symbol_error", "7")], ev
        assert ev[0]["peer_guid"] == "0x0000000000200001"
    finally:
        os.close(fd)


def test_sweep_under_packet_loss(make_fabric, mount):
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    assert sweep_kv(m)["ok"] == "1"
    f.command('Error "Hca3"[1] 30')
    timeouts = 0
    for _ in range(6):
        kv = sweep_now(m)
        assert kv["ok"] == "1"
        timeouts += int(kv["timeouts"])
        if timeouts:
            break
    assert timeouts > 0
    assert "umadfs_sweep_timeouts" in open(m.path("fabric", "metrics.prom")).read()


def test_events_blocking_read_and_poll(fabric, mount):
    import select
    import threading
    m = mount("Hca1")
    assert sweep_kv(m)["ok"] == "1"
    fd = os.open(m.path("fabric", "events"), os.O_RDONLY)
    try:
        p = select.poll()
        p.register(fd, select.POLLIN)
        assert p.poll(200) == []            # nothing changed: not readable
        got = []

        def reader():
            try:
                got.append(os.read(fd, 4096))
            except OSError as e:
                got.append(e.errno)
        t = threading.Thread(target=reader)
        t.start()
        t.join(0.3)
        assert t.is_alive()                 # a blocking read waits
    finally:
        p.unregister(fd)
    m.unmount()                             # ... and is answered at unmount
    t.join(5)
    assert not t.is_alive() and got == [errno.ENODEV]
    os.close(fd)


def slow_sweep_writer(m):
    """A thread that writes sweep, started 0.2 s ago: the thread, and a
    list that gets "done" or the errno."""
    import threading
    got = []

    def writer():
        try:
            with open(m.path("fabric", "sweep"), "w") as fw:
                fw.write("1\n")
            got.append("done")
        except OSError as e:
            got.append(e.errno)
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    time.sleep(0.2)
    return t, got


def test_sigterm_during_sweep_answers_the_writer(make_fabric, mount):
    """A sweep slowed by a node that answers nothing (Error 100%: three
    tries of 200 ms) is running when SIGTERM comes: the blocked writer of
    sweep is answered and the daemon gone within 2 s."""
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    assert sweep_kv(m)["ok"] == "1"
    f.command('Error "Hca3"[1] 100')
    t, got = slow_sweep_writer(m)
    assert not got, got                     # still sweeping
    t0 = time.monotonic()
    rc = m.sigterm(2.0)
    t.join(2.0)
    assert rc == 0
    assert got and got[0] in (errno.ENODEV, errno.ENOTCONN, "done"), got
    assert time.monotonic() - t0 < 2.0


def test_sigterm_with_fabric_files_open(fabric, mount):
    """SIGTERM while topology, links, metrics.prom and events.log are
    open: the daemon exits 0 at once, and what those opens held is freed
    though their RELEASE never comes (the valgrind pass checks that)."""
    m = mount("Hca1")
    fds = [os.open(m.path("fabric", n), os.O_RDONLY)
           for n in ("topology", "links", "metrics.prom", "events.log")]
    try:
        assert os.read(fds[1], 64).startswith(b"guid=")
        assert m.sigterm(10.0) == 0
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass


def test_parked_sweep_writer_leaves_the_worker_free(make_fabric, mount):
    """With one FUSE worker (max_threads=1), a writer of sweep waiting for
    a slow sweep (a node that answers nothing: three tries of 200 ms) is
    parked, not in the worker: another file reads meanwhile, and the
    writer gets its one answer when the sweep is complete."""
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f, options=("max_threads=1",))
    assert sweep_kv(m)["ok"] == "1"
    f.command('Error "Hca3"[1] 100')
    t, got = slow_sweep_writer(m)
    assert open(m.path("fabric", "interval_ms")).read() == "0\n"
    assert not got, got                     # read while the writer waited
    t.join(30)
    assert got == ["done"], got
    f.command('Error "Hca3"[1] 0')
    assert sweep_now(m)["unreachable"] == "0"


ALARMED_CALL = """
import ctypes, errno, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
signal.signal(signal.SIGALRM, lambda s, f: None)    # no SA_RESTART
signal.setitimer(signal.ITIMER_REAL, 0.2)
path = sys.argv[2].encode()
if sys.argv[1] == "open":
    r = libc.open(path, os.O_RDONLY)
else:
    r = libc.write(os.open(path, os.O_WRONLY), b"1\\n", 2)
e = ctypes.get_errno()
print("EINTR" if r < 0 and e == errno.EINTR else "r=%d errno=%d" % (r, e))
"""


def interrupted_by_alarm(call, path):
    """open(path) or write(path) (call) in a child whose SIGALRM (0.2 s)
    interrupts it: "EINTR" if that call failed so, else what it did."""
    cp = subprocess.run([sys.executable, "-c", ALARMED_CALL, call, str(path)],
                        capture_output=True, text=True, timeout=30)
    return cp.stdout.strip() or cp.stderr


def test_interrupted_sweep_waits(make_fabric, mount):
    """A sweep slowed by a node that answers nothing: the first open of
    links (no snapshot yet: it waits for the first sweep) and a writer of
    sweep each get EINTR from a signal; the sweeps go on."""
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    f.command('Error "Hca3"[1] 100')
    assert interrupted_by_alarm("open", m.path("fabric", "links")) == "EINTR"
    assert interrupted_by_alarm("write", m.path("fabric", "sweep")) == "EINTR"
    f.command('Error "Hca3"[1] 0')
    kv = sweep_now(m)
    assert kv["ok"] == "1" and kv["unreachable"] == "0", kv


def test_no_active_port(make_fabric, mount):
    f = make_fabric("two-switch.net")       # no SM: no port is ACTIVE
    m = mount("Hca1", fabric=f)
    kv = sweep_kv(m)
    assert kv["ok"] == "0" and kv["error"] == "no ACTIVE port", kv
    assert open(m.path("fabric", "topology")).read() == ""
    assert open(m.path("fabric", "links")).read() == ""
    assert os.listdir(m.path("fabric", "nodes")) == []
    f.start_opensm("Hca3")
    f.wait_active("Hca1", timeout=30)
    assert sweep_now(m)["ok"] == "1"        # the next sweep tries again


def write_interval(m, value):
    """Writes interval_ms: None, or the errno of the refusal and
    last_error's line."""
    try:
        with open(m.path("fabric", "interval_ms"), "w") as f:
            f.write(value)
            f.flush()
    except OSError as e:
        return e.errno, open(m.path("fabric", "last_error")).read()
    return None


def test_modes_and_bad_input(fabric, mount):
    m = mount("Hca1", options=("fabric_interval_min=100",))
    modes = {n: os.stat(m.path("fabric", n)).st_mode & 0o7777
             for n in ("sweep", "interval_ms", "topology", "links", "metrics.prom",
                       "events", "events.log", "last_error")}
    assert modes == {"sweep": 0o644, "interval_ms": 0o644, "topology": 0o444,
                     "links": 0o444, "metrics.prom": 0o444, "events": 0o444,
                     "events.log": 0o444, "last_error": 0o444}
    assert open(m.path("fabric", "last_error")).read() == ""
    for bad in ("abc\n", "-5\n", "1x\n", "\n", "1\n2\n"):
        err, why = write_interval(m, bad)
        assert err == errno.EINVAL
        assert why == ("interval_ms: '%s' is not a number from 0 to 86400000\n" %
                       bad.strip() if bad.strip() and "\n" not in bad.strip() else
                       "interval_ms: expected one number from 0 to 86400000\n"), why
    with open(m.path("fabric", "interval_ms"), "w") as f:
        f.write("250\n")
    assert open(m.path("fabric", "interval_ms")).read() == "250\n"
    first = sweep_kv(m)["time"]
    time.sleep(1.3)                         # background sweeps every 250 ms
    assert sweep_kv(m)["time"] != first
    with open(m.path("fabric", "interval_ms"), "w") as f:
        f.write("0\n")
    st = os.stat(m.path("fabric", "topology"))
    assert st.st_size == len(open(m.path("fabric", "topology")).read())
    for name in ("events", "events.log", "last_error"):
        with pytest.raises(PermissionError):
            open(m.path("fabric", name), "w")


@pytest.mark.node_exporter
def test_node_exporter_on_the_local_tree(fabric, mount, tmp_path):
    """The mount itself as class/infiniband: the host's own ports."""
    m = mount("Hca1")
    root = tmp_path / "sys"
    (root / "class").mkdir(parents=True)
    os.symlink(m.mountpoint, root / "class" / "infiniband")
    text = node_exporter(root, tmp_path)
    assert text
    assert 'node_scrape_collector_success{collector="infiniband"} 1' in text, \
        open(tmp_path / "node_exporter.log").read()[-2000:]
    assert re.search(r'^node_infiniband_info\{board_id="[^"]+",device="ibsim0"', text, re.M)
    assert re.search(r'^node_infiniband_state_id\{device="ibsim0",port="1"\} 4$',
                     text, re.M)


def past_second_of(kv):
    """Waits until the wall clock's second is past the sweep's `time`, so
    that the next sweep's time differs from it."""
    while time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) <= kv["time"]:
        time.sleep(0.05)


def test_events_node_gone_and_appeared(make_fabric, mount):
    """Every event carries the time of the sweep that found it (node_gone
    and link_down too, which compare the sweeps the other way)."""
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    assert sweep_kv(m)["nodes"] == "5"
    hca2 = "0x0000000000100002"
    fd = os.open(m.path("fabric", "events"), os.O_RDONLY | os.O_NONBLOCK)
    try:
        past_second_of(sweep_kv(m))
        f.command('Unlink "Hca2"[1]')
        kv = sweep_now(m)
        assert (kv["nodes"], kv["links"]) == ("4", "4")
        assert hca2 not in os.listdir(m.path("fabric", "nodes"))
        assert hca2 not in os.listdir(m.path("fabric", "class", "infiniband"))
        ev = read_events(fd, 2)
        # (the problems the change raised follow: test_problems.py's)
        assert {(e["event"], e["guid"]) for e in ev
                if not e["event"].startswith("problem_") and
                e["event"] != "counter_increased"} == {
            ("node_gone", hca2), ("link_down", "0x0000000000200000")}, ev
        # A sweep that found the link down by the Get it sent Hca2's PMA
        # (Hca2 kept: files.md, "What a sweep asks"), not a light sweep
        # before it, had that Get discarded at Switch1's port 2: once.
        assert all((e["guid"], e["port"], e["counter"], e["delta"]) ==
                   ("0x0000000000200000", "2", "port_xmit_discards", "1")
                   for e in ev if e["event"] == "counter_increased"), ev
        assert {e["time"] for e in ev} == {kv["time"]}, (ev, kv["time"])
        past_second_of(kv)
        f.command('ReLink "Hca2"[1]')
        kv = sweep_now(m)
        assert (kv["nodes"], kv["links"]) == ("5", "5")
        ev = read_events(fd, 3)
        assert ("node_appeared", hca2) in {(e["event"], e["guid"]) for e in ev}, ev
        assert {e["time"] for e in ev} == {kv["time"]}, (ev, kv["time"])
        assert open(m.path("fabric", "nodes", hca2, "node_desc")).read() == "Hca2\n"
    finally:
        os.close(fd)


def tail_until(proc, pattern):
    """Lines of a running tail's stdout until one matches pattern (the
    watchdog ends a wait that never does)."""
    lines = []
    while not any(re.search(pattern, ln) for ln in lines):
        ln = proc.stdout.readline()
        assert ln, (proc.args, lines)          # tail exited
        lines.append(ln)
    return lines


def test_events_log_with_tail_and_grep(make_fabric, mount):
    """events.log is a log file: tail -f and tail -F print a link_down
    after the sweep that found it, tail -n 3 prints the last three lines
    and exits, grep finds both ends; its size is every byte written."""
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    assert sweep_kv(m)["ok"] == "1"
    log = m.path("fabric", "events.log")
    st = os.stat(log)
    # (the first sweep's problems raised: sm_missing, the SM being gone)
    assert (st.st_mode & 0o7777, st.st_size) == (0o444, len(open(log, "rb").read()))
    tails = [subprocess.Popen(["tail", opt, "-s", "0.1", log], text=True,
                              stdout=subprocess.PIPE) for opt in ("-f", "-F")]
    try:
        f.command('Unlink "Switch1"[7]')
        kv = sweep_now(m)
        assert kv["links"] == "4"
        for t in tails:
            line = tail_until(t, r"event=link_down")[-1]
            assert line.startswith("time=%s event=link_down " % kv["time"]), line
    finally:
        for t in tails:
            t.terminate()
            t.wait()
    f.command('ReLink "Switch1"[7]')
    assert sweep_now(m)["links"] == "5"
    text = open(log).read()
    assert os.stat(log).st_size == len(text.encode())
    lines = text.splitlines()
    assert len(lines) >= 4 and [ln.split()[1] for ln in lines].count(
        "event=link_up") == 2, lines
    cp = subprocess.run(["tail", "-n", "3", log], capture_output=True, text=True,
                        timeout=30)
    assert cp.returncode == 0 and cp.stdout.splitlines() == lines[-3:], cp
    cp = subprocess.run(["grep", "-c", "event=link_down", log], capture_output=True,
                        text=True, timeout=30)
    assert cp.stdout == "2\n", cp


def drain_events(fd):
    """Every line the events fd (O_NONBLOCK) has now."""
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return buf.decode().splitlines()
        if not chunk:
            return buf.decode().splitlines()
        buf += chunk


def test_events_dropped_when_a_reader_falls_behind(tmp_path, make_fabric, mount):
    """A reader that reads nothing while more than 4096 lines come gets
    `event=dropped count=N` for what the ring lost, then the last 4096
    lines intact, as a reader that kept up saw them."""
    import diags as tm
    f = tm.fat_tree(tmp_path, make_fabric, 8, 4, 24)
    m = mount("H0002", fabric=f)
    assert sweep_kv(m)["nodes"] == "204"
    path = m.path("fabric", "events")
    behind = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    keeper = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    kept = []
    try:
        while len(kept) <= 4096 + 100:
            for cmd in ("Unlink", "ReLink"):   # L001 and its HCAs cut off
                for port in (25, 26, 27, 28):
                    f.command('%s "L001"[%d]' % (cmd, port))
                sweep_now(m)
                kept += drain_events(keeper)
        got = drain_events(behind)
    finally:
        os.close(behind)
        os.close(keeper)
    assert not any(ln.startswith("event=dropped") for ln in kept)
    assert got[0] == "event=dropped count=%d" % (len(kept) - 4096), got[:2]
    assert got[1:] == kept[-4096:]
    # events.log: its size is every byte ever written; read from offset
    # 0 it says what it no longer has, then has the same 4096 lines.
    log = m.path("fabric", "events.log")
    size = lambda lines: sum(len(ln.encode()) + 1 for ln in lines)  # noqa: E731
    assert os.stat(log).st_size == size(kept)
    got = open(log).read().splitlines()
    assert got[0] == "event=dropped bytes=%d" % size(kept[:-4096]), got[:2]
    assert got[1:] == kept[-4096:]
    cp = subprocess.run(["tail", "-n", "5", log], capture_output=True, text=True,
                        timeout=30)
    assert cp.stdout.splitlines() == kept[-5:]


@pytest.mark.parametrize("opt,msg", [
    ("fabric_interval=abc", "expected milliseconds"),
    ("fabric_interval=-1", "expected milliseconds"),
    ("fabric_interval=999", "below the floor of 1000 ms"),
    ("fabric_interval=50,fabric_interval_min=60", "below the floor of 60 ms"),
    ("fabric_interval_min=1x", "expected milliseconds"),
    ("fabric_port=ibsim0", "expected CA:PORT"),
    ("fabric=maybe", "expected off or on"),
    ("fabric_routes=maybe", "fabric_routes=maybe: expected off or on"),
    ("fabric_routes=", "fabric_routes=: expected off or on"),
])
def test_bad_fabric_options(tmp_path, opt, msg):
    try:
        cp = subprocess.run([sim.umadfs_bin(), "-f", "-o", opt, str(tmp_path)],
                            capture_output=True, text=True, timeout=10)
    finally:
        # A daemon that took the option mounted there: leave no mount.
        if sim.is_mounted(tmp_path):
            subprocess.run(["fusermount3", "-uz", str(tmp_path)])
    assert cp.returncode == 2 and msg in cp.stderr, cp


def test_interval_floor(fabric, mount):
    """interval_ms below the floor (1 s unless fabric_interval_min= lowers
    it) fails EINVAL and says why in last_error; 0 (no timer) and the
    floor itself are taken; the option is held to the same floor."""
    m = mount("Hca1")
    assert sweep_kv(m)["ok"] == "1"
    err, why = write_interval(m, "1\n")
    assert err == errno.EINVAL
    assert why.startswith("interval_ms: 1 ms is below the floor of 1000 ms"), why
    assert open(m.path("fabric", "interval_ms")).read() == "0\n"
    assert write_interval(m, "0x3e8\n") is None     # the grammar's hex
    assert open(m.path("fabric", "interval_ms")).read() == "1000\n"
    assert write_interval(m, "0\n") is None
    assert open(m.path("fabric", "last_error")).read() == why  # kept
    m2 = mount("Hca2", options=("fabric_interval_min=0",))
    kv = sweep_kv(m2)
    err, why = write_interval(m2, "0x1g\n")
    assert err == errno.EINVAL and "'0x1g' is not a number" in why
    # Below the last sweep's duration (known only once it is over 0 ms).
    if int(kv["duration_ms"]) > 1:
        err, why = write_interval(m2, "1\n")
        assert err == errno.EINVAL and "shorter than the last sweep" in why, why
    assert write_interval(m2, "%d\n" % (int(kv["duration_ms"]) + 1)) is None
    assert write_interval(m2, "0\n") is None


def test_fabric_options(fabric, mount):
    m = mount("Hca1", options=("fabric_port=ibsim0:1", "fabric_interval=60000"))
    kv = sweep_kv(m)
    assert kv["via"] == "ibsim0/1" and kv["ok"] == "1"
    assert open(m.path("fabric", "interval_ms")).read() == "60000\n"
    m2 = mount("Hca2", options=("fabric_port=nosuch:1",))
    kv = sweep_kv(m2)
    assert kv["ok"] == "0" and "nosuch/1" in kv["error"], kv
    m3 = mount("Hca3", options=("fabric=off",))
    assert "fabric" not in os.listdir(m3.mountpoint)


@pytest.mark.node_exporter
def test_port_without_port_info_and_node_exporter(make_fabric, mount, tmp_path):
    """A port whose PortInfo went unanswered in the last sweep has no
    ports/N/ (nor a peer link to it) and does not fail node_exporter's
    scrape; the next good sweep brings it back."""
    import diags as tm
    f = tm.quiet_fabric(make_fabric)
    # Without light sweeps every sweep asks every CA's PortInfo (with
    # them, a CA behind a link that stands is the sweep before's, and
    # Hca3's PortInfo would not be asked: files.md, "What a sweep asks").
    m = mount("Hca1", fabric=f, options=("fabric_light_sweep=0",))
    assert sweep_kv(m)["ok"] == "1"
    hca3, sw2 = "0x0000000000100004", "0x0000000000200001"
    ports = m.path("fabric", "nodes", hca3, "ports")
    peer = m.path("fabric", "nodes", sw2, "ports", "1", "peer")
    assert os.listdir(ports) == ["1"] and os.path.islink(peer)
    f.command('Error "Hca3"[1] 100 0x15')   # ibsim drops PortInfo SMPs to it
    kv = sweep_now(m)
    assert kv["ok"] == "1" and int(kv["timeouts"]) > 0, kv
    assert os.listdir(ports) == []
    assert not os.path.lexists(peer)
    assert hca3 in open(m.path("fabric", "links")).read()   # the link is known
    text = node_exporter(m.path("fabric"), tmp_path)
    assert 'node_scrape_collector_success{collector="infiniband"} 1' in text
    assert 'device="%s"' % hca3 in text                      # its info metric
    assert 'device="%s",port="1"' % hca3 not in text
    f.command('Error "Hca3"[1] 0')
    sweep_now(m)
    assert os.listdir(ports) == ["1"] and os.path.islink(peer)
    assert open(os.path.join(ports, "1", "state")).read() == "4: ACTIVE\n"
