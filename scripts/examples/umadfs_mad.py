"""Helpers shared by the umadfs example scripts (Python 3 stdlib only).

    private_channel(port_dir)  a channel of this process's own: makes
                               PORT_DIR/agents/PROG-PID, removes it on close,
                               so a cron job and an interactive user never
                               read each other's answers
    Channel(dir)               send/recv of an existing channel directory:
      .request_all(lines)      pipelined: writes the request lines in batches
                               (many lines per write to `send`), reads the
                               answers from `recv` with poll(); returns one
                               parsed answer per request, in request order
    parse_line(text)           a `recv` line -> dict of keys (named fields
                               too: "NodeInfo.NumPorts"), plus "_mad"
    nodeinfo(a), portinfo(a), port_counters(a),
    port_counters_ext(a)       an answer's named fields, as the scripts
                               use them
    link_speed(portinfo)       SDR ... NDR, FDR10
    sweep(chan)                directed-route discovery of the whole fabric

Attribute fields come from the answers' Attribute.Field=value keys (the
channel's `decode` file must say `fields`, the default); the text format
is docs/text-format.md.
"""

import errno
import os
import re
import select
import sys
import time

SMP_DATA = 64           # SMP data: MAD bytes 64..127
VENDOR_DATA = 40        # vendor classes 0x30-0x4f: after RMPP header + OUI

NODE_TYPES = {1: "Ca", 2: "Switch", 3: "Router"}
PORT_STATES = {0: "NoChange", 1: "Down", 2: "Init", 3: "Armed", 4: "Active"}


# key=value; a field's value may be a quoted string with spaces in it.
_TOKEN = re.compile(r'([^ =]+)=("(?:[^"\\]|\\.)*"|[^ ]*)(?: |$)')


def parse_line(text):
    """One `recv` line (without its newline) -> {key: value}; the MAD as
    bytes under "_mad"."""
    d = {k: v for k, v in _TOKEN.findall(text)}
    d["_mad"] = bytes.fromhex(d.get("mad", ""))
    return d


def field(a, key):
    """A named field of an answer: an int, or the text of a quoted string
    (escapes \\", \\\\ and \\xNN undone)."""
    v = a[key]
    if not v.startswith('"'):
        return int(v, 0)
    return re.sub(r'\\(x[0-9a-fA-F]{2}|.)',
                  lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 3
                  else m.group(1), v[1:-1])


class Channel:
    """The MAD files of one channel: `send` and `recv` in directory d.
    private: d is an agents/NAME channel of ours, removed by close()."""

    def __init__(self, d, window=64, batch=32, private=False):
        self.dir = d
        self.private = private
        self.window = window    # requests in flight at most
        self.batch = batch      # request lines per write()
        self.unclaimed = []     # answers to no request of request_all
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
        if self.private:
            _rmdir_when_released(self.dir)

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
        "error" set (error=timeout).  A line with a TID none of these
        requests has (the late answer of a request an earlier call gave up
        on) is kept in self.unclaimed on a private channel; on a shared
        one it is someone else's answer, taken from them: that fails."""
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
                elif self.private:
                    self.unclaimed.append(ln)
                else:
                    raise RuntimeError(
                        "%s/recv gave an answer that is not ours (tid=%s): "
                        "the channel is shared; use private_channel()"
                        % (self.dir, ln.get("tid")))
        return answers


def _rmdir_when_released(d, timeout_s=2.0):
    """rmdir a channel just closed: the daemon hears of the close a moment
    after close() returns, and refuses (EBUSY) until then."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.rmdir(d)
            return
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def private_channel(port_dir, name=None, **kw):
    """A Channel of its own for this process: PORT_DIR/agents/NAME (default
    NAME: the program's name and pid), removed again by close().  Its recv
    holds the answers to its own requests only."""
    if name is None:
        prog = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(sys.argv[0]))
        name = "%s-%d" % (prog.lstrip(".") or "umadfs", os.getpid())
    d = os.path.join(port_dir, "agents", name)
    os.mkdir(d)
    try:
        return Channel(d, private=True, **kw)
    except BaseException:
        os.rmdir(d)
        raise


# ---------------------------------------------------------------------------
# attribute decoders

def nodeinfo(a):
    def f(name):
        return field(a, "NodeInfo." + name)
    ntype = f("NodeType")
    return {"type": NODE_TYPES.get(ntype, "?%d" % ntype), "nports": f("NumPorts"),
            "sysguid": f("SystemGuid"), "guid": f("Guid"),
            "port_guid": f("PortGuid"), "devid": f("DevId"),
            "local_port": f("LocalPort"), "vendor": f("VendorId")}


CAP_EXT_SPEEDS = 1 << 14     # PortInfo CapabilityMask.IsExtendedSpeedsSupported
WIDTHS = {1: "1x", 2: "4x", 4: "8x", 8: "12x", 16: "2x"}
SPEEDS = {1: "SDR", 2: "DDR", 4: "QDR"}                   # LinkSpeedActive
SPEEDS_EXT = {1: "FDR", 2: "EDR", 4: "HDR", 8: "NDR"}     # LinkSpeedExtActive


def portinfo(a):
    def f(name):
        return field(a, "PortInfo." + name)
    cap_mask = f("CapMask")
    return {"lid": f("Lid"), "sm_lid": f("SMLid"), "cap_mask": cap_mask,
            "local_port": f("LocalPort"),
            "width_active": f("LinkWidthActive"), "state": f("LinkState"),
            "phys_state": f("PhysLinkState"), "lmc": f("LMC"),
            "speed_active": f("LinkSpeedActive"),
            # Valid only with IsExtendedSpeedsSupported (else reserved).
            "speed_ext_active": f("LinkSpeedExtActive")
            if cap_mask & CAP_EXT_SPEEDS else 0,
            "fdr10": False}


# Mellanox's vendor SMP attribute ExtendedPortInfo: LinkSpeedActive bit 0
# is FDR10, which the standard PortInfo shows as QDR (libibmad's
# IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F, data byte 15).  A vendor attribute
# has no named fields: read from mad=.
MLNX_EXT_PORT_INFO = 0xff90
MLNX_VENDOR = 0x0002c9


def mlnx_fdr10_active(mad):
    return bool(mad[SMP_DATA + 15] & 1)


def link_speed(pi):
    """The active speed's name as ibnetdiscover and iblinkinfo say it:
    the extended speed if any, FDR10, else LinkSpeedActive."""
    if pi["speed_ext_active"]:
        return SPEEDS_EXT.get(pi["speed_ext_active"], "?")
    if pi["fdr10"]:
        return "FDR10"
    return SPEEDS.get(pi["speed_active"], "?")


def node_description(a):
    return field(a, "NodeDescription.NodeDesc")


# PortCounters: our column name -> libibmad's field name.
PORT_COUNTERS = [
    ("SymbolErrors", "SymbolErrorCounter"),
    ("LinkRecovers", "LinkErrorRecoveryCounter"),
    ("LinkDowned", "LinkDownedCounter"), ("RcvErrors", "PortRcvErrors"),
    ("RcvRemotePhysErrors", "PortRcvRemotePhysicalErrors"),
    ("RcvSwRelayErrors", "PortRcvSwitchRelayErrors"),
    ("XmtDiscards", "PortXmitDiscards"),
    ("XmtConstraintErrors", "PortXmitConstraintErrors"),
    ("RcvConstraintErrors", "PortRcvConstraintErrors"),
    ("VL15Dropped", "VL15Dropped"), ("XmtData", "PortXmitData"),
    ("RcvData", "PortRcvData"), ("XmtPkts", "PortXmitPkts"),
    ("RcvPkts", "PortRcvPkts"), ("XmtWait", "PortXmitWait"),
    ("PortSelect", "PortSelect"),
    ("LinkIntegrityErrors", "LocalLinkIntegrityErrors"),
    ("ExcBufOverrunErrors", "ExcessiveBufferOverrunErrors"),
]


# PortCountersExtended: the 64-bit data and packet counters.
PORT_COUNTERS_EXT = [("XmtData", "PortXmitData"), ("RcvData", "PortRcvData"),
                     ("XmtPkts", "PortXmitPkts"), ("RcvPkts", "PortRcvPkts")]
# PerfMgt ClassPortInfo CapabilityMask: IsExtendedWidthSupported(NoIETF).
CAP_EXT_COUNTERS = (1 << 9) | (1 << 10)


def port_counters_ext(a):
    return {ours: field(a, "PortCountersExtended." + name)
            for ours, name in PORT_COUNTERS_EXT}


def perf_cap_mask(a):
    """The CapabilityMask of a PerfMgt ClassPortInfo answer."""
    return field(a, "ClassPortInfo.CapabilityMask")


def port_counters(a):
    return {ours: field(a, "PortCounters." + name)
            for ours, name in PORT_COUNTERS}


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
            info = nodeinfo(ni)
            if info["guid"] in nodes:
                continue
            desc = node_description(nd) if "error" not in nd else ""
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
                nodes[g]["ports"][p] = portinfo(a)
        _find_fdr10(chan, nodes, new, opts)
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
            peer = nodeinfo(a)
            end = (peer["guid"], peer["local_port"])
            links.add(tuple(sorted([(g, p), end])))
            # Two links to one new node: one path to it is enough.
            if peer["guid"] not in nodes and peer["guid"] not in pending:
                pending.add(peer["guid"])
                frontier.append(nodes[g]["path"] + [p])
    return nodes, sorted(links)


def _find_fdr10(chan, nodes, new, opts):
    """FDR10 shows as QDR in PortInfo: ask Mellanox nodes' QDR ports for
    their ExtendedPortInfo, as libibnetdisc does."""
    reqs, keys = [], []
    for g in new:
        n = nodes[g]
        if n["info"]["vendor"] != MLNX_VENDOR:
            continue
        for p, pi in sorted(n["ports"].items()):
            if p and pi["speed_active"] == 4 and not pi["speed_ext_active"]:
                reqs.append("dr=%s method=get attr=0x%x attrmod=%d %s"
                            % (_dr(n["path"]), MLNX_EXT_PORT_INFO, p, opts))
                keys.append((g, p))
    for (g, p), a in zip(keys, chan.request_all(reqs)):
        if "error" not in a and a.get("status") == "0x0000":
            nodes[g]["ports"][p]["fdr10"] = mlnx_fdr10_active(a["_mad"])


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
        if not os.path.isdir(pd):
            continue        # fabric/: not a CA
        for p in sorted(os.listdir(pd), key=int):
            d = os.path.join(pd, p)
            first = first or d
            with open(os.path.join(d, "state")) as f:
                if "ACTIVE" in f.read():
                    return d
    if first is None:
        raise SystemExit("no port under %s" % mnt)
    return first
