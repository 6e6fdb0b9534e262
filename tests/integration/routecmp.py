"""routecmp.py: the fabric view's routing against the diags' (shared by
test_routes.py and the bench's reroute check): a snapshot's switches, a
switch's `lft` against `ibroute`, `routes/SRC/DST` against `ibtracert`, the endports of a
topology."""

import os
import re

from diags import KV, lft, tool, tracert_hops  # noqa: F401 (lft: for its users)


def switches(m):
    """{switch GUID: its LID} of the snapshot."""
    out = {}
    nodes = m.path("fabric", "nodes")
    for g in os.listdir(nodes):
        if open(os.path.join(nodes, g, "node_type")).read().startswith("2"):
            out[int(g, 16)] = int(open(os.path.join(nodes, g, "ports", "0", "lid")).read(), 16)
    return out


def ibroute(f, host, lid):
    """ibroute's table of the switch at lid: {LID: port}."""
    out = tool(f, host, "ibroute", str(lid)).stdout
    return {int(a, 16): int(b) for a, b in re.findall(r"^(0x[0-9a-f]+) (\d+) ", out, re.M)}


def route(m, src, dst):
    """routes/SRC/DST as ([(guid, in, out)], {result keys})."""
    text = open(m.path("fabric", "routes", str(src), str(dst))).read()
    lines = text.splitlines()
    hops = []
    for ln in lines[:-1]:
        kv = dict(KV.findall(ln))
        hops.append((int(kv["guid"], 16), int(kv["in"]) if "in" in kv else None,
                     int(kv["out"]) if "out" in kv else None))
    return hops, dict(KV.findall(lines[-1]))


def ibtracert(f, host, src, dst, *opts):
    """ibtracert's path as [(node guid, in, out)] (a hop's port GUID made its
    node's by the To line at the end), its exit status and output."""
    r = tool(f, host, "ibtracert", *opts, str(src), str(dst), check=False)
    hops = tracert_hops(r.stdout)
    return [tuple(h) for h in hops], r.returncode, r.stdout + r.stderr


def endports(text):
    """Every endport as (node GUID, port GUID, LID) in a text of
    ibnetdiscover's format (its output, fabric/topology): switch ports 0
    and CA ports."""
    ends, ca = [], None
    for ln in text.splitlines():
        mm = re.match(r"switchguid=0x([0-9a-f]+)\(([0-9a-f]+)\)", ln)
        if mm:
            sw = (int(mm.group(1), 16), int(mm.group(2), 16))
        mm = re.match(r'Switch\s.*\blid (\d+) lmc', ln)
        if mm:
            ends.append((sw[0], sw[1], int(mm.group(1))))
        mm = re.match(r"caguid=0x([0-9a-f]+)", ln)
        if mm:
            ca = int(mm.group(1), 16)
        mm = re.match(r"\[\d+\]\(([0-9a-f]+)\)\s.*# lid (\d+) lmc", ln)
        if mm:
            ends.append((ca, int(mm.group(1), 16), int(mm.group(2))))
    return ends
