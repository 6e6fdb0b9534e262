"""Helpers shared by the umadfs example scripts (Python 3 stdlib only).

    Channel(port_dir)          send/recv of a port (or an agents/NAME dir):
      .request_all(lines)      pipelined: writes the request lines in batches
                               (many lines per write to `send`), reads the
                               answers from `recv` with poll(); returns one
                               parsed answer per request, in request order
    parse_line(text)           a `recv` line -> dict of keys, plus "_mad"
    nodeinfo(mad), portinfo(mad), port_counters(mad)   attribute decoders
    sweep(chan)                directed-route discovery of the whole fabric

Field layouts are the IBA spec's (NodeInfo 14.2.5.3, PortInfo 14.2.5.6,
PortCounters 16.1.3.5); the text format is docs/text-format.md.
"""

import os
import select
import struct
import time

SMP_DATA = 64           # SMP data: MAD bytes 64..127
PERF_DATA = 64          # PerfMgt data: after 40 reserved bytes
VENDOR_DATA = 40        # vendor classes 0x30-0x4f: after RMPP header + OUI

NODE_TYPES = {1: "Ca", 2: "Switch", 3: "Router"}
PORT_STATES = {0: "NoChange", 1: "Down", 2: "Init", 3: "Armed", 4: "Active"}


def parse_line(text):
    """One `recv` line (without its newline) -> {key: value}; the MAD as
    bytes under "_mad"."""
    d = {}
    for tok in text.split(" "):
        k, _, v = tok.partition("=")
        d[k] = v
    d["_mad"] = bytes.fromhex(d.get("mad", ""))
    return d


class Channel:
    """The MAD files of one channel: `send` and `recv` in directory d."""

    def __init__(self, d, window=64, batch=32):
        self.dir = d
        self.window = window    # requests in flight at most
        self.batch = batch      # request lines per write()
        self.send_fd = os.open(os.path.join(d, "send"), os.O_WRONLY)
        self.recv_fd = os.open(os.path.join(d, "recv"),
                               os.O_RDONLY | os.O_NONBLOCK)
        self.poller = select.poll()
        self.poller.register(self.recv_fd, select.POLLIN)
        self.buf = b""
        self.next_tid = 0x5e000000 + (os.getpid() & 0xffff) * 0x100

    def close(self):
        os.close(self.send_fd)
        os.close(self.recv_fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def write(self, text):
        data = text.encode()
        while data:
            n = os.write(self.send_fd, data)
            data = data[n:]

    def read_lines(self, timeout_ms=-1):
        """Whatever whole lines are queued, waiting up to timeout_ms for
        the first one ([] on timeout)."""
        while b"\n" not in self.buf:
            if not self.poller.poll(timeout_ms):
                return []
            try:
                self.buf += os.read(self.recv_fd, 1 << 20)
            except BlockingIOError:
                continue
        *lines, self.buf = self.buf.split(b"\n")
        return [parse_line(ln.decode()) for ln in lines]

    def request_all(self, lines, timeout_s=30):
        """Send request lines (without tid=), pipelined; return the answer
        line (parsed) of each, in order.  A request that got no answer has
        "error" set (error=timeout)."""
        tids = []
        for _ in lines:
            self.next_tid += 1
            tids.append(self.next_tid)
        index = {t: i for i, t in enumerate(tids)}
        answers = [None] * len(lines)
        sent = done = 0
        deadline = time.monotonic() + timeout_s
        while done < len(lines):
            if sent < len(lines) and sent - done < self.window:
                n = min(self.batch, self.window - (sent - done), len(lines) - sent)
                self.write("".join("%s tid=0x%x\n" % (lines[i], tids[i])
                                   for i in range(sent, sent + n)))
                sent += n
                continue
            left = int((deadline - time.monotonic()) * 1000)
            if left <= 0:
                raise TimeoutError("%d of %d answers" % (done, len(lines)))
            for ln in self.read_lines(left):
                i = index.pop(int(ln.get("tid", "0"), 16), None)
                if i is not None:
                    answers[i] = ln
                    done += 1
        return answers


# ---------------------------------------------------------------------------
# attribute decoders

def nodeinfo(mad):
    d = mad[SMP_DATA:]
    (_base, _cls, ntype, nports, sysguid, guid, pguid, _partcap, devid, _rev,
     lport) = struct.unpack_from(">BBBBQQQHHIB", d, 0)
    return {"type": NODE_TYPES.get(ntype, "?%d" % ntype), "nports": nports,
            "sysguid": sysguid, "guid": guid, "port_guid": pguid,
            "devid": devid, "local_port": lport,
            "vendor": int.from_bytes(d[37:40], "big")}


def portinfo(mad):
    d = mad[SMP_DATA:]
    lid, sm_lid = struct.unpack_from(">HH", d, 16)
    return {"lid": lid, "sm_lid": sm_lid, "local_port": d[28],
            "width_active": d[31], "state": d[32] & 0xf,
            "phys_state": d[33] >> 4, "lmc": d[34] & 7,
            "speed_active": d[35] >> 4}


def node_description(mad):
    return mad[SMP_DATA:SMP_DATA + 64].split(b"\0", 1)[0].decode("ascii", "replace")


# PortCounters: name -> (data byte offset, bits); all byte-aligned but two.
PORT_COUNTERS = [
    ("SymbolErrors", 4, 16), ("LinkRecovers", 6, 8), ("LinkDowned", 7, 8),
    ("RcvErrors", 8, 16), ("RcvRemotePhysErrors", 10, 16),
    ("RcvSwRelayErrors", 12, 16), ("XmtDiscards", 14, 16),
    ("XmtConstraintErrors", 16, 8), ("RcvConstraintErrors", 17, 8),
    ("VL15Dropped", 22, 16), ("XmtData", 24, 32), ("RcvData", 28, 32),
    ("XmtPkts", 32, 32), ("RcvPkts", 36, 32), ("XmtWait", 40, 32),
]


def port_counters(mad):
    d = mad[PERF_DATA:]
    out = {name: int.from_bytes(d[off:off + bits // 8], "big")
           for name, off, bits in PORT_COUNTERS}
    out["PortSelect"] = d[1]
    out["LinkIntegrityErrors"] = d[19] >> 4
    out["ExcBufOverrunErrors"] = d[19] & 0xf
    return out


# ---------------------------------------------------------------------------
# directed-route sweep

def _dr(path):
    return ",".join(str(p) for p in path)


def sweep(chan, timeout_ms=100):
    """Breadth-first directed-route discovery from the channel's port.

    Returns (nodes, links):
      nodes  {guid: {"path": [0, ...], "info": nodeinfo, "desc": str,
                     "ports": {num: portinfo}}}   (a switch's port 0 too)
      links  [((guid, port), (guid, port)), ...], each link once.
    Each level of the BFS is one pipelined batch: NodeInfo +
    NodeDescription of the new nodes, then PortInfo of all their ports,
    then NodeInfo through every port that is not Down (a Down port has no
    peer; a DR SMP through it would only time out)."""
    opts = "timeout=%d retries=0" % timeout_ms
    nodes = {}
    links = set()
    frontier = [[0]]                # DR paths of nodes not yet seen
    while frontier:
        reqs = []
        for path in frontier:
            reqs.append("dr=%s method=get attr=NodeInfo %s" % (_dr(path), opts))
            reqs.append("dr=%s method=get attr=NodeDescription %s" % (_dr(path), opts))
        ans = chan.request_all(reqs)
        new = []
        for i, path in enumerate(frontier):
            ni, nd = ans[2 * i], ans[2 * i + 1]
            if "error" in ni:
                continue
            info = nodeinfo(ni["_mad"])
            if info["guid"] in nodes:
                continue
            desc = node_description(nd["_mad"]) if "error" not in nd else ""
            nodes[info["guid"]] = {"path": path, "info": info, "desc": desc,
                                   "ports": {}}
            new.append(info["guid"])
        # PortInfo of every port of the new nodes (switches: 0..N).
        reqs, keys = [], []
        for g in new:
            n = nodes[g]
            first = 0 if n["info"]["type"] == "Switch" else 1
            for p in range(first, n["info"]["nports"] + 1):
                reqs.append("dr=%s method=get attr=PortInfo attrmod=%d %s"
                            % (_dr(n["path"]), p, opts))
                keys.append((g, p))
        for (g, p), a in zip(keys, chan.request_all(reqs)):
            if "error" not in a:
                nodes[g]["ports"][p] = portinfo(a["_mad"])
        # The peer of every port that is up.  Only switches forward a
        # directed-route SMP: of the other nodes only the first (our own
        # CA, path [0]) is probed; the links of the others are found from
        # the switch side.
        reqs, keys = [], []
        for g in new:
            n = nodes[g]
            if n["info"]["type"] != "Switch" and n["path"] != [0]:
                continue
            for p, pi in sorted(n["ports"].items()):
                if p == 0 or pi["state"] <= 1:
                    continue
                reqs.append("dr=%s method=get attr=NodeInfo %s"
                            % (_dr(n["path"] + [p]), opts))
                keys.append((g, p))
        frontier, pending = [], set()
        for (g, p), a in zip(keys, chan.request_all(reqs)):
            if "error" in a:
                continue
            peer = nodeinfo(a["_mad"])
            end = (peer["guid"], peer["local_port"])
            links.add(tuple(sorted([(g, p), end])))
            # Two links to one new node: one path to it is enough.
            if peer["guid"] not in nodes and peer["guid"] not in pending:
                pending.add(peer["guid"])
                frontier.append(nodes[g]["path"] + [p])
    return nodes, sorted(links)


def node_lid(node):
    """The LID a node answers on: port 0 of a switch, else its first port
    with a LID (0 if none)."""
    for p, pi in sorted(node["ports"].items()):
        if pi["lid"] and (p == 0 or node["info"]["type"] != "Switch"):
            return pi["lid"]
    return 0


def find_port_dir(mnt, ca_port=None):
    """MNT/CA/ports/N: the one named "CA/PORT", else the first port that is
    ACTIVE (else the first port)."""
    if ca_port:
        ca, _, port = ca_port.partition("/")
        return os.path.join(mnt, ca, "ports", port or "1")
    first = None
    for ca in sorted(os.listdir(mnt)):
        pd = os.path.join(mnt, ca, "ports")
        for p in sorted(os.listdir(pd), key=int):
            d = os.path.join(pd, p)
            first = first or d
            with open(os.path.join(d, "state")) as f:
                if "ACTIVE" in f.read():
                    return d
    if first is None:
        raise SystemExit("no port under %s" % mnt)
    return first
