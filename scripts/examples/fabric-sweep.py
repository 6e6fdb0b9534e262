#!/usr/bin/env python3
"""fabric-sweep.py: find every node and link of an InfiniBand fabric by
directed route, through a umadfs mount.

usage: fabric-sweep.py MNT [CA/PORT]

  MNT        the umadfs mount point (e.g. /run/umadfs)
  CA/PORT    the port to sweep from (e.g. mlx5_0/1); default: the first
             ACTIVE port under MNT

Breadth-first search from the local port: NodeInfo and NodeDescription of
each node reached, PortInfo of each of its ports, then NodeInfo through
each port that is not Down (directed-route SMPs, `dr=0,p1,p2,...`).  Each
level is one pipelined batch written to the `send` file of a private
channel (PORT/agents/fabric-sweep.py-PID, removed at the end) and read
back from its `recv` with poll(), so no other user of the port takes its
answers.  Nodes are told apart by NodeGUID.  Speeds are named as
ibnetdiscover names them: SDR, DDR, QDR, FDR10 (Mellanox's
ExtendedPortInfo), FDR, EDR, HDR, NDR (PortInfo LinkSpeedExtActive).

Prints a summary line, then an ibnetdiscover-like listing: one block per
node, one line per connected port naming the peer.  Needs no SM (directed
route works on an unconfigured fabric; LIDs then show as 0).  Root only
(mkdir in agents/; send and recv are mode 0200/0400).  Python 3 stdlib
only.
"""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import umadfs_mad as um  # noqa: E402

def name(node):
    return "%s-%016x" % ("S" if node["info"]["type"] == "Switch" else "H",
                         node["info"]["guid"])


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    port_dir = um.find_port_dir(argv[1], argv[2] if len(argv) == 3 else None)
    t0 = time.monotonic()
    with um.private_channel(port_dir) as chan:
        nodes, links = um.sweep(chan)
    dt = time.monotonic() - t0
    peer = {}
    for a, b in links:
        peer[a] = b
        peer[b] = a
    nsw = sum(1 for n in nodes.values() if n["info"]["type"] == "Switch")
    print("# %d nodes (%d switches, %d CAs), %d links, swept from %s in %.2fs"
          % (len(nodes), nsw, len(nodes) - nsw, len(links),
             os.path.relpath(port_dir, argv[1]), dt))
    order = sorted(nodes.values(), key=lambda n: (n["info"]["type"] != "Switch",
                                                   len(n["path"]), n["path"]))
    for n in order:
        info = n["info"]
        print()
        print('%s\t%d "%s"\t\t# "%s" lid %d dr %s' % (
            info["type"], info["nports"], name(n), n["desc"], um.node_lid(n),
            ",".join(map(str, n["path"]))))
        for p, pi in sorted(n["ports"].items()):
            end = peer.get((info["guid"], p))
            if end is None:
                continue
            other = nodes[end[0]]
            print('[%d]\t"%s"[%d]\t\t# "%s" lid %d %s%s %s' % (
                p, name(other), end[1], other["desc"], um.node_lid(other),
                um.WIDTHS.get(pi["width_active"], "?"), um.link_speed(pi),
                um.PORT_STATES.get(pi["state"], "?")))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)     # | head: no traceback
    sys.exit(main(sys.argv))
