"""The real-kernel tier: umadfs on Debian's kernel with Soft-RoCE, in qemu.

One VM boot per module (fixture `vm`, by tests/vm/run.sh): /init loads the
RDMA stack, creates rxe0 on dummy0, mounts umadfs and runs every check
script (tests/vm/checks/*.sh, or $UMADFS_VM_CHECKS), each printing
`UMADFS-VM-RESULT <check>/<name> PASS|FAIL|SKIP <detail>` lines on the
serial console.  Here each setup step and each check script is one test: it
fails on a FAIL marker, a non-zero exit, or a missing marker (the console
log's tail is then in the message).

Run:   /usr/bin/python3 -m pytest tests/vm      (see tests/vm/README.md)
Skip:  UMADFS_SKIP_VM=1; skipped by itself only when qemu cannot run here.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = Path(os.environ.get("UMADFS_VM_OUT", "/tmp/umadfs-vm-pytest"))
# prepare.sh may apt-get install and download the kernel on a first run
RUN_TIMEOUT = float(os.environ.get("UMADFS_VM_RUN_TIMEOUT", "1200"))

SETUP_STEPS = ["modules", "rxe", "mount", "unmount", "daemon-log"]

pytestmark = pytest.mark.skipif(os.environ.get("UMADFS_SKIP_VM") == "1",
                                reason="UMADFS_SKIP_VM=1")

RESULT_RE = re.compile(r"UMADFS-VM-RESULT (\S+) (PASS|FAIL|SKIP) ?(.*)")
BEGIN_RE = re.compile(r"UMADFS-VM-BEGIN (\S+)")
END_RE = re.compile(r"UMADFS-VM-END (\S+) (\d+)")


def check_names():
    """The check scripts' names, as the guest's /init names them."""
    spec = os.environ.get("UMADFS_VM_CHECKS", str(HERE / "checks"))
    names = []
    for item in spec.split():
        p = Path(item)
        files = sorted(p.glob("*.sh")) if p.is_dir() else [p]
        for f in files:
            names.append(re.sub(r"^[0-9][0-9]-", "", f.stem))
    # /init runs them in the order of their file names in one directory
    return names


class Console:
    """What the guest said on its serial console."""

    def __init__(self, path):
        self.path = path
        self.text = path.read_text(errors="replace").replace("\r", "") \
            if path.exists() else ""
        self.results = []          # (name, status, detail), in order
        self.begun = set()
        self.ended = {}            # check -> exit status
        for line in self.text.splitlines():
            m = RESULT_RE.search(line)
            if m:
                self.results.append((m[1], m[2], m[3].strip()))
                continue
            m = BEGIN_RE.search(line)
            if m:
                self.begun.add(m[1])
                continue
            m = END_RE.search(line)
            if m:
                self.ended[m[1]] = int(m[2])
        self.done = "UMADFS-VM-DONE" in self.text

    def of(self, prefix):
        return [r for r in self.results if r[0].startswith(prefix + "/")]

    def tail(self, n=40):
        return "\n".join(self.text.splitlines()[-n:])


@pytest.fixture(scope="module")
def vm():
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("UMADFS_BIN", str(REPO / "build" / "src" / "umadfs"))
    if not Path(env["UMADFS_BIN"]).is_file():
        pytest.fail("no umadfs at %s: build it (meson/ninja) or set UMADFS_BIN"
                    % env["UMADFS_BIN"], pytrace=False)
    try:
        p = subprocess.run([str(HERE / "run.sh"), str(OUT)], env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=RUN_TIMEOUT)
    except FileNotFoundError as e:
        pytest.fail("cannot run tests/vm/run.sh: %s" % e, pytrace=False)
    except subprocess.TimeoutExpired as e:
        pytest.fail("tests/vm/run.sh ran over %.0fs:\n%s"
                    % (RUN_TIMEOUT, e.output or ""), pytrace=False)
    (OUT / "run.out").write_text(p.stdout)
    if p.returncode == 3:
        pytest.skip("qemu cannot run here: %s"
                    % " | ".join(p.stdout.strip().splitlines()[-3:]))
    if p.returncode == 2:
        pytest.fail("VM harness setup failed (rc 2):\n%s" % p.stdout[-4000:],
                    pytrace=False)
    c = Console(OUT / "console.log")
    c.run_output = p.stdout
    times = OUT / "times.txt"
    c.times = times.read_text().split() if times.exists() else []
    return c


def _where(vm):
    said = [l for l in vm.run_output.splitlines() if l.startswith("run.sh:")]
    return "console log: %s\n%s--- console tail ---\n%s" % (
        vm.path, "".join(l + "\n" for l in said), vm.tail())


@pytest.mark.parametrize("step", SETUP_STEPS)
def test_setup(vm, step):
    """/init's own steps: modules, rxe0, mount, clean unmount, clean log."""
    got = [r for r in vm.results if r[0] == "setup/" + step]
    if not got:
        if step in ("unmount", "daemon-log") and not any(
                r[0] == "setup/mount" and r[1] == "PASS" for r in vm.results):
            pytest.fail("not reached: the mount failed", pytrace=False)
        pytest.fail("no result marker for setup/%s\n%s" % (step, _where(vm)),
                    pytrace=False)
    bad = [r for r in got if r[1] == "FAIL"]
    assert not bad, "setup/%s: %s\n%s" % (step, bad[0][2], _where(vm))


@pytest.mark.parametrize("check", check_names())
def test_check(vm, check):
    """One check script: it ran to its end, exited 0, reported, no FAIL."""
    mounted = any(r[0] == "setup/mount" and r[1] == "PASS" for r in vm.results)
    if not mounted:
        pytest.fail("not run: umadfs did not mount (see test_setup[mount])",
                    pytrace=False)
    if check not in vm.begun:
        pytest.fail("check %s never started\n%s" % (check, _where(vm)),
                    pytrace=False)
    if check not in vm.ended:
        pytest.fail("check %s never finished (hung or the VM died)\n%s"
                    % (check, _where(vm)), pytrace=False)
    res = vm.of(check)
    if vm.ended[check] in (124, 143):
        pytest.fail("check %s was killed by its time limit (hung?)\n%s"
                    % (check, _where(vm)), pytrace=False)
    fails = [r for r in res if r[1] == "FAIL"]
    lines = ["%s %s %s" % r for r in fails]
    assert not fails, "%d of %d results failed:\n%s\n(console log: %s)" % (
        len(fails), len(res), "\n".join(lines), vm.path)
    assert res, "check %s reported no result\n%s" % (check, _where(vm))
    assert vm.ended[check] == 0, \
        "check %s exited %d with no FAIL marker\n%s" % (
            check, vm.ended[check], _where(vm))
    skips = [r for r in res if r[1] == "SKIP"]
    if skips:
        print("%s: %d skipped: %s" % (check, len(skips),
                                      "; ".join("%s (%s)" % (r[0], r[2]) for r in skips)))


def test_guest_finished(vm):
    """/init reached its end and powered off within the time limit."""
    assert vm.done, "the guest never reached UMADFS-VM-DONE\n%s" % _where(vm)
    print("times (s): %s" % " ".join(vm.times))
