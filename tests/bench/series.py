#!/usr/bin/env python3
"""series.py: the series of fabric/metrics.prom per group of
-o fabric_metrics=, for a fat tree of gen-fabric.py, healthy (no problem).

usage: series.py [--leaves L --spines S --hcas-per-leaf H]
       series.py --table     the user guide's table: the 1k, 4k and 16k trees

A tree of L leaf switches (H HCAs and S uplinks each) and S spines (L
ports each) has N = L + S + L*H nodes, P = L*(H+S+1) + S*(L+1) + L*H ports
with PortInfo (a switch's port 0 too), L*(H+S) links, and every port
linked.  Each group's series (docs/files.md names its families):

  sweep      9           the sweep's rows
  problems   2 + lines   umadfs_problems by severity, umadfs_problem each
  nodes      N           umadfs_node_up
  state      3 P         state, physical state, rate
  links      2 links     umadfs_link_info, each end of each link
  routes     switch ports, port 0 included (every switch has its table)
  routing    5           umadfs_credit_loops, umadfs_route_pairs by lft and
                         min at 2 and 4 hops (a CA to a CA of its leaf, of
                         another leaf)
  errors     12 P        the error counters
  xmit_wait  P
  data       8 P         data, packets, unicast and multicast packets

tests/integration/test_fabric.py holds a mount of a generated tree to
these; tests/integration/test_docs.py the user guide's table to --table.
"""

import argparse
import sys

# The groups in the text's order, and their families (docs/files.md).
_ERRORS = ("symbol_error", "link_error_recovery", "link_downed", "errors_received",
           "receive_remote_physical_errors", "receive_switch_relay_errors",
           "discards_transmitted", "constraint_errors_transmitted",
           "constraint_errors_received", "local_link_integrity_errors",
           "excessive_buffer_overrun_errors", "vl15_dropped")
_DATA = ("data_transmitted_bytes", "data_received_bytes", "packets_transmitted",
         "packets_received", "unicast_packets_transmitted",
         "unicast_packets_received", "multicast_packets_transmitted",
         "multicast_packets_received")
FAMILIES = {
    "sweep": tuple("umadfs_sweep_" + n for n in (
        "duration_seconds", "ok", "timestamp_seconds", "nodes", "switches",
        "links", "mads", "timeouts", "unreachable")),
    "problems": ("umadfs_problem", "umadfs_problems"),
    "nodes": ("umadfs_node_up",),
    "state": ("umadfs_port_state", "umadfs_port_physical_state",
              "umadfs_port_rate_bytes_per_second"),
    "links": ("umadfs_link_info",),
    "routes": ("umadfs_port_routed_lids",),
    "routing": ("umadfs_credit_loops", "umadfs_route_pairs"),
    "errors": tuple("umadfs_port_%s_total" % n for n in _ERRORS),
    "xmit_wait": ("umadfs_port_transmit_wait_total",),
    "data": tuple("umadfs_port_%s_total" % n for n in _DATA),
}
GROUPS = tuple(FAMILIES)

# The user guide's trees (tests/bench/README.md; bench.py --fabric).
TREES = (("1k", 40, 12, 24), ("4k", 120, 24, 32), ("16k", 250, 16, 64))


def series(leaves, spines, per_leaf, problems=0):
    """{group: series} of the tree, and "all"."""
    hcas = leaves * per_leaf
    switch_ports = leaves * (per_leaf + spines + 1) + spines * (leaves + 1)
    ports = switch_ports + hcas
    links = hcas + leaves * spines
    out = {"sweep": 9, "problems": 2 + problems,
           "nodes": leaves + spines + hcas, "state": 3 * ports,
           "links": 2 * links, "routes": switch_ports, "routing": 5,
           "errors": 12 * ports,
           "xmit_wait": ports, "data": 8 * ports}
    out["all"] = sum(out.values())
    return out


def table():
    """The user guide's table, in markdown."""
    counts = [series(*t[1:]) for t in TREES]
    lines = ["| group | %s |" % " | ".join(
                 "%s (%s nodes)" % (t[0], format(c["nodes"], ",")) for t, c in
                 zip(TREES, counts)),
             "|---|" + "---:|" * len(TREES)]
    for g in GROUPS + ("all",):
        lines.append("| `%s` | %s |" % (g, " | ".join(
            format(c[g], ",") for c in counts)))
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--leaves", type=int, default=40)
    ap.add_argument("--spines", type=int, default=12)
    ap.add_argument("--hcas-per-leaf", type=int, default=24)
    ap.add_argument("--table", action="store_true")
    a = ap.parse_args(argv[1:])
    if a.table:
        sys.stdout.write(table())
        return 0
    for g, n in series(a.leaves, a.spines, a.hcas_per_leaf).items():
        print("%-10s %d" % (g, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
