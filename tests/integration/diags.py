"""The reference side of the tests: infiniband-diags run as peers under
the same simulator, and ibsim's console setting what they then read.
Shared by the test modules (a test module is never imported as a
library): `tool`, `lid_of`, `perfquery`, `perf_set`, `active_fabric`,
`quiet_fabric`, `fat_tree`, `series`, `tracert_hops`, `lft`, `set_lft_block0`
and the PerfMgt counters' names and test values."""

import os
import re
import subprocess
import sys

import simfabric as sim
import madtext as mt
import madfiles as mf

HOSTS = ("Hca1", "Hca2", "Hca3", "Switch1", "Switch2")    # two-switch.net
GEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench",
                   "gen-fabric.py")
SERIES = os.path.join(os.path.dirname(GEN), "series.py")


def series():
    """tests/bench/series.py as a module: metrics.prom's families per group
    of -o fabric_metrics= (FAMILIES) and their series on a generated fat
    tree (series())."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("series", SERIES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tool(fabric, sim_host, *argv, check=True):
    """A diags tool run as a client of sim_host -> CompletedProcess."""
    return fabric.run_tool(list(argv), sim_host, check=check)


def lid_of(fabric, sim_host, path="0", port=0):
    """The LID of the port at DR path `path` from sim_host, by smpquery
    (path "0": sim_host's own; port 0: the one the SMP came in on, a
    switch's management port)."""
    pi = sim.parse_smpquery(tool(fabric, sim_host, "smpquery", "-D", "portinfo",
                                 path, str(port)).stdout)
    lid = int(pi["Lid"])
    assert lid, pi
    return lid


def active_fabric(make_fabric, sm_host="Hca3"):
    """A new two-switch fabric of the test's own, opensm on sm_host keeping
    every port ACTIVE (and answering SA queries)."""
    f = make_fabric("two-switch.net")
    f.start_opensm(sm_host)
    for h in HOSTS:
        f.wait_active(h, timeout=30)
    return f


def fat_tree(tmp_path, make_fabric, leaves, spines, hcas_per_leaf):
    """A generated fat tree (tests/bench/gen-fabric.py), opensm on H0001,
    H0002 (on leaf L001) ACTIVE."""
    net = tmp_path / "fat.net"
    subprocess.run([sys.executable, GEN, "--leaves", str(leaves), "--spines",
                    str(spines), "--hcas-per-leaf", str(hcas_per_leaf), str(net)],
                   check=True)
    f = make_fabric(str(net))
    f.start_opensm("H0001")
    f.wait_active("H0002", timeout=30)
    return f


def tracert_hops(text):
    """ibtracert's output as its path, [[node GUID, in, out]] (a hop's port
    GUID made its node's by the To line at the end; None: no port)."""
    hops = []
    for ln in text.splitlines():
        mm = re.match(r"From \w+ \{0x([0-9a-f]+)\}", ln)
        if mm:
            hops.append([int(mm.group(1), 16), None, None])
        mm = re.match(r"\[(\d+)\] -> \w+ port \{0x([0-9a-f]+)\}\[(\d+)\]", ln)
        if mm:
            hops[-1][2] = int(mm.group(1))
            hops.append([int(mm.group(2), 16), int(mm.group(3)), None])
        mm = re.match(r"To \w+ \{0x([0-9a-f]+)\}", ln)
        if mm:
            hops[-1][0] = int(mm.group(1), 16)
    return hops


def quiet_fabric(make_fabric):
    """A new fabric whose ports were made ACTIVE by opensm, which is then
    stopped: no MAD crosses a link unless the test sends it, so traffic
    counters stay put, and tests may change the fabric's state."""
    f = active_fabric(make_fabric)
    f.stop_opensm("Hca3")
    return f


# PerfMgt: values set with ibsim's PerformanceSet, and the counters'
# names in sysfs (counters/) against perfquery's.
ERROR_VALUES = {
    "SymbolErrorCounter": 1234, "LinkErrorRecoveryCounter": 17,
    "LinkDownedCounter": 5, "PortRcvErrors": 321,
    "PortRcvRemotePhysicalErrors": 42, "PortRcvSwitchRelayErrors": 43,
    "PortXmitDiscards": 44, "PortXmitConstraintErrors": 7,
    "PortRcvConstraintErrors": 8, "LocalLinkIntegrityErrors": 9,
    "ExcessiveBufferOverrunErrors": 11, "VL15Dropped": 99,
    "PortXmitData": 0x11223344, "PortRcvData": 0x55667788,
    "PortXmitPkts": 70001, "PortRcvPkts": 70002, "PortXmitWait": 4242,
}
EXT_VALUES = {
    "PortXmitData": 0x123456789a, "PortRcvData": 0x2233445566,
    "PortXmitPkts": 5000000001, "PortRcvPkts": 5000000002,
    "PortUnicastXmitPkts": 601, "PortUnicastRcvPkts": 602,
    "PortMulticastXmitPkts": 603, "PortMulticastRcvPkts": 604,
}
SYSFS_BASIC = {
    "symbol_error": "SymbolErrorCounter",
    "link_error_recovery": "LinkErrorRecoveryCounter",
    "link_downed": "LinkDownedCounter", "port_rcv_errors": "PortRcvErrors",
    "port_rcv_remote_physical_errors": "PortRcvRemotePhysicalErrors",
    "port_rcv_switch_relay_errors": "PortRcvSwitchRelayErrors",
    "port_xmit_discards": "PortXmitDiscards",
    "port_xmit_constraint_errors": "PortXmitConstraintErrors",
    "port_rcv_constraint_errors": "PortRcvConstraintErrors",
    "local_link_integrity_errors": "LocalLinkIntegrityErrors",
    "excessive_buffer_overrun_errors": "ExcessiveBufferOverrunErrors",
    "VL15_dropped": "VL15Dropped", "port_xmit_wait": "PortXmitWait",
}
SYSFS_EXT = {
    "port_xmit_data": "PortXmitData", "port_rcv_data": "PortRcvData",
    "port_xmit_packets": "PortXmitPkts", "port_rcv_packets": "PortRcvPkts",
    "unicast_xmit_packets": "PortUnicastXmitPkts",
    "unicast_rcv_packets": "PortUnicastRcvPkts",
    "multicast_xmit_packets": "PortMulticastXmitPkts",
    "multicast_rcv_packets": "PortMulticastRcvPkts",
}


def perf_set(f, node, port, attr, values):
    """ibsim's PerformanceSet of each counter of values on node[port]."""
    for k, v in values.items():
        out = f.command('PerformanceSet "%s"[%d] %s.%s=%d' % (node, port, attr, k, v))
        assert "has been set to %d" % v in out, out


def perfquery(f, host, *args):
    """perfquery ARGS run as a client of host -> {counter: int}."""
    return {k: int(v, 0) for k, v in
            mt.parse_diag(tool(f, host, "perfquery", *args).stdout).items()
            if re.match(r"^(0x[0-9a-f]+|\d+)$", v)}


def sweep(m):
    """echo 1 > fabric/sweep: returns once a new sweep is complete."""
    with open(m.path("fabric", "sweep"), "w") as f:
        f.write("1\n")


def sweep_kv(m):
    """fabric/sweep's `key value` lines as a dict (a key alone: "")."""
    return dict(ln.split(" ", 1) if " " in ln else (ln, "")
                for ln in open(m.path("fabric", "sweep")).read().splitlines())


KV = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def problems(m, kind=None):
    """fabric/problems as dicts (quotes kept off values), those of kind
    (or all)."""
    out = []
    for ln in open(m.path("fabric", "problems")).read().splitlines():
        d = {k: v[1:-1] if v.startswith('"') else v for k, v in KV.findall(ln)}
        if kind is None or d["problem"] == kind:
            out.append(d)
    return out


def lft(m, guid):
    """A switch's lft file as {LID: port}, checking its order and form."""
    text = open(m.path("fabric", "nodes", "0x%016x" % guid, "lft")).read()
    pairs = [tuple(map(int, ln.split(" "))) for ln in text.splitlines()]
    assert [p[0] for p in pairs] == sorted({p[0] for p in pairs}), text
    assert all(p[1] != 255 for p in pairs)
    return dict(pairs)


def set_lft_block0(m, sw_guid, sw_lid, changes):
    """A LinearForwardingTable Set of block 0 of a switch through the
    mount's own send: its entries as lft shows them, changes ({LID: port})
    applied -> the answer's parsed line."""
    block = [255] * 64
    for lid, port in lft(m, sw_guid).items():
        if lid < 64:
            block[lid] = port
    for lid, port in changes.items():
        block[lid] = port
    with mf.Recv(m) as rx:
        mf.write_send(m, "class=smi method=set attr=0x0019 attrmod=0 lid=%d data=%s\n"
                      % (sw_lid, bytes(block).hex()))
        return rx.line(timeout=10)
