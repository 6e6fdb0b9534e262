"""Simulated-fabric helpers for the umadfs integration tests.

No pytest dependency: usable from a Python shell for debugging, e.g.

    /usr/bin/python3 -c 'import sys; sys.path.insert(0, "tests/integration")
    import simfabric; f = simfabric.Fabric("two-switch.net").start()
    print(f.run_tool(["ibstat"], "Hca1").stdout); f.stop()'

Pieces:
  Fabric  - one ibsim(1) process on a net file, with its own IBSIM_SOCKNAME,
            its own tmp dir, and its console fed from a FIFO that this object
            keeps open (so ibsim never sees EOF on stdin, which would make it
            spin).  Clients (infiniband-diags, opensm, umadfs) run under
            LD_PRELOAD=libumad2sim.so with SIM_HOST=<node id>.
  Mount   - one `umadfs -f MOUNTPOINT` process, stderr captured to a log
            file; unmount() always gets rid of the mount and the process.
  parse_ibstat / parse_ibstat_all - ibstat output to dicts.

Environment:
  UMADFS_BIN      daemon binary (default <repo>/build/src/umadfs)
  UMADFS_WRAPPER  command prefix for the daemon, e.g.
                  "valgrind --error-exitcode=99 --leak-check=full"
  UMAD2SIM_LIB    umad2sim preload library
                  (default /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so)
  IBSIM_BIN       ibsim binary (default: ibsim on PATH)
  UMADFS_KEEP_TMP=1  keep the fabric tmp dirs (logs) after stop()
  UMADFS_MOUNT_TIMEOUT  seconds to wait for the mount to appear (default 10,
                  multiplied by 6 when UMADFS_WRAPPER is set)
"""

import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOPOLOGIES = REPO / "tests" / "topologies"
UMAD2SIM_LIB = os.environ.get(
    "UMAD2SIM_LIB", "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
IBSIM_BIN = os.environ.get("IBSIM_BIN", "ibsim")

TOOL_TIMEOUT = 15       # any one diags tool run
KILL_TIMEOUT = 5        # wait after each signal

_counter = itertools.count()


class FabricError(RuntimeError):
    pass


class MountError(RuntimeError):
    pass


def umadfs_bin():
    """The daemon under test, as an absolute path: mounts run it from other
    directories (umad2sim's ./sys-PID), so UMADFS_BIN=build/src/umadfs is
    taken from where pytest was started."""
    return os.path.abspath(os.environ.get("UMADFS_BIN",
                                          str(REPO / "build" / "src" / "umadfs")))


def umadfs_wrapper():
    return shlex.split(os.environ.get("UMADFS_WRAPPER", ""))


def memory_is_instrumented():
    """True when the daemon runs under valgrind or was built with ASan,
    whose quarantine keeps freed memory: RSS bounds mean nothing then."""
    if umadfs_wrapper():
        return True
    try:
        out = subprocess.run(["ldd", umadfs_bin()], capture_output=True,
                             text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "libasan" in out


def go_peer_env():
    """The environment of a Go peer (node_exporter, promtool) that reads
    the mount.  Go preempts its threads with signals (SIGURG), and each
    one that lands during a FUSE request sends the daemon an INTERRUPT:
    84 in 80 node_exporter scrapes of the two-switch tree, none with
    GODEBUG=asyncpreemptoff=1.  An INTERRUPT that comes after its request
    was answered waits on libfuse 3.14's session list for the next
    request, and one still there at unmount is never freed: 128 bytes
    that LeakSanitizer and memcheck report as a definite leak of the
    daemon's.  So where the daemon is leak-checked, Go does not preempt;
    the normal tier keeps Go's interrupts, which the daemon serves."""
    env = dict(os.environ)
    if memory_is_instrumented():
        env["GODEBUG"] = "asyncpreemptoff=1"
    return env


UNIX_DGRAM_QLEN = 4096


def _raise_sysctl(path, value):
    try:
        with open(path) as f:
            if int(f.read()) >= value:
                return
        with open(path, "w") as f:
            f.write(str(value))
    except OSError:
        pass        # not root: the simulator keeps its small queues


def raise_unix_dgram_qlen():
    """ibsim and umad2sim talk over AF_UNIX datagram sockets whose queues
    hold net.unix.max_dgram_qlen (default 10) datagrams and whose senders
    may have net.core.wmem_default (~208 KiB, ~700 MADs) in flight.  When
    either fills, ibsim (single-threaded) blocks writing answers to the
    client while the client's writer blocks writing to ibsim, holding
    umad2sim's global mutex: a deadlock inside the simulator.  Deeper
    queues and buffers (set before the sockets are made) keep it away for
    the thousands of MADs in flight the tests use."""
    _raise_sysctl("/proc/sys/net/unix/max_dgram_qlen", UNIX_DGRAM_QLEN)
    _raise_sysctl("/proc/sys/net/core/wmem_default", 8 << 20)
    _raise_sysctl("/proc/sys/net/core/rmem_default", 8 << 20)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _stop_process(proc, sig_first=signal.SIGTERM, timeout=KILL_TIMEOUT):
    """Signal a process (its whole session/group) and reap it.

    Returns the exit status.  Never raises for an already dead process."""
    if proc is None:
        return None
    if proc.poll() is not None:
        return proc.returncode
    for sig in (sig_first, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            continue
    return proc.poll()


# ----------------------------------------------------------------------------
# ibstat parsing

_ibstat_ca = re.compile(r"^(CA|Switch|Router)\s+'([^']*)'\s*$")
_ibstat_port = re.compile(r"^\s*Port\s+(\d+):\s*$")
_ibstat_field = re.compile(r"^\s*([^:]+?):\s*(.*?)\s*$")


def parse_ibstat_all(text):
    """ibstat output -> {ca_name: ca_dict} (see parse_ibstat)."""
    cas = {}
    ca = None
    port = None
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _ibstat_ca.match(line)
        if m:
            ca = {"kind": m.group(1), "ca_name": m.group(2), "ports": {}}
            cas[m.group(2)] = ca
            port = None
            continue
        if ca is None:
            continue
        m = _ibstat_port.match(line)
        if m:
            port = {"port_num": int(m.group(1))}
            ca["ports"][int(m.group(1))] = port
            continue
        m = _ibstat_field.match(line)
        if m:
            (port if port is not None else ca)[m.group(1)] = m.group(2)
    return cas


def parse_ibstat(text):
    """ibstat output for one CA -> dict.

    {'kind': 'CA'|'Switch'|'Router', 'ca_name': 'ibsim0',
     'CA type' (or 'Switch type'): ..., 'Number of ports': '1',
     'Firmware version': ..., 'Hardware version': ..., 'Node GUID': '0x..',
     'System image GUID': '0x..',
     'ports': {1: {'port_num': 1, 'State': 'Active', 'Physical state': 'LinkUp',
                   'Rate': '10', 'Base lid': '1', 'LMC': '0', 'SM lid': '1',
                   'Capability mask': '0x0050c048', 'Port GUID': '0x..',
                   'Link layer': 'IB'}}}
    The first CA if the text holds several."""
    cas = parse_ibstat_all(text)
    if not cas:
        raise ValueError("no CA in ibstat output:\n" + text)
    return next(iter(cas.values()))


def parse_smpquery(text):
    """smpquery output ('Name:.....value' lines) -> {Name: value}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w[\w ]*?):\.*(.*)$", line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def parse_pkeys(text):
    """`smpquery pkeys` output -> list of ints (table order)."""
    keys = []
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+):\s+((?:0x[0-9a-fA-F]+\s*)+)$", line)
        if m:
            keys.extend(int(k, 16) for k in m.group(2).split())
    return keys


# ----------------------------------------------------------------------------
# the fabric

class Fabric:
    """An ibsim process on a net file, plus opensm on demand.

    f = Fabric("two-switch.net").start(); ...; f.stop()
    or: with Fabric("two-switch.net") as f: ...
    """

    def __init__(self, netfile="two-switch.net", workdir=None, ibsim_args=()):
        p = Path(netfile)
        if not p.is_absolute() and not p.exists():
            p = TOPOLOGIES / netfile
        self.netfile = p.resolve()
        self.ibsim_args = list(ibsim_args)   # e.g. -N 5000 for big fabrics
        self.sockname = "umadfs-%d-%d-%d" % (os.getpid(), next(_counter),
                                             time.monotonic_ns() % 100000)
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(
            tempfile.mkdtemp(prefix="umadfs-fabric-"))
        self.clientdir = self.workdir / "clients"
        self.fifo = self.workdir / "console"
        self.ibsim_log = self.workdir / "ibsim.log"
        self.proc = None
        self._con_fd = None
        self._logf = None
        self.opensm = {}        # sim_host -> (Popen, dir)

    # -- lifecycle --------------------------------------------------------
    def start(self, timeout=10):
        if not self.netfile.exists():
            raise FabricError("net file not found: %s" % self.netfile)
        raise_unix_dgram_qlen()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.clientdir.mkdir(exist_ok=True)
        os.mkfifo(self.fifo, 0o600)
        # O_RDWR on a FIFO never blocks and keeps a writer open for as long
        # as we live, so ibsim's console never reads EOF.
        self._con_fd = os.open(self.fifo, os.O_RDWR | os.O_CLOEXEC)
        self._logf = open(self.ibsim_log, "wb")
        env = dict(os.environ, IBSIM_SOCKNAME=self.sockname)
        env.pop("LD_PRELOAD", None)
        try:
            self.proc = subprocess.Popen(
                [IBSIM_BIN, *self.ibsim_args, "-s", str(self.netfile)],
                stdin=self._con_fd, stdout=self._logf,
                stderr=subprocess.STDOUT, cwd=self.workdir, env=env,
                start_new_session=True)
        except OSError as e:
            self.stop()
            raise FabricError("cannot run ibsim: %s" % e)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                log = self.log_text()
                self.stop()
                raise FabricError("ibsim exited (status %s):\n%s"
                                  % (self.proc.returncode, log))
            if self._socket_bound() and "sim> " in self.log_text():
                break
            if time.monotonic() > deadline:
                log = self.log_text()
                self.stop()
                raise FabricError("ibsim not ready after %ss:\n%s"
                                  % (timeout, log))
            time.sleep(0.02)
        return self

    def _socket_bound(self):
        want = "@%s:ctl" % self.sockname
        text = _read("/proc/net/unix")
        return any(line.split()[-1].rstrip("@") == want
                   for line in text.splitlines()[1:] if line.split())

    def stop(self):
        """Kill opensm(s) and ibsim, remove the FIFO and tmp dir.  Safe to
        call more than once and after a failed start."""
        for host in list(self.opensm):
            self.stop_opensm(host)
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.command("Quit", timeout=1)
            except Exception:
                pass
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        _stop_process(self.proc)
        if self._con_fd is not None:
            os.close(self._con_fd)
            self._con_fd = None
        if self._logf is not None:
            self._logf.close()
            self._logf = None
        try:
            self.fifo.unlink()
        except FileNotFoundError:
            pass
        if self._own_workdir and os.environ.get("UMADFS_KEEP_TMP") != "1":
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        return _read(self.ibsim_log)

    # -- console ----------------------------------------------------------
    def command(self, line, timeout=5):
        """Send one console command; wait for ibsim's next prompt; return
        what ibsim printed in between (its reply, e.g. '# nodeid ... not
        found').  Syntax: see `help` (e.g. 'Baselid "Hca1"[1] 0x20')."""
        if "\n" in line:
            raise ValueError("one command per call")
        if not self.alive():
            raise FabricError("ibsim is not running:\n" + self.log_text())
        before = self.log_text()
        n = before.count("sim> ")
        os.write(self._con_fd, (line + "\n").encode())
        deadline = time.monotonic() + timeout
        while True:
            text = self.log_text()
            if text.count("sim> ") > n:
                reply = text[len(before):]
                return reply[:reply.rfind("sim> ")].strip()
            if not self.alive():
                if line.strip().lower().startswith("q"):
                    return ""
                raise FabricError("ibsim died after %r:\n%s" % (line, text))
            if time.monotonic() > deadline:
                raise FabricError("no ibsim prompt %ss after %r" % (timeout, line))
            time.sleep(0.01)

    def commands(self, lines, timeout=30):
        """Several console commands written at once, as fast as ibsim
        takes them (a storm); waits for all their prompts."""
        if not self.alive():
            raise FabricError("ibsim is not running:\n" + self.log_text())
        n = self.log_text().count("sim> ") + len(lines)
        os.write(self._con_fd, "".join(ln + "\n" for ln in lines).encode())
        deadline = time.monotonic() + timeout
        while self.log_text().count("sim> ") < n:
            if not self.alive() or time.monotonic() > deadline:
                raise FabricError("ibsim took %d commands badly:\n%s" % (
                    len(lines), self.log_text()[-3000:]))
            time.sleep(0.01)

    # -- clients ----------------------------------------------------------
    def client_env(self, sim_host, base=None):
        env = dict(os.environ if base is None else base)
        pre = env.get("LD_PRELOAD", "")
        if UMAD2SIM_LIB not in pre.split():
            env["LD_PRELOAD"] = (UMAD2SIM_LIB + " " + pre).strip()
        env["IBSIM_SOCKNAME"] = self.sockname
        env["SIM_HOST"] = sim_host
        return env

    def run_tool(self, argv, sim_host, cwd=None, timeout=TOOL_TIMEOUT,
                 check=True):
        """Run an infiniband-diags (or any umad) tool as a client of this
        fabric attached to node sim_host.  Returns CompletedProcess (text)."""
        try:
            cp = subprocess.run(argv, env=self.client_env(sim_host),
                                cwd=cwd or self.clientdir,
                                stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise FabricError("%s on %s timed out after %ss" %
                              (argv, sim_host, timeout)) from e
        if check and cp.returncode != 0:
            raise FabricError("%s on %s: status %d\nstdout:\n%s\nstderr:\n%s"
                              % (argv, sim_host, cp.returncode, cp.stdout,
                                 cp.stderr))
        return cp

    def ibstat(self, sim_host):
        return parse_ibstat(self.run_tool(["ibstat"], sim_host).stdout)

    def portinfo(self, sim_host, port):
        """PortInfo of sim_host's own port `port` (direct route 0)."""
        return parse_smpquery(self.run_tool(
            ["smpquery", "-D", "portinfo", "0", str(port)], sim_host).stdout)

    def pkeys(self, sim_host, port):
        return parse_pkeys(self.run_tool(
            ["smpquery", "-D", "pkeys", "0", str(port)], sim_host).stdout)

    # -- opensm -----------------------------------------------------------
    def start_opensm(self, sim_host, extra_args=()):
        if sim_host in self.opensm and self.opensm[sim_host][0].poll() is None:
            return self.opensm[sim_host][0]
        d = self.workdir / ("opensm-%s-%d" % (sim_host, next(_counter)))
        d.mkdir()
        env = self.client_env(sim_host)
        env["OSM_CACHE_DIR"] = str(d)
        out = open(d / "opensm.out", "wb")
        try:
            proc = subprocess.Popen(
                ["opensm", "-f", str(d / "opensm.log"), *extra_args],
                cwd=d, env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            out.close()
        self.opensm[sim_host] = (proc, d)
        return proc

    def stop_opensm(self, sim_host):
        proc, _ = self.opensm.pop(sim_host, (None, None))
        return _stop_process(proc)

    def opensm_log(self, sim_host):
        _, d = self.opensm.get(sim_host, (None, None))
        return _read(d / "opensm.log") if d else ""

    def wait_active(self, sim_host, timeout=20, port=None):
        """Poll ibstat until sim_host's port (default: its only/first port)
        is Active; return the parsed ibstat."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            last = self.ibstat(sim_host)
            ports = last["ports"]
            p = ports.get(port) if port is not None else next(iter(ports.values()), None)
            if p and p.get("State") == "Active":
                return last
            for host, (proc, _) in self.opensm.items():
                if proc.poll() is not None:
                    raise FabricError("opensm on %s exited (%s):\n%s" % (
                        host, proc.returncode, self.opensm_log(host)[-3000:]))
            if time.monotonic() > deadline:
                raise FabricError("%s not Active after %ss: %r" %
                                  (sim_host, timeout, last))
            time.sleep(0.1)


# ----------------------------------------------------------------------------
# mountinfo

def _unescape_mountinfo(s):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)


def mount_entry(mountpoint):
    """The /proc/self/mountinfo fields of the mount at mountpoint, or None."""
    mp = os.path.abspath(mountpoint)
    found = None
    for line in _read("/proc/self/mountinfo").splitlines():
        f = line.split()
        if len(f) > 4 and _unescape_mountinfo(f[4]) == mp:
            found = f   # the last one is the top of the stack
    return found


def is_mounted(mountpoint):
    return mount_entry(mountpoint) is not None


# ----------------------------------------------------------------------------
# the daemon

LIVE_MOUNTS = weakref.WeakSet()    # Mounts started and not yet unmounted


def thread_stacks(pid):
    """Every thread's backtrace of a live process (gdb), for a failure
    message: where a daemon that should have exited is waiting."""
    try:
        r = subprocess.run(["gdb", "-batch", "-p", str(pid),
                            "-ex", "thread apply all bt"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout[-8000:]
    except (OSError, subprocess.TimeoutExpired) as e:
        return "(no stacks: %s)" % e


def kill_all_mounts():
    """Watchdog: SIGKILL every live daemon (unblocks hung FUSE calls)."""
    for m in list(LIVE_MOUNTS):
        m.kill()


class UnmountResult:
    def __init__(self):
        self.steps = []             # what was needed, in order
        self.exited_by_itself = False   # exited without us signalling it
        self.returncode = None      # Popen style: <0 = killed by signal -N
        self.signal_sent = None     # SIGTERM/SIGKILL if we had to
        self.still_mounted = False

    @property
    def died_of_signal(self):
        """Died of a signal we did not send (a crash), or needed SIGKILL."""
        if self.returncode is None or self.returncode >= 0:
            return False
        return -self.returncode != self.signal_sent or \
            self.signal_sent == signal.SIGKILL

    @property
    def clean(self):
        return (self.exited_by_itself and self.returncode == 0
                and not self.still_mounted)

    def __repr__(self):
        return ("UnmountResult(steps=%r, exited_by_itself=%r, returncode=%r, "
                "signal_sent=%r, still_mounted=%r)" % (
                    self.steps, self.exited_by_itself, self.returncode,
                    self.signal_sent, self.still_mounted))


class Mount:
    """`umadfs -f [opts] MOUNTPOINT` for one simulated node (or real CAs
    when fabric is None)."""

    def __init__(self, fabric, sim_host, mountpoint, workdir=None,
                 options=(), extra_args=(), env=None):
        self.fabric = fabric
        self.sim_host = sim_host
        self.mountpoint = Path(mountpoint).absolute()
        self.workdir = Path(workdir) if workdir else self.mountpoint.parent
        self.options = list(options)
        self.extra_args = list(extra_args)
        self.env_extra = dict(env or {})
        self.log_path = self.workdir / ("umadfs-%s-%d.log" % (
            sim_host or "real", next(_counter)))
        self.proc = None
        self.result = None
        self.allow_log_errors = False   # tests that expect "error:" lines
        self.killed_by_watchdog = False

    def argv(self):
        a = umadfs_wrapper() + [umadfs_bin(), "-f"]
        if self.options:
            a += ["-o", ",".join(self.options)]
        return a + self.extra_args + [str(self.mountpoint)]

    def start(self, timeout=None):
        if timeout is None:
            timeout = float(os.environ.get("UMADFS_MOUNT_TIMEOUT", "10"))
            if umadfs_wrapper():
                timeout *= 6
        binary = umadfs_bin()
        if not os.access(binary, os.X_OK):
            raise MountError("daemon binary %s not found (set UMADFS_BIN or "
                             "build: meson setup build && ninja -C build)"
                             % binary)
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.fabric is not None:
            env = self.fabric.client_env(self.sim_host)
        else:
            env = dict(os.environ)
        env.update(self.env_extra)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.argv(), cwd=self.workdir, env=env,
                stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        LIVE_MOUNTS.add(self)
        deadline = time.monotonic() + timeout
        while True:
            entry = mount_entry(self.mountpoint)
            if entry is not None and "-" in entry and \
                    entry[entry.index("-") + 1].startswith("fuse"):
                self._probe(max(1.0, deadline - time.monotonic()))
                return self
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                self.unmount()
                raise MountError("umadfs exited (status %s) before mounting "
                                 "%s:\n%s" % (rc, self.mountpoint, self.log_text()))
            if time.monotonic() > deadline:
                self.unmount()
                raise MountError("no mount at %s after %ss; log:\n%s" % (
                    self.mountpoint, timeout, self.log_text()))
            time.sleep(0.02)

    def _probe(self, timeout):
        """The mount is in mountinfo; check that the daemon answers (a
        stat of the root needs FUSE INIT done).  A daemon that never answers
        is killed, which fails the stat with ENOTCONN instead of hanging."""
        done = threading.Event()
        err = []

        def probe():
            try:
                os.stat(self.mountpoint)
            except OSError as e:
                err.append(e)
            done.set()

        threading.Thread(target=probe, daemon=True).start()
        if not done.wait(timeout):
            self.kill()
            done.wait(KILL_TIMEOUT)
            self.unmount()
            raise MountError("%s is mounted but the daemon did not answer "
                             "stat() within %.0fs (killed it); log:\n%s" % (
                                 self.mountpoint, timeout, self.log_text()))
        if err:
            self.unmount()
            raise MountError("stat(%s) failed: %s; log:\n%s" % (
                self.mountpoint, err[0], self.log_text()))

    def rss_kib(self):
        """The daemon's VmRSS (KiB) from /proc/PID/status."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise MountError("no VmRSS for pid %d" % self.proc.pid)

    def kill(self):
        """SIGKILL the daemon now (watchdog use): its /dev/fuse closes, so
        every request blocked on this mount fails with ENOTCONN."""
        if self.proc is not None and self.proc.poll() is None:
            self.killed_by_watchdog = True
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.unmount()

    def path(self, *parts):
        return self.mountpoint.joinpath(*[str(p) for p in parts])

    def log_text(self):
        return _read(self.log_path)

    def log_excerpt(self, tail=6000):
        """The log's end and, before it, the first report of what went
        wrong that the end leaves out (a sanitizer's report, the stack
        valgrind printed when the daemon died of a signal, both long
        before the leak summary at the end)."""
        log = self.log_text()
        end = log[-tail:]
        m = re.search(r"(^.*(Process terminating with default action|"
                      r"ERROR: AddressSanitizer|runtime error:|"
                      r"Invalid (read|write) of size).*$)", log, re.M)
        if not m or m.start() >= len(log) - tail:
            return end
        return "%s\n[...]\n%s" % (log[m.start():m.start() + 4000], end)

    def _fusermount(self, flags, timeout=KILL_TIMEOUT):
        try:
            cp = subprocess.run(["fusermount3", flags, str(self.mountpoint)],
                                capture_output=True, text=True,
                                timeout=timeout, stdin=subprocess.DEVNULL)
            return cp.returncode == 0, (cp.stderr or "").strip()
        except subprocess.TimeoutExpired:
            return False, "timeout"
        except FileNotFoundError:
            return False, "fusermount3 not found"

    def _wait_exit(self, timeout):
        if self.proc is None:
            return True
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def sigterm(self, timeout=2.0):
        """SIGTERM to the daemon, then wait for it to exit: its exit status,
        or None if it still runs after timeout s (unmount() then ends it)."""
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def unmount(self, timeout=KILL_TIMEOUT):
        """Get rid of the mount and the daemon, whatever state they are in:
        fusermount3 -u, then -uz, then SIGTERM, then SIGKILL (each followed
        by a wait of `timeout` s).  Returns (and stores in self.result) an
        UnmountResult.  Idempotent."""
        if self.result is not None:
            return self.result
        r = UnmountResult()
        if umadfs_wrapper():
            timeout *= 6
        if self.proc is not None and self.proc.poll() is not None:
            r.steps.append("already-exited")
            r.exited_by_itself = True
        if is_mounted(self.mountpoint):
            ok, err = self._fusermount("-u")
            r.steps.append("fusermount3 -u" + ("" if ok else " failed: " + err))
            if ok and self.proc is not None and self._wait_exit(timeout):
                r.exited_by_itself = True
            if is_mounted(self.mountpoint):
                ok, err = self._fusermount("-uz")
                r.steps.append("fusermount3 -uz" + ("" if ok else " failed: " + err))
                if self.proc is not None and self._wait_exit(timeout):
                    r.exited_by_itself = True
        elif self.proc is not None and self.proc.poll() is None:
            r.steps.append("not-mounted")
        if self.proc is not None and self.proc.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                r.steps.append(sig.name)
                r.signal_sent = sig
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    pass
                if self._wait_exit(timeout):
                    break
        if self.proc is not None:
            r.returncode = self.proc.poll()
        if is_mounted(self.mountpoint):
            self._fusermount("-uz")
        r.still_mounted = is_mounted(self.mountpoint)
        self.result = r
        LIVE_MOUNTS.discard(self)
        return r

    def problems(self):
        """Reasons this daemon run is not acceptable (after unmount())."""
        out = []
        r = self.result
        if self.killed_by_watchdog:
            out.append("daemon killed by the harness: it did not answer in time")
        if r is not None and not self.killed_by_watchdog:
            if r.died_of_signal:
                out.append("daemon died of signal %d (%r)" % (-r.returncode, r))
            elif not r.clean:
                out.append("daemon did not exit cleanly on unmount: %r" % r)
        log = self.log_text()
        pats = ["AddressSanitizer", "LeakSanitizer", "runtime error:",
                "ERROR SUMMARY: [1-9]"]
        if not self.allow_log_errors:
            pats.insert(0, "error:")
        for pat in pats:
            if re.search(pat, log):
                out.append("daemon log matches %r" % pat)
        return out
