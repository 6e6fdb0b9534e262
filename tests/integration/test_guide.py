"""docs/user-guide.md and scripts/examples/ run on the simulated fabric.

The guide's runnable blocks (```sh, ```python) are run in order against
a umadfs mount on Hca1 (with -o allow_other, at a world-traversable
mount point so that `runuser -u nobody` can reach it), with MNT, CA and
P set; the <!-- expect: REGEX --> comments after a block must match its
output.  Markup (documented at the end of the guide):

  <!-- norun: REASON -->       before a block: not run
  <!-- background: ... -->     before a block: runs while the next block
                               runs, then gets SIGINT
  <!-- peer: ... -->           before a block: runs as a client of Hca2
                               (umad2sim), LID = the mounted port's LID
  <!-- expect: REGEX -->       after a block: re.search(MULTILINE) on stdout
  <!-- expect-var: REGEX -->   the same with NODE_DESC -> the CA's node_desc

The example scripts are checked against infiniband-diags under the same
simulator: port-summary.sh vs ibstat, fabric-sweep.py vs ibnetdiscover,
fabric-counters.py vs perfquery, vendor-responder.py vs ibping.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import simfabric as sim
from diags import ERROR_VALUES, active_fabric, perfquery, quiet_fabric

REPO = sim.REPO
GUIDE = REPO / "docs" / "user-guide.md"
EXAMPLES = REPO / "scripts" / "examples"
PYTHON = "/usr/bin/python3"
PORT = "ibsim0/ports/1"
PEER = "Hca2"
SCRIPT_BUDGET = 5.0         # s, each example on the test fabric
BLOCK_TIMEOUT = 30

# ---------------------------------------------------------------------------
# the guide's markup

_FENCE = re.compile(r"^```(\S*)\s*$")
_ANNOT = re.compile(r"^<!--\s*(norun|background|peer)\s*:\s*(.*?)\s*-->\s*$")
_EXPECT = re.compile(r"^<!--\s*(expect|expect-var)\s*:\s(.*?)\s*-->\s*$")
RUNNABLE = ("sh", "python")


class Block:
    def __init__(self, lang, code, lineno, mode, reason):
        self.lang, self.code, self.lineno = lang, code, lineno
        self.mode, self.reason = mode, reason   # mode: run|norun|background|peer
        self.expects = []                       # (kind, regex)

    def __repr__(self):
        return "%s block at docs/user-guide.md:%d" % (self.lang, self.lineno)


def parse_guide(text):
    """-> list of Blocks (runnable languages only).  Raises ValueError on
    bad markup (an annotation not followed by a block, an expect before any
    block, a norun without a reason)."""
    blocks = []
    lines = text.splitlines()
    pending = None          # (mode, reason, lineno) of an annotation
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m and m.group(1):
            lang, start = m.group(1), i + 1
            i += 1
            body = []
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise ValueError("unclosed ``` at line %d" % start)
            if lang in RUNNABLE:
                mode, reason = ("run", "") if pending is None else pending[:2]
                if mode == "norun" and not reason:
                    raise ValueError("norun without a reason at line %d" % start)
                blocks.append(Block(lang, "\n".join(body) + "\n", start, mode, reason))
                pending = None
            elif pending is not None:
                raise ValueError("annotation at line %d is followed by a ```%s block"
                                 % (pending[2], lang))
            i += 1
            continue
        m = _ANNOT.match(line)
        if m:
            if pending is not None:
                raise ValueError("two annotations before one block (line %d)" % (i + 1))
            pending = (m.group(1), m.group(2), i + 1)
        m = _EXPECT.match(line)
        if m:
            if not blocks:
                raise ValueError("expect before any block at line %d" % (i + 1))
            blocks[-1].expects.append((m.group(1), m.group(2)))
        i += 1
    if pending is not None:
        raise ValueError("annotation at line %d is followed by no block" % pending[2])
    return blocks


def test_guide_markup():
    blocks = parse_guide(GUIDE.read_text())
    assert len(blocks) >= 15
    runnable = [b for b in blocks if b.mode != "norun"]
    norun = [b for b in blocks if b.mode == "norun"]
    assert len(norun) <= 1, norun       # only the variables' block
    for b in runnable:
        if b.mode != "background":
            assert b.expects, "%r has no <!-- expect: --> after it" % b
        for _, rx in b.expects:
            re.compile(rx)
    # Written for a real host: the names of the simulator appear only in
    # output blocks and prose, never in a command.
    for b in runnable:
        assert "ibsim0" not in b.code and "/run/umadfs" not in b.code, b
    # Every section the guide promises has a runnable block.
    text = GUIDE.read_text()
    for what in ("cat $P/state", "read -r line < $P/recv", "attr=PortInfo",
                 "class=sa", "select", "mkdir $P/agents/ping", "ibping",
                 "runuser -u nobody", "/rates", "sort -t= -k2 -gr",
                 "grep port_congested", "port_xmit_wait_vl0"):
        assert any(what in b.code for b in runnable), what
    assert "allow_other" in text and "default_permissions" in text


# ---------------------------------------------------------------------------
# a mount that other users can reach


@pytest.fixture
def guide_fabric(make_fabric):
    """A fabric of the guide's own, opensm keeping it ACTIVE: the session
    fabric carries what earlier tests left (issm holders, clients that
    stopped reading, on which single-threaded ibsim can stall)."""
    return active_fabric(make_fabric)


@pytest.fixture
def open_mount(guide_fabric):
    """umadfs -o allow_other on Hca1 at a mount point under a 0755 dir."""
    if not (os.path.exists("/dev/fuse") and os.access("/dev/fuse", os.R_OK | os.W_OK)):
        pytest.skip("/dev/fuse missing or not accessible")
    d = Path(tempfile.mkdtemp(prefix="umadfs-guide-"))
    os.chmod(d, 0o755)
    m = sim.Mount(guide_fabric, "Hca1", d / "mnt", workdir=d, options=("allow_other",))
    try:
        yield m.start()
    finally:
        m.unmount()
        problems = m.problems()
        log = m.log_text()
        shutil.rmtree(d, ignore_errors=True)
        if problems:
            pytest.fail("\n".join(problems) + "\n---- daemon log ----\n" + log[-6000:],
                        pytrace=False)


def _argv(block):
    if block.lang == "python":
        return [PYTHON, "-c", block.code]
    return ["bash", "-e", "-c", block.code]


def _check(block, cp, node_desc):
    out = cp.stdout
    assert cp.returncode == 0, "%r exited %d\n--- code\n%s--- stdout\n%s--- stderr\n%s" % (
        block, cp.returncode, block.code, out, cp.stderr)
    assert "Traceback" not in cp.stderr, "%r: %s" % (block, cp.stderr)
    for kind, rx in block.expects:
        if kind == "expect-var":
            rx = rx.replace("NODE_DESC", re.escape(node_desc))
        assert re.search(rx, out, re.MULTILINE), \
            "%r: no line matches %r\n--- stdout\n%s--- stderr\n%s" % (
                block, rx, out, cp.stderr)


def test_guide_commands(guide_fabric, open_mount):
    fabric = guide_fabric
    m = open_mount
    mnt = str(m.mountpoint)
    node_desc = (m.path("ibsim0", "node_desc").read_text()).rstrip("\n")
    lid = int(m.path(PORT, "lid").read_text(), 16)
    env = dict(os.environ, MNT=mnt, CA="ibsim0", P=mnt + "/" + PORT)
    env.pop("LD_PRELOAD", None)
    peer_env = fabric.client_env(PEER)
    peer_env["LID"] = str(lid)

    blocks = [b for b in parse_guide(GUIDE.read_text()) if b.mode != "norun"]
    background = None
    timings = []
    for b in blocks:
        t0 = time.monotonic()
        if b.mode == "background":
            background = (b, subprocess.Popen(
                _argv(b), cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True))
            continue
        if b.mode == "peer":
            cp = subprocess.run(_argv(b), cwd=fabric.clientdir, env=peer_env,
                                stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=BLOCK_TIMEOUT)
        else:
            cp = subprocess.run(_argv(b), cwd=REPO, env=env,
                                stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=BLOCK_TIMEOUT)
        timings.append((b.lineno, time.monotonic() - t0))
        try:
            _check(b, cp, node_desc)
        finally:
            if background is not None:
                bb, proc = background
                background = None
                assert proc.poll() is None, "%r ended early (%s): %s" % (
                    bb, proc.returncode, proc.stderr.read())
                # Ctrl-C, as the guide says.
                os.killpg(proc.pid, signal.SIGINT)
                try:
                    _, err = proc.communicate(timeout=5)
                except subprocess.TimeoutExpired:
                    # Known open problem (see the issue note): now and then
                    # the bash responder outlives SIGINT.  The guide's
                    # commands are what this test checks; interruptible
                    # reads are test_blocked_reads.py's.
                    os.killpg(proc.pid, signal.SIGKILL)
                    _, err = proc.communicate(timeout=10)
                    print("warning: %r outlived SIGINT; killed" % (bb,))
                    err = ""
                else:
                    assert proc.returncode in (-signal.SIGINT, 130), \
                        (proc.returncode, err)
                assert "rror" not in err, err
    assert background is None, "background block with no block after it"
    assert not os.listdir(m.path(PORT, "agents")), "the guide left a channel behind"
    print("block timings (line, s):", ", ".join("%d %.2f" % t for t in timings))


def health_check_block():
    """The guide's health check for cron: the first block after the
    paragraph that starts "A health check for cron"."""
    text = GUIDE.read_text()
    at = text.index("\nA health check for cron")
    line = text[:at].count("\n") + 2
    return next(b for b in parse_guide(text) if b.lineno > line)


def clear_counters(f):
    """perfquery -R on every port of the fabric: what an administrator does
    once a cable is back (ibsim counts the packets a pulled link
    discarded, which counter_over_threshold would keep reporting)."""
    import diags as tm
    for path in ("0,1", "0,1,7"):                   # Switch1, Switch2
        tm.tool(f, "Hca1", "perfquery", "-R", "-a", str(tm.lid_of(f, "Hca1", path)))
    for host in ("Hca1", "Hca2", "Hca3"):
        tm.tool(f, "Hca1", "perfquery", "-R", str(tm.lid_of(f, host)), "1")


@pytest.mark.parametrize("cable", ['"Switch1"[7]', '"Hca2"[1]'])
def test_guide_health_check_finds_a_pulled_cable(guide_fabric, open_mount, cable):
    """Quiet with every cable in, a report once one is pulled (a link
    between the switches, which have a second one; an HCA's only link,
    which takes the HCA out of the sweep), quiet again once it is back
    and the counters it left are cleared."""
    b = health_check_block()
    env = dict(os.environ, MNT=str(open_mount.mountpoint), CA="ibsim0",
               P=str(open_mount.path(PORT)))
    env.pop("LD_PRELOAD", None)

    def run():
        cp = subprocess.run(_argv(b), cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
        assert cp.returncode == 0, (b, cp.stdout, cp.stderr)
        return cp.stdout

    assert run() == ""
    out = guide_fabric.command("Unlink %s" % cable)
    try:
        got = run()
        assert len(re.findall(r"^problem=link_missing severity=error ", got, re.M)) == 2, \
            (out, got)
    finally:
        guide_fabric.command("ReLink %s" % cable)
    for h in ("Hca1", "Hca2", "Hca3"):
        guide_fabric.wait_active(h, timeout=30)
    clear_counters(guide_fabric)
    assert run() == ""


# ---------------------------------------------------------------------------
# the example scripts


def run_example(name, *args, env=None, timeout=BLOCK_TIMEOUT):
    script = EXAMPLES / name
    argv = ([PYTHON] if name.endswith(".py") else ["sh"]) + [str(script), *args]
    t0 = time.monotonic()
    cp = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                        stdin=subprocess.DEVNULL, env=env)
    return cp, time.monotonic() - t0


@pytest.mark.parametrize("name", ["port-summary.sh", "fabric-sweep.py",
                                  "fabric-counters.py", "vendor-responder.py"])
def test_example_usage(name):
    text = (EXAMPLES / name).read_text()
    assert re.search(r"^#? ?usage: %s " % re.escape(name), text, re.MULTILINE), name
    cp, _ = run_example(name)
    assert cp.returncode == 2, cp
    assert "usage" in cp.stderr.lower(), cp.stderr


def test_port_summary(fabric, mount):
    m = mount("Hca1")
    cp, dt = run_example("port-summary.sh", str(m.mountpoint))
    assert cp.returncode == 0, cp.stderr
    assert dt < SCRIPT_BUDGET
    lines = cp.stdout.splitlines()
    assert lines[0].split() == ["ca", "port", "state", "lid", "sm_lid", "rate",
                                "link_layer"]
    assert len(lines) == 2, cp.stdout
    st = fabric.ibstat("Hca1")["ports"][1]
    mm = re.match(r"^(\S+) +(\d+) (\S+) +(0x[0-9a-f]+) +(0x[0-9a-f]+) +"
                  r"(\d+) Gb/sec \((\S+ \S+)\) +(\S+)$", lines[1])
    assert mm, lines[1]
    ca, port, state, lid, sm_lid, rate, _, ll = mm.groups()
    assert (ca, port, state) == ("ibsim0", "1", "ACTIVE")
    assert int(lid, 16) == int(st["Base lid"])
    assert int(sm_lid, 16) == int(st["SM lid"])
    assert rate == st["Rate"] and ll == st["Link layer"]


def parse_ibnetdiscover(text):
    """-> (switches, cas, links): node blocks by kind and the links, each
    counted once (ibnetdiscover lists a link from both ends)."""
    nodes = {"Switch": set(), "Ca": set()}
    ends = set()
    cur = None
    for line in text.splitlines():
        mm = re.match(r'^(Switch|Ca)\s+\d+\s+"([^"]+)"', line)
        if mm:
            cur = mm.group(2)
            nodes[mm.group(1)].add(cur)
            continue
        mm = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"([^"]+)"\[(\d+)\]', line)
        if mm and cur:
            a = (cur, int(mm.group(1)))
            b = (mm.group(2), int(mm.group(3)))
            ends.add(tuple(sorted([a, b])))
    return nodes["Switch"], nodes["Ca"], ends


def test_fabric_sweep_matches_ibnetdiscover(fabric, mount):
    m = mount("Hca1")
    cp, dt = run_example("fabric-sweep.py", str(m.mountpoint))
    assert cp.returncode == 0, cp.stderr
    assert dt < SCRIPT_BUDGET, dt
    sw, ca, links = parse_ibnetdiscover(
        fabric.run_tool(["ibnetdiscover"], "Hca1").stdout)
    assert (len(sw), len(ca), len(links)) == (2, 3, 5)      # two-switch.net
    mm = re.match(r"^# (\d+) nodes \((\d+) switches, (\d+) CAs\), (\d+) links, "
                  r"swept from ibsim0/ports/1 in", cp.stdout)
    assert mm, cp.stdout
    assert tuple(int(x) for x in mm.groups()) == (len(sw) + len(ca), len(sw),
                                                   len(ca), len(links))
    # The listing itself: same nodes (ibnetdiscover's S-/H- names) and the
    # same links.
    osw, oca, olinks = parse_ibnetdiscover(cp.stdout)
    assert (osw, oca, olinks) == (sw, ca, links)
    # Width and speed of every port, as ibnetdiscover names them
    # (4xSDR ... 4xNDR, FDR10); the private channel is gone.
    assert _link_speeds(cp.stdout) == _link_speeds(
        fabric.run_tool(["ibnetdiscover"], "Hca1").stdout) != {}
    assert os.listdir(m.path(PORT, "agents")) == []


def _link_speeds(text):
    """{(node, port): "4xSDR"} from ibnetdiscover's (or the sweep's)
    port lines."""
    out, cur = {}, None
    for line in text.splitlines():
        mm = re.match(r'^(?:Switch|Ca)\s+\d+\s+"([^"]+)"', line)
        if mm:
            cur = mm.group(1)
            continue
        mm = re.match(r'^\[(\d+)\].*#.* lid \d+ (\d+x[A-Z0-9]+)\b', line)
        if mm and cur:
            out[(cur, int(mm.group(1)))] = mm.group(2)
    return out


DATA = ["PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"]
PERF_ERRORS = {k: v for k, v in ERROR_VALUES.items()
               if k not in DATA + ["PortXmitWait"]}
_ROW = re.compile(r"^(.{24}) (0x[0-9a-f]{16}) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+) +(32|64)$")


def _perfquery(f, lid, port):
    return perfquery(f, "Hca1", str(lid), str(port))


def test_fabric_counters_match_perfquery(make_fabric, mount):
    # A fabric of its own: opensm made it ACTIVE and is stopped, so only
    # our MADs move the counters, and error counters may be set.
    f = quiet_fabric(make_fabric)
    for (node, port), k in {("Switch1", 2): 1, ("Hca3", 1): 2}.items():
        for name, v in PERF_ERRORS.items():
            out = f.command('PerformanceSet "%s"[%d] PortCounters.%s=%d'
                            % (node, port, name, v + k))
            assert "has been set" in out, out
    m = mount("Hca1", fabric=f)
    s1_lid = int(f.ibstat("Switch1")["ports"][0]["Base lid"])
    hca3_lid = int(f.ibstat("Hca3")["ports"][1]["Base lid"])
    before = {"h3": _perfquery(f, hca3_lid, 1)}

    cp, dt = run_example("fabric-counters.py", str(m.mountpoint), "ibsim0/1")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert dt < SCRIPT_BUDGET, dt
    rows = {}
    for line in cp.stdout.splitlines()[1:]:
        mm = _ROW.match(line)
        if mm:
            g = mm.groups()
            rows[(int(g[1], 16), int(g[2]))] = {
                "lid": int(g[3]), "desc": g[0].strip(),
                **dict(zip(DATA, map(int, g[4:8]))), "errors": int(g[8]),
                "bits": g[9]}
    assert len(rows) == 10, cp.stdout       # 5 links, 2 ends each
    # ibsim's PMAs have PortCountersExtended (ClassPortInfo says so).
    assert {r["bits"] for r in rows.values()} == {"64"}, cp.stdout
    # The private channel is gone with the script.
    assert os.listdir(m.path(PORT, "agents")) == []
    total = re.search(r"^TOTAL +10 ports +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)$",
                      cp.stdout, re.MULTILINE)
    assert total, cp.stdout
    for i, k in enumerate(DATA + ["errors"]):
        assert int(total.group(i + 1)) == sum(r[k] for r in rows.values()), k

    by_desc = {}
    for (guid, port), r in rows.items():
        by_desc[(r["desc"], port)] = r
    s1 = by_desc[("umadfs test switch one", 2)]
    h3 = by_desc[("umadfs-node3 HCA-1", 1)]
    assert (h3["lid"], s1["lid"]) == (hca3_lid, s1_lid)
    after = {"s1": _perfquery(f, s1["lid"], 2), "h3": _perfquery(f, hca3_lid, 1)}
    # Error counters: what was set, as perfquery says.
    for key, r, k in (("s1", s1, 1), ("h3", h3, 2)):
        assert r["errors"] == sum(after[key][n] for n in PERF_ERRORS) == \
            sum(v + k for v in PERF_ERRORS.values()), (key, r, after[key])
    # Data counters: between perfquery before and after (our own MADs and
    # perfquery's cross these ports).
    for k in DATA:
        assert before["h3"][k] <= h3[k] <= after["h3"][k], (k, before["h3"], h3, after["h3"])
        assert s1[k] <= after["s1"][k] and after["s1"][k] - s1[k] < 1000, (k, s1, after["s1"])


def test_vendor_responder_answers_ibping(fabric, mount):
    m = mount("Hca1")
    pdir = m.path(PORT)
    lid = int((pdir / "lid").read_text(), 16)
    desc = m.path("ibsim0", "node_desc").read_text().rstrip("\n")
    proc = subprocess.Popen([PYTHON, str(EXAMPLES / "vendor-responder.py"), str(pdir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith("ready: "), first + proc.stderr.read()
        assert os.listdir(pdir / "agents") == ["responder"]
        assert "class=0x32" in (pdir / "agents" / "responder" / "register").read_text()
        t0 = time.monotonic()
        cp = fabric.run_tool(["ibping", "-c", "5", "-f", str(lid)], PEER, check=False)
        dt = time.monotonic() - t0
        assert re.search(r"^5 packets transmitted, 5 received, 0% packet loss",
                         cp.stdout, re.MULTILINE), cp.stdout + cp.stderr
        # -f prints no Pong lines; the summary names the answer's data.
        assert "--- %s (Lid %d) ibping statistics ---" % (desc, lid) in cp.stdout, cp.stdout
        assert dt < SCRIPT_BUDGET, dt
        # A plain ibping from the third node too.
        cp = fabric.run_tool(["ibping", "-c", "2", "-f", str(lid)], "Hca3", check=False)
        assert "2 received, 0% packet loss" in cp.stdout, cp.stdout + cp.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=5)
    assert proc.returncode == 0, (out, err)
    assert "answered 7, channel removed" in out, out
    assert os.listdir(pdir / "agents") == []


# ---------------------------------------------------------------------------
# "Is the routing any good": the ring's commands on the ring


def ring_block():
    """The guide's block after "The same commands there" and the lines of
    the ```output block that follows it."""
    text = GUIDE.read_text()
    at = text.index("same commands there:")
    line = text[:at].count("\n") + 1
    block = next(b for b in parse_guide(text) if b.lineno > line)
    out = text[at:].split("```output\n", 1)[1].split("```", 1)[0]
    return block, out.splitlines()


def test_guide_ring_routing(make_fabric, mount):
    """On tests/topologies/ring5.net under opensm's minhop the ring's
    commands print the guide's output, line for line (test_routing.py
    holds the same verdict to ibdmchk's)."""
    b, want = ring_block()
    f = make_fabric("ring5.net")
    f.start_opensm("Hca5")
    for h in ("Hca1", "Hca2", "Hca3", "Hca4", "Hca5"):
        f.wait_active(h, timeout=30)
    m = mount("Hca1", fabric=f)
    env = dict(os.environ, MNT=str(m.mountpoint), CA="ibsim0", P=str(m.path(PORT)))
    env.pop("LD_PRELOAD", None)
    deadline = time.monotonic() + 30
    while True:
        with open(m.path("fabric", "sweep"), "w") as s:
            s.write("1\n")
        cp = subprocess.run(_argv(b), cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
        assert cp.returncode == 0, (cp.stdout, cp.stderr)
        if cp.stdout.splitlines() == want or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert cp.stdout.splitlines() == want, cp.stdout
