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
     nodeinfo 0`: time per query
  8  sweep.py over the text files vs ibnetdiscover: wall time of each
     whole process, and their node and link counts

Prints the table (medians; ratios are medians of the per-repetition
ratios, each taken between runs of the same repetition) and writes the raw
numbers to a CSV, and the table beside it, in --out (default
build/bench/).  Exit status 0 when every row ran and the sweep's counts
equal ibnetdiscover's (targets missed do not fail the run), else 1.
"""

import argparse
import csv
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))
import fabric as fab  # noqa: E402

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
        self.raw = []           # CSV rows
        self.fabric = None
        self.mount = None
        self.port_dir = None
        self.rss_samples = []

    # -- setup ----------------------------------------------------------
    def start(self):
        net = self.tmp / "fabric.net"
        size = (["--leaves", "4", "--spines", "2", "--hcas-per-leaf", "8"]
                if self.quick else [])
        subprocess.run([PY, str(HERE / "gen-fabric.py"), *size, str(net)],
                       check=True)
        text = net.read_text()
        self.fabric_desc = text.splitlines()[1].lstrip("# ")
        hcas = re.findall(r'^Hca\s+\d+\s+"([^"]+)"', text, re.M)
        self.host = hcas[0]
        self.direct_host = hcas[1] if self.a.direct_host == "other" else hcas[0]
        self.fabric = fab.Fabric(str(net), workdir=self.tmp / "fabric")
        self.fabric.start(timeout=60)
        self.mount = fab.Mount(self.fabric, self.host, self.tmp / "mnt",
                               workdir=self.tmp)
        self.mount.start(timeout=30)
        mnt = self.mount.mountpoint
        ca = sorted(os.listdir(mnt))[0]
        self.port_dir = mnt / ca / "ports" / "1"
        self.daemon_pid = self.mount.proc.pid

    def stop(self):
        problems = []
        if self.mount is not None:
            self.mount.unmount()
            problems = self.mount.problems()
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

    def mb(self, *args, env=None):
        return parse_kv(self.run([madbench_bin(), *map(str, args),
                                  *self.timing()], env=env))

    def record(self, rep, row, metric, value):
        self.raw.append({"rep": rep, "row": row, "metric": metric,
                         "value": value})
        self.rows.setdefault((row, metric), []).append(value)

    def row_rate(self, rep, row, result, metric="mads_per_s"):
        self.record(rep, row, metric, result["rate"])
        if result.get("errors"):
            raise RuntimeError("row %s: %d answers were errors" % (
                row, result["errors"]))

    def shell_loop(self, n):
        d = self.port_dir
        script = ('for ((i = 0; i < %d; i++)); do echo "%s" > "%s/send"; '
                  'head -n1 "%s/recv" 2>/dev/null; done' % (
                      n, NODEINFO_LINE, d, d))
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
            self.row_rate(rep, 1, self.mb("direct", "-n", 1, env=env))
        if 2 in rows:
            self.row_rate(rep, 2, self.mb("umad", "-n", 1, self.port_dir))
        if 3 in rows:
            self.row_rate(rep, 3, self.mb("direct", "-n", 32, env=env))
        if 4 in rows:
            self.row_rate(rep, 4, self.mb("umad", "-n", 32, self.port_dir))
            r = self.mb("fuse", self.port_dir)
            self.record(rep, 4, "fuse_round_trip_us", 1e6 / r["rate"])
        for decode in ("fields", "none"):
            self.text_rows(rep, rows, decode)
        if 7 in rows:
            n_fs, n_smp = (20, 5) if self.quick else (300, 60)
            self.record(rep, 7, "umadfs_shell_ms", 1e3 * self.shell_loop(n_fs))
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
        self.record(rep, 0, "daemon_vmhwm_kib", r["VmHWM"])

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
        rate_row(2, "umad file from C, 1 outstanding", 1, 0.6)
        rate_row(3, "direct libibumad C, 32 outstanding")
        rate_row(4, "umad file from C, 32 outstanding, 1 frame/syscall", 3)
        rt = self.med(4, "fuse_round_trip_us")
        if rt is not None:
            L.append("%-4s %-58s" % ("", "  one FUSE round trip (EAGAIN read of recv): %.1f us"
                                     % rt))
        rate_row(5, "text send/recv from C, 32 out, 32 lines/write, 64K reads", 3, 0.85)
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
        peak = max(s["VmHWM"] for s in self.rss_samples) if self.rss_samples else 0
        L.append("%-4s %-58s %12s %10s %10s %5s" % (
            "rss", "daemon peak RSS (VmHWM)", "%.1f MiB" % (peak / 1024), "",
            "< 16 MiB", ok(peak < 16 * 1024)))
        return "\n".join(L)

    def header(self):
        load = os.getloadavg()
        return ("umadfs benchmark, %s; fabric: %s (ibsim, umad2sim); daemon on %s, direct clients and diags on %s\n"
                "machine: %s, %d CPUs, %s, kernel %s; load before: %.2f %.2f %.2f\n"
                "%d repetitions, interleaved, %s s per rate measurement; medians"
                % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   self.fabric_desc, self.host, self.direct_host, cpu_model(), os.cpu_count(),
                   platform.machine(), platform.release(), *load,
                   self.a.reps, "0.5" if self.quick else self.a.seconds))


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
    ap.add_argument("--rows", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--direct-host", choices=("same", "other"), default="same",
                    help="direct clients and diags on the daemon's node "
                    "(default) or on the HCA beside it")
    ap.add_argument("--out", default=str(REPO / "build" / "bench"))
    a = ap.parse_args(argv[1:])
    if a.reps is None:
        a.reps = 1 if a.quick else 5
    rows = {int(x) for x in a.rows.split(",")}
    if not os.access(madbench_bin(), os.X_OK):
        sys.exit("bench: %s not built (ninja -C build)" % madbench_bin())
    b = Bench(a)
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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
