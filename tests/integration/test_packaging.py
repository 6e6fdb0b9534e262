"""Packaging: the man page, `meson install`, the systemd unit, the mount(8)
and fstab route, and the Debian package.

- The man page (docs/umadfs.8) renders without a warning from groff or
  man, and names every option `umadfs --help` prints.
- `meson install --destdir` installs the daemon, the man page and the unit
  (and the meson option systemdunitdir moves or drops the unit).
- The unit's command, as systemd expands it, mounts; SIGTERM unmounts.
- mount(8) -> mount.fuse3 -> `umadfs umadfs MNT -o ...`: mount(8) clears
  PATH and LD_* from the environment and mount.fuse3 finds `umadfs` on the
  shell's default PATH, so these tests run in a private mount namespace
  (unshare -m) with a directory holding `umadfs` bind-mounted over
  /usr/local/sbin.  On the simulated fabric that `umadfs` is a wrapper
  that puts umad2sim's environment back.
- packaging/build-deb.sh builds a .deb that lintian passes, with the files
  in it (slow: skip with UMADFS_SKIP_DEB=1).
"""

import errno
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import simfabric as sim
from checks import need

REPO = sim.REPO
MAN = REPO / "docs" / "umadfs.8"
UNIT_IN = REPO / "packaging" / "umadfs.service.in"


def _need_root_fuse():
    if os.geteuid() != 0:
        pytest.skip("needs root (mount namespaces, mount(8))")
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        pytest.skip("/dev/fuse missing or not accessible")


def _help_text():
    cp = subprocess.run([sim.umadfs_bin(), "--help"], capture_output=True,
                        text=True, timeout=10, check=True)
    return cp.stdout + cp.stderr


def _help_options(text):
    """The options `umadfs --help` lists: dashed ones (-f, --help) and -o
    names (attrs, allow_other...)."""
    dashed, onames = set(), set()
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("-"):
            continue
        # "-o name[=...]  description" or "-d   -o debug  description"
        for m in re.finditer(r"-o\s+([a-z_]+)", s):
            onames.add(m.group(1))
        head = re.split(r"\s{2,}(?=[A-Za-z(])", s)[0]
        for tok in re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", head):
            dashed.add(tok)
    return dashed, onames


def _render_man(path, width=200):
    """The page as plain text, without hyphenation or filling breaks."""
    cp = subprocess.run(["groff", "-man", "-Tascii", "-rHY=0",
                         "-rLL=%dn" % width, str(path)],
                        capture_output=True, timeout=30, check=True)
    text = cp.stdout.decode("ascii", "replace")
    return re.sub(r".\x08", "", text)          # overstrike (bold, underline)


# ---------------------------------------------------------------------------
# the man page

def test_man_page_renders_without_warnings():
    need("groff")
    cp = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(MAN)],
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 0 and cp.stderr == "", cp.stderr
    if shutil.which("man"):
        for width in ("80", "60", "200"):
            cp = subprocess.run(["man", "--warnings", "-l", str(MAN)],
                                capture_output=True, text=True, timeout=30,
                                env=dict(os.environ, MANWIDTH=width,
                                         MANPAGER="cat", PAGER="cat"))
            assert cp.returncode == 0, cp.stderr
            assert cp.stderr == "", "MANWIDTH=%s: %s" % (width, cp.stderr)
            assert "umadfs" in cp.stdout


def test_man_page_lists_every_help_option():
    need("groff")
    dashed, onames = _help_options(_help_text())
    # What the parser must find, so that it cannot pass by finding nothing.
    assert {"-h", "--help", "-V", "--version", "-f", "-d", "-s",
            "-o"} <= dashed
    assert {"attrs", "queue_len", "mad_group", "mad_group_smi", "allow_other",
            "allow_root",
            "auto_unmount", "debug", "clone_fd", "max_threads",
            "max_idle_threads"} <= onames
    page = _render_man(MAN)
    words = set(re.findall(r"[\w-]+", page))
    options = page.split("\nOPTIONS\n", 1)[1].split("\nTHE TREE\n", 1)[0]
    for opt in sorted(dashed):
        assert opt in words, "umadfs(8) does not mention %s" % opt
    for name in sorted(onames):
        assert re.search(r"-o %s\b" % name, options), \
            "OPTIONS of umadfs(8) has no -o %s" % name
    for value in ("auto", "sysfs", "smp"):
        assert value in words
    assert "default_permissions" in options


def test_man_page_sections_and_errors():
    need("groff")
    page = _render_man(MAN)
    for sec in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "THE TREE",
                "FILES", "TEXT FORMAT", "ERRORS", "EXAMPLES", "MOUNTING AT BOOT",
                "EXIT STATUS", "SECURITY", "SEE ALSO"):
        assert re.search(r"^%s$" % sec, page, re.M), sec
    assert "umadfs [options] [SOURCE] MOUNTPOINT" in page
    errors = page.split("\nERRORS\n", 1)[1].split("\nEXAMPLES\n", 1)[0]
    for e in ("EINVAL", "EMSGSIZE", "EACCES", "EAGAIN", "EBUSY", "ENODEV",
              "EINTR", "ENOSPC", "EIO", "ENETDOWN", "EOPNOTSUPP", "EEXIST",
              "EPERM", "ESPIPE"):
        assert re.search(r"^ +%s\b" % e, errors, re.M), e
    espipe = errors.split("ESPIPE", 1)[1]
    for f in ("send", "recv", "umad", "recv_bin"):
        assert re.search(r"\b%s\b" % f, espipe), f
    status = page.split("\nEXIT STATUS\n", 1)[1].split("\nSECURITY\n", 1)[0]
    for code in ("0", "1", "2"):
        assert re.search(r"^ +%s +\S" % code, status, re.M), code
    # The tree and FILES name rq/ and its files (docs/rq.md).
    tree = page.split("\nTHE TREE\n", 1)[1].split("\nFILES\n", 1)[0]
    assert "rq/NAME/" in tree
    for n in ("qpn", "qkey", "depth", "msg_size", "recv_bin"):
        assert n in page.split("\nFILES\n", 1)[1], n
    # Every file of docs/files.md's tables is described.
    files_md = (REPO / "docs" / "files.md").read_text()
    names = set(re.findall(r"^\| `([a-z_0-9/I]+)`", files_md, re.M))
    assert len(names) > 25
    for n in sorted(names):
        assert n in page, "umadfs(8) does not describe %s" % n
    assert "umadfs /run/umadfs fuse.umadfs allow_other,%s 0 0" % \
        FSTAB_OPTIONS in re.sub(r"\s+", " ", page).replace("- ", "-")


# ---------------------------------------------------------------------------
# meson install

def _meson_build(tmp_path, *options):
    b = tmp_path / "b"
    cp = subprocess.run(["meson", "setup", *options, str(b), str(REPO)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    cp = subprocess.run(["ninja", "-C", str(b), "src/umadfs"],
                        capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return b


def _meson_install(b, dest):
    shutil.rmtree(dest, ignore_errors=True)
    cp = subprocess.run(["meson", "install", "-C", str(b), "--no-rebuild",
                         "--destdir", str(dest)],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return sorted(str(p.relative_to(dest)) for p in dest.rglob("*")
                  if not p.is_dir())


def _reconfigure(b, option):
    cp = subprocess.run(["meson", "configure", str(b), option],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    # Regenerate (install --no-rebuild does not).
    cp = subprocess.run(["ninja", "-C", str(b), "src/umadfs"],
                        capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stdout + cp.stderr


def _systemd_unitdir():
    cp = subprocess.run(["pkg-config", "--variable=systemdsystemunitdir",
                         "systemd"], capture_output=True, text=True)
    return cp.stdout.strip() if cp.returncode == 0 else ""


# The alerting rules and their promtool tests (packaging/prometheus/).
RULES = ("umadfs-alerts.test.yml", "umadfs-alerts.yml")


def test_meson_install_destdir(tmp_path):
    need("meson", "ninja")
    t0 = time.monotonic()
    b = _meson_build(tmp_path, "--prefix=/usr")
    dest = tmp_path / "dest"
    files = _meson_install(b, dest)
    unitdir = _systemd_unitdir()
    want = ["usr/sbin/umadfs", "usr/share/man/man8/umadfs.8"] + [
        "usr/share/umadfs/prometheus/" + r for r in RULES]
    if unitdir:
        want.append(unitdir.lstrip("/") + "/umadfs.service")
    assert files == sorted(want)
    cp = subprocess.run([str(dest / "usr/sbin/umadfs"), "--version"],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 0 and "umadfs version" in cp.stdout
    assert (dest / "usr/share/man/man8/umadfs.8").read_bytes() == \
        MAN.read_bytes()
    if unitdir:
        unit = (dest / unitdir.lstrip("/") / "umadfs.service").read_text()
        assert re.search(r"^ExecStart=/usr/sbin/umadfs -f ", unit, re.M)

    # systemdunitdir=DIR puts the unit there; "no" installs none.
    _reconfigure(b, "-Dsystemdunitdir=/opt/units")
    files = _meson_install(b, dest)
    assert files == sorted(want[:4] + ["opt/units/umadfs.service"])
    _reconfigure(b, "-Dsystemdunitdir=no")
    files = _meson_install(b, dest)
    assert files == sorted(want[:4])
    print("meson setup + build + 3 installs: %.1fs" % (time.monotonic() - t0))


# ---------------------------------------------------------------------------
# the systemd unit

def _unit_text(sbindir):
    return UNIT_IN.read_text().replace("@SBINDIR@", sbindir)


def test_unit_verifies(tmp_path):
    need("systemd-analyze")
    bindir = Path(sim.umadfs_bin()).resolve().parent
    unit = tmp_path / "umadfs.service"
    unit.write_text(_unit_text(str(bindir)))
    cp = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0 and cp.stderr.strip() == "", cp.stderr


def test_unit_type_notify_after_rdma():
    text = UNIT_IN.read_text()
    assert re.search(r"^Type=notify$", text, re.M)
    after = " ".join(re.findall(r"^After=(.*)$", text, re.M)).split()
    wants = " ".join(re.findall(r"^Wants=(.*)$", text, re.M)).split()
    for u in ("rdma-hw.target", "rdma-load-modules@infiniband.service",
              "modprobe@ib_umad.service", "modprobe@fuse.service"):
        assert u in after, after
    assert "modprobe@ib_umad.service" in wants and "rdma-hw.target" not in wants


def _links_notify(binary):
    cp = subprocess.run(["nm", binary], capture_output=True, text=True)
    return cp.returncode == 0 and re.search(r" T notify_ready$", cp.stdout,
                                            re.M) is not None


def test_ready_notification(tmp_path):
    """Type=notify: READY=1 comes on $NOTIFY_SOCKET once the mount is
    there, not before (here without umad2sim: an empty mount, or the host's
    CAs)."""
    import socket
    _need_root_fuse()
    need("nm")
    if not _links_notify(sim.umadfs_bin()):
        pytest.skip("this umadfs does not call notify_ready() yet")
    sock_path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(10)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    env["NOTIFY_SOCKET"] = str(sock_path)
    log = tmp_path / "umadfs.log"
    with open(log, "wb") as lf:
        proc = subprocess.Popen([sim.umadfs_bin(), "-f", str(mnt)],
                                stdin=subprocess.DEVNULL, stdout=lf,
                                stderr=subprocess.STDOUT, env=env, cwd="/",
                                start_new_session=True)
    try:
        msg = sock.recv(4096).decode()
        assert sim.mount_entry(mnt) is not None
        assert "READY=1" in msg.split("\n"), msg
        os.listdir(mnt)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, log.read_text()
    finally:
        sock.close()
        sim._stop_process(proc)
        if sim.is_mounted(mnt):
            subprocess.run(["fusermount3", "-uz", str(mnt)])


def _unit_command(unit_text, env):
    """ExecStartPre= and ExecStart= command lines, expanded as systemd does
    ($VAR: split into words, ${VAR}: one word; a leading '-' means
    failure is ignored)."""
    cmds = []
    for line in unit_text.splitlines():
        m = re.match(r"^(ExecStartPre|ExecStart)=(-?)(.*)$", line)
        if not m:
            continue
        words = []
        for w in shlex.split(m.group(3)):
            m2 = re.fullmatch(r"\$\{(\w+)\}", w)
            if m2:
                words.append(env[m2.group(1)])
            elif w.startswith("$"):
                words += env[w[1:]].split()
            else:
                words.append(w)
        cmds.append((m.group(1), m.group(2) == "-", words))
    return cmds


def _unit_env(unit_text, overrides=None):
    env = {}
    for line in unit_text.splitlines():
        m = re.match(r'^Environment="?(\w+)=(.*?)"?$', line)
        if m:
            env[m.group(1)] = m.group(2)
    env.update(overrides or {})
    return env


def test_unit_command_mounts_and_sigterm_unmounts(tmp_path):
    """What systemd would run (no systemd in the test environment): the
    defaults of the unit, the mount point overridden as /etc/default/umadfs
    would.  Without umad2sim: the host's real CAs, if any (else an empty
    mount)."""
    _need_root_fuse()
    text = _unit_text(str(Path(sim.umadfs_bin()).resolve().parent))
    env = _unit_env(text)
    assert env == {"UMADFS_MOUNTPOINT": "/run/umadfs",
                   "UMADFS_OPTIONS": "-o allow_other"}
    assert "EnvironmentFile=-/etc/default/umadfs" in text
    mnt = tmp_path / "unit-mnt"
    env["UMADFS_MOUNTPOINT"] = str(mnt)
    cmds = _unit_command(text, env)
    assert [c[0] for c in cmds] == ["ExecStartPre", "ExecStartPre",
                                    "ExecStart"]
    argv = cmds[-1][2]
    assert argv[1] == "-f" and argv[-1] == str(mnt)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}

    # What Restart=on-failure finds after a crash: a dead mount (ENOTCONN),
    # which the ExecStartPre= lines detach.
    mnt.mkdir()
    crashed = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=clean, cwd="/",
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while sim.mount_entry(mnt) is None:
            assert crashed.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        os.listdir(mnt)
        crashed.kill()
        crashed.wait(timeout=10)
        with pytest.raises(OSError) as ei:
            os.stat(mnt)
        assert ei.value.errno == errno.ENOTCONN
    finally:
        sim._stop_process(crashed)

    for _, may_fail, pre in cmds[:-1]:
        cp = subprocess.run(pre, capture_output=True, timeout=10)
        assert may_fail or cp.returncode == 0, (pre, cp.stderr)
    assert not sim.is_mounted(mnt) and mnt.is_dir()
    # Once more on the clean state: nothing to detach, mkdir -p succeeds.
    for _, may_fail, pre in cmds[:-1]:
        cp = subprocess.run(pre, capture_output=True, timeout=10)
        assert may_fail or cp.returncode == 0, (pre, cp.stderr)

    log = tmp_path / "unit.log"
    with open(log, "wb") as lf:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=lf,
                                stderr=subprocess.STDOUT, env=clean,
                                cwd="/", start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while sim.mount_entry(mnt) is None:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        e = sim.mount_entry(mnt)
        sep = e.index("-")
        assert e[sep + 1] == "fuse.umadfs" and e[sep + 2] == "umadfs"
        assert "allow_other" in e[sep + 3] and \
            "default_permissions" in e[sep + 3]
        os.listdir(mnt)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0, log.read_text()
        assert not sim.is_mounted(mnt)
        assert "error:" not in log.read_text()
    finally:
        sim._stop_process(proc)
        if sim.is_mounted(mnt):
            subprocess.run(["fusermount3", "-uz", str(mnt)])


# ---------------------------------------------------------------------------
# mount(8), fstab

def test_source_mountpoint_argument_form(mount):
    """`umadfs -f umadfs MNT`, the form mount.fuse3 uses, on the simulator."""
    m = mount("Hca1", options=["allow_other"], extra_args=["umadfs"])
    e = sim.mount_entry(m.mountpoint)
    sep = e.index("-")
    assert e[sep + 1:sep + 3] == ["fuse.umadfs", "umadfs"]
    assert "allow_other" in e[sep + 3]
    assert m.path("ibsim0", "ports", "1", "state").read_text() == "4: ACTIVE\n"


def _run_in_namespace(tmp_path, script, timeout=60):
    """Run a bash script in a private mount namespace.  Returns
    (returncode, output)."""
    path = tmp_path / "ns.sh"
    path.write_text("set -eu\n" + script)
    cp = subprocess.run(["unshare", "-m", "--propagation", "private",
                         "bash", str(path)], capture_output=True, text=True,
                        timeout=timeout, stdin=subprocess.DEVNULL,
                        cwd=str(tmp_path))
    return cp.returncode, cp.stdout + cp.stderr


def _daemons_on(mnt):
    """Pids of our umadfs daemons serving mnt (ours: unique tmp paths)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(mnt).encode() in argv and any(
                a.endswith(b"umadfs") for a in argv[:1]):
            pids.append(int(d.name))
    return pids


MOUNT_SCRIPT = r"""
mnt={mnt}
mount --bind {bindir} /usr/local/sbin
if [ {foreground} = 1 ]; then
    # mount(8) waits for the daemon: it ends with the unmount, and mount's
    # status is then the daemon's.
    {mount_cmd} &
    mpid=$!
    for i in $(seq 100); do
        grep -qF " $mnt " /proc/self/mountinfo && break
        kill -0 $mpid 2>/dev/null || break
        sleep 0.1
    done
else
    {mount_cmd}
    echo "mount: status $?"
fi
grep -F " $mnt " /proc/self/mountinfo | sed 's/^/mountinfo: /'
ls "$mnt" | sed 's/^/ls: /'
{checks}
umount "$mnt"
if [ {foreground} = 1 ]; then
    st=0
    wait $mpid || st=$?
    echo "mount: status $st"
fi
for i in $(seq 50); do
    grep -qF " $mnt " /proc/self/mountinfo || break
    sleep 0.1
done
grep -qF " $mnt " /proc/self/mountinfo && echo "still mounted" || echo "unmounted"
"""


# The fstab options the docs give, besides allow_other: mount(8) and
# mount.fuse3 must accept them (test_mount8_*), and systemd's fstab
# generator must turn them into the ordering (test_fstab_ordering).
FSTAB_OPTIONS = ("nofail,x-mount.mkdir,x-systemd.requires=modprobe@ib_umad.service,"
                 "x-systemd.after=rdma-hw.target,"
                 "x-systemd.after=rdma-load-modules@infiniband.service")


def test_fstab_line_documented():
    line = "umadfs /run/umadfs fuse.umadfs allow_other,%s 0 0" % FSTAB_OPTIONS
    for doc in (REPO / "README.md", MAN):
        text = doc.read_text().replace("\\-", "-")
        assert line in re.sub(r"[ \t]+", " ", text), doc


def test_fstab_ordering(tmp_path):
    gen = Path("/lib/systemd/system-generators/systemd-fstab-generator")
    need(str(gen))
    fstab = tmp_path / "fstab"
    fstab.write_text("umadfs /run/umadfs fuse.umadfs allow_other,%s 0 0\n"
                     % FSTAB_OPTIONS)
    out = tmp_path / "out"
    out.mkdir()
    cp = subprocess.run([str(gen), str(out), str(out), str(out)],
                        env=dict(os.environ, SYSTEMD_FSTAB=str(fstab)),
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 0, cp.stderr
    unit = (out / "run-umadfs.mount").read_text()
    after = " ".join(re.findall(r"^After=(.*)$", unit, re.M)).split()
    for u in ("rdma-hw.target", "rdma-load-modules@infiniband.service",
              "modprobe@ib_umad.service"):
        assert u in after, unit
    assert re.search(r"^Requires=modprobe@ib_umad\.service$", unit, re.M), unit
    assert re.search(r"^Type=fuse\.umadfs$", unit, re.M), unit


def _mount_route(tmp_path, on_sim, how, checks=""):
    """Mount with mount(8) in a private namespace; `how` is "fstab" (an
    fstab line, mount --fstab FILE MNT) or "type" (mount -t fuse.umadfs)."""
    _need_root_fuse()
    need("unshare", "mount", "mount.fuse3")
    bindir = tmp_path / "sbin"
    bindir.mkdir()
    mnt = tmp_path / "ib"
    mnt.mkdir()
    real = Path(sim.umadfs_bin()).resolve()
    if on_sim is None:
        os.symlink(real, bindir / "umadfs")
        opts = "allow_other"
    else:
        f, host, workdir = on_sim
        # mount(8) drops LD_PRELOAD; umad2sim needs a writable cwd and a
        # daemon that does not detach (-f; see test_mount8_simulator).
        (bindir / "umadfs").write_text(
            "#!/bin/sh\ncd '%s' || exit 1\n"
            "exec env LD_PRELOAD='%s' IBSIM_SOCKNAME='%s' SIM_HOST='%s' "
            "'%s' -f \"$@\" 2>'%s/umadfs.log'\n" % (
                workdir, sim.UMAD2SIM_LIB, f.sockname, host, real, workdir))
        (bindir / "umadfs").chmod(0o755)
        opts = "allow_other,attrs=smp"
    if how == "fstab":
        fstab = tmp_path / "fstab"
        # The documented line (docs/umadfs.8, README.md), ordering and all.
        fstab.write_text("# test\numadfs %s fuse.umadfs %s,%s 0 0\n"
                         % (mnt, FSTAB_OPTIONS, opts))
        mount_cmd = "mount --fstab %s %s" % (fstab, mnt)
    else:
        mount_cmd = "mount -t fuse.umadfs umadfs %s -o %s" % (mnt, opts)
    script = MOUNT_SCRIPT.format(mnt=mnt, bindir=bindir, mount_cmd=mount_cmd,
                                 checks=checks,
                                 foreground=0 if on_sim is None else 1)
    try:
        rc, out = _run_in_namespace(tmp_path, script)
        # The daemon ends with the unmount.
        deadline = time.monotonic() + 10
        while _daemons_on(mnt) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _daemons_on(mnt)
    finally:
        for pid in _daemons_on(mnt):
            os.kill(pid, signal.SIGKILL)
    assert rc == 0, out
    assert "mount: status 0" in out, out
    info = [l for l in out.splitlines() if l.startswith("mountinfo: ")]
    assert len(info) == 1, out
    e = info[0].split()[1:]
    sep = e.index("-")
    assert e[sep + 1:sep + 3] == ["fuse.umadfs", "umadfs"], out
    assert "allow_other" in e[sep + 3] and "default_permissions" in e[sep + 3]
    assert "unmounted" in out, out
    assert not left, "daemon still running after umount: %s\n%s" % (left, out)
    return out


@pytest.mark.parametrize("how", ["fstab", "type"])
def test_mount8_host(tmp_path, how):
    """fstab / mount -t on this host's real CAs (none here: an empty
    mount): the daemon detaches, as it does at boot."""
    out = _mount_route(tmp_path, None, how)
    cas = [l[4:] for l in out.splitlines() if l.startswith("ls: ")
           and l[4:] != "fabric"]      # fabric/: the subnet, not a CA
    real = sorted(os.listdir("/sys/class/infiniband")) \
        if os.path.isdir("/sys/class/infiniband") else []
    assert set(cas) <= set(real)


NODEINFO_CHECKS = r"""
port="$mnt/ibsim0/ports/1"
echo "state: $(cat "$port/state")"
echo 'dr=0 method=get attr=NodeInfo tid=0x5a' > "$port/send"
echo "recv: $(timeout 10 head -n1 "$port/recv" 2>/dev/null)"
"""


@pytest.mark.parametrize("how", ["fstab", "type"])
def test_mount8_simulator(tmp_path, fabric, how):
    """fstab / mount -t on the simulated fabric.  The wrapper adds -f:
    a daemon that detaches under umad2sim (fuse_daemonize: fork, cwd "/")
    mounts and lists ibsim0, but every MAD then fails with EIO, so here
    mount(8) waits for the daemon, and its status is the daemon's after
    the umount."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    out = _mount_route(tmp_path, (fabric, "Hca1", workdir), how,
                       NODEINFO_CHECKS)
    assert "ls: ibsim0" in out.splitlines(), out
    assert "state: 4: ACTIVE" in out.splitlines(), out
    recv = [l for l in out.splitlines() if l.startswith("recv: ")]
    assert recv and recv[0].startswith("recv: tid=0x5a class=smi-dr ") and \
        " method=getresp " in recv[0] and " attr=NodeInfo " in recv[0], out
    log = (workdir / "umadfs.log").read_text()
    assert "mounted on %s" % (tmp_path / "ib") in log
    assert "error:" not in log, log


# ---------------------------------------------------------------------------
# the Debian package

@pytest.mark.skipif(os.environ.get("UMADFS_SKIP_DEB") == "1",
                    reason="UMADFS_SKIP_DEB=1")
# dpkg-buildpackage and lintian: 20-30 s on a quiet machine, 80-95 s with
# the ASan pass's neighbours loading both CPUs.
@pytest.mark.watchdog(600)
def test_debian_package(tmp_path, fabric, monkeypatch):
    need("dpkg-deb")
    if os.geteuid() != 0:       # as root, build-deb.sh installs what it needs
        need("dpkg-buildpackage")
    out = tmp_path / "deb"
    t0 = time.monotonic()
    cp = subprocess.run(["bash", str(REPO / "packaging" / "build-deb.sh")],
                        capture_output=True, text=True, timeout=1200,
                        env=dict(os.environ, UMADFS_DEB_OUT=str(out)))
    took = time.monotonic() - t0
    assert cp.returncode == 0, cp.stdout + cp.stderr
    deb = Path(cp.stdout.strip().splitlines()[-1])
    assert deb.is_file() and deb.parent == out
    print("build-deb.sh: %.1fs; lintian:\n%s" % (
        took, (out / "lintian.log").read_text()))
    assert not re.search(r"^E: ", (out / "lintian.log").read_text(), re.M)

    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True,
                             text=True, check=True).stdout
    paths = {l.split()[-1].lstrip(".") for l in listing.splitlines()}
    unitdir = _systemd_unitdir() or "/lib/systemd/system"
    for p in ("/usr/sbin/umadfs", "/usr/share/man/man8/umadfs.8.gz",
              unitdir + "/umadfs.service", "/etc/default/umadfs",
              "/usr/share/doc/umadfs/copyright",
              *("/usr/share/umadfs/prometheus/" + r for r in RULES)):
        assert p in paths, listing
    fields = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends",
                             "Package"], capture_output=True, text=True,
                            check=True).stdout
    assert "fuse3" in fields and "libfuse3-3" in fields and \
        "libibumad3" in fields and "libsystemd0" in fields
    assert "rdma-core" in subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Recommends"], capture_output=True,
        text=True, check=True).stdout

    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    cp = subprocess.run([str(root / "usr/sbin/umadfs"), "--version"],
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 0 and "umadfs version" in cp.stdout, cp.stderr
    unit = (root / unitdir.lstrip("/") / "umadfs.service").read_text()
    assert re.search(r"^ExecStart=/usr/sbin/umadfs -f ", unit, re.M)
    if shutil.which("man"):
        cp = subprocess.run(["man", "--warnings", "-l",
                             str(root / "usr/share/man/man8/umadfs.8.gz")],
                            capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, MANPAGER="cat", PAGER="cat"))
        assert cp.returncode == 0 and cp.stderr == "", cp.stderr

    # The packaged binary mounts the simulated fabric and serves it.
    monkeypatch.setenv("UMADFS_BIN", str(root / "usr/sbin/umadfs"))
    m = sim.Mount(fabric, "Hca1", tmp_path / "mnt", workdir=tmp_path)
    m.start()
    try:
        port = tmp_path / "mnt" / "ibsim0" / "ports" / "1"
        assert (port / "state").read_text() == "4: ACTIVE\n"
        with open(port / "send", "w") as f:
            f.write("class=smi-dr method=get attr=NodeInfo dr=0\n")
        fd = os.open(port / "recv", os.O_RDONLY)
        try:
            line = os.read(fd, 65536).decode()
        finally:
            os.close(fd)
        assert " method=getresp " in line and " status=0x0000 " in line, line
    finally:
        res = m.unmount()
    assert res.returncode == 0, res
