"""The text MAD files (send, recv) against infiniband-diags run as peers
under the same simulator: NodeInfo by directed route against smpquery and
smpdump, PortInfo LID-routed against smpquery, PortCounters (and
counters/) against perfquery, an SA GetTable against saquery; and a
received line written back as a request.  See README.md for the fixtures
and madtext.py for the line parser, frame packer and attribute decoders.

Layout of the session fabric (two-switch.net), seen from Hca1:
  dr=0       Hca1 itself
  dr=0,1     Switch1 (entered on its port 1)
  dr=0,1,7   Switch2 (entered on its port 7)
  dr=0,1,7,1 Hca3
  dr=0,1,3   Switch1 port 3 has no link: the SMP is dropped.
"""

import re
import struct

import pytest

import madtext as mt
from diags import (ERROR_VALUES, EXT_VALUES, SYSFS_BASIC, SYSFS_EXT, lid_of, perf_set,
                   perfquery, quiet_fabric, tool)
from madfiles import Recv, last_error, pdir, read_text, stats, write_send


def smpdump_bytes(text):
    """smpdump's hex dump -> bytes (the 64-byte SMP data)."""
    out = b""
    for line in text.splitlines():
        if re.match(r"^([0-9a-f]{4} ){7}[0-9a-f]{4}$", line.strip()):
            out += bytes.fromhex(line.replace(" ", ""))
    assert len(out) == 64, text
    return out


NODEINFO_PATHS = ["0", "0,1", "0,1,7", "0,1,7,1"]


@pytest.mark.parametrize("path", NODEINFO_PATHS)
def test_nodeinfo_dr_matches_smpquery(fabric, mount, path):
    m = mount("Hca1")
    with Recv(m) as r:
        # Exactly the line: no tid=, the daemon assigns one.
        n = write_send(m, "class=smi-dr method=get attr=NodeInfo dr=%s\n" % path)
        assert n == len("class=smi-dr method=get attr=NodeInfo dr=%s\n" % path)
        ln = r.line()
    assert ln["class"] == "smi-dr" and ln["method"] == "getresp"
    assert ln["attr"] == "NodeInfo" and ln["status"] == "0x0000"
    assert ln["dr"] == path
    assert ln["lid"] == "0xffff" and ln["qp"] == "0" and ln.int("len") == 256
    assert "error" not in ln
    assert ln.tid != 0 and ln.tid == mt.mad_tid(ln.mad)
    h = mt.mad_header(ln.mad)
    assert (h["base_version"], h["class"], h["method"], h["attr"]) == (1, 0x81, 0x81, 0x11)

    peer = mt.parse_diag(tool(fabric, "Hca1", "smpquery", "-D", "nodeinfo", path).stdout)
    ours = mt.decode_nodeinfo(ln.mad[64:104])
    assert set(ours) <= set(peer), (ours, peer)
    assert ours == {k: peer[k] for k in ours}
    # Every byte of the SMP data area as smpdump sees it.
    raw = smpdump_bytes(tool(fabric, "Hca1", "smpdump", "-D", path, "0x11").stdout)
    assert ln.mad[64:128] == raw


def test_nodeinfo_paths_reach_different_nodes(fabric, mount):
    """Several lines in one write: one answer each, told apart by tid=."""
    m = mount("Hca1")
    lines = "".join("dr=%s method=get attr=NodeInfo tid=%d\n" % (p, 100 + i)
                    for i, p in enumerate(NODEINFO_PATHS))
    with Recv(m) as r:
        assert write_send(m, lines) == len(lines)
        got = {ln.tid: ln for ln in r.lines(len(NODEINFO_PATHS))}
        r.assert_empty()
    assert sorted(got) == [100, 101, 102, 103]
    guids = [mt.decode_nodeinfo(got[100 + i].mad[64:104])["Guid"]
             for i in range(len(NODEINFO_PATHS))]
    assert len(set(guids)) == 4, guids
    types = [mt.decode_nodeinfo(got[100 + i].mad[64:104])["NodeType"]
             for i in range(len(NODEINFO_PATHS))]
    assert types == ["Channel Adapter", "Switch", "Switch", "Channel Adapter"]
    for i, p in enumerate(NODEINFO_PATHS):
        assert got[100 + i]["dr"] == p


@pytest.mark.parametrize("target,port", [("0,1", 0), ("0,1", 1), ("0,1", 7),
                                         ("0,1,7,1", 1)])
def test_portinfo_lid_routed_matches_smpquery(fabric, mount, target, port):
    m = mount("Hca1")
    lid = lid_of(fabric, "Hca1", target, port if target.endswith(",1,7,1") else 0)
    with Recv(m) as r:
        write_send(m, "class=smi method=get attr=PortInfo lid=%d attrmod=%d tid=0x42\n"
                   % (lid, port))
        ln = r.line()
    assert ln.tid == 0x42
    assert ln["class"] == "smi" and ln["method"] == "getresp"
    assert ln["attr"] == "PortInfo" and ln.int("attrmod") == port
    assert ln["status"] == "0x0000" and "error" not in ln
    assert ln.int("lid") == lid, "lid= names the sender"
    assert ln["qp"] == "0" and "dr" not in ln

    peer = mt.parse_diag(tool(fabric, "Hca1", "smpquery", "portinfo",
                              str(lid), str(port)).stdout)
    ours = mt.decode_portinfo(ln.mad[64:128])
    missing = set(ours) - set(peer)
    assert not missing, missing
    assert ours == {k: peer[k] for k in ours}
    if port == 0 or target.endswith(",1,7,1"):
        assert int(ours["Lid"]) == lid and ours["LinkState"] == "Active"
        assert ours["SMLid"] == str(int(read_text(pdir(m) / "sm_lid"), 16))
    raw = smpdump_bytes(tool(fabric, "Hca1", "smpdump", str(lid), "0x15",
                             str(port)).stdout)
    assert ln.mad[64 + 8:128] == raw[8:]    # M_Key aside


def test_port_counters_match_perfquery(make_fabric, mount):
    f = quiet_fabric(make_fabric)
    perf_set(f, "Hca1", 1, "PortCounters", ERROR_VALUES)
    perf_set(f, "Hca1", 1, "PortCountersExtended", EXT_VALUES)
    m = mount("Hca1", fabric=f)
    lid = int(read_text(pdir(m) / "lid"), 16)
    assert lid

    peer = perfquery(f, "Hca1")                 # own port, PortCounters
    peer_x = perfquery(f, "Hca1", "-x")         # PortCountersExtended
    for k, v in ERROR_VALUES.items():           # the set took, the fabric is quiet
        assert peer[k] == v, (k, peer)
    for k, v in EXT_VALUES.items():
        # ibsim 0.10 answers 0 for PortMulticastRcvPkts whatever is set.
        if k != "PortMulticastRcvPkts":
            assert peer_x[k] == v, (k, peer_x)

    with Recv(m) as r:
        write_send(m, "class=perf method=get attr=PortCounters lid=%d data=00010000\n"
                   "class=pma method=get attr=PortCountersExtended lid=%d tid=0x2 "
                   "data=00010000\n" % (lid, lid))
        a, b = r.lines(2)
    if a["attr"] != "PortCounters":
        a, b = b, a
    for ln in (a, b):
        assert ln["class"] == "perf" and ln["method"] == "getresp"
        assert ln["status"] == "0x0000" and ln.int("lid") == lid
        assert ln["qp"] == "1"     # qkey=: the kernel does not report it
    assert b.tid == 2 and b["attr"] == "PortCountersExtended"
    pc = mt.decode_fields(a.mad[64:], mt.PORT_COUNTERS)
    pcx = mt.decode_fields(b.mad[64:], mt.PORT_COUNTERS_EXT)
    assert pc["PortSelect"] == 1 and pcx["PortSelect"] == 1
    for k in ERROR_VALUES:
        assert pc[k] == peer[k], k
    for k in EXT_VALUES:
        assert pcx[k] == peer_x[k], k

    # counters/ : error counters from PortCounters, data and packets from
    # PortCountersExtended (the PMA sets CapMask bit 0x200).
    cdir = pdir(m) / "counters"
    for name, field in SYSFS_BASIC.items():
        assert read_text(cdir / name) == "%d\n" % peer[field], name
    for name, field in SYSFS_EXT.items():
        assert read_text(cdir / name) == "%d\n" % peer_x[field], name
    # And still what perfquery says now (nothing moved meanwhile).
    assert perfquery(f, "Hca1") == peer


def test_port_counters_of_a_switch_port(make_fabric, mount):
    """A remote PMA (Switch1 port 2, Hca2's link) through send/recv."""
    f = quiet_fabric(make_fabric)
    vals = {k: v + 1 for k, v in ERROR_VALUES.items() if "Data" not in k and "Pkts" not in k}
    perf_set(f, "Switch1", 2, "PortCounters", vals)
    m = mount("Hca1", fabric=f)
    slid = lid_of(f, "Hca1", "0,1")
    peer = perfquery(f, "Hca1", str(slid), "2")
    with Recv(m) as r:
        write_send(m, "class=perf method=get attr=PortCounters lid=%d data=00020000 tid=7\n" % slid)
        ln = r.line()
    assert ln.tid == 7 and ln.int("lid") == slid and ln["status"] == "0x0000"
    pc = mt.decode_fields(ln.mad[64:], mt.PORT_COUNTERS)
    assert pc["PortSelect"] == 2
    for k, v in vals.items():
        assert pc[k] == v == peer[k], k


def test_sa_gettable_noderecords_match_saquery(fabric, mount):
    m = mount("Hca1")
    sm_lid = int(read_text(pdir(m) / "sm_lid"), 16)
    assert sm_lid
    with Recv(m) as r:
        write_send(m, "class=sa method=gettable attr=NodeRecord lid=%d tid=0x5a\n" % sm_lid)
        ln = r.line()
    assert ln.tid == 0x5a
    assert ln["class"] == "sa" and ln["version"] == "2"
    assert ln["method"] == "gettableresp" and ln["attr"] == "NodeRecord"
    assert ln["status"] == "0x0000" and "error" not in ln
    assert ln.int("lid") == sm_lid and ln["qp"] == "1"
    mad = ln.mad
    # Under umad2sim (no RMPP) this is the first MAD as opensm wrote it:
    # RMPP Active, the rest of the RMPP header left to a kernel.
    assert mad[26] & 1, mad[24:36].hex()
    rec_size = struct.unpack_from(">H", mad, 44)[0] * 8              # AttributeOffset
    assert rec_size >= 108, rec_size
    n = (min(len(mad), 224) - mt.SA_DATA) // rec_size   # 224-255: umad2sim junk
    ours = [mt.decode_node_record(mad[mt.SA_DATA + i * rec_size:
                                      mt.SA_DATA + (i + 1) * rec_size]) for i in range(n)]

    peer = mt.parse_saquery_records(tool(fabric, "Hca1", "saquery", "-N").stdout)
    assert len(ours) == len(peer) >= 1
    for o, p in zip(ours, peer):
        assert o["lid"] == int(p["lid"])
        assert int(o["nodeinfo"]["Guid"], 16) == int(p["node_guid"], 16)
        assert int(o["nodeinfo"]["PortGuid"], 16) == int(p["port_guid"], 16)
        assert int(o["nodeinfo"]["SystemGuid"], 16) == int(p["sys_guid"], 16)
        assert o["nodeinfo"]["NodeType"] == p["node_type"]
        assert o["desc"] == p["NodeDescription"]


def test_received_line_parses_back(fabric, mount):
    m = mount("Hca1")
    slid = lid_of(fabric, "Hca1", "0,1")
    with Recv(m) as r:
        write_send(m, "dr=0,1,7 method=get attr=NodeInfo tid=0x71\n"
                   "class=smi method=get attr=PortInfo lid=%d attrmod=7 tid=0x72\n"
                   "class=perf method=get attr=PortCounters lid=%d data=00010000 tid=0x73\n"
                   % (slid, slid))
        first = {ln.tid: ln for ln in r.lines(3)}
        # (a) each answer written back whole, method=get and a new tid.
        resend = "".join(first[t].with_keys(method="get", tid=hex(t + 0x10)) + "\n"
                         for t in (0x71, 0x72, 0x73))
        assert write_send(m, resend) == len(resend), last_error(m)
        second = {ln.tid: ln for ln in r.lines(3)}
        # (b) only the addressing/header keys, no mad=.
        keep = ("class", "version", "method", "attr", "attrmod", "lid", "sl", "qp",
                "qkey", "pkey_index", "dr")
        third_req = ""
        for t in (0x71, 0x72, 0x73):
            ln = first[t]
            toks = ["%s=%s" % (k, "get" if k == "method" else ln[k])
                    for k in keep if k in ln]
            third_req += " ".join(toks) + " tid=%s\n" % hex(t + 0x20)
        assert write_send(m, third_req) == len(third_req), last_error(m)
        third = {ln.tid: ln for ln in r.lines(3)}
    for t in (0x71, 0x72, 0x73):
        a, b, c = first[t], second[t + 0x10], third[t + 0x20]
        for x in (b, c):
            assert x["method"] == "getresp" and x["status"] == "0x0000", x.text
            assert "error" not in x
            for k in ("class", "attr", "attrmod", "lid", "qp", "qkey", "dr"):
                assert x.get(k) == a.get(k), (k, a.text, x.text)
        # Same attribute data (the PMA echoes PortSelect: 0 in (b) and (c)).
        if t != 0x73:
            assert b.mad[64:128] == a.mad[64:128]
            assert c.mad[64:128] == a.mad[64:128]
    # The received line re-formats to itself: writing it as a response
    # (getresp, no answer expected) is accepted unchanged.
    sent_before = stats(m)["sent"]
    write_send(m, first[0x72].text + "\n")
    assert stats(m)["sent"] == sent_before + 1
