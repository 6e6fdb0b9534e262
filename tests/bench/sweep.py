#!/usr/bin/env python3
"""sweep.py: directed-route discovery of a whole fabric through the text
MAD files of a umadfs port, with many requests in flight.

usage: sweep.py [--window N] [--batch N] [--desc] [--list] PORT_DIR

Run it with `python3 -S` (as the benchmark does): it needs only the
standard library, and start-up is part of what is timed.

Breadth-first by directed route from the port: the NodeInfo of the local
node (dr=0) and through its port (dr=0,P); then for every switch found
the PortInfo of each of its ports (but the one it was reached through),
and through every port that is not Down a NodeInfo (dr=...,port), which
names the node and port at the other end.  Only switches forward
directed-route SMPs: the other ports of CAs are found from the switch
side.  Nodes are
told apart by NodeGUID; a link is a pair of (GUID, port), each counted
once, as ibnetdiscover counts them.  --desc also fetches each node's
NodeDescription (as ibnetdiscover does; not needed for the counts).

Unlike a level-by-level sweep, every answer schedules its follow-ups at
once: up to --window requests (default 1024) are in flight, written up
to --batch lines (default 256) per write() to `send`, read from `recv`
with poll() and 256 KiB reads.  (The daemon's in-flight table holds 4096
per port; under ibsim the AF_UNIX queues must be deep enough, as
tests/integration/simfabric.py makes them.)

Prints one line:  nodes=N switches=S cas=C links=L mads=M seconds=T
(--list adds one line per node and link).  Python 3 stdlib only.
"""

import os
import select
import sys
import time

SMP_DATA_HEX = 128      # SMP data starts at MAD byte 64: 128 hex digits in


class Sweep:
    def __init__(self, port_dir, window, batch, desc, timeout_ms=500):
        self.send = os.open(os.path.join(port_dir, "send"), os.O_WRONLY)
        self.recv = os.open(os.path.join(port_dir, "recv"),
                            os.O_RDONLY | os.O_NONBLOCK)
        self.poller = select.poll()
        self.poller.register(self.recv, select.POLLIN)
        self.window, self.batch, self.want_desc = window, batch, desc
        self.opts = " timeout=%d retries=1" % timeout_ms
        self.queue = []          # request lines not yet written
        self.handlers = {}       # tid -> (callback, args)
        self.next_tid = 1
        self.inflight = 0
        self.mads = 0
        self.nodes = {}          # guid -> {"path", "type", "nports", "desc"}
        self.links = set()       # ((guid, port), (guid, port)), sorted
        self.errors = 0

    def close(self):
        os.close(self.send)
        os.close(self.recv)

    def request(self, what, callback, *args):
        tid = self.next_tid
        self.next_tid += 1
        self.handlers[tid] = (callback, args)
        self.queue.append("%s tid=0x%x%s\n" % (what, tid, self.opts))

    @staticmethod
    def dr(path):
        return ",".join(map(str, path))

    # -- the BFS --------------------------------------------------------
    def probe(self, path, from_end):
        """NodeInfo at path; from_end is the (guid, port) it was sent
        through, or None for the local node."""
        self.request("dr=%s method=get attr=NodeInfo" % self.dr(path),
                     self.on_nodeinfo, path, from_end)

    def on_nodeinfo(self, data, path, from_end):
        if data is None:
            return
        ntype, nports = data[2], data[3]
        guid = int.from_bytes(data[12:20], "big")
        local_port = data[36]
        if from_end is not None:
            self.links.add(tuple(sorted((from_end, (guid, local_port)))))
        if guid in self.nodes:
            return
        self.nodes[guid] = node = {"path": path, "type": ntype,
                                   "nports": nports, "desc": None}
        if self.want_desc:
            self.request("dr=%s method=get attr=NodeDescription"
                         % self.dr(path), self.on_desc, node)
        if from_end is None:
            # The local node: out through our own port, which is up.
            self.probe(path + [local_port], (guid, local_port))
        elif ntype == 2:
            # A switch: which of its ports are up.  The one we came in
            # through leads back to a node we know.
            for p in range(1, nports + 1):
                if p != local_port:
                    self.request("dr=%s method=get attr=PortInfo attrmod=%d"
                                 % (self.dr(path), p), self.on_portinfo,
                                 guid, p)

    def on_desc(self, data, node):
        if data is not None:
            node["desc"] = data[:64].split(b"\0", 1)[0].decode("ascii", "replace")

    def on_portinfo(self, data, guid, port):
        # Down (1) or no state: nothing at the other end.
        if data is not None and data[32] & 0xf > 1:
            self.probe(self.nodes[guid]["path"] + [port], (guid, port))

    # -- the pipe -------------------------------------------------------
    def flush(self):
        while self.queue and self.inflight < self.window:
            n = min(self.batch, self.window - self.inflight, len(self.queue))
            data = "".join(self.queue[:n]).encode()
            del self.queue[:n]
            while data:
                w = os.write(self.send, data)
                data = data[w:]
            self.inflight += n
            self.mads += n

    def run(self, timeout_s=60):
        deadline = time.monotonic() + timeout_s
        rest = b""
        self.probe([0], None)
        while self.queue or self.inflight:
            self.flush()
            if time.monotonic() > deadline:
                raise TimeoutError("%d requests unanswered" % self.inflight)
            if not self.poller.poll(1000):
                continue
            try:
                chunk = os.read(self.recv, 1 << 18)
            except BlockingIOError:
                continue
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for ln in lines:
                self.answer(ln)
        return self

    def answer(self, ln):
        # tid= comes first; mad= last (docs/text-format.md).
        tid = int(ln[4:ln.index(b" ", 4)], 16)
        cb = self.handlers.pop(tid, None)
        if cb is None:
            return
        self.inflight -= 1
        m = ln.rindex(b" mad=") + 5
        if b" error=" in ln[:m] or int(ln[m + 8:m + 12], 16) & 0x7fff:
            # A timeout, or an SMP status (e.g. a port that is down).
            self.errors += 1
            data = None
        else:
            data = bytes.fromhex(ln[m + SMP_DATA_HEX:m + SMP_DATA_HEX + 128].decode())
        cb[0](data, *cb[1])

    def summary(self):
        nsw = sum(1 for n in self.nodes.values() if n["type"] == 2)
        return {"nodes": len(self.nodes), "switches": nsw,
                "cas": len(self.nodes) - nsw, "links": len(self.links),
                "mads": self.mads}


def parse_args(argv):
    """No argparse: importing it costs more than a sweep's answers."""
    opts = {"window": 1024, "batch": 256, "desc": False, "list": False}
    args = list(argv)
    port_dir = None
    while args:
        a = args.pop(0)
        if a in ("--window", "--batch") and args:
            opts[a[2:]] = int(args.pop(0))
        elif a in ("--desc", "--list"):
            opts[a[2:]] = True
        elif not a.startswith("-") and port_dir is None:
            port_dir = a
        else:
            sys.exit(__doc__)
    if port_dir is None or opts["window"] < 1 or opts["batch"] < 1:
        sys.exit(__doc__)
    opts["port_dir"] = port_dir
    return type("Args", (), opts)


def main(argv):
    a = parse_args(argv[1:])
    t0 = time.monotonic()
    s = Sweep(a.port_dir, a.window, a.batch, a.desc)
    try:
        s.run()
    finally:
        s.close()
    dt = time.monotonic() - t0
    out = s.summary()
    print(" ".join("%s=%d" % kv for kv in out.items()) + " seconds=%.3f" % dt)
    if a.list:
        for g, n in sorted(s.nodes.items()):
            print("node 0x%016x type %d ports %d dr %s %s" % (
                g, n["type"], n["nports"], s.dr(n["path"]), n["desc"] or ""))
        for (a_, b_) in sorted(s.links):
            print("link 0x%016x[%d] 0x%016x[%d]" % (a_ + b_))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
