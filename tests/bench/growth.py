#!/usr/bin/env python3
"""growth.py: how the fabric view's costs grow from one bench run to a
larger one (issue 30: "linear or better, shown").

usage: growth.py SMALL.csv LARGE.csv

Reads two CSVs that tests/bench/bench.py wrote (say --fabric large, the
3,984-node tree, and --fabric huge, the 16,266-node one), takes each
metric's median, and prints for the sweep's time and MADs, the daemon's
RSS, the judgement's time and the metrics text's size the ratio LARGE /
SMALL beside the ratio of the fabrics' nodes and the target: no cost may
grow faster than 4.4 for the 4.08 times the nodes (16k over 4k).  Exit
status 0 when every ratio present is within it, else 1."""

import csv
import statistics
import sys

TARGET = 4.4
METRICS = [
    ((9, "fabric_sweep_s"), "repeated sweep (s)"),
    ((9, "fabric_mads"), "repeated sweep's MADs"),
    ((10, "daemon_peak_kib"), "daemon peak RSS through a sweep, a read, a scrape (KiB)"),
    ((9, "problems_ms"), "problems judged (ms)"),
    ((10, "metrics_bytes"), "metrics.prom's bytes"),
    ((9, "fabric_nodes"), "nodes (for scale)"),
]


def medians(path):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.setdefault((int(r["row"]), r["metric"]), []).append(float(r["value"]))
    return {k: statistics.median(v) for k, v in rows.items()}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    small, large = medians(argv[1]), medians(argv[2])
    ok = True
    print("%-52s %14s %14s %8s %8s" % ("what", "small", "large", "ratio", "target"))
    for key, what in METRICS:
        a, b = small.get(key), large.get(key)
        if a is None or b is None or not a:
            print("%-52s %14s %14s %8s" % (what, a, b, "-"))
            continue
        r = b / a
        scale = key == (9, "fabric_nodes")
        good = scale or r <= TARGET
        ok = ok and good
        print("%-52s %14.4g %14.4g %8.2f %8s %s" % (
            what, a, b, r, "" if scale else "<= %.1f" % TARGET,
            "" if scale else ("pass" if good else "MISS")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
