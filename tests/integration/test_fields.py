"""Named fields on MAD lines (Attribute.Field=value, docs/text-format.md)
against infiniband-diags run as peers under the same simulator: smpquery
for SMPs, perfquery after ibsim's PerformanceSet, saquery for SA records.
Sets by field name are checked by what the peer reads back."""
import re

import pytest

import madtext as mt
from madfiles import Recv, last_error, pdir, read_text, write_send
from test_mad import (EXT_VALUES, ERROR_VALUES, lid_of, perf_set, perfquery,
                      quiet_fabric, tool)

# Fields the diags print as names, not numbers: the text for a number.
_ENUMS = {
    "NodeType": lambda v: mt.NODE_TYPE.get(v),
    "LinkWidthEnabled": lambda v: mt._bits(v, mt._WIDTH),
    "LinkWidthSupported": lambda v: mt._bits(v, mt._WIDTH),
    "LinkWidthActive": lambda v: mt._bits(v, mt._WIDTH),
    "LinkSpeedSupported": lambda v: mt._bits(v, mt._SPEED),
    "LinkSpeedActive": lambda v: mt._bits(v, mt._SPEED),
    "LinkSpeedEnabled": lambda v: mt._bits(v, mt._SPEED),
    "LinkState": lambda v: mt._STATE.get(v),
    "PhysLinkState": lambda v: mt._PHYS.get(v),
    "LinkDownDefState": lambda v: mt._PHYS.get(v),
    "NeighborMTU": lambda v: mt._MTU.get(v),
    "MtuCap": lambda v: mt._MTU.get(v),
    "VLCap": lambda v: mt._VLS.get(v),
    "OperVLs": lambda v: mt._VLS.get(v),
}
# Printed by the diags as prose this test does not map back to numbers.
_PROSE = {"Mkey", "LinkSpeedExtActive", "LinkSpeedExtSupported", "LinkSpeedExtEnabled"}
_NUMBER = re.compile(r"^(0x[0-9a-fA-F]+|\d+)$")


def fields_of(ln, attr):
    """{Field: value} of a line's attr.Field keys."""
    pre = attr + "."
    return {k[len(pre):]: ln.field(k) for k in ln.fields if k.startswith(pre)}


def assert_matches_diag(ours, peer):
    """Every field of ours that the peer prints has its value there."""
    checked = 0
    for name, v in ours.items():
        if name not in peer or name in _PROSE:
            continue
        p = peer[name]
        if name in _ENUMS:
            assert _ENUMS[name](v) == p, (name, v, p)
        else:
            assert _NUMBER.match(p), (name, p)
            assert int(p, 0) == v, (name, v, p)
        checked += 1
    return checked


def query(m, line):
    with Recv(m) as r:
        write_send(m, line + "\n")
        ln = r.line()
    assert ln["status"] == "0x0000" and "error" not in ln, ln.text
    return ln


@pytest.mark.parametrize("path", ["0", "0,1", "0,1,7", "0,1,7,1"])
def test_nodeinfo_fields_match_smpquery(fabric, mount, path):
    m = mount("Hca1")
    ln = query(m, "dr=%s method=get attr=NodeInfo" % path)
    ours = fields_of(ln, "NodeInfo")
    peer = mt.parse_diag(tool(fabric, "Hca1", "smpquery", "-D", "nodeinfo", path).stdout)
    assert set(ours) == set(peer), (ours, peer)
    assert assert_matches_diag(ours, peer) == len(peer)


@pytest.mark.parametrize("path", ["0", "0,1,7,1"])
def test_nodedescription_field_matches_smpquery(fabric, mount, path):
    m = mount("Hca1")
    ln = query(m, "dr=%s method=get attr=NodeDescription" % path)
    desc = ln.field("NodeDescription.NodeDesc")
    out = tool(fabric, "Hca1", "smpquery", "-D", "nodedesc", path).stdout
    peer = re.search(r"^Node Description:\.*(.*)$", out, re.M).group(1)
    assert desc.decode() == peer
    assert desc == ln.mad[64:128].rstrip(b"\0")


@pytest.mark.parametrize("routed", ["dr", "lid"])
@pytest.mark.parametrize("target,port", [("0,1", 1), ("0,1", 7), ("0,1,7,1", 1)])
def test_portinfo_fields_match_smpquery(fabric, mount, routed, target, port):
    m = mount("Hca1")
    if routed == "dr":
        line = "dr=%s method=get attr=PortInfo attrmod=%d" % (target, port)
        argv = ["-D", "portinfo", target, str(port)]
    else:
        lid = lid_of(fabric, "Hca1", target, port if target.endswith(",1,7,1") else 0)
        line = "class=smi lid=%d method=get attr=PortInfo attrmod=%d" % (lid, port)
        argv = ["portinfo", str(lid), str(port)]
    ours = fields_of(query(m, line), "PortInfo")
    peer = mt.parse_diag(tool(fabric, "Hca1", "smpquery", *argv).stdout)
    assert assert_matches_diag(ours, peer) >= 45, (ours, peer)
    assert not set(peer) - set(ours) - {"Mkey"}, set(peer) - set(ours)


def test_switchinfo_fields_match_smpquery(fabric, mount):
    m = mount("Hca1")
    ours = fields_of(query(m, "dr=0,1 method=get attr=SwitchInfo"), "SwitchInfo")
    peer = mt.parse_diag(tool(fabric, "Hca1", "smpquery", "-D", "switchinfo", "0,1").stdout)
    assert set(ours) == set(peer), (ours, peer)
    assert assert_matches_diag(ours, peer) == len(peer)


def test_port_counters_fields_match_perfquery(make_fabric, mount):
    f = quiet_fabric(make_fabric)
    perf_set(f, "Hca1", 1, "PortCounters", ERROR_VALUES)
    perf_set(f, "Hca1", 1, "PortCountersExtended", EXT_VALUES)
    m = mount("Hca1", fabric=f)
    lid = int(read_text(pdir(m) / "lid"), 16)
    peer = perfquery(f, "Hca1")
    peer_x = perfquery(f, "Hca1", "-x")
    a = query(m, "class=perf method=get attr=PortCounters lid=%d "
                 "PortCounters.PortSelect=1" % lid)
    b = query(m, "class=perf method=get attr=PortCountersExtended lid=%d "
                 "PortCountersExtended.PortSelect=1" % lid)
    pc, pcx = fields_of(a, "PortCounters"), fields_of(b, "PortCountersExtended")
    for ours, theirs in ((pc, peer), (pcx, peer_x)):
        both = set(ours) & set(theirs)
        assert len(both) >= 10, (ours, theirs)
        for k in both:
            if k not in ("PortSelect", "CounterSelect"):
                assert ours[k] == theirs[k], (k, ours[k], theirs[k])
    for k, v in ERROR_VALUES.items():
        assert pc[k] == v, k


def test_perfmgt_set_by_field_clears_a_counter(make_fabric, mount):
    """PortCounters Set with CounterSelect naming SymbolErrorCounter (bit 0):
    perfquery then shows it 0 and the others untouched."""
    f = quiet_fabric(make_fabric)
    perf_set(f, "Hca1", 1, "PortCounters", ERROR_VALUES)
    m = mount("Hca1", fabric=f)
    lid = int(read_text(pdir(m) / "lid"), 16)
    assert perfquery(f, "Hca1")["SymbolErrorCounter"] == 1234
    ln = query(m, "class=perf method=set attr=PortCounters lid=%d "
                  "PortCounters.PortSelect=1 PortCounters.CounterSelect=0x0001" % lid)
    assert ln["method"] == "getresp"
    after = perfquery(f, "Hca1")
    assert after["SymbolErrorCounter"] == 0
    assert after["PortRcvErrors"] == ERROR_VALUES["PortRcvErrors"]


def test_smp_set_by_field_seen_by_smpquery(fresh_fabric, mount):
    """A Set of PortInfo on a switch port: the attribute from a Get (data=
    of its answer), HOQLife (one of the fields ibsim takes) by name."""
    f = fresh_fabric
    m = mount("Hca1", fabric=f)
    get = query(m, "dr=0,1 method=get attr=PortInfo attrmod=3")
    old = fields_of(get, "PortInfo")
    new = (old["HoqLife"] + 5) % 32
    data = get.mad[64:128].hex()
    ln = query(m, "dr=0,1 method=set attr=PortInfo attrmod=3 data=%s "
                  "PortInfo.HoqLife=%d PortInfo.LinkState=0" % (data, new))
    assert fields_of(ln, "PortInfo")["HoqLife"] == new
    peer = mt.parse_diag(tool(f, "Hca1", "smpquery", "-D", "portinfo", "0,1", "3").stdout)
    assert int(peer["HoqLife"]) == new


def test_sa_noderecord_fields_match_saquery(fabric, mount):
    m = mount("Hca1")
    sm_lid = int(read_text(pdir(m) / "sm_lid"), 16)
    ln = query(m, "class=sa method=gettable attr=NodeRecord lid=%d" % sm_lid)
    recs = {}
    for k in ln.fields:
        mm = re.match(r"^NodeRecord\[(\d+)\]\.(\w+)$", k)
        assert mm, k
        recs.setdefault(int(mm.group(1)), {})[mm.group(2)] = ln.field(k)
    peer = mt.parse_saquery_records(tool(fabric, "Hca1", "saquery", "-N").stdout)
    assert len(recs) >= 1
    for i, o in recs.items():
        p = [r for r in peer if int(r["lid"]) == o["Lid"]]
        assert len(p) == 1, (o, peer)
        p = p[0]
        assert o["Guid"] == int(p["node_guid"], 16)
        assert o["PortGuid"] == int(p["port_guid"], 16)
        assert o["SystemGuid"] == int(p["sys_guid"], 16)
        assert mt.NODE_TYPE[o["NodeType"]] == p["node_type"]
        assert o["NumPorts"] == int(p["num_ports"])
        assert o["NodeDesc"].decode() == p["NodeDescription"]


def test_sa_portinforecord_fields_match_saquery(fabric, mount):
    m = mount("Hca1")
    sm_lid = int(read_text(pdir(m) / "sm_lid"), 16)
    lid = int(read_text(pdir(m) / "lid"), 16)
    ln = query(m, "class=sa method=get attr=PortInfoRecord lid=%d comp_mask=0x1 "
                  "attr_offset=0 data=%04x" % (sm_lid, lid))
    ours = fields_of(ln, "PortInfoRecord")
    assert ours, ln.text
    out = tool(fabric, "Hca1", "saquery", "PIR", str(lid)).stdout
    assert out.count("PortInfoRecord dump:") == 1, out
    peer = mt.parse_diag("\n".join(t.strip() for t in out.splitlines()))
    assert assert_matches_diag(ours, peer) >= 45, (ours, peer)
    assert ours["Lid"] == lid


BAD_FIELDS = [
    ("other attribute", "dr=0 method=get attr=NodeInfo PortInfo.Lid=1",
     r"field 'PortInfo.Lid' at column 31 is not of attribute NodeInfo"),
    ("unknown field", "dr=0 method=get attr=NodeInfo NodeInfo.Foo=1",
     r"unknown field 'Foo' of NodeInfo at column 31"),
    ("too wide", "dr=0 method=set attr=PortInfo PortInfo.LinkState=16",
     r"bad value '16' for PortInfo.LinkState at column 50 \(4-bit field"),
    ("no fields", "dr=0 method=get attr=0x1234 NodeInfo.Guid=1",
     r"attribute 0x1234 of this class has no named fields"),
    ("unterminated quote", 'dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc="ab',
     r"unterminated quote at column 63"),
    ("string too long", "dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc=\"%s\""
     % ("x" * 65), r"bad value"),
]


@pytest.mark.parametrize("name,line,msg", BAD_FIELDS, ids=[b[0] for b in BAD_FIELDS])
def test_bad_field_keys(fabric, mount, name, line, msg):
    import errno
    m = mount("Hca1")
    with pytest.raises(OSError) as ei:
        write_send(m, line + "\n")
    assert ei.value.errno == errno.EINVAL
    assert re.search(msg, last_error(m)), last_error(m)


def test_decode_setting(fabric, mount):
    m = mount("Hca1")
    d = pdir(m)
    assert read_text(d / "decode") == "fields\n"
    (d / "decode").write_text("none\n")
    assert read_text(d / "decode") == "none\n"
    ln = query(m, "dr=0 method=get attr=NodeInfo")
    assert not ln.fields
    with pytest.raises(OSError):
        (d / "decode").write_text("bits\n")
    (d / "decode").write_text("fields")
    assert query(m, "dr=0 method=get attr=NodeInfo").fields
