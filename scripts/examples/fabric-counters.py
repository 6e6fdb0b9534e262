#!/usr/bin/env python3
"""fabric-counters.py: PortCounters of every port of an InfiniBand fabric,
through a umadfs mount.

usage: fabric-counters.py MNT [CA/PORT]

  MNT        the umadfs mount point (e.g. /run/umadfs)
  CA/PORT    the port to work from (e.g. mlx5_0/1); default: the first
             ACTIVE port under MNT

First a directed-route sweep finds every node and port (NodeInfo,
PortInfo; see fabric-sweep.py), then each node's PerfMgt ClassPortInfo
says whether it has 64-bit counters (IsExtendedWidthSupported), and one
PortCounters Get per connected port, plus a PortCountersExtended Get where
supported, goes to the node's LID (a switch's ports through the LID of its
port 0, with PortSelect = the port), all pipelined on a private channel
(PORT/agents/fabric-counters.py-PID, removed at the end): many request
lines per write to `send`, answers read from `recv` as poll() says they
are there.  Ports without a LID (no SM ran) are skipped.

Prints one row per port: node description, GUID, port, LID, the data
and packet counters (XmtData/RcvData in units of 4 octets, as perfquery),
the sum of the error counters, and "64" where the data and packet counters
are PortCountersExtended's (else PortCounters' 32-bit ones, which stop at
2^32 - 1); a TOTAL row at the end.  Root only.  Python 3 stdlib only.
"""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import umadfs_mad as um  # noqa: E402

ERRORS = ["SymbolErrors", "LinkRecovers", "LinkDowned", "RcvErrors",
          "RcvRemotePhysErrors", "RcvSwRelayErrors", "XmtDiscards",
          "XmtConstraintErrors", "RcvConstraintErrors", "LinkIntegrityErrors",
          "ExcBufOverrunErrors", "VL15Dropped"]
COLUMNS = ["XmtData", "RcvData", "XmtPkts", "RcvPkts"]


def _targets(nodes, links):
    """(node, port, lid) of every connected port that has a LID."""
    connected = {end for link in links for end in link}
    targets = []
    for n in sorted(nodes.values(), key=lambda n: n["path"]):
        lid = um.node_lid(n)
        for p in sorted(n["ports"]):
            if p == 0 or (n["info"]["guid"], p) not in connected:
                continue
            if n["info"]["type"] != "Switch":
                lid = n["ports"][p]["lid"]
            if lid:
                targets.append((n, p, lid))
    return targets


def _has_ext_counters(chan, lids):
    """The LIDs whose PerfMgt ClassPortInfo has IsExtendedWidthSupported
    (64-bit PortCountersExtended, as perfquery checks)."""
    lids = sorted(lids)
    answers = chan.request_all([
        "class=perf method=get attr=ClassPortInfo lid=%d timeout=500 "
        "retries=1" % lid for lid in lids])
    return {lid for lid, a in zip(lids, answers)
            if "error" not in a and a.get("status") == "0x0000" and
            um.perf_cap_mask(a) & um.CAP_EXT_COUNTERS}


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    port_dir = um.find_port_dir(argv[1], argv[2] if len(argv) == 3 else None)
    t0 = time.monotonic()
    with um.private_channel(port_dir) as chan:
        nodes, links = um.sweep(chan)
        targets = _targets(nodes, links)
        ext = _has_ext_counters(chan, {lid for _, _, lid in targets})
        # PortCounters data: byte 1 is PortSelect; so for the extended.
        answers = chan.request_all([
            "class=perf method=get attr=PortCounters lid=%d data=00%02x0000 "
            "timeout=500 retries=1" % (lid, p) for _, p, lid in targets])
        wide = [(i, t) for i, t in enumerate(targets) if t[2] in ext]
        for (i, _), a in zip(wide, chan.request_all([
                "class=perf method=get attr=PortCountersExtended lid=%d "
                "data=00%02x0000 timeout=500 retries=1" % (lid, p)
                for _, (_, p, lid) in wide])):
            if "error" not in answers[i] and "error" not in a and \
                    a.get("status") == "0x0000":
                answers[i]["_ext"] = um.port_counters_ext(a)
    dt = time.monotonic() - t0
    fmt = "%-24s %-18s %4s %6s %12s %12s %10s %10s %6s %4s"
    print(fmt % ("node", "guid", "port", "lid", *COLUMNS, "errors", "bits"))
    total = dict.fromkeys(COLUMNS + ["errors"], 0)
    failed = 0
    for (n, p, lid), a in zip(targets, answers):
        guid = "0x%016x" % n["info"]["guid"]
        if "error" in a or a.get("status") != "0x0000":
            failed += 1
            print((fmt % (n["desc"][:24], guid, p, lid,
                          "(%s)" % a.get("error", "status " + a.get("status", "?")),
                          "", "", "", "", "")).rstrip())
            continue
        c = um.port_counters(a)
        c.update(a.get("_ext", {}))
        c["errors"] = sum(c[e] for e in ERRORS)
        for k in total:
            total[k] += c[k]
        print(fmt % (n["desc"][:24], guid, p, lid,
                     *(c[k] for k in COLUMNS), c["errors"],
                     "64" if "_ext" in a else "32"))
    print((fmt % ("TOTAL", "%d ports" % (len(targets) - failed), "", "",
                  *(total[k] for k in COLUMNS), total["errors"], "")).rstrip())
    print("# %d nodes, %d links, %d ports queried in %.2fs"
          % (len(nodes), len(links), len(targets), dt))
    return 1 if failed else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)     # | head: no traceback
    sys.exit(main(sys.argv))
