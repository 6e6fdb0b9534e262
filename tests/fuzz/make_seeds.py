#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (tests/fuzz/corpus/).

Run from anywhere; rewrites the seed-* files and leaves everything else
(regression inputs, crash-* files added by hand) alone.  The seeds are
realistic lines from docs/text-format.md and tests/unit/test_madtext.c,
some bad ones, a few binary umad frames, and received frames whose
attributes have named fields, up to 64 KiB SA responses; register lines,
numbers with their ranges, -o values, and expected topologies.
"""
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent


def mad(cls, method, attr=0, attrmod=0, tid=0, version=1, status=0, size=256):
    m = bytearray(size)
    struct.pack_into(">BBBBHHQHHI", m, 0, 1, cls, version, method, status, 0,
                     tid, attr, 0, attrmod)
    return m


def umad_hdr(length, lid=0, qpn=0, qkey=0, sl=0, status=0, timeout=0,
             retries=0, grh=None, pkey_index=0):
    """struct ib_user_mad: agent_id status timeout_ms retries length, then
    ib_mad_addr_t (qpn qkey lid sl path_bits grh_present gid_index
    hop_limit traffic_class gid[16] flow_label pkey_index reserved[6])."""
    h = struct.pack("<IIIII", 0, status, timeout, retries, length)
    gid = grh or bytes(16)
    h += struct.pack(">IIH", qpn, qkey, lid)
    h += struct.pack("BBBBBB", sl, 0, 1 if grh else 0, 1 if grh else 0,
                     64 if grh else 0, 0)
    h += gid + struct.pack(">I", 0x12345 if grh else 0)
    h += struct.pack("<H6x", pkey_index)
    assert len(h) == 64, len(h)
    return h


def frame(m, **hdr):
    """A umad frame: the header (its length field right) and the MAD m."""
    return umad_hdr(64 + len(m), **hdr) + m


def hexs(b):
    return bytes(b).hex()


def dr_response():
    m = mad(0x81, 0x81, attr=0x11, tid=0x1234)
    m[4] = 0x80                       # D bit
    m[6], m[7] = 2, 3                 # hop count, hop pointer
    struct.pack_into(">HH", m, 32, 0xffff, 0xffff)
    m[128:131] = bytes([0, 1, 3])
    m[192:195] = bytes([0, 2, 4])
    m[64:128] = bytes(range(64))
    return m


def rmpp_sa(size=400, active=True):
    m = mad(0x03, 0x92, attr=0x11, version=2, size=size)
    m[24], m[25], m[26] = 1, 1, 0x05 if active else 0x04
    struct.pack_into(">H", m, 44, 14)
    m[size - 1] = 0x77
    return m


def sa_table(attr, offset_words, records, paylen=True):
    """An SA GetTableResp, RMPP Active, of `records` records of
    offset_words * 8 bytes, each filled with a different byte pattern (so
    that every field has a value); PayloadLength set unless paylen is
    False."""
    rsize = 8 * offset_words
    size = max(256, 56 + records * rsize)
    m = mad(0x03, 0x92, attr=attr, version=2, size=size)
    m[24], m[25], m[26] = 1, 1, 0x05
    if paylen:
        struct.pack_into(">I", m, 32, 20 + records * rsize)
    struct.pack_into(">H", m, 44, offset_words)
    for r in range(records):
        for i in range(rsize):
            m[56 + r * rsize + i] = (r * 37 + i * 11 + 1) & 0xff
    return m


def smp_resp(attr, attrmod=0, fill=True):
    """A LID-routed SMP GetResp whose data area holds a byte pattern."""
    m = mad(0x01, 0x81, attr=attr, attrmod=attrmod, tid=0x42)
    if fill:
        for i in range(64):
            m[64 + i] = (i * 13 + 7) & 0xff
    return m


TEXT = {
    "dr-nodeinfo": "class=smi-dr method=get attr=NodeInfo dr=0,1,3",
    "dr-short": "dr=0 method=get attr=NodeDescription",
    "dr-keys": "dr=0,2 method=getresp attr=PortInfo attrmod=2 drslid=5 "
               "drdlid=0x7 status=0x7fff direction=0 lid=9 mkey=0x1122334455667788",
    "smi-portinfo": "class=smi method=get attr=PortInfo attrmod=1 lid=0x5",
    "pma-portcounters": "class=perf method=get attr=PortCounters lid=0x4 "
                        "timeout=500 retries=2",
    "pma-set": "class=pma method=set attr=PortCounters lid=0x4 data=00010000ffff",
    "sa-noderecord": "class=sa method=gettable attr=NodeRecord lid=0x1 "
                     "comp_mask=0x0 smkey=0x0 timeout=2000",
    "sa-pathrecord": "class=sa method=get attr=PathRecord lid=0x1 comp_mask=0x3 "
                     "data=fe800000000000000002c90300010203",
    "sa-rmpp-data": "class=sa method=gettableresp attr=NodeRecord lid=1 "
                    "attr_offset=14 data=" + "5a" * 300,
    "vendor-oui": "class=0x32 method=get attr=0x10 lid=0x7 oui=0x001405",
    "grh": "class=perf method=get attr=PortCounters lid=0x17 "
           "gid=fe80::2:c903:1:203 gid_index=1 hop_limit=64 traffic_class=5 "
           "flow_label=0x12345 sl=3 pkey_index=1 path_bits=2 qp=1 qkey=0x80010000",
    "names": "CLASS=CM\tmethod=Send attr=ConnectRequest lid=2 version=2 tid=18446744073709551615",
    "recv-dr": "tid=0x1234 class=smi-dr version=1 method=getresp status=0x0000 "
               "attr=NodeInfo attrmod=0x0 lid=0xffff sl=0 qp=0 qkey=0x0 "
               "pkey_index=0 dr=0,1,3 len=256 mad=" + hexs(dr_response()),
    "recv-timeout": "tid=0x8 class=smi version=1 method=get status=0x0000 "
                    "attr=PortInfo attrmod=0x1 lid=0x9 sl=0 qp=0 qkey=0x0 "
                    "pkey_index=0 error=timeout len=256 mad="
                    + hexs(mad(0x01, 0x01, attr=0x15, attrmod=1, tid=8)),
    # Lines up to 1 KiB (scripts/fuzz.sh's -max_len for this target); long
    # lines are parsed back by fuzz_madformat.
    "mad-rmpp": "lid=1 mad=" + hexs(rmpp_sa()),
    "mad-edit": "lid=0x4 mad=" + hexs(mad(0x04, 0x01, attr=0x12, tid=7))
                + " method=getresp status=0x0004 data=0102",
    # Named fields (docs/text-format.md, Named fields): numbers, hex, a
    # quoted string with escapes, SA records with an index.
    "fields-nodeinfo": "dr=0,1 method=getresp attr=NodeInfo NodeInfo.NumPorts=12 "
                       "NodeInfo.Guid=0x0000000000200001 NodeInfo.NodeType=2",
    "fields-portinfo": "dr=0,1 method=set attr=PortInfo attrmod=3 PortInfo.LinkState=4 "
                       "PortInfo.Lid=7 PortInfo.CapMask=0x2 PortInfo.HoqLife=8",
    "fields-nodedesc": 'dr=0 method=set attr=NodeDescription '
                       'NodeDescription.NodeDesc="Hx3 \\"HCA\\"-1 \\\\ \\x01"',
    "fields-counters": "class=perf method=set attr=PortCounters lid=4 "
                       "PortCounters.PortSelect=1 PortCounters.CounterSelect=0xffff",
    "fields-records": "class=sa method=gettableresp attr=PathRecord lid=1 attr_offset=8 "
                      "PathRecord[0].PathRecDLid=3 PathRecord[2].PathRecSLid=4 "
                      "PathRecord[1].PathRecDGid=0xfe800000000000000000000000000001",
    "fields-pkeys": "dr=0,1 method=getresp attr=PKeyTable attrmod=1 "
                    "PKeyTable.PKey0=0xffff PKeyTable.PKey31=0x8001",
    "fields-links": "class=sa method=gettableresp attr=LinkRecord lid=1 attr_offset=1 "
                    "LinkRecord[0].FromLID=3 LinkRecord[0].FromPort=1 "
                    "LinkRecord[1].ToPort=7 LinkRecord[1].ToLID=4",
    "bad-field-quote": 'dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc="ab',
    "bad-field-other": "dr=0 method=get attr=NodeInfo PortInfo.Lid=1",
    "comment": "  # a comment",
    "bad-key": "class=perf method=get lid=1 foo=1",
    "bad-crlf": "class=perf method=get lid=1\r",
    "bad-hex": "lid=1 mad=0104010x",
    "bad-path": "method=get dr=0,,2",
    "bad-junk": "class=perf method=get\x01\xff lid=1",
    "bad-data-size": "dr=0 method=set attr=PortInfo data=" + "00" * 65,
    "bad-not-active": "lid=1 mad=" + hexs(rmpp_sa(active=False)),
}

FRAMES = {
    "pma-get": umad_hdr(320, lid=4, qpn=1, qkey=0x80010000, timeout=1000,
                        retries=3) + mad(0x04, 0x01, attr=0x12, tid=1),
    "dr-response": umad_hdr(320, lid=0xffff) + dr_response(),
    "grh-timeout": umad_hdr(320, lid=0x17, qpn=1, qkey=0x80010000, status=110,
                            grh=bytes.fromhex("fe800000000000000002c90300010203"),
                            pkey_index=1) + mad(0x01, 0x01, attr=0x15, tid=9),
    "vendor-oui": umad_hdr(320, lid=7, qpn=1) + mad(0x32, 0x01, attr=0x10)[:37]
                  + b"\x00\x14\x05" + bytes(216),
    "short-88": umad_hdr(88, lid=1, qpn=1) + mad(0x04, 0x01)[:24],
    # Up to 1 KiB (scripts/fuzz.sh's -max_len for this target): bigger
    # frames are fuzz_madformat's.
    "sa-rmpp": umad_hdr(64 + 900, lid=1, qpn=1) + rmpp_sa(900),
    "bad-long-pma": umad_hdr(64 + 300, lid=1, qpn=1) + mad(0x04, 0x01, size=300),
    "bad-tiny": b"\x01" * 10,
}

# fuzz_madformat: received frames whose attributes have named fields, one
# MAD to 64 KiB (SA responses of records).
MADFORMAT = {
    "portinfo": umad_hdr(320, lid=4, qpn=0) + smp_resp(0x15, attrmod=1),
    "nodeinfo": umad_hdr(320, lid=4, qpn=0) + smp_resp(0x11),
    "nodedesc": umad_hdr(320, lid=4, qpn=0) + smp_resp(0x10),
    "pkeys": umad_hdr(320, lid=4, qpn=0) + smp_resp(0x16, attrmod=1),
    "dr-response": umad_hdr(320, lid=0xffff) + dr_response(),
    "pma-counters": umad_hdr(320, lid=4, qpn=1, qkey=0x80010000)
                    + mad(0x04, 0x81, attr=0x12, tid=1)[:64]
                    + bytes((i * 7 + 3) & 0xff for i in range(192)),
    "grh-timeout": umad_hdr(320, lid=0x17, qpn=1, qkey=0x80010000, status=110,
                            grh=bytes.fromhex("fe800000000000000002c90300010203"),
                            pkey_index=1) + mad(0x01, 0x01, attr=0x15, tid=9),
    # SA tables: lines that fit MADTEXT_LINE_MAX are parsed back.
    "sa-noderecords-3": frame(sa_table(0x11, 14, 3), lid=1, qpn=1),
    "sa-pathrecords-4": frame(sa_table(0x35, 8, 4), lid=1, qpn=1),
    "sa-linkrecords-no-paylen": frame(sa_table(0x20, 1, 20, paylen=False),
                                      lid=1, qpn=1),
    "sa-portinforecords-8k": frame(sa_table(0x12, 16, 64), lid=1, qpn=1),
    # The size limit, both sides (libFuzzer grows inputs slowly: without
    # these a short run never gets near 64 KiB).
    "sa-rmpp-64k": umad_hdr(65536, lid=1, qpn=1) + rmpp_sa(65536 - 64),
    "bad-over-64k": umad_hdr(65537, lid=1, qpn=1) + rmpp_sa(65537 - 64),
}

# fuzz_register: lines written to agents/NAME/register (docs/files.md).
REGISTER = {
    "sa": "class=sa methods=get,set",
    "vendor": "class=0x32 version=1 methods=get,0x7 oui=0x001405 rmpp=1",
    "cm": "class=cm\tversion=2 methods=send",
    "defaults": "class=perf",
    "numbers": "class=255 version=0xff methods=0x01,0x7f oui=16777215 rmpp=0",
    "bad-response": "class=sa methods=getresp",
    "bad-key": "class=sa foo=1",
    "bad-class": "class=0 methods=get",
    "bad-no-class": "version=1 methods=get",
    "bad-rmpp": "class=sa rmpp=2",
    "bad-word": "class=sa methods",
    "bad-long": "class=sa " + "methods=get " * 50,
    "two-lines": "class=sa methods=get\nclass=perf",
}

# fuzz_number: a range byte (fuzz_number.c's table: 0 timeout_ms, 1 retries,
# 2 queue_len, 3 interval_ms, 4 all, 5 2^64-1 only, 6 none), then a value.
NUMBER = {
    "timeout": "\x00" + "3600000\n",
    "retries-hex": "\x01" + "0x64",
    "queue-len-zero": "\x02" + "0",
    "interval": "\x03" + "86400000 \n \n",
    "max-dec": "\x04" + "18446744073709551615",
    "max-hex": "\x05" + "0XFFFFFFFFFFFFFFFF",
    "bad-over": "\x04" + "18446744073709551616",
    "bad-hex-17": "\x04" + "0x10000000000000000",
    "bad-sign": "\x00" + "-1",
    "bad-space": "\x00" + " 5",
    "bad-empty-hex": "\x04" + "0x",
    "bad-tab": "\x01" + "5\t",
}

# fuzz_options: the value of one -o (umadfs(8), docs/bad-input.md).
OPTIONS = {
    "all": "attrs=smp,queue_len=4096,fabric_interval=60000,"
           "fabric_port=mlx5_0:1,fabric=on",
    "group": "allow_other,mad_group=0,mad_group_smi",
    "group-name": "allow_other,mad_group=root",
    "fuse": "default_permissions,max_read=65536,fsname=umadfs,debug",
    "escaped": "fabric_port=a\\,b:2,attrs=sysfs",
    "off": "fabric=off,attrs=auto",
    "bad-queue": "queue_len=0x",
    "bad-port": "fabric_port=:1",
    "bad-port-num": "fabric_port=mlx5_0:255",
    "bad-port-long": "fabric_port=" + "c" * 70 + ":1",
    "bad-interval": "fabric_interval=86400001",
    "bad-group-alone": "mad_group_smi",
    "bad-group-number": "allow_other,mad_group=12x",
    "bad-attrs": "attrs=",
    "bad-fabric": "fabric=maybe",
    "bad-expected-dir": "fabric_expected=/",
    "bad-expected-missing-dir": "fabric_expected=/nonexistent-umadfs/expected",
}

# fuzz_expected: texts written to fabric/expected (docs/files.md): the real
# ibnetdiscover output the unit test keeps, ibsim-style names with GUID
# lines, link comments of every width and speed, and bad ones.
IBND = HERE.parent / "unit" / "ibnetdiscover"
EXPECTED = {f.stem: f.read_bytes() for f in sorted(IBND.glob("*.txt"))}
EXPECTED.update({
    "ibsim-names": 'switchguid=0x10(10)\nSwitch 4 "sw1" # "s" enhanced port 0 '
                   'lid 9 lmc 1\n[1] "h1"[2](22) # "h" lid 7 1xQDR\n'
                   '[2][ext 3]\t"r1"[1][ext 1] # "r" lid 0 12xHDR\n[4] "sw1"[3]\n\n'
                   'caguid=0x20\nHca 2 "h1" # "h"\r\nrtguid=0x30\nRt 1 "r1"\n',
    "speeds": "".join('Switch 2 "S-%x"\n[1] "H-%x"[1](3) # "x" lid 1 %s\n'
                      'Ca 1 "H-%x"\n' % (i + 1, i + 100, w, i + 100)
                      for i, w in enumerate(("8xFDR", "2xEDR", "4xNDR", "4xXDR",
                                             "4xFDR10", "??", "4x???", "1xDDR"))),
    "empty": "",
    "comments": "# only\n\n\t# comments\n",
    "clear": "# the word that clears it\nclear\n",
    "bad-clear": 'clear\nSwitch 2 "S-1"\n',
    "bad-inconsistent": 'Switch 2 "S-1"\n[1] "H-2"[1]\nCa 1 "H-2"\n[1] "S-1"[2]\n',
    "bad-unknown-peer": 'Switch 2 "S-1"\n[1] "H-9"[1]\n',
    "bad-speed": 'Switch 2 "S-1"\n[1] "H-2"[1] # "d" lid 1 4xSDQ\nCa 1 "H-2"\n',
    "bad-header": "vendid=0x2c9\nvendid=1\n",
    "bad-ports": 'Switch 255 "S-1"\n',
})


def main():
    for name, d in (("madtext", TEXT), ("umadframe", FRAMES),
                    ("madformat", MADFORMAT), ("register", REGISTER),
                    ("number", NUMBER), ("options", OPTIONS),
                    ("expected", EXPECTED)):
        out = HERE / "corpus" / name
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("seed-*"):
            old.unlink()
        for key, value in d.items():
            data = value.encode("latin-1") if isinstance(value, str) else bytes(value)
            (out / ("seed-" + key)).write_bytes(data)


if __name__ == "__main__":
    main()
