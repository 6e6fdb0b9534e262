#!/usr/bin/env python3
"""bench.py: umadfs side by side with direct libibumad and the diags, on a
simulated fabric of its own.  Run it through scripts/bench.sh.

usage: bench.py [--quick] [--reps N] [--seconds S] [--out DIR] [--rows LIST]

Starts ibsim on a generated fat tree (gen-fabric.py; 52 switches and 960
HCAs, or a small one with --quick), mounts umadfs on one HCA, and runs
each row --reps times, interleaved (rep 1 of every row, then rep 2...):

  1  direct libibumad C client, 1 outstanding (DR NodeInfo, hop 0)
  2  the `umad` file from C, 1 outstanding
  3  direct libibumad, 32 outstanding
  4  `umad`, 32 outstanding, one frame per syscall (+ one FUSE round trip)
  5  text send/recv from C, 32 outstanding, 32 lines per write, 64 KiB reads
  6  text send/recv from Python with poll(), batched the same way
     (rows 5 and 6 each run twice: the channel's decode file at `fields`,
     the default, and at `none`)
  7  shell loop `echo > send; head -n1 recv` vs a loop of `smpquery -D
     nodeinfo 0`: time per query; and `read -r l < recv` vs the head loop
  8  sweep.py over the text files vs ibnetdiscover: wall time of each
     whole process, and their node and link counts
  9  fabric/: `echo 1 > sweep` (discovery and every port's counters, wall
     time) vs ibqueryerrors (whole process), and the sweep's counts vs
     ibnetdiscover's; the repeated sweeps (one per repetition) are timed,
     the first (repetition 1, before them) apart, with the MADs of both
 10  `cat fabric/metrics.prom > /dev/null` (wall time of the process)
     and the file's size; rep 1 apart: the first snapshot's index of
     chunks (its sizing pass) is made on that read, later ones right
     after their sweep (the previous one was read); and the daemon's peak
     RSS during the read (its VmHWM reset to its VmRSS just before), and
     through row 9's sweep and the read (reset before the sweep); then
     one scrape of node_exporter's textfile collector on fabric/ (when
     prometheus-node-exporter is installed), its time and the daemon's
     peak RSS meanwhile
 11  one node_exporter scrape of fabric/ as its sysfs root (when
     prometheus-node-exporter is installed)
 13  `cat fabric/routes/SRC/DST` for 1,000 random pairs of LIDs (wall time
     of each process, median), and ibtracert on the same pairs beside it
     (repetition 1 only); `cat` of a regular file of a path's size, and
     the open-read-close of 1,000 other pairs in this process: the file
     system's part
 14  traps: 20 Unlink/ReLink pairs of HCAs' cables on ibsim's console
     (one HCA per leaf switch in turn);
     the time from the command to its link_down/link_up line in
     fabric/events (no sweep asked, interval_ms 0: the SM's trap 128, its
     Report, and a refresh), and the refresh's MADs beside a repeated
     sweep's (row 9); its repetitions run after all the others' (each
     cable pulled makes the SM sweep the fabric and rewrite tables)
 15  staleness: what the view costs and how stale it may get with no
     sweep asked (interval_ms 0).  The steady-state MADs per second of
     the mount's guard (its light sweep and its SM checks, from the sweep
     file's light_sweep_mads and trap_check_mads over an idle spell), and
     cables pulled and put back (an HCA's, and a leaf's uplink) timed from
     the console command to their line in the events of a second mount,
     on hcas[1], with -o fabric_traps=off: the light sweep alone, so the
     worst case over the pulls is the bound a lost Report leaves; after
     row 14
 16  multicast (asked with --rows; after row 15, repetition 1): the
     repeated sweep's MADs with the fabric's default partition tables
     and no port in a group, then two HCAs (the mount's and the next)
     joined to opensm's IPoIB broadcast group through the mount's send
     (MCMemberRecord Sets), and the repeated sweep after; each less its
     detail counters' Gets (a slice of the ports in turn)

Row 9 also sweeps a second mount of the same node, -o fabric_routes=off
(and fabric_light_sweep=86400000: 64 ports a second), right after the first: the sweep without the
forwarding tables; reads during a sweep (the first answer's time, and the
whole read's); one client's rate under the simulator (madbench direct -n
512); and the CPU time the daemon (umad2sim's threads in it) and ibsim
spent in the timed sweep.

Rows 2 and 5 also report the CPU time per MAD, daemon and client
together (/proc and getrusage), against the direct client's (rows 1, 3),
and against their floor: the round trips the path needs times row 4's
CPU per round trip, plus the direct client's CPU per MAD (target 1.1x).
Rows 9-11 and 13-15 need an SM: opensm runs on the fabric's last HCA, without
periodic sweeps (-s 0), for the whole run when any of them is asked for.
The bench waits for opensm's CPU to stand still twice: once the ports are
Active (it goes on configuring), and after the mount's first sweep, whose
trap subscription sets IsSM on the mount's port under the simulator (its
issm held), and whose trap 144 makes opensm discover and route the whole
fabric again; each wait is printed.
--fabric large sweeps the 3,984-node fat tree (gen-fabric.py --leaves 120
--spines 24 --hcas-per-leaf 32, ibsim -N 5000 -S 200 -P 30000); it runs
rows 8-10 and 13-15 unless --rows says otherwise.

Prints the table (medians; ratios are medians of the per-repetition
ratios, each taken between runs of the same repetition) and writes the raw
numbers to a CSV, and the table beside it, in --out (default
build/bench/).  Exit status 0 when every row ran and the sweep's counts
equal ibnetdiscover's (targets missed do not fail the run), else 1.
"""

import argparse
import csv
import resource
import datetime
import os
import platform
import random
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
import simfabric as sim  # noqa: E402
import routecmp  # noqa: E402

PY = "/usr/bin/python3"
NODEINFO_LINE = "dr=0 method=get attr=NodeInfo"


def madbench_bin():
    """UMADFS_MADBENCH, else the madbench of the build UMADFS_BIN comes
    from, else build/'s."""
    if os.environ.get("UMADFS_MADBENCH"):
        return os.environ["UMADFS_MADBENCH"]
    if os.environ.get("UMADFS_BIN"):
        b = Path(os.environ["UMADFS_BIN"]).resolve().parents[1] / "tests" / "bench" / "madbench"
        if b.exists():
            return str(b)
    return str(REPO / "build" / "tests" / "bench" / "madbench")


def parse_kv(text):
    """The 'k=v k=v' lines of a client's output -> one dict (numbers as
    float)."""
    out = {}
    for line in text.strip().splitlines():
        for tok in line.split():
            k, eq, v = tok.partition("=")
            if not eq:
                continue
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    if "rate" not in out and "nodes" not in out:
        raise RuntimeError("no result line in:\n" + text)
    return out


def parse_ibnetdiscover(text):
    """Nodes and links as ibnetdiscover prints them: one block per node
    ('Switch', 'Ca', 'Rt' lines), one '[port]' line per connected port on
    both ends of each link."""
    switches = len(re.findall(r"^Switch\s", text, re.M))
    cas = len(re.findall(r"^(?:Ca|Rt)\s", text, re.M))
    ends = len(re.findall(r'^\[\d+\].*"[^"]*"\[\d+\]', text, re.M))
    return {"nodes": switches + cas, "switches": switches, "cas": cas,
            "links": ends // 2}


class Bench:
    def __init__(self, a):
        self.a = a
        self.quick = a.quick
        self.tmp = Path(tempfile.mkdtemp(prefix="umadfs-bench-"))
        self.rows = {}          # key -> list of per-rep dicts
        self.judged = []        # row 9: (routing ms, tables_changed) a rep
        self.raw = []           # CSV rows
        self.fabric = None
        self.mount = None
        self.mount_off = None   # row 9's second mount: fabric_routes=off
        self.sm_idle_s = None   # how long opensm took to go idle (start)
        self.mount_light = None  # row 15's: fabric_traps=off
        self.port_dir = None
        self.rss_samples = []
        self.rows_asked = set()
        self.fabric_ran = False  # VmHWM then counts the fabric's peak
        self.first_sweep = {}    # id(mount) -> its first fabric_sweep()

    # -- setup ----------------------------------------------------------
    def start(self):
        net = self.tmp / "fabric.net"
        size = (["--leaves", "4", "--spines", "2", "--hcas-per-leaf", "8"]
                if self.quick else [])
        ibsim_args = []
        if self.a.fabric == "large":
            size = ["--leaves", "120", "--spines", "24", "--hcas-per-leaf", "32"]
            ibsim_args = ["-N", "5000", "-S", "200", "-P", "30000"]
        elif self.a.fabric == "huge":
            size = ["--leaves", "250", "--spines", "16", "--hcas-per-leaf", "64"]
            ibsim_args = ["-N", "16500", "-S", "300", "-P", "50000"]
        subprocess.run([PY, str(HERE / "gen-fabric.py"), *size, str(net)],
                       check=True)
        text = net.read_text()
        self.fabric_desc = text.splitlines()[1].lstrip("# ")
        hcas = re.findall(r'^Hca\s+\d+\s+"([^"]+)"', text, re.M)
        self.host = hcas[0]
        # Row 14's cables: one HCA's per leaf switch, in turn (opensm
        # reports no more than ten of one switch's traps in its aging
        # window), none the mount's, the SM's or hcas[1].
        busy = {hcas[0], hcas[1], hcas[-1]}
        self.trap_hcas = []
        self.uplinks = []        # row 15's: (leaf, port) of a leaf's uplink
        for block in text.split("\nSwitch")[1:]:
            on = [h for h in re.findall(r'"(H\d+)"\[1\]', block) if h not in busy]
            if on:
                self.trap_hcas.append(on[0])
            leaf = re.match(r'\s+\d+\s+"(L\d+)"', block)
            up = re.search(r'^\[(\d+)\]\s+"S\d+"', block, re.M)
            if leaf and up:
                self.uplinks.append((leaf.group(1), int(up.group(1))))
        self.hcas = hcas
        # Every linked port as (node, port): both ends of each link line.
        self.linked_ports = []
        for block in re.split(r"\n(?=Switch|Hca)", text):
            head = re.match(r'(?:Switch|Hca)\s+\d+\s+"([^"]+)"', block)
            if head:
                self.linked_ports += [(head.group(1), int(p)) for p in
                                      re.findall(r'^\[(\d+)\]\s+"', block, re.M)]
        self.direct_host = hcas[1] if self.a.direct_host == "other" else hcas[0]
        self.fabric = sim.Fabric(str(net), workdir=self.tmp / "fabric",
                                 ibsim_args=ibsim_args)
        self.fabric.start(timeout=60)
        if self.rows_asked & {9, 10, 11, 13, 14, 15, 16}:
            # The fabric rows need LIDs and ACTIVE ports: one SM sweep,
            # then none (-s 0) to disturb the other rows.
            self.fabric.start_opensm(hcas[-1], ("-s", "0"))
            settle = 900 if self.a.fabric == "huge" else 300
            self.fabric.wait_active(self.host, timeout=settle)
            self.fabric.wait_active(hcas[1], timeout=settle)
            # opensm's log says no "SUBNET UP" at its default verbosity:
            # the last HCA's port Active is its sweep done.
            self.fabric.wait_active(hcas[-2], timeout=settle)
            self.sm_idle_s = wait_idle(self.fabric.opensm[hcas[-1]][0], settle)
        # fabric_routes_settle: its default, 2 s with --quick (the
        # reroute check waits it out; the small tree's SM reroutes in less)
        self.settle_s = 2 if self.quick else 120
        self.mount = sim.Mount(self.fabric, self.host, self.tmp / "mnt",
                               workdir=self.tmp, options=(
                                   "fabric_routes_settle=%d" % (1000 * self.settle_s),))
        self.mount.start(timeout=30)
        if 9 in self.rows_asked:
            self.mount_off = sim.Mount(self.fabric, self.host, self.tmp / "mnt-off",
                                       workdir=self.tmp,
                                       # (its node's Reports are the first mount's;
                                       # its light sweeps at the default cycle,
                                       # 2,500 MADs a second at 16k, would load
                                       # the one simulator thread under the
                                       # first mount's sweep: a day's cycle asks
                                       # 64 ports a second, and keeps its sweeps
                                       # guarded, taking CAs behind standing
                                       # links as the first mount's do)
                                       options=("fabric_routes=off", "fabric_traps=off",
                                                "fabric_light_sweep=86400000"))
            self.mount_off.start(timeout=30)
        mnt = self.mount.mountpoint
        ca = [c for c in sorted(os.listdir(mnt)) if c != "fabric"][0]
        self.port_dir = mnt / ca / "ports" / "1"
        self.daemon_pid = self.mount.proc.pid

    def stop(self):
        problems = []
        if self.mount_light is not None:
            self.mount_light.unmount()
            problems += self.mount_light.problems()
        if self.mount_off is not None:
            self.mount_off.unmount()
            problems += self.mount_off.problems()
        if self.mount is not None:
            self.mount.unmount()
            problems += self.mount.problems()
        if self.fabric is not None:
            self.fabric.stop()
        if problems:
            sys.stderr.write("daemon: %s\n%s\n" % (
                "; ".join(problems), self.mount.log_text()[-3000:]))
        if os.environ.get("UMADFS_KEEP_TMP") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)
        return not problems

    def rss(self):
        """The daemon's VmRSS and VmHWM (peak) in KiB."""
        out = {}
        with open("/proc/%d/status" % self.daemon_pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
        self.rss_samples.append(out)
        return out

    def reset_peak_rss(self):
        """Resets the daemon's VmHWM to its VmRSS (clear_refs 5: root's,
        or the daemon's user's), so that the next VmHWM is the peak of
        what runs after; returns that VmRSS (KiB)."""
        with open("/proc/%d/clear_refs" % self.daemon_pid, "w") as f:
            f.write("5\n")
        return self.rss()["VmRSS"]

    # -- running things -------------------------------------------------
    def sim_env(self):
        """For the direct clients and the diags: by default the daemon's
        own node (same port, same hop-0 MAD to the same SMA, same
        umad2sim path), never at the same time as a client of the daemon
        (the rows run one after the other; the direct client takes the
        answers still in flight before it exits, since ibsim would hand
        them to the next client of the node).  --direct-host=other puts
        them on the HCA beside it instead."""
        return self.fabric.client_env(self.direct_host)

    def run(self, argv, env=None, timeout=60):
        cp = subprocess.run(argv, env=env, cwd=self.fabric.clientdir,
                            stdin=subprocess.DEVNULL, capture_output=True,
                            text=True, timeout=timeout)
        if cp.returncode != 0:
            raise RuntimeError("%s: status %d\n%s%s" % (
                " ".join(map(str, argv)), cp.returncode, cp.stdout, cp.stderr))
        return cp.stdout

    def timing(self):
        if self.quick:
            return ["-t", "0.5", "-w", "0.1"]
        return ["-t", str(self.a.seconds), "-w", "0.3"]

    def daemon_cpu_s(self):
        return cpu_s(self.daemon_pid)

    def sim_cpu_s(self):
        """ibsim's CPU time so far (s)."""
        return cpu_s(self.fabric.proc.pid)

    def mb(self, *args, env=None, daemon=True):
        """madbench's numbers, with cpu_us_per_mad: the CPU time of the
        client (and of the daemon, unless a direct client) over the whole
        run, warm-up included, per MAD (the rate times the run's wall
        time: the warm-up runs at the same rate)."""
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        d0 = self.daemon_cpu_s() if daemon else 0
        t0 = time.monotonic()
        r = parse_kv(self.run([madbench_bin(), *map(str, args),
                               *self.timing()], env=env))
        wall = time.monotonic() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        if daemon:
            cpu += self.daemon_cpu_s() - d0
        if r.get("rate"):
            r["cpu_us_per_mad"] = 1e6 * cpu / (r["rate"] * wall)
        return r

    def record(self, rep, row, metric, value):
        self.raw.append({"rep": rep, "row": row, "metric": metric,
                         "value": value})
        self.rows.setdefault((row, metric), []).append(value)

    def row_rate(self, rep, row, result, metric="mads_per_s"):
        self.record(rep, row, metric, result["rate"])
        if "cpu_us_per_mad" in result and metric == "mads_per_s":
            self.record(rep, row, "cpu_us_per_mad", result["cpu_us_per_mad"])
        if result.get("errors"):
            raise RuntimeError("row %s: %d answers were errors" % (
                row, result["errors"]))

    # Row 7's ways of taking one answer line in a shell loop.
    SHELL_READERS = {
        "head": 'head -n1 "%s/recv"',
        "read": 'IFS= read -r l < "%s/recv"; printf "%%s\\n" "$l"',
    }

    def shell_loop(self, n, reader="head"):
        d = self.port_dir
        script = ('for ((i = 0; i < %d; i++)); do echo "%s" > "%s/send"; %s; done' % (
            n, NODEINFO_LINE, d, self.SHELL_READERS[reader] % d))
        t0 = time.monotonic()
        out = self.run(["bash", "-c", script])
        dt = time.monotonic() - t0
        got = [ln for ln in out.splitlines() if "method=getresp" in ln
               and "error=" not in ln]
        if len(got) != n:
            raise RuntimeError("shell loop: %d of %d answers" % (len(got), n))
        return dt / n

    def smpquery_loop(self, n):
        script = ('for ((i = 0; i < %d; i++)); do smpquery -D nodeinfo 0; '
                  'done' % n)
        t0 = time.monotonic()
        out = self.run(["bash", "-c", script], env=self.sim_env())
        dt = time.monotonic() - t0
        if out.count("PortGuid:") != n:
            raise RuntimeError("smpquery loop: %d of %d answers" % (
                out.count("PortGuid:"), n))
        return dt / n

    def sweep(self):
        t0 = time.monotonic()
        out = self.run([PY, "-S", str(HERE / "sweep.py"), str(self.port_dir)])
        dt = time.monotonic() - t0
        return dt, parse_kv(out)

    def ibnetdiscover(self):
        t0 = time.monotonic()
        out = self.run(["ibnetdiscover"], env=self.sim_env())
        dt = time.monotonic() - t0
        return dt, parse_ibnetdiscover(out)

    # -- the rows -------------------------------------------------------
    def text_rows(self, rep, rows, decode):
        """Rows 5 and 6 with the channel's decode file at decode; the rate
        is mads_per_s for fields (the default), mads_per_s_none for none."""
        metric = "mads_per_s" if decode == "fields" else "mads_per_s_none"
        (self.port_dir / "decode").write_text(decode + "\n")
        try:
            if 5 in rows:
                r = self.mb("text", "-n", 32, "-b", 32, "-r", 65536, self.port_dir)
                self.row_rate(rep, 5, r, metric)
                if decode == "fields":
                    # The round trips its MADs need: a write per 32, a read
                    # per lines_per_read.
                    self.record(rep, 5, "round_trips_per_mad",
                                1 / r["lines_per_read"] + 1 / r["lines_per_write"])
            if 6 in rows:
                t = (["-t", "0.5", "-w", "0.1"] if self.quick else
                     ["-t", str(self.a.seconds), "-w", "0.3"])
                self.row_rate(rep, 6, parse_kv(self.run(
                    [PY, str(HERE / "textbench.py"), "-n", "32", "-b", "32", *t,
                     str(self.port_dir)])), metric)
        finally:
            (self.port_dir / "decode").write_text("fields\n")

    def one_rep(self, rep, rows):
        env = self.sim_env()
        if 1 in rows:
            self.row_rate(rep, 1, self.mb("direct", "-n", 1, env=env,
                                          daemon=False))
        if 2 in rows:
            self.row_rate(rep, 2, self.mb("umad", "-n", 1, self.port_dir))
        if 3 in rows:
            self.row_rate(rep, 3, self.mb("direct", "-n", 32, env=env,
                                          daemon=False))
        if 4 in rows:
            self.row_rate(rep, 4, self.mb("umad", "-n", 32, self.port_dir))
            r = self.mb("fuse", self.port_dir)
            self.record(rep, 4, "fuse_round_trip_us", 1e6 / r["rate"])
            self.record(rep, 4, "fuse_round_trip_cpu_us", r["cpu_us_per_mad"])
        for decode in ("fields", "none"):
            self.text_rows(rep, rows, decode)
        if 7 in rows:
            n_fs, n_smp = (20, 5) if self.quick else (300, 60)
            self.record(rep, 7, "umadfs_shell_ms", 1e3 * self.shell_loop(n_fs))
            self.record(rep, 7, "umadfs_read_ms", 1e3 * self.shell_loop(n_fs, "read"))
            self.record(rep, 7, "smpquery_shell_ms", 1e3 * self.smpquery_loop(n_smp))
        if 8 in rows:
            dt, c = self.sweep()
            self.record(rep, 8, "sweep_s", dt)
            for k in ("nodes", "links", "switches", "cas", "mads"):
                self.record(rep, 8, "sweep_" + k, c[k])
            dt, c = self.ibnetdiscover()
            self.record(rep, 8, "ibnetdiscover_s", dt)
            for k in ("nodes", "links", "switches", "cas"):
                self.record(rep, 8, "ibnetdiscover_" + k, c[k])
        r = self.rss()
        if not self.fabric_ran:
            self.record(rep, 0, "daemon_vmhwm_kib", r["VmHWM"])
        self.fabric_rows(rep, rows)

    def fabric_sweep(self, mount=None):
        """echo 1 > sweep -> (wall s, the sweep file); each mount's first
        (which asks everything) is kept in self.first_sweep."""
        m = mount or self.mount
        fdir = m.mountpoint / "fabric"
        t0 = time.monotonic()
        with open(fdir / "sweep", "w") as f:
            f.write("1\n")
        dt = time.monotonic() - t0
        kv = dict(ln.split(" ", 1) for ln in (fdir / "sweep").read_text().splitlines()
                  if " " in ln)
        if id(m) not in self.first_sweep:
            self.first_sweep[id(m)] = (dt, kv)
            if kv.get("traps") != "off":
                self.settle_sm(fdir)
        return dt, kv

    def settle_sm(self, fdir):
        """After a mount's first sweep, under the simulator: its trap
        subscription holds the port's issm (ibsim gives Reports only to
        such a client: docs/architecture.md, "The simulator"), which sets
        IsSM on the port, whose trap 144 makes opensm discover and route
        the whole fabric again (at 16k, some 10 s of a CPU).  Waits for the
        subscription, then for opensm to go idle, so that it loads none of
        the first repetition's rows."""
        if not self.fabric.opensm:
            return
        deadline = time.monotonic() + 30
        while ("\ntraps subscribed\n" not in (fdir / "sweep").read_text() and
               time.monotonic() < deadline):
            time.sleep(0.2)
        proc = next(iter(self.fabric.opensm.values()))[0]
        print("# opensm idle %.0f s after the mount's trap subscription"
              % wait_idle(proc, 300), flush=True)

    def ibqueryerrors(self, tries=2):
        """One whole run of ibqueryerrors (wall s).  Run again once after
        it died of a signal: umad2sim's reader thread crashes on an answer
        that was still on the wire for the node's client before it (a
        16k run saw SIGSEGV once), the simulator's fault, not a time."""
        t0 = time.monotonic()
        cp = subprocess.run(["ibqueryerrors"], env=self.sim_env(),
                            cwd=self.fabric.clientdir, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=120)
        dt = time.monotonic() - t0
        if cp.returncode < 0 and tries > 1:
            sys.stderr.write("ibqueryerrors died of signal %d; run again\n" % -cp.returncode)
            return self.ibqueryerrors(tries - 1)
        if "Summary" not in cp.stdout:
            raise RuntimeError("ibqueryerrors: status %d\n%s%s" % (
                cp.returncode, cp.stdout[-2000:], cp.stderr[-2000:]))
        return dt

    def node_exporter_scrape(self, *collectors):
        """One scrape of a node_exporter with only these collectors (their
        flags) -> (wall s, the text), or None when it is not installed."""
        import socket
        import urllib.request
        if not shutil.which("prometheus-node-exporter"):
            return None
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        p = subprocess.Popen(["prometheus-node-exporter", "--collector.disable-defaults",
                              *collectors,
                              "--web.listen-address=127.0.0.1:%d" % port],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = "http://127.0.0.1:%d/metrics" % port
        try:
            for _ in range(100):
                try:    # up: its landing page (a scrape would be timed)
                    urllib.request.urlopen(url[:-len("metrics")], timeout=5).read()
                    break
                except OSError:
                    time.sleep(0.05)
            t0 = time.monotonic()
            text = urllib.request.urlopen(url, timeout=300).read().decode()
            dt = time.monotonic() - t0
        finally:
            p.terminate()
            p.wait()
        return dt, text

    def sysfs_scrape(self):
        """Row 11: fabric/ as node_exporter's sysfs root."""
        fdir = self.mount.mountpoint / "fabric"
        got = self.node_exporter_scrape("--path.sysfs=%s" % fdir, "--collector.infiniband")
        if got and 'node_scrape_collector_success{collector="infiniband"} 1' not in got[1]:
            raise RuntimeError("node_exporter: the infiniband collector failed")
        return got and got[0]

    def textfile_scrape(self, rep):
        """Row 10: metrics.prom through node_exporter's textfile collector,
        the scrape's time and the daemon's peak RSS meanwhile."""
        fdir = self.mount.mountpoint / "fabric"
        self.reset_peak_rss()
        got = self.node_exporter_scrape("--collector.textfile",
                                        "--collector.textfile.directory=%s" % fdir)
        if not got:
            return
        if 'node_scrape_collector_success{collector="textfile"} 1' not in got[1]:
            raise RuntimeError("node_exporter: the textfile collector failed")
        self.record(rep, 10, "daemon_vmhwm_scrape_kib", self.rss()["VmHWM"])
        self.record(rep, 10, "textfile_scrape_s", got[0])
        # The daemon's peak through row 9's sweep, the read and the scrape.
        self.record(rep, 10, "daemon_peak_kib", max(
            self.rows[(10, k)][-1] for k in ("daemon_vmhwm_sweep_kib", "daemon_vmhwm_read_kib",
                                             "daemon_vmhwm_scrape_kib")
            if self.rows.get((10, k))))

    def sweep_off(self, rep):
        """Row 9's sweep of the second mount (fabric_routes=off), a
        repeated one as the first mount's."""
        if id(self.mount_off) not in self.first_sweep:
            self.fabric_sweep(self.mount_off)
        dt, kv = self.fabric_sweep(self.mount_off)
        self.record(rep, 9, "fabric_sweep_noroutes_s", dt)
        self.record(rep, 9, "fabric_mads_noroutes", int(kv["mads"]))

    def fabric_rows(self, rep, rows):
        if 13 in rows and not self.fabric_ran:
            self.wait_routed()
        if 9 in rows:
            if rep == 1:
                # The first sweep asks everything; the ones after it (every
                # repetition's, timed below) only what can change.
                if id(self.mount) not in self.first_sweep:
                    self.fabric_sweep()
                dt, kv = self.first_sweep[id(self.mount)]
                self.record(rep, 9, "fabric_first_sweep_s", dt)
                self.record(rep, 9, "fabric_mads_first", int(kv["mads"]))
                # The routing check runs on a sweep that read the tables:
                # the first (the timed ones below keep its verdict).
                self.record(rep, 9, "routing_ms", int(kv.get("routing_us", 0)) / 1000)
            # The sweep without tables first in every other repetition:
            # the first sweep of a repetition runs slower.
            if rep % 2 == 0:
                self.sweep_off(rep)
            # The daemon's peak RSS from here, through the sweep (and the
            # text made after it) to row 10's read.
            self.record(rep, 9, "daemon_vmrss_before_kib", self.reset_peak_rss())
            cpu0 = (self.daemon_cpu_s(), self.sim_cpu_s())
            dt, kv = self.fabric_sweep()
            # (Clock ticks: a small fabric's sweep may take none; the raw
            # numbers are all above 0.)
            for k, v in (("sweep_daemon_cpu_s", self.daemon_cpu_s() - cpu0[0]),
                         ("sweep_sim_cpu_s", self.sim_cpu_s() - cpu0[1])):
                if v > 0:
                    self.record(rep, 9, k, v)
            self.fabric_ran = True
            self.record(rep, 9, "fabric_sweep_s", dt)
            self.record(rep, 9, "problems_ms", int(kv["problems_us"]) / 1000)
            # Of it, the routing judged again (0: its tables, read or not,
            # were the sweep before's: tables_changed 0); printed, not raw
            # numbers (each of those is a measurement, above 0).
            self.judged.append((int(kv.get("routing_us", 0)) / 1000,
                                kv.get("tables_changed", "-")))
            for k in ("nodes", "links", "switches", "cas", "ports", "mads"):
                self.record(rep, 9, "fabric_" + k, int(kv[k]))
            if int(kv["timeouts"]):     # (the raw numbers are all > 0)
                self.record(rep, 9, "fabric_timeouts", int(kv["timeouts"]))
            if 8 not in rows:
                dt, c = self.ibnetdiscover()
                self.record(rep, 8, "ibnetdiscover_s", dt)
                for k in ("nodes", "links", "switches", "cas"):
                    self.record(rep, 8, "ibnetdiscover_" + k, c[k])
            self.record(rep, 9, "ibqueryerrors_s", self.ibqueryerrors())
            # One client's rate under the simulator on this machine: 512
            # MADs in flight, no file system (hop-0 NodeInfo, the cheapest
            # answer ibsim gives), on a node no mount uses.  Not a bound:
            # the cost is mostly umad2sim's, in the client's process (a
            # poll, a read and a malloc for each answer in its thread), and
            # a sweep, two threads, has gone faster.
            self.record(rep, 9, "sim_mads_per_s", self.mb(
                "direct", "-n", 512, env=self.fabric.client_env(self.hcas[-2]),
                daemon=False)["rate"])
            self.record(rep, 9, "daemon_vmrss_kib", self.rss()["VmRSS"])
            if rep % 2 == 1:
                self.sweep_off(rep)
            self.reads_during_sweep(rep)
            self.sweep_moving(rep)
        if 10 in rows:
            # The daemon's peak RSS through row 9's sweep, then from here:
            # what the read costs it.
            if 9 in rows:
                self.record(rep, 10, "daemon_vmhwm_sweep_kib", self.rss()["VmHWM"])
            before = self.reset_peak_rss()
            # To /dev/null: the file system's time, not a pipe's into us.
            t0 = time.monotonic()
            subprocess.run(["cat", str(self.mount.mountpoint / "fabric" /
                                       "metrics.prom")],
                           stdout=subprocess.DEVNULL, check=True, timeout=60)
            dt = time.monotonic() - t0
            self.record(rep, 10, "daemon_vmrss_before_kib", before)
            self.record(rep, 10, "daemon_vmhwm_read_kib", self.rss()["VmHWM"])
            self.record(rep, 10, "metrics_bytes", os.stat(
                self.mount.mountpoint / "fabric" / "metrics.prom").st_size)
            # The first snapshot's index is made on this read; later ones
            # right after their sweep, since the one before was read.
            self.record(rep, 10, "cat_metrics_first_s" if rep == 1 and 9 in rows
                        else "cat_metrics_s", dt)
            self.textfile_scrape(rep)
        if 13 in rows:
            self.routes_row(rep)
        if 11 in rows:
            dt = self.sysfs_scrape()
            if dt is not None:
                self.record(rep, 11, "node_exporter_scrape_s", dt)

    def reads_during_sweep(self, rep):
        """Row 9: fabric/'s reads while a sweep runs (links, problems, a
        port's counter), each a whole open-read-close, in a loop until the
        sweep ends: the slowest (a sweep never blocks readers), against
        the same reads with no sweep running."""
        fdir = self.mount.mountpoint / "fabric"
        if not hasattr(self, "read_paths"):
            node = fdir / "nodes" / sorted(os.listdir(fdir / "nodes"))[0]
            self.read_paths = [fdir / "links", fdir / "problems",
                               node / "ports" / "1" / "counters" / "symbol_error"]

        def timed_reads():
            """(the first answer: open and first read of 128 KiB, as a
            reader such as `head` or a parser waits for it; the whole read)
            of each path."""
            took = []
            for path in self.read_paths:
                t0 = time.monotonic()
                fd = os.open(path, os.O_RDONLY)
                try:
                    got = os.read(fd, 131072)
                    t1 = time.monotonic()
                    while got:
                        got = os.read(fd, 131072)
                finally:
                    os.close(fd)
                took.append((t1 - t0, time.monotonic() - t0))
            return took
        idle = timed_reads()
        sweeper = threading.Thread(target=self.fabric_sweep)
        sweeper.start()
        took = []
        while sweeper.is_alive():
            took += timed_reads()
        sweeper.join()
        took = took or [(0, 0)]
        self.record(rep, 9, "read_during_sweep_max_ms", 1e3 * max(t[0] for t in took))
        self.record(rep, 9, "read_idle_max_ms", 1e3 * max(t[0] for t in idle))
        self.record(rep, 9, "whole_read_during_sweep_max_ms", 1e3 * max(t[1] for t in took))
        self.record(rep, 9, "whole_read_idle_max_ms", 1e3 * max(t[1] for t in idle))
        self.record(rep, 9, "reads_during_sweep", len(took))

    def sweep_moving(self, rep):
        """Row 9: a repeated sweep after 5% of the linked ports' PortXmitWait
        moved (ibsim's PerformanceSet, random ports), its MADs and its
        detail Gets (issue 31: the details are asked where their summary
        moved); the next sweep finds nothing moving again."""
        rng = random.Random(900 + rep)
        ports = rng.sample(self.linked_ports, max(1, len(self.linked_ports) // 20))
        for node, port in ports:
            self.fabric.command('PerformanceSet "%s"[%d] PortCounters.PortXmitWait=%d'
                                % (node, port, 1000 * rep + rng.randrange(1, 1000)))
        _, kv = self.fabric_sweep()
        self.record(rep, 9, "moving_ports", len(ports))
        self.record(rep, 9, "fabric_mads_moving", int(kv["mads"]))
        self.record(rep, 9, "detail_mads_moving", int(kv["detail_mads"]))

    def reroute_check(self):
        """After row 14's cables (the SM rerouted at each): once
        fabric_routes_settle (120 s, the default; 2 s --quick) has passed since
        the last, a sweep reads every table; every switch's lft then equals
        ibroute's, and routes/SRC/DST ibtracert's path for 1,000 random
        pairs of endports (100 with --quick)."""
        time.sleep(max(0.0, self.last_cable + self.settle_s + 2 - time.monotonic()))
        _, kv = self.fabric_sweep()
        self.record(1, 13, "reroute_lfts_read", int(kv["lfts_read"]))
        f, host, m = self.fabric, self.direct_host, self.mount
        sws = routecmp.switches(m)
        same = sum(routecmp.lft(m, g) == routecmp.ibroute(f, host, lid)
                   for g, lid in sws.items())
        # (the raw numbers are all > 0: the ones alike are recorded)
        self.record(1, 13, "reroute_switches", len(sws))
        self.record(1, 13, "reroute_lft_same", same)
        rng = random.Random(13)
        n, alike = 100 if self.quick else 1000, 0
        for _ in range(n):
            a, b = rng.choice(self.route_lids), rng.choice(self.route_lids)
            ours, res = routecmp.route(m, a, b)
            theirs, rc, _ = routecmp.ibtracert(f, host, a, b)
            alike += rc == 0 and res["result"] == "ok" and ours == theirs
        self.record(1, 13, "reroute_pairs", n)
        self.record(1, 13, "reroute_routes_same", alike)

    def wait_routed(self, timeout=300):
        """Until the SM has set every switch's table: sweeps until no
        route_* problem is left (on the large tree the ports are Active
        before the last tables are written)."""
        fdir = self.mount.mountpoint / "fabric"
        deadline = time.monotonic() + timeout
        self.fabric_ran = True
        while True:
            self.fabric_sweep()
            if "problem=route_" not in (fdir / "problems").read_text():
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the SM did not set every forwarding table in %d s"
                                   % timeout)
            time.sleep(1)

    def routes_row(self, rep):
        """Row 13: `cat routes/SRC/DST` of 1,000 random pairs of LIDs (100
        with --quick; switches' ports 0 and CA ports, from nodes/), each a
        process; ibtracert on the same pairs in repetition 1."""
        fdir = self.mount.mountpoint / "fabric"
        n = 100 if self.quick else 1000
        if not hasattr(self, "route_lids"):
            # From the topology, not nodes/: a walk of every port's
            # directory would make them all (about 6 KB a port) and
            # charge row 9's RSS with it.
            ends = routecmp.endports((fdir / "topology").read_text())
            self.route_lids = sorted(lid for _, _, lid in ends if lid)
        rng = random.Random(rep)
        pairs = [(rng.choice(self.route_lids), rng.choice(self.route_lids))
                 for _ in range(n)]
        times, reads, ok, text = [], [], 0, ""
        for a, b in pairs:
            path = str(fdir / "routes" / str(a) / str(b))
            t0 = time.monotonic()
            cp = subprocess.run(["cat", path], capture_output=True, text=True, timeout=30)
            times.append(time.monotonic() - t0)
            ok += "result=ok" in cp.stdout
            text = cp.stdout
        # The file system's share: an open, read and close in this process,
        # without a process's start, of other pairs (names not looked up
        # yet, as for each cat).
        for _ in range(n):
            path = fdir / "routes" / str(rng.choice(self.route_lids)) / str(
                rng.choice(self.route_lids))
            t0 = time.monotonic()
            with open(path, "rb") as f:
                f.read()
            reads.append(time.monotonic() - t0)
        # `cat` of a regular file of a path's size: what a process costs
        # on this machine, whatever it reads.
        plain = self.tmp / "route.txt"
        plain.write_text(text)
        base = []
        for _ in range(min(n, 200)):
            t0 = time.monotonic()
            subprocess.run(["cat", str(plain)], capture_output=True, text=True, timeout=30)
            base.append(time.monotonic() - t0)
        self.record(rep, 13, "route_cat_ms", 1e3 * statistics.median(times))
        self.record(rep, 13, "route_read_ms", 1e3 * statistics.median(reads))
        self.record(rep, 13, "plain_cat_ms", 1e3 * statistics.median(base))
        self.record(rep, 13, "route_ok", ok)
        if rep != 1:
            return
        times = []
        for a, b in pairs:
            t0 = time.monotonic()
            subprocess.run(["ibtracert", str(a), str(b)], env=self.sim_env(),
                           cwd=self.fabric.clientdir, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=60)
            times.append(time.monotonic() - t0)
        self.record(rep, 13, "ibtracert_ms", 1e3 * statistics.median(times))

    def traps_row(self, rep):
        """Row 14: Unlink and ReLink of an HCA's cable, `pairs` times; each
        timed from the console command to its line in fabric/events."""
        fdir = self.mount.mountpoint / "fabric"

        def sweep_file():
            return dict(ln.split(" ", 1) for ln in (fdir / "sweep").read_text().splitlines()
                        if " " in ln)
        kv = sweep_file()      # the first sweep, if there was none
        deadline = time.monotonic() + 60
        while kv["traps"] != "subscribed":
            if time.monotonic() > deadline:
                raise RuntimeError("row 14: traps %s" % kv["traps"])
            time.sleep(0.2)
            kv = sweep_file()
        fd = os.open(fdir / "events", os.O_RDONLY | os.O_NONBLOCK)
        pairs = 5 if self.quick else 20
        lat, mads, missed = [], [], 0
        try:
            for i in range(pairs):
                hca = self.trap_hcas[i % len(self.trap_hcas)]
                for cmd, event in (("Unlink", "link_down"), ("ReLink", "link_up")):
                    took = self.cable_event('%s "%s"[1]' % (cmd, hca), fd, event, 10, 14)
                    if took is None:
                        missed += 1
                    else:
                        lat.append(took)
                        mads.append(int(sweep_file()["mads"]))
        finally:
            os.close(fd)
        if lat:
            self.record(rep, 14, "trap_event_ms", 1e3 * statistics.median(lat))
            self.record(rep, 14, "trap_event_max_ms", 1e3 * max(lat))
            self.record(rep, 14, "refresh_mads", statistics.median(mads))
        if missed:
            self.record(rep, 14, "trap_events_missed", missed)

    def cable_event(self, command, fd, event, timeout, row):
        """Runs a console command and waits for its event=EVENT line on fd
        (fabric/events, O_NONBLOCK, what was there before skipped): the
        seconds it took, or None (said on stderr) after timeout."""
        try:
            while os.read(fd, 1 << 16):
                pass
        except BlockingIOError:
            pass
        t0 = time.monotonic()
        self.fabric.command(command)
        self.last_cable = t0
        buf, end = b"", t0 + timeout
        while ("event=%s " % event).encode() not in buf:
            left = end - time.monotonic()
            if left <= 0:
                sys.stderr.write("row %d: no %s line %d s after %s; the events were:\n%s\n"
                                 % (row, event, timeout, command, buf.decode()[-2000:]))
                return None
            if select.select([fd], [], [], left)[0]:
                buf += os.read(fd, 1 << 16)
        return time.monotonic() - t0

    def staleness_row(self, rep):
        """Row 15 (see the module's docstring)."""

        def kv(mnt):
            return dict(ln.split(" ", 1) for ln in
                        (mnt / "fabric" / "sweep").read_text().splitlines() if " " in ln)
        if self.mount_light is None:
            self.mount_light = sim.Mount(self.fabric, self.hcas[1], self.tmp / "mnt-light",
                                         workdir=self.tmp, options=("fabric_traps=off",))
            self.mount_light.start(timeout=30)
            kv(self.mount_light.mountpoint)     # its first sweep
        main = self.mount.mountpoint
        idle = 3 if self.quick else 10
        a, t0 = kv(main), time.monotonic()
        time.sleep(idle)
        b, t1 = kv(main), time.monotonic()
        mads = sum(int(b[k]) - int(a[k]) for k in ("light_sweep_mads", "trap_check_mads"))
        self.record(rep, 15, "guard_mads_per_s", mads / (t1 - t0))
        self.record(rep, 15, "links", int(b["links"]))
        fdir = self.mount_light.mountpoint / "fabric"
        hca = self.trap_hcas[rep % len(self.trap_hcas)]
        leaf, port = self.uplinks[rep % len(self.uplinks)]
        cables = ['"%s"[1]' % hca] if self.quick else ['"%s"[1]' % hca, '"%s"[%d]' % (leaf, port)]
        fd = os.open(fdir / "events", os.O_RDONLY | os.O_NONBLOCK)
        lat, missed = [], 0
        try:
            for cable in cables:
                for cmd, event in (("Unlink", "link_down"), ("ReLink", "link_up")):
                    took = self.cable_event("%s %s" % (cmd, cable), fd, event, 30, 15)
                    if took is None:
                        missed += 1
                    else:
                        lat.append(took)
                # the SM brings the port back to Active before the next cable
                time.sleep(1)
        finally:
            os.close(fd)
        if lat:
            self.record(rep, 15, "stale_ms", 1e3 * statistics.median(lat))
            self.record(rep, 15, "stale_max_ms", 1e3 * max(lat))
        if missed:
            self.record(rep, 15, "stale_missed", missed)

    def mcast_join(self, host):
        """Row 16: host's port joins the IPoIB broadcast group, a proxy
        join (SM_Key 1) through the mount's send; the SA's status."""
        port = self.port_dir
        sm_lid = int((port / "sm_lid").read_text(), 16)
        guid = int(self.fabric.ibstat(host)["ports"][1]["Port GUID"], 16)
        data = ("ff12401bffff000000000000ffffffff" + "fe80000000000000%016x" % guid +
                "00" * 16 + "01" + "00" * 3)
        with open(port / "send", "w") as f:
            f.write("class=sa method=set attr=MCMemberRecord lid=%d smkey=1 "
                    "comp_mask=0x10003 data=%s\n" % (sm_lid, data))
        with open(port / "recv") as f:
            for line in f:
                if "attr=MCMemberRecord" in line:
                    return int(re.search(r"status=(0x[0-9a-f]+)", line).group(1), 16)
        return None

    def mcast_row(self, rep):
        """Row 16: the repeated sweep's MADs before and after a join, less
        the detail counters' (a slice in turn, not the same each sweep)."""
        def mads(kv):
            return int(kv["mads"]) - int(kv["detail_mads"])
        self.fabric_sweep()
        self.record(rep, 16, "mads_none", mads(self.fabric_sweep()[1]))
        for host in (self.host, self.hcas[1]):
            status = self.mcast_join(host)
            if status != 0:
                raise RuntimeError("row 16: the join of %s: status %s" % (host, status))
        deadline = time.monotonic() + 30
        kv = self.fabric_sweep()[1]
        while kv.get("mcast_members") != "2" and time.monotonic() < deadline:
            time.sleep(0.5)
            kv = self.fabric_sweep()[1]
        # (the sweep that first saw the members read every switch's
        # multicast table: it may be the one the SM's trap asked for)
        self.record(rep, 16, "members", int(kv.get("mcast_members", 0)))
        self.record(rep, 16, "mads_joined", mads(self.fabric_sweep()[1]))

    def mcast_table(self, L, ok):
        before = self.med(16, "mads_none")
        if before is None:
            return
        after = self.med(16, "mads_joined")
        r = after / before
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            16, "repeated sweep's MADs, a group of %d joined / none" % self.med(16, "members"),
            "%d" % after, "%.3fx" % r, "<= 1.01x", ok(r <= 1.01)))
        L.append("%-4s   none joined: %d MADs (detail counters' Gets left out of both)"
                 % ("", before))

    def staleness_table(self, L, ok):
        rate = self.med(15, "guard_mads_per_s")
        if rate is None:
            return
        big = self.a.fabric == "large" or self.quick
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            15, "staleness: the guard's MADs/s with nothing changing",
            "%.0f/s" % rate, "%d links" % self.med(15, "links"),
            "" if big else "<= 200/s", "" if big else ok(rate <= 200)))
        med = self.med(15, "stale_ms")
        if med is None:
            return
        worst = max(self.rows[(15, "stale_max_ms")])
        missed = sum(self.rows.get((15, "stale_missed"), []))
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            "", "  a cable by the light sweep alone -> its line in events (ms)",
            "%.0f ms" % med, "max %.0f" % worst, "<= 10000 ms",
            ok(worst <= 10000 and not missed)))

    def traps_table(self, L, ok):
        med = self.med(14, "trap_event_ms")
        if med is None:
            return
        worst = max(self.rows[(14, "trap_event_max_ms")])
        missed = sum(self.rows.get((14, "trap_events_missed"), []))
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            14, "traps: cable pulled/put back -> its line in events (ms)",
            "%.0f ms" % med, "max %.0f" % worst, "<= 1000 ms", ok(worst <= 1000 and not missed)))
        sw = self.med(9, "fabric_mads")
        L.append("%-4s   a refresh: %d MADs (a repeated sweep: %s); events missed: %d" % (
            "", self.med(14, "refresh_mads"), sw if sw is not None else "row 9 not run",
            missed))

    def routes_off_lines(self, L, ok):
        """Row 9's sweep against the same without the forwarding tables."""
        large = self.a.fabric == "large"
        sw, off = self.med(9, "fabric_sweep_s"), self.med(9, "fabric_sweep_noroutes_s")
        if sw is not None and off is not None:
            r = self.ratio((9, "fabric_sweep_s"), (9, "fabric_sweep_noroutes_s"))
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "the same sweep, -o fabric_routes=off (a second mount)",
                "%.3f s" % off, "%.2fx" % r, "<= 1.15x" if not large else "",
                "" if large else ok(r <= 1.15)))
            L.append("%-4s   MADs with the tables %d, without %d" % (
                "", self.med(9, "fabric_mads"), self.med(9, "fabric_mads_noroutes")))
        mv = self.med(9, "fabric_mads_moving")
        if mv is not None:
            L.append("%-4s   MADs with %d ports' PortXmitWait moved (5%%): %d (%d detail Gets)" % (
                "", self.med(9, "moving_ports"), mv, self.med(9, "detail_mads_moving")))
            if large:
                rss = max(self.rows[(9, "daemon_vmrss_kib")]) / 1024
                L.append("%-4s %-58s %12s %10s %10s %5s" % (
                    "", "the sweep with the tables, and the daemon's RSS", "%.3f s"
                    % sw, "%.1f MiB" % rss, "0.7 s, 80 MiB", ok(sw <= 0.7 and rss <= 80)))

    def routes_table(self, L, ok):
        cat = self.med(13, "route_cat_ms")
        if cat is not None:
            tr = self.med(13, "ibtracert_ms")
            n = 100 if self.quick else 1000
            L.append("%-4s %-58s %12s %10s" % (
                13, "cat fabric/routes/SRC/DST, %d random pairs (median ms)" % n,
                "%.2f ms" % cat, "%.0fx" % (tr / cat) if tr else ""))
            if tr:
                L.append("%-4s %-58s %12s" % (
                    "", "ibtracert SRC DST, the same pairs (median ms)", "%.2f ms" % tr))
            L.append("%-4s   %d of %d paths result=ok" % (
                "", min(self.rows[(13, "route_ok")]), n))
            rd, plain = self.med(13, "route_read_ms"), self.med(13, "plain_cat_ms")
            L.append("%-4s %-58s %12s %10s" % (
                "", "  cat of a regular file of a path's size (median ms)",
                "%.2f ms" % plain, ""))
            # Issue 30's target is the file system's part of a cat: the
            # same open, read and close in-process (the cat less a cat of
            # a regular file beside it: two medians of processes apart,
            # as noisy as a process's start on this machine).
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  the file system's part: read in-process; cat less that",
                "%.2f ms" % rd, "%.2f ms" % (cat - plain),
                "<= 2 ms" if self.a.fabric == "huge" else "",
                ok(rd <= 2) if self.a.fabric == "huge" else ""))
        sws = self.med(13, "reroute_switches")
        if sws is not None:
            pairs = self.med(13, "reroute_pairs")
            lfts = sws - self.rows.get((13, "reroute_lft_same"), [0])[0]
            routes = pairs - self.rows.get((13, "reroute_routes_same"), [0])[0]
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  after row 14's reroutes and the settling: tables read",
                "%d of %d" % (self.med(13, "reroute_lfts_read"), sws),
                "", "all", ok(self.med(13, "reroute_lfts_read") == sws)))
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  lft unlike ibroute; routes unlike ibtracert (%d pairs)" % pairs,
                "%d switches" % lfts, "%d pairs" % routes, "0, 0",
                ok(lfts == 0 and routes == 0)))

    def fabric_table(self, L, ok):
        sw = self.med(9, "fabric_sweep_s")
        if sw is None:
            return
        large, huge = self.a.fabric == "large", self.a.fabric == "huge"
        r = self.ratio((9, "ibqueryerrors_s"), (9, "fabric_sweep_s"))
        same = all(self.rows.get((9, "fabric_" + k)) ==
                   self.rows.get((8, "ibnetdiscover_" + k))
                   for k in ("nodes", "links", "switches", "cas"))
        limit = 1.0 if huge else 0.6 if large else 0.15
        # Faster than ibqueryerrors in every repetition, not only the median:
        # 3x on the 1k tree, 6x on the 16k one (issue 30).
        times = 6 if huge else 3
        worst = min(i / s for i, s in zip(self.rows[(9, "ibqueryerrors_s")],
                                          self.rows[(9, "fabric_sweep_s")]))
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            9, "fabric/: echo 1 > sweep, repeated, every counter (wall s)",
            "%.3f s" % sw, "%.1fx" % r, "<= %.2f s" % limit,
            ok(sw <= limit and (large or worst >= times) and same)))
        L.append("%-4s %-58s %12s %10s %10s" % (
            "", "ibqueryerrors, whole process (wall s; ratio: it / sweep)",
            "%.3f s" % self.med(9, "ibqueryerrors_s"), "%.1fx min" % worst,
            "" if large else ">= %dx" % times))
        sim_rate = self.med(9, "sim_mads_per_s")
        if sim_rate:
            L.append("%-4s %-58s %12s %10s" % (
                "", "  one client's rate: madbench direct -n 512 (MADs/s)",
                "%.0f/s" % sim_rate, "%.3f s" % (self.med(9, "fabric_mads") / sim_rate)))
        if self.med(9, "fabric_sweep_s") is not None:
            L.append("%-4s %-58s %12s %10s" % (
                "", "  CPU in the sweep (s): the daemon, umad2sim in it; ibsim",
                "%.2f s" % (self.med(9, "sweep_daemon_cpu_s") or 0),
                "%.2f s" % (self.med(9, "sweep_sim_cpu_s") or 0)))
        first = self.med(9, "fabric_first_sweep_s")
        if first is not None:
            disc = self.med(8, "ibnetdiscover_s")
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  the first sweep, everything (rep 1; ibnetdiscover)",
                "%.3f s" % first, "%.3f s" % disc if disc else "",
                "< ibnetd." if huge else "", ok(disc and first < disc) if huge else ""))
            mf, ms = self.med(9, "fabric_mads_first"), self.med(9, "fabric_mads")
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  MADs: first sweep %d, repeated %d" % (mf, ms), "",
                "%.3f" % (ms / mf), "<= 0.80", ok(ms / mf <= 0.8)))
        pj = self.med(9, "problems_ms")
        pl = 80 if huge else 20
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            "", "  fabric/problems judged (sweep's problems_us, ms)",
            "%.1f ms" % pj, "", "<= %d ms" % pl, ok(pj <= pl)))
        if self.judged:
            L.append("%-4s %-58s %12s" % (
                "", "    of it the routing (tables changed: %s)" % ",".join(
                    t for _, t in self.judged),
                "%.1f ms" % statistics.median(r for r, _ in self.judged)))
        rd = self.rows.get((9, "read_during_sweep_max_ms"))
        if rd:
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  links, problems, a counter in a sweep: first answer (max; idle)",
                "%.1f ms" % max(rd), "%.1f ms" % max(self.rows[(9, "read_idle_max_ms")]),
                "<= 50 ms", ok(max(rd) <= 50)))
            L.append("%-4s %-58s %12s %10s" % (
                "", "  the same, whole reads (max; idle)",
                "%.1f ms" % max(self.rows[(9, "whole_read_during_sweep_max_ms")]),
                "%.1f ms" % max(self.rows[(9, "whole_read_idle_max_ms")])))
        rq = self.med(9, "routing_ms")
        if rq is not None:
            target = {"default": 50, "large": 250}.get(self.a.fabric)
            target = None if self.quick else target
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  fabric/routing judged (first sweep's routing_us, ms)",
                "%.1f ms" % rq, "", "<= %d ms" % target if target else "",
                ok(rq <= target) if target else ""))
        L.append("%-4s   counts: %d nodes (%d switches, %d CAs), %d links, %d ports, "
                 "%d MADs, %d timeouts in all; vs ibnetdiscover: %s" % (
                     "", self.med(9, "fabric_nodes"), self.med(9, "fabric_switches"),
                     self.med(9, "fabric_cas"), self.med(9, "fabric_links"),
                     self.med(9, "fabric_ports"), self.med(9, "fabric_mads"),
                     sum(self.rows.get((9, "fabric_timeouts"), [])),
                     "identical" if same else "DIFFERENT"))
        self.routes_off_lines(L, ok)
        rss = max(self.rows[(9, "daemon_vmrss_kib")]) / 1024
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            "", "daemon RSS after the sweeps (VmRSS)", "%.1f MiB" % rss, "",
            "<= 48 MiB" if large else "", ok(rss <= 48) if large else ""))
        self.fabric_counts_agree = same
        self.metrics_lines(L, ok)
        ne = self.med(11, "node_exporter_scrape_s")
        if ne is not None:
            L.append("%-4s %-58s %12s" % (
                11, "node_exporter scrape of fabric/ as sysfs (wall ms)",
                "%.1f ms" % (1e3 * ne)))

    def metrics_lines(self, L, ok):
        """Row 10: the read of metrics.prom, and the daemon's RSS.  The
        16k tree's targets (issue 30): the read <= 1.5 s, the RSS <= 128
        MiB through a sweep and the read."""
        huge = self.a.fabric == "huge"
        limit = 1.5 if huge else 0.02
        cat = self.med(10, "cat_metrics_s")
        if cat is not None:
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                10, "cat fabric/metrics.prom > /dev/null (wall ms; %.1f MB)"
                % (self.med(10, "metrics_bytes") / 1e6),
                "%.1f ms" % (1e3 * cat), "", "<= %g ms" % (1e3 * limit),
                "" if self.a.fabric == "large" else ok(cat <= limit)))
        first = self.med(10, "cat_metrics_first_s")
        if first is not None:
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  the first snapshot's, made on that read (rep 1)",
                "%.1f ms" % (1e3 * first), "", "<= 1500 ms" if huge else "",
                ok(first <= limit) if huge else ""))
        peak = self.rows.get((10, "daemon_vmhwm_read_kib"))
        if peak:
            L.append("%-4s %-58s %12s %10s" % (
                "", "  daemon RSS during the read (peak; before it)",
                "%.1f MiB" % (max(peak) / 1024),
                "%.1f MiB" % (max(self.rows[(10, "daemon_vmrss_before_kib")]) / 1024)))
        scrape = self.med(10, "textfile_scrape_s")
        if scrape is not None:
            L.append("%-4s %-58s %12s %10s" % (
                "", "  node_exporter's textfile collector on it: a scrape, RSS",
                "%.1f ms" % (1e3 * scrape),
                "%.1f MiB" % (max(self.rows[(10, "daemon_vmhwm_scrape_kib")]) / 1024)))
        allp = self.rows.get((10, "daemon_peak_kib"))
        if allp and (9, "daemon_vmrss_before_kib") in self.rows:
            # 32 MiB per 4k nodes (issue 30): 128 on the 16k tree, 48 on the 4k.
            cap = {"huge": 128, "large": 48}.get(self.a.fabric)
            top = max(allp) / 1024
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "  daemon RSS through sweep, read, scrape (peak; before)",
                "%.1f MiB" % top,
                "%.1f MiB" % (max(self.rows[(9, "daemon_vmrss_before_kib")]) / 1024),
                "<= %d MiB" % cap if cap else "", ok(top <= cap) if cap else ""))

    def cpu_line(self, L, row, direct):
        a, b = self.med(row, "cpu_us_per_mad"), self.med(direct, "cpu_us_per_mad")
        if a is None or b is None:
            return
        L.append("%-4s %-58s" % ("", "  CPU per MAD, daemon + client: %.1f us; direct "
                                 "(row %d): %.1f us (%.2fx)" % (a, direct, b, a / b)))

    # The CPU a MAD cannot cost less than through the mount: the FUSE round
    # trips its path needs (row 4's EAGAIN read, daemon + client CPU, this
    # run) plus what the direct client spends on it (libibumad, the
    # simulator's socket).  A row's target against direct depends on how
    # long a round trip is next to the simulator's answer on this machine;
    # against the floor it does not.
    FLOOR_TARGET = 1.1

    def floor_line(self, L, row, direct, trips):
        rt = self.med(4, "fuse_round_trip_cpu_us")
        a, b = self.med(row, "cpu_us_per_mad"), self.med(direct, "cpu_us_per_mad")
        if None in (rt, a, b, trips):
            return
        floor = trips * rt + b
        r = a / floor
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            "", "  floor: %.2f round trips x %.1f us + direct %.1f us = %.1f us"
            % (trips, rt, b, floor), "", "%.2fx" % r,
            "<= %.1fx" % self.FLOOR_TARGET, "pass" if r <= self.FLOOR_TARGET else "MISS"))

    # -- the table ------------------------------------------------------
    def med(self, row, metric):
        v = self.rows.get((row, metric))
        return statistics.median(v) if v else None

    def ratio(self, num, den, metric_n="mads_per_s", metric_d="mads_per_s"):
        """Median of the per-repetition ratios num/den."""
        a = self.rows.get((num[0], num[1] if len(num) > 1 else metric_n))
        b = self.rows.get((den[0], den[1] if len(den) > 1 else metric_d))
        if not a or not b:
            return None
        return statistics.median(x / y for x, y in zip(a, b))

    def table(self):
        L = []
        ok = lambda c: "pass" if c else "MISS"      # noqa: E731
        fmt = lambda v, f: "-" if v is None else f % v  # noqa: E731
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            "row", "what", "MADs/s", "ratio", "target", ""))

        def rate_row(n, what, ref=None, target=None, metric="mads_per_s"):
            rate = self.med(n, metric)
            r = self.ratio((n, metric), (ref,)) if ref else None
            res = "" if target is None or r is None else ok(r >= target)
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                n, what, fmt(rate, "%.0f"),
                fmt(r, "%.3f") + (" of %d" % ref if ref and r is not None else ""),
                (">= %.2f" % target) if target else "", res))

        rate_row(1, "direct libibumad C, 1 outstanding (DR NodeInfo hop 0)")
        rate_row(2, "umad file from C, 1 outstanding", 1)
        self.cpu_line(L, 2, 1)
        self.floor_line(L, 2, 1, 2)     # a write and a read per MAD
        rate_row(3, "direct libibumad C, 32 outstanding")
        rate_row(4, "umad file from C, 32 outstanding, 1 frame/syscall", 3)
        rt = self.med(4, "fuse_round_trip_us")
        if rt is not None:
            L.append("%-4s %-58s" % ("", "  one FUSE round trip (EAGAIN read of recv): %.1f us"
                                     % rt))
        rate_row(5, "text send/recv from C, 32 out, 32 lines/write, 64K reads", 3, 0.85)
        self.cpu_line(L, 5, 3)
        self.floor_line(L, 5, 3, self.med(5, "round_trips_per_mad"))
        rate_row(5, "  the same, decode=none", 3, 0.85, "mads_per_s_none")
        rate_row(6, "text send/recv from Python, poll(), batched the same", 3, 0.5)
        rate_row(6, "  the same, decode=none", 3, 0.5, "mads_per_s_none")
        fs, smp = self.med(7, "umadfs_shell_ms"), self.med(7, "smpquery_shell_ms")
        if fs is not None:
            r = self.ratio((7, "smpquery_shell_ms"), (7, "umadfs_shell_ms"))
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                7, "shell loop: echo > send; head -n1 recv (ms/query)",
                "%.2f ms" % fs, "%.1fx" % r, ">= 3x", ok(r >= 3)))
            L.append("%-4s %-58s %12s" % (
                "", "shell loop: smpquery -D nodeinfo 0 (ms/query)", "%.2f ms" % smp))
            rd = self.med(7, "umadfs_read_ms")
            r = self.ratio((7, "umadfs_shell_ms"), (7, "umadfs_read_ms"))
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                "", "shell loop: echo > send; read -r l < recv (ms/query)",
                "%.2f ms" % rd, "%.1fx" % r, "> 1x head", ok(r > 1)))
        sw, ib = self.med(8, "sweep_s"), self.med(8, "ibnetdiscover_s")
        if sw is not None:
            r = self.ratio((8, "sweep_s"), (8, "ibnetdiscover_s"))
            same = all(self.rows[(8, "sweep_" + k)] == self.rows[(8, "ibnetdiscover_" + k)]
                       for k in ("nodes", "links", "switches", "cas"))
            self.counts_agree = same
            L.append("%-4s %-58s %12s %10s %10s %5s" % (
                8, "fabric sweep, sweep.py over send/recv (wall s)",
                "%.3f s" % sw, "%.2fx" % r, "<= 0.80x", ok(r <= 0.8 and same)))
            L.append("%-4s %-58s %12s" % ("", "ibnetdiscover (wall s)", "%.3f s" % ib))
            L.append("%-4s   counts: sweep %d nodes (%d switches, %d CAs), %d links, "
                     "%d MADs; ibnetdiscover %d nodes (%d switches, %d CAs), %d links: %s"
                     % ("", self.med(8, "sweep_nodes"), self.med(8, "sweep_switches"),
                        self.med(8, "sweep_cas"), self.med(8, "sweep_links"),
                        self.med(8, "sweep_mads"), self.med(8, "ibnetdiscover_nodes"),
                        self.med(8, "ibnetdiscover_switches"),
                        self.med(8, "ibnetdiscover_cas"),
                        self.med(8, "ibnetdiscover_links"),
                        "identical" if same else "DIFFERENT"))
        self.fabric_table(L, ok)
        self.routes_table(L, ok)
        self.traps_table(L, ok)
        self.staleness_table(L, ok)
        self.mcast_table(L, ok)
        peak = max(self.rows.get((0, "daemon_vmhwm_kib"), [0]))
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            "rss", "daemon peak RSS before the fabric rows (VmHWM)",
            "%.1f MiB" % (peak / 1024), "",
            "< 16 MiB", ok(peak < 16 * 1024)))
        return "\n".join(L)

    def header(self):
        load = os.getloadavg()
        sm = ("" if self.sm_idle_s is None else
              "; opensm idle %.0f s after the ports were Active" % self.sm_idle_s)
        return ("umadfs benchmark, %s; fabric: %s (ibsim, umad2sim); daemon on %s, direct clients and diags on %s\n"
                "machine: %s, %d CPUs, %s, kernel %s; load before: %.2f %.2f %.2f%s\n"
                "%d repetitions, interleaved, %s s per rate measurement; medians"
                % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   self.fabric_desc, self.host, self.direct_host, cpu_model(), os.cpu_count(),
                   platform.machine(), platform.release(), *load, sm,
                   self.a.reps, "0.5" if self.quick else self.a.seconds))


def cpu_ticks(pid):
    """Process pid's CPU time so far, user and system, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])      # utime, stime


def cpu_s(pid):
    """Process pid's CPU time so far, in seconds."""
    return cpu_ticks(pid) / os.sysconf("SC_CLK_TCK")


def wait_idle(proc, limit_s):
    """Waits until proc's CPU time stands still (at most 2% of a CPU) for
    3 s, limit_s at most; returns the seconds waited.  opensm goes on
    configuring the fabric after it made the ports Active (at 16k, 20-50 s
    at a CPU's full), which would load the machine under the first
    repetition's rows but not the second's."""
    t0 = time.monotonic()
    last, still = cpu_ticks(proc.pid), 0
    while still < 3 and time.monotonic() - t0 < limit_s:
        time.sleep(1)
        now = cpu_ticks(proc.pid)
        still = still + 1 if now - last <= 2 else 0
        last = now
    return time.monotonic() - t0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a small fabric, 0.5 s per row, 1 repetition")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rows", default=None,
                    help="default 1-11 and 13-15; 8,9,10,13,14,15 with --fabric large")
    ap.add_argument("--fabric", choices=("default", "large", "huge"), default="default",
                    help="large: the 3,984-node fat tree; huge: 16,266 nodes")
    ap.add_argument("--direct-host", choices=("same", "other"), default="same",
                    help="direct clients and diags on the daemon's node "
                    "(default) or on the HCA beside it")
    ap.add_argument("--out", default=str(REPO / "build" / "bench"))
    a = ap.parse_args(argv[1:])
    if a.reps is None:
        a.reps = 1 if a.quick else 5
    if a.rows is None:
        a.rows = ("8,9,10,13,14,15" if a.fabric in ("large", "huge")
                  else "1,2,3,4,5,6,7,8,9,10,11,13,14,15")
    rows = {int(x) for x in a.rows.split(",")}
    if not os.access(madbench_bin(), os.X_OK):
        sys.exit("bench: %s not built (ninja -C build)" % madbench_bin())
    b = Bench(a)
    b.rows_asked = rows
    ok = True
    try:
        b.start()
        head = b.header()
        print(head, flush=True)
        for rep in range(1, a.reps + 1):
            t0 = time.monotonic()
            b.one_rep(rep, rows)
            print("# repetition %d of %d: %.1f s" % (rep, a.reps,
                                                    time.monotonic() - t0),
                  flush=True)
        # Row 14 last: each cable it pulls makes the SM sweep the fabric
        # and write tables, which the other rows would then share.
        for rep in range(1, a.reps + 1) if 14 in rows else ():
            b.traps_row(rep)
        for rep in range(1, a.reps + 1) if 15 in rows else ():
            b.staleness_row(rep)
        if 16 in rows:      # (joins stay: once)
            b.mcast_row(1)
        if {13, 14} <= rows:
            b.reroute_check()
    finally:
        ok = b.stop() and ok
    table = b.table()
    print()
    print(table)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    csv_path = out / ("bench-%s%s.csv" % (stamp, "-quick" if a.quick else ""))
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["rep", "row", "metric", "value"])
        w.writeheader()
        w.writerows(b.raw)
    csv_path.with_suffix(".txt").write_text(head + "\n\n" + table + "\n")
    print()
    print("raw numbers: %s" % csv_path)
    print("table:       %s" % csv_path.with_suffix(".txt"))
    if 8 in rows and not getattr(b, "counts_agree", False):
        print("bench: the sweep's counts differ from ibnetdiscover's")
        ok = False
    if 9 in rows and not getattr(b, "fabric_counts_agree", False):
        print("bench: fabric/sweep's counts differ from ibnetdiscover's")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
