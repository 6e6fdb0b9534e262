"""Named fields on MAD lines (Attribute.Field=value, docs/text-format.md)
against infiniband-diags run as peers under the same simulator: smpquery
for SMPs, perfquery after ibsim's PerformanceSet, saquery for SA records.
Sets by field name are checked by what the peer reads back."""
import re

import pytest

import madtext as mt
from madfiles import Recv, last_error, pdir, read_text, write_send
from diags import (EXT_VALUES, ERROR_VALUES, lid_of, perf_set, perfquery,
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


def records_of(ln, attr):
    """{i: {Field: value}} of a GetTableResp line's attr[i].Field keys; the
    line has no other fields."""
    recs = {}
    for k in ln.fields:
        mm = re.match(r"^%s\[(\d+)\]\.(\w+)$" % attr, k)
        assert mm, k
        recs.setdefault(int(mm.group(1)), {})[mm.group(2)] = ln.field(k)
    return recs


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
    recs = records_of(ln, "NodeRecord")
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


def smpquery_pkeys(fabric, *argv):
    """smpquery pkeys output -> {P_Key index: value}."""
    out = tool(fabric, "Hca1", "smpquery", *argv).stdout
    keys = {}
    for m in re.finditer(r"^\s*(\d+):((?: 0x[0-9a-f]{4})+)\s*$", out, re.M):
        for i, v in enumerate(m.group(2).split()):
            keys[int(m.group(1)) + i] = int(v, 16)
    assert len(keys) >= 32, out
    return keys


def pkey_fields(ln):
    """PKeyTable.PKeyN keys -> {N: value}; values are 0x-hex as smpquery's."""
    ours = fields_of(ln, "PKeyTable")
    assert set(ours) == {"PKey%d" % i for i in range(32)}, ours
    assert all(re.search(r" PKeyTable\.PKey%d=0x[0-9a-f]{4} " % i, ln.text)
               for i in range(32)), ln.text
    return {int(k[4:]): v for k, v in ours.items()}


@pytest.mark.parametrize("routed", ["dr", "lid"])
@pytest.mark.parametrize("block", [0, 1])
def test_pkeytable_fields_match_smpquery(fabric, mount, routed, block):
    m = mount("Hca1")
    if routed == "dr":
        line = "dr=0 method=get attr=PKeyTable attrmod=%d" % block
        peer = smpquery_pkeys(fabric, "-D", "pkeys", "0", "1")
    else:
        lid = int(read_text(pdir(m) / "lid"), 16)
        line = "class=smi lid=%d method=get attr=PKeyTable attrmod=%d" % (lid, block)
        peer = smpquery_pkeys(fabric, "pkeys", str(lid), "1")
    ours = pkey_fields(query(m, line))
    for i, v in ours.items():
        assert v == peer[32 * block + i], (i, v, peer)


def test_pkeytable_set_by_field_seen_by_smpquery(fresh_fabric, mount):
    """A Set of PKeyTable block 0 on Hca1's port (no SM to undo it): the
    P_Keys from a Get (data= of its answer), PKey1 by name."""
    f = fresh_fabric
    m = mount("Hca1", fabric=f)
    get = query(m, "dr=0 method=get attr=PKeyTable attrmod=0")
    data = get.mad[64:128].hex()
    ln = query(m, "dr=0 method=set attr=PKeyTable attrmod=0 data=%s "
                  "PKeyTable.PKey1=0x8005" % data)
    assert pkey_fields(ln)[1] == 0x8005
    assert smpquery_pkeys(f, "-D", "pkeys", "0", "1")[1] == 0x8005


LINK_FIELDS = ("FromLID", "FromPort", "ToPort", "ToLID")


def saquery_links(fabric):
    """saquery LR's records as (FromLID, FromPort, ToPort, ToLID) tuples."""
    recs = mt.parse_saquery_records(tool(fabric, "Hca1", "saquery", "LR").stdout)
    assert recs
    return [tuple(int(r[k]) for k in LINK_FIELDS) for r in recs]


def test_sa_linkrecord_table_matches_saquery(fabric, mount):
    """A GetTable of every LinkRecord (they fit in one MAD): the indexed
    records equal saquery's, decimal as it prints them."""
    m = mount("Hca1")
    sm_lid = int(read_text(pdir(m) / "sm_lid"), 16)
    ln = query(m, "class=sa method=gettable attr=LinkRecord lid=%d" % sm_lid)
    recs = records_of(ln, "LinkRecord")
    assert re.search(r" LinkRecord\[0\]\.FromLID=\d+ ", ln.text), ln.text
    ours = [tuple(recs[i][k] for k in LINK_FIELDS) for i in sorted(recs)]
    assert sorted(ours) == sorted(saquery_links(fabric)), (ours, ln.text)


def test_sa_linkrecord_query_by_field(fabric, mount):
    """The request's FromLID/FromPort set by name (comp_mask bits 0, 1):
    the one record is saquery's link from Hca1's port."""
    m = mount("Hca1")
    sm_lid = int(read_text(pdir(m) / "sm_lid"), 16)
    lid = int(read_text(pdir(m) / "lid"), 16)
    ln = query(m, "class=sa method=gettable attr=LinkRecord lid=%d comp_mask=0x3 "
                  "LinkRecord.FromLID=%d LinkRecord.FromPort=1" % (sm_lid, lid))
    recs = [k for k in ln.fields if k.startswith("LinkRecord[")]
    assert len(recs) == 4, ln.text
    ours = tuple(ln.field("LinkRecord[0].%s" % k) for k in LINK_FIELDS)
    peer = [r for r in saquery_links(fabric) if r[:2] == (lid, 1)]
    assert [ours] == peer, (ours, peer)


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
