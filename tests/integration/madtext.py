"""Tiny helpers for the MAD tests: parse `recv` lines, build and split
binary umad frames, and decode the few attributes the tests compare with
infiniband-diags (field layouts per the IBA spec, written here
independently of the daemon's C codec so that the two check each other).

No pytest dependency.
"""

import os
import re
import struct

# ---------------------------------------------------------------------------
# recv lines

_TOKEN = re.compile(r"^([a-z_]+)=(\S+)$")
# One token of a line: key=value, where a field key (Attribute.Field or
# Attribute[i].Field) may have a quoted value with spaces in it.
_ANY_TOKEN = re.compile(r'([A-Za-z_][\w\[\].]*)=("(?:[^"\\]|\\.)*"|\S+)(?: |$)')
_FIELD_KEY = re.compile(r"^[A-Za-z]\w*(\[\d+\])?\.\w+$")


def split_tokens(text):
    """A line -> [(key, value text)], quotes kept; ValueError if it is not
    key=value tokens separated by single spaces."""
    out, pos = [], 0
    while pos < len(text):
        m = _ANY_TOKEN.match(text, pos)
        if not m:
            raise ValueError("bad token at %d in %r" % (pos, text[:200]))
        out.append(m.groups())
        pos = m.end()
    if text.endswith(" "):
        raise ValueError("trailing space in %r" % text[:200])
    return out


def unquote(v):
    """A quoted field value (docs/text-format.md) -> bytes."""
    assert v[0] == v[-1] == '"', v
    out, i, body = bytearray(), 0, v[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and body[i + 1] == "x":
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
            continue
        if c == "\\":
            i += 1
            c = body[i]
        out += c.encode()
        i += 1
    return bytes(out)

# Keys of a received line, in the order docs/text-format.md gives.
LINE_KEY_ORDER = ["tid", "class", "version", "method", "status", "attr",
                  "attrmod", "lid", "sl", "qp", "qkey", "pkey_index",
                  "path_bits", "gid", "gid_index", "hop_limit",
                  "traffic_class", "flow_label", "dr", "drslid", "drdlid",
                  "direction", "oui", "error", "len", "mad"]


class Line(dict):
    """A parsed recv line: {key: value text}; .mad is the MAD as bytes,
    .keys_in_order the keys as they came (not the fields), .fields the
    Attribute.Field keys as they came ({key: value text}), .text the line."""

    def __init__(self, text):
        super().__init__()
        self.text = text
        self.keys_in_order = []
        self.fields = {}
        if text.endswith("\n"):
            raise ValueError("pass the line without its newline")
        if not text or text != text.strip():
            raise ValueError("bad spacing in recv line: %r" % text[:200])
        for k, v in split_tokens(text):
            if k in self or k in self.fields:
                raise ValueError("duplicate key %r in %r" % (k, text[:200]))
            if _FIELD_KEY.match(k):
                if "mad" in self:
                    raise ValueError("field after mad=: %r" % text[:200])
                self.fields[k] = v
                continue
            if not _TOKEN.match("%s=%s" % (k, v)):
                raise ValueError("bad token %r=%r in recv line %r" % (k, v[:80], text[:200]))
            self[k] = v
            self.keys_in_order.append(k)
        if "mad" not in self or "len" not in self:
            raise ValueError("recv line without len=/mad=: %r" % text[:200])
        if self.keys_in_order[-1] != "mad":
            raise ValueError("mad= is not last: %r" % text[:200])
        self.mad = bytes.fromhex(self["mad"])
        if len(self.mad) != int(self["len"]):
            raise ValueError("len=%s but mad= holds %d bytes" % (self["len"], len(self.mad)))

    def int(self, key):
        return int(self[key], 0)

    def field(self, key):
        """A field's value: an int, or bytes for a quoted string."""
        v = self.fields[key]
        return unquote(v) if v.startswith('"') else int(v, 0)

    @property
    def tid(self):
        return int(self["tid"], 16)

    def with_keys(self, **changes):
        """The line text with keys replaced (value None: removed), order kept;
        new keys are put before len=."""
        out = []
        for k in self.keys_in_order:
            if k in changes:
                v = changes[k]
                if v is not None:
                    out.append("%s=%s" % (k, v))
            else:
                out.append("%s=%s" % (k, self[k]))
        for k, v in changes.items():
            if k not in self and v is not None:
                out.insert(len(out) - 2, "%s=%s" % (k, v))
        return " ".join(out)


def parse_line(text):
    return Line(text.rstrip("\n"))


def parse_lines(text):
    return [Line(t) for t in text.split("\n") if t]


# ---------------------------------------------------------------------------
# MAD header

def mad_tid(mad):
    return struct.unpack_from(">Q", mad, 8)[0]


def mad_header(mad):
    """The common MAD header of bytes `mad`."""
    base, mclass, cver, method, status, cls_spec, tid, attr, _res, attrmod = \
        struct.unpack_from(">BBBBHHQHHI", mad, 0)
    return {"base_version": base, "class": mclass, "class_version": cver,
            "method": method, "status": status, "class_specific": cls_spec,
            "tid": tid, "attr": attr, "attrmod": attrmod}


SMP_DATA = 64       # SMP data at MAD offset 64 (64 bytes)
PMA_DATA = 64       # PMA data after 40 reserved bytes
SA_DATA = 56        # SA data after the SA header


# ---------------------------------------------------------------------------
# binary umad frames (struct ib_user_mad with the P_Key index)

UMAD_HDR = 64
MAD_SIZE = 256
_UMAD_FMT = "=IIIII" + ">IIHBBBBBB16sI" + "=H6s"   # explicit, see pack_umad
assert struct.calcsize("=IIIII") + struct.calcsize(">IIHBBBBBB16sI") + \
    struct.calcsize("=H6s") == UMAD_HDR


def pack_umad(mad, *, lid=0xffff, qpn=0, qkey=0, sl=0, path_bits=0,
              timeout_ms=1000, retries=0, agent_id=0, status=0,
              pkey_index=0, grh=None):
    """One umad frame: the 64-byte header (host-order u32s, network-order
    address) then the MAD bytes."""
    gid = b"\0" * 16
    grh_present = gid_index = hop_limit = traffic_class = 0
    flow_label = 0
    if grh is not None:
        grh_present = 1
        gid = grh["gid"]
        gid_index = grh.get("gid_index", 0)
        hop_limit = grh.get("hop_limit", 255)
        traffic_class = grh.get("traffic_class", 0)
        flow_label = grh.get("flow_label", 0)
    hdr = struct.pack("=IIIII", agent_id, status, timeout_ms, retries, len(mad))
    hdr += struct.pack(">IIHBBBBBB16sI", qpn, qkey, lid, sl, path_bits,
                       grh_present, gid_index, hop_limit, traffic_class,
                       gid, flow_label)
    hdr += struct.pack("=H6s", pkey_index, b"\0" * 6)
    assert len(hdr) == UMAD_HDR
    return hdr + bytes(mad)


def unpack_umad(frame):
    """(header dict, MAD bytes) of a frame read from `umad`."""
    if len(frame) < UMAD_HDR:
        raise ValueError("frame of %d bytes" % len(frame))
    agent_id, status, timeout_ms, retries, length = struct.unpack_from("=IIIII", frame, 0)
    (qpn, qkey, lid, sl, path_bits, grh_present, gid_index, hop_limit,
     traffic_class, gid, flow_label) = struct.unpack_from(">IIHBBBBBB16sI", frame, 20)
    pkey_index, = struct.unpack_from("=H", frame, 56)
    hdr = {"agent_id": agent_id, "status": status, "timeout_ms": timeout_ms,
           "retries": retries, "length": length, "qpn": qpn, "qkey": qkey,
           "lid": lid, "sl": sl, "path_bits": path_bits,
           "grh_present": grh_present, "gid_index": gid_index,
           "hop_limit": hop_limit, "traffic_class": traffic_class,
           "gid": gid, "flow_label": flow_label, "pkey_index": pkey_index}
    return hdr, frame[UMAD_HDR:]


def dr_smp(attr, attrmod=0, path=(0,), tid=0, method=0x01, data=b""):
    """A directed-route SMP (class 0x81), LID-free (DrSLID=DrDLID=0xffff)."""
    mad = bytearray(MAD_SIZE)
    hops = len(path) - 1
    struct.pack_into(">BBBBHHQHHI", mad, 0, 1, 0x81, 1, method, 0,
                     (0 << 8) | hops,  # hop pointer 0, hop count
                     tid, attr, 0, attrmod)
    struct.pack_into(">HH", mad, 32, 0xffff, 0xffff)    # DrSLID, DrDLID
    mad[SMP_DATA:SMP_DATA + len(data)] = data
    for i, p in enumerate(path):
        mad[128 + i] = p
    return bytes(mad)


def lid_smp(attr, attrmod=0, tid=0, method=0x01):
    mad = bytearray(MAD_SIZE)
    struct.pack_into(">BBBBHHQHHI", mad, 0, 1, 0x01, 1, method, 0, 0, tid,
                     attr, 0, attrmod)
    return bytes(mad)


def gmp(mgmt_class, attr, attrmod=0, tid=0, method=0x01, version=1,
        data=b"", data_offset=64):
    mad = bytearray(MAD_SIZE)
    struct.pack_into(">BBBBHHQHHI", mad, 0, 1, mgmt_class, version, method,
                     0, 0, tid, attr, 0, attrmod)
    mad[data_offset:data_offset + len(data)] = data
    return bytes(mad)


def read_frame(fd, size=UMAD_HDR + MAD_SIZE):
    return unpack_umad(os.read(fd, size))


# ---------------------------------------------------------------------------
# attribute decoders; names and text as smpquery/perfquery/saquery print

NODE_TYPE = {1: "Channel Adapter", 2: "Switch", 3: "Router"}


def decode_nodeinfo(d):
    """NodeInfo (IBA 14.2.5.3), 40 bytes -> smpquery's fields."""
    (base, cls, ntype, nports, sysguid, guid, pguid, partcap, devid, rev,
     lport) = struct.unpack_from(">BBBBQQQHHIB", d, 0)
    vendor = int.from_bytes(d[37:40], "big")
    return {"BaseVers": str(base), "ClassVers": str(cls),
            "NodeType": NODE_TYPE.get(ntype, "?%d" % ntype),
            "NumPorts": str(nports),
            "SystemGuid": "0x%016x" % sysguid, "Guid": "0x%016x" % guid,
            "PortGuid": "0x%016x" % pguid, "PartCap": str(partcap),
            "DevId": "0x%04x" % devid, "Revision": "0x%08x" % rev,
            "LocalPort": str(lport), "VendorId": "0x%06x" % vendor}


_WIDTH = {1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X"}
_SPEED = {1: "2.5 Gbps", 2: "5.0 Gbps", 4: "10.0 Gbps"}
_STATE = {0: "NoChange", 1: "Down", 2: "Initialize", 3: "Armed", 4: "Active"}
_PHYS = {0: "NoChange", 1: "Sleep", 2: "Polling", 3: "Disabled",
         4: "PortConfigurationTraining", 5: "LinkUp",
         6: "LinkErrorRecovery", 7: "PhyTest"}
_MTU = {1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
_VLS = {1: "VL0", 2: "VL0-1", 3: "VL0-3", 4: "VL0-7", 5: "VL0-14"}


def _bits(mask, table):
    return " or ".join(v for k, v in sorted(table.items()) if mask & k)


def decode_portinfo(d):
    """PortInfo (IBA 14.2.5.6), 64 bytes -> the smpquery fields that are
    plain numbers or short names (not the capability bit lists)."""
    b = d
    lid, smlid, capmask, diag, lease = struct.unpack_from(">HHIHH", b, 16)
    width_en, width_sup, width_act = b[29], b[30], b[31]
    out = {
        "GidPrefix": "0x%016x" % struct.unpack_from(">Q", b, 8)[0],
        "Lid": str(lid), "SMLid": str(smlid), "CapMask": "0x%x" % capmask,
        "DiagCode": "0x%04x" % diag, "MkeyLeasePeriod": str(lease),
        "LocalPort": str(b[28]),
        "LinkWidthEnabled": _bits(width_en, _WIDTH),
        "LinkWidthSupported": _bits(width_sup, _WIDTH),
        "LinkWidthActive": _bits(width_act, _WIDTH),
        "LinkSpeedSupported": _bits(b[32] >> 4, _SPEED),
        "LinkState": _STATE.get(b[32] & 0xf, "?"),
        "PhysLinkState": _PHYS.get(b[33] >> 4, "?"),
        "LinkDownDefState": _PHYS.get(b[33] & 0xf, "?"),
        "ProtectBits": str(b[34] >> 6), "LMC": str(b[34] & 7),
        "LinkSpeedActive": _bits(b[35] >> 4, _SPEED),
        "LinkSpeedEnabled": _bits(b[35] & 0xf, _SPEED),
        "NeighborMTU": _MTU.get(b[36] >> 4, "?"), "SMSL": str(b[36] & 0xf),
        "VLCap": _VLS.get(b[37] >> 4, "?"), "InitType": "0x%02x" % (b[37] & 0xf),
        "VLHighLimit": str(b[38]), "VLArbHighCap": str(b[39]),
        "VLArbLowCap": str(b[40]), "InitReply": "0x%02x" % (b[41] >> 4),
        "MtuCap": _MTU.get(b[41] & 0xf, "?"),
        "VLStallCount": str(b[42] >> 5), "HoqLife": str(b[42] & 0x1f),
        "OperVLs": _VLS.get(b[43] >> 4, "?"),
        "PartEnforceInb": str(b[43] >> 3 & 1), "PartEnforceOutb": str(b[43] >> 2 & 1),
        "FilterRawInb": str(b[43] >> 1 & 1), "FilterRawOutb": str(b[43] & 1),
        "MkeyViolations": str(struct.unpack_from(">H", b, 44)[0]),
        "PkeyViolations": str(struct.unpack_from(">H", b, 46)[0]),
        "QkeyViolations": str(struct.unpack_from(">H", b, 48)[0]),
        "GuidCap": str(b[50]), "ClientReregister": str(b[51] >> 7),
        "McastPkeyTrapSuppressionEnabled": str(b[51] >> 5 & 3),
        "SubnetTimeout": str(b[51] & 0x1f), "RespTimeVal": str(b[52] & 0x1f),
        "LocalPhysErr": str(b[53] >> 4), "OverrunErr": str(b[53] & 0xf),
        "MaxCreditHint": str(struct.unpack_from(">H", b, 54)[0]),
        "RoundTrip": str(int.from_bytes(b[57:60], "big")),
        "CapabilityMask2": "0x%x" % struct.unpack_from(">H", b, 60)[0],
    }
    return out


# PortCounters (IBA 16.1.3.5): name -> (byte offset in the data, bit
# offset in that byte from the top, bits), names as perfquery prints them.
PORT_COUNTERS = {
    "PortSelect": (1, 0, 8), "CounterSelect": (2, 0, 16),
    "SymbolErrorCounter": (4, 0, 16), "LinkErrorRecoveryCounter": (6, 0, 8),
    "LinkDownedCounter": (7, 0, 8), "PortRcvErrors": (8, 0, 16),
    "PortRcvRemotePhysicalErrors": (10, 0, 16),
    "PortRcvSwitchRelayErrors": (12, 0, 16), "PortXmitDiscards": (14, 0, 16),
    "PortXmitConstraintErrors": (16, 0, 8), "PortRcvConstraintErrors": (17, 0, 8),
    "CounterSelect2": (18, 0, 8),
    "LocalLinkIntegrityErrors": (19, 0, 4), "ExcessiveBufferOverrunErrors": (19, 4, 4),
    "QP1Dropped": (20, 0, 16), "VL15Dropped": (22, 0, 16),
    "PortXmitData": (24, 0, 32), "PortRcvData": (28, 0, 32),
    "PortXmitPkts": (32, 0, 32), "PortRcvPkts": (36, 0, 32),
    "PortXmitWait": (40, 0, 32),
}

PORT_COUNTERS_EXT = {
    "PortSelect": (1, 0, 8), "CounterSelect": (2, 0, 16),
    "PortXmitData": (8, 0, 64), "PortRcvData": (16, 0, 64),
    "PortXmitPkts": (24, 0, 64), "PortRcvPkts": (32, 0, 64),
    "PortUnicastXmitPkts": (40, 0, 64), "PortUnicastRcvPkts": (48, 0, 64),
    "PortMulticastXmitPkts": (56, 0, 64), "PortMulticastRcvPkts": (64, 0, 64),
}


def _field(d, off, bit, bits):
    nbytes = (bit + bits + 7) // 8
    v = int.from_bytes(d[off:off + nbytes], "big")
    return (v >> (nbytes * 8 - bit - bits)) & ((1 << bits) - 1)


def decode_fields(d, layout):
    return {k: _field(d, *spec) for k, spec in layout.items()}


def decode_node_record(rec):
    """SA NodeRecord (IBA 15.2.5.2): LID, reserved, NodeInfo, NodeDescription."""
    lid, = struct.unpack_from(">H", rec, 0)
    ni = decode_nodeinfo(rec[4:44])
    desc = rec[44:108].split(b"\0", 1)[0].decode("ascii", "replace")
    return {"lid": lid, "nodeinfo": ni, "desc": desc}


def parse_saquery_records(text):
    """saquery -N output -> list of {field: value} per 'NodeRecord dump:'."""
    recs = []
    for line in text.splitlines():
        if line.strip().endswith("dump:"):
            recs.append({})
            continue
        m = re.match(r"^\s+(\w+)\.+(.*)$", line)
        if m and recs:
            recs[-1][m.group(1)] = m.group(2).strip()
    return recs


def parse_diag(text):
    """'Name:.....value' lines (smpquery, perfquery) -> {Name: value}; the
    indented continuation lines (capability names) are skipped."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w[\w ]*?):\.*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out
