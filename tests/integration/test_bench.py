"""The benchmark (scripts/bench.sh, tests/bench/) in its quick mode: it runs
every row on a small generated fabric, prints the table and writes the
CSV, and the sweep over the text files finds what ibnetdiscover finds.
Speed is not checked here (the machine is shared): only structure and
counts."""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import simfabric as sim

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "tests" / "bench" / "bench.py"


def test_bench_quick(tmp_path):
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        pytest.skip("/dev/fuse missing or not accessible")
    if sim.umadfs_wrapper():
        pytest.skip("the benchmark does not run under UMADFS_WRAPPER")
    cp = subprocess.run([sys.executable, str(BENCH), "--quick", "--out",
                         str(tmp_path)], capture_output=True, text=True,
                        timeout=150, stdin=subprocess.DEVNULL)
    out = cp.stdout
    assert cp.returncode == 0, out + cp.stderr

    # One line per row, each with its number; targets marked.
    for row in range(1, 9):
        assert re.search(r"^%d\s+\S" % row, out, re.M), "row %d missing:\n%s" % (row, out)
    for row in (1, 2, 3, 4, 5, 6):
        m = re.search(r"^%d\s+.*?\s(\d+)\s" % row, out, re.M)
        assert m and int(m.group(1)) > 0, out
    assert re.search(r"^2\s.*of 1\s*$", out, re.M), out
    # Rows 2 and 5 against their floor: round trips x a round trip's CPU
    # plus the direct client's CPU per MAD.
    floors = re.findall(r"^\s+floor: ([\d.]+) round trips x [\d.]+ us \+ direct "
                        r"[\d.]+ us = [\d.]+ us\s+[\d.]+x\s+<= 1\.1x\s+(?:pass|MISS)$",
                        out, re.M)
    assert len(floors) == 2 and float(floors[0]) == 2.0 and 0 < float(floors[1]) < 1, out
    assert re.search(r"^5\s.*of 3\s+>= 0\.85\s+(pass|MISS)$", out, re.M), out
    assert re.search(r"^6\s.*of 3\s+>= 0\.50\s+(pass|MISS)$", out, re.M), out
    assert re.search(r"one FUSE round trip .*: [\d.]+ us", out), out
    assert re.search(r"^7\s.*ms\s+[\d.]+x\s+>= 3x\s+(pass|MISS)$", out, re.M), out
    assert re.search(r"smpquery -D nodeinfo 0 \(ms/query\)\s+[\d.]+ ms", out), out
    assert re.search(r"read -r l < recv \(ms/query\)\s+[\d.]+ ms\s+[\d.]+x\s+> 1x head\s+(pass|MISS)$",
                     out, re.M), out
    assert re.search(r"^8\s.*s\s+[\d.]+x\s+<= 0\.80x\s+(pass|MISS)$", out, re.M), out
    # Row 9 without the forwarding tables, row 13 the routes.
    assert re.search(r"-o fabric_routes=off \(a second mount\)\s+[\d.]+ s\s+[\d.]+x\s+"
                     r"<= 1\.15x\s+(pass|MISS)$", out, re.M), out
    m = re.search(r"MADs with the tables (\d+), without (\d+)$", out, re.M)
    assert m and int(m.group(1)) > int(m.group(2)), out
    # 5% of the linked ports' PortXmitWait moved: their PortVLXmitWaitCounters
    # asked besides the rotation's slice (issue 31).
    m = re.search(r"MADs with (\d+) ports' PortXmitWait moved \(5%\): (\d+) \((\d+) detail Gets\)$",
                  out, re.M)
    assert m and int(m.group(1)) == 4 and int(m.group(3)) >= 4, out
    assert re.search(r"^13\s+cat fabric/routes/SRC/DST, 100 random pairs \(median ms\)\s+"
                     r"[\d.]+ ms\s+\d+x$", out, re.M), out
    assert re.search(r"^\s+100 of 100 paths result=ok$", out, re.M), out
    # After row 14's cables: every table read again, each equal to
    # ibroute's, every path to ibtracert's.
    assert re.search(r"after row 14's reroutes and the settling: tables read\s+6 of 6\s+all\s+pass$",
                     out, re.M), out
    assert re.search(r"lft unlike ibroute; routes unlike ibtracert \(100 pairs\)\s+0 switches\s+"
                     r"0 pairs\s+0, 0\s+pass$", out, re.M), out
    # Reads of fabric/ during a sweep, timed.
    assert re.search(r"links, problems, a counter in a sweep: first answer \(max; idle\)\s+"
                     r"[\d.]+ ms\s+[\d.]+ ms\s+<= 50 ms\s+(pass|MISS)$", out, re.M), out
    assert re.search(r"the same, whole reads \(max; idle\)\s+[\d.]+ ms\s+[\d.]+ ms$", out, re.M), out
    # One client's rate under the simulator, and the sweep's MADs at that
    # rate; the CPU the daemon and ibsim spent in the sweep.
    assert re.search(r"  CPU in the sweep \(s\): the daemon, umad2sim in it; ibsim\s+"
                     r"[\d.]+ s\s+[\d.]+ s$", out, re.M), out
    assert re.search(r"one client's rate: madbench direct -n 512 \(MADs/s\)\s+\d+/s\s+"
                     r"[\d.]+ s$", out, re.M), out
    # Row 13's file system part: in-process, and the cats' difference.
    assert re.search(r"cat of a regular file of a path's size \(median ms\)\s+[\d.]+ ms\s*$",
                     out, re.M), out
    assert re.search(r"the file system's part: read in-process; cat less that\s+[\d.]+ ms\s+"
                     r"-?[\d.]+ ms\s*$", out, re.M), out
    # Row 14: cables pulled and put back, each heard from the SM's trap.
    assert re.search(r"^14\s+traps: cable pulled/put back -> its line in events \(ms\)\s+"
                     r"\d+ ms\s+max \d+\s+<= 1000 ms\s+(pass|MISS)$", out, re.M), out
    # (The repeated sweep's 173 MADs: 30 of the 32 HCAs taken from the
    # sweep before, their links standing - all but the mount's own and
    # the SM's host - with their switch ports' PortInfo, each 3 Gets fewer
    # than the 263 of asking them all.)
    m = re.search(r"^\s+a refresh: (\d+) MADs \(a repeated sweep: 173\); events missed: (\d+)$",
                  out, re.M)
    assert m and 0 < int(m.group(1)) < 173 and m.group(2) == "0", out
    # Row 15: the guard's steady MADs (a small fabric is asked whole each
    # second: its 40 links and 4 free ports, and the SM check's 2), and a
    # cable seen by the light sweep alone within its bound.
    m = re.search(r"^15\s+staleness: the guard's MADs/s with nothing changing\s+(\d+)/s\s+"
                  r"40 links\s*$", out, re.M)
    assert m and 40 <= int(m.group(1)) <= 80, out
    assert re.search(r"^\s+a cable by the light sweep alone -> its line in events \(ms\)\s+"
                     r"\d+ ms\s+max \d+\s+<= 10000 ms\s+(pass|MISS)$", out, re.M), out
    assert re.search(r"^rss\s+daemon peak RSS before the fabric rows \(VmHWM\)\s+"
                     r"[\d.]+ MiB", out, re.M), out

    # The sweep found the generated fabric, and so did ibnetdiscover.
    m = re.search(r"counts: sweep (\d+) nodes \((\d+) switches, (\d+) CAs\), "
                  r"(\d+) links, \d+ MADs; ibnetdiscover (\d+) nodes \((\d+) "
                  r"switches, (\d+) CAs\), (\d+) links: identical", out)
    assert m, out
    assert m.groups() == ("38", "6", "32", "40") * 2, out

    # Row 9: the repeated sweep against ibqueryerrors (the median ratio and
    # the least of any repetition), the first sweep apart, and the MADs of
    # both: the repeated one asks no NodeDescription or ClassPortInfo, no
    # forwarding table (nothing changed: each switch's one block is the
    # sweep before's) and no PKeyTable (32 CAs' 2 blocks, 6 switches' port
    # 0's 1 and their 48 other ports' 2: 166), 38 + 38 + 6 + 166 = 248
    # fewer than the first's 506 (SwitchInfo, for LinearFDBTop, and one
    # PortCounters per switch, its ports' sum, asked by both: the sum's
    # error counters are 0, so the first sweep asks no port's either).
    # Beside them the detail counters (issue 31): the first
    # sweep's 3 for each of the 80 ports (506 + 240), the repeated sweep's
    # for its slice of the rotation, one port here (258 + 3).  And the
    # first sweep's SLtoVLMappingTable probes, one a switch whose table it
    # reads (SL 0 stays on VL 0 under opensm: no more): 6; and the
    # multicast groups (issue 32): the SA's two GetTables every sweep, and
    # the first sweep's MulticastForwardingTable block of opensm's
    # broadcast group on each of the 6 switches (one position of 16 ports
    # each): 746 + 6 + 8 and 261 + 2.  Light sweeps guard the view, so the
    # repeated sweep takes 30 of the 32 CAs (all but the mount's own and
    # the SM's host, which has IsSM) from the one before, their links
    # standing: 3 Gets (NodeInfo, PortInfo, its switch port's PortInfo)
    # fewer each, 263 - 90.
    assert re.search(r"^9\s+fabric/: echo 1 > sweep, repeated.*\s[\d.]+ s\s+[\d.]+x\s+"
                     r"<= 0\.15 s\s+(pass|MISS)$", out, re.M), out
    assert re.search(r"^\s+ibqueryerrors, whole process .*\s[\d.]+ s\s+[\d.]+x min\s+"
                     r">= 3x$", out, re.M), out
    assert re.search(r"^\s+the first sweep, everything \(rep 1; ibnetdiscover\)\s+[\d.]+ s\s+[\d.]+ s\s*$",
                     out, re.M), out
    m = re.search(r"MADs: first sweep (\d+), repeated (\d+)\s+([\d.]+)\s+<= 0\.80\s+"
                  r"(pass|MISS)$", out, re.M)
    assert m and m.groups() == ("760", "173", "%.3f" % (173 / 760), "pass"), out
    assert re.search(r"^\s+counts: 38 nodes \(6 switches, 32 CAs\), 40 links, 80 ports, "
                     r"173 MADs, 0 timeouts in all; vs ibnetdiscover: identical$", out, re.M), out
    assert re.search(r"^\s+fabric/problems judged \(sweep's problems_us, ms\)\s+[\d.]+ ms"
                     r"\s+<= 20 ms\s+(pass|MISS)$", out, re.M), out

    # The raw numbers: one row per measurement, at the path printed.
    m = re.search(r"^raw numbers: (\S+)$", out, re.M)
    assert m, out
    path = Path(m.group(1))
    assert path.parent == tmp_path and path.exists()
    with open(path) as f:
        rows = list(csv.DictReader(f))
    metrics = {(int(r["row"]), r["metric"]) for r in rows}
    for row in range(1, 7):
        assert (row, "mads_per_s") in metrics, metrics
    for want in [(4, "fuse_round_trip_us"), (4, "fuse_round_trip_cpu_us"),
                 (5, "round_trips_per_mad"), (7, "umadfs_shell_ms"), (7, "umadfs_read_ms"),
                 (7, "smpquery_shell_ms"), (8, "sweep_s"),
                 (8, "ibnetdiscover_s"), (8, "sweep_nodes"),
                 (8, "ibnetdiscover_links"), (0, "daemon_vmhwm_kib"),
                 (9, "fabric_sweep_s"), (9, "fabric_first_sweep_s"),
                 (9, "fabric_mads_first"), (9, "fabric_mads"), (9, "ibqueryerrors_s"),
                 (14, "trap_event_ms"), (14, "refresh_mads"),
                 (15, "guard_mads_per_s"), (15, "stale_max_ms")]:
        assert want in metrics, (want, metrics)
    assert all(float(r["value"]) > 0 for r in rows), rows
    assert path.with_suffix(".txt").exists()
