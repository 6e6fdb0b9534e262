#!/usr/bin/env python3
"""fabric-counters.py: PortCounters of every port of an InfiniBand fabric,
through a umadfs mount.

usage: fabric-counters.py MNT [CA/PORT]

  MNT        the umadfs mount point (e.g. /run/umadfs)
  CA/PORT    the port to work from (e.g. mlx5_0/1); default: the first
             ACTIVE port under MNT

First a directed-route sweep finds every node and port (NodeInfo,
PortInfo; see fabric-sweep.py), then one PerfMgt PortCounters Get per
connected port goes to the node's LID (a switch's ports through the LID
of its port 0, with PortSelect = the port), all pipelined: many request
lines per write to `send`, answers read from `recv` as poll() says they
are there.  Ports without a LID (no SM ran) are skipped.

Prints one row per port: node description, GUID, port, LID, the data
and packet counters (XmtData/RcvData in units of 4 octets, as perfquery)
and the sum of the error counters; a TOTAL row at the end.  Root only.
Python 3 stdlib only.
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


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    port_dir = um.find_port_dir(argv[1], argv[2] if len(argv) == 3 else None)
    t0 = time.monotonic()
    with um.Channel(port_dir) as chan:
        nodes, links = um.sweep(chan)
        connected = {end for link in links for end in link}
        targets = []        # (node, port, lid)
        for n in sorted(nodes.values(), key=lambda n: n["path"]):
            lid = um.node_lid(n)
            for p in sorted(n["ports"]):
                if p == 0 or (n["info"]["guid"], p) not in connected:
                    continue
                if n["info"]["type"] != "Switch":
                    lid = n["ports"][p]["lid"]
                if lid:
                    targets.append((n, p, lid))
        # PortCounters data: byte 1 is PortSelect.
        answers = chan.request_all([
            "class=perf method=get attr=PortCounters lid=%d data=00%02x0000 "
            "timeout=500 retries=1" % (lid, p) for _, p, lid in targets])
    dt = time.monotonic() - t0
    fmt = "%-24s %-18s %4s %6s %12s %12s %10s %10s %6s"
    print(fmt % ("node", "guid", "port", "lid", *COLUMNS, "errors"))
    total = dict.fromkeys(COLUMNS + ["errors"], 0)
    failed = 0
    for (n, p, lid), a in zip(targets, answers):
        guid = "0x%016x" % n["info"]["guid"]
        if "error" in a or a.get("status") != "0x0000":
            failed += 1
            print(fmt % (n["desc"][:24], guid, p, lid,
                         "(%s)" % a.get("error", "status " + a.get("status", "?")),
                         "", "", "", ""))
            continue
        c = um.port_counters(a["_mad"])
        c["errors"] = sum(c[e] for e in ERRORS)
        for k in total:
            total[k] += c[k]
        print(fmt % (n["desc"][:24], guid, p, lid,
                     *(c[k] for k in COLUMNS), c["errors"]))
    print(fmt % ("TOTAL", "%d ports" % (len(targets) - failed), "", "",
                 *(total[k] for k in COLUMNS), total["errors"]))
    print("# %d nodes, %d links, %d ports queried in %.2fs"
          % (len(nodes), len(links), len(targets), dt))
    return 1 if failed else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)     # | head: no traceback
    sys.exit(main(sys.argv))
