"""scripts/lib.sh and scripts/run.sh on a management host.

- What run.sh installs: with CAs only what building and running the daemon
  needs (no subnet manager, no diagnostics unless UMADFS_WITH_DIAGS=1, no
  test tools); under the simulator also ibsim, umad2sim and opensm.
- lib.sh's install step never lets a held service (a subnet manager's,
  Prometheus's, node_exporter's) be enabled or started.  The step runs
  for real, with apt-get, dpkg-query and the service tools
  (deb-systemd-helper, systemctl, update-rc.d, invoke-rc.d,
  deb-systemd-invoke) replaced on PATH by fakes that keep their state in a
  directory: the fake apt-get "installs" opensm, prometheus and
  prometheus-node-exporter by running the service part of each one's
  postinst (debhelper's, from the installed postinst, else the Debian 12
  one below), which enables the service and starts it unless
  policy-rc.d says no.  The fakes record what would be enabled and
  started; no real service is touched, with or without systemd as PID 1.
- run.sh under the simulator: mounts with allow_other, and its opensm is a
  umad2sim client of its own fabric; `run.sh env` makes the diags clients
  of the mounted node (smpquery says what the mount's MAD files say);
  `run.sh stop` ends everything.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

import simfabric as sim
import madtext as mt
from checks import PACKAGE_OF
from madfiles import Recv, write_text

REPO = sim.REPO
LIB = REPO / "scripts" / "lib.sh"
RUN = REPO / "scripts" / "run.sh"

# The services lib.sh holds (UMADFS_HELD_SERVICES), each its package's name.
HELD = ("opensm", "prometheus", "prometheus-node-exporter")

# What dh_installinit and dh_installsystemd put in opensm's postinst
# (Debian 12, opensm 3.3.23-2), and in the others' with their names: used
# when the package is not installed here.
OPENSM_POSTINST = r"""#!/bin/sh
set -e
if [ "$1" = "configure" ]; then
	if [ -z "${DPKG_ROOT:-}" ] && [ -x "/etc/init.d/opensm" ]; then
		update-rc.d opensm defaults >/dev/null
		invoke-rc.d --skip-systemd-native opensm start || exit 1
	fi
fi
if [ "$1" = "configure" ]; then
	deb-systemd-helper unmask 'opensm.service' >/dev/null || true
	if deb-systemd-helper --quiet was-enabled 'opensm.service'; then
		deb-systemd-helper enable 'opensm.service' >/dev/null || true
	else
		deb-systemd-helper update-state 'opensm.service' >/dev/null || true
	fi
fi
if [ "$1" = "configure" ]; then
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		deb-systemd-invoke start 'opensm.service' >/dev/null || true
	fi
fi
"""

# The fakes.  $FAKE is their state: installed/PKG, enabled/UNIT,
# rc/NAME (S or K), started (one line per start that policy-rc.d let
# through), log (every call).
FAKES = {
    "dpkg-query": r"""
pkg=${!#}
echo "dpkg-query $*" >>"$FAKE/log"
if [[ " $FAKE_MISSING " == *" $pkg "* && ! -e $FAKE/installed/$pkg ]]; then
	exit 1
fi
printf 'install ok installed'
""",
    "apt-get": r"""
echo "apt-get $*" >>"$FAKE/log"
[[ $* == *install* ]] || exit 0
for a in "$@"; do
	case $a in -*|install) continue ;; esac
	touch "$FAKE/installed/$a"
	if [[ -f $FAKE/postinst/$a ]]; then
		sh "$FAKE/postinst/$a" configure || exit 100
	fi
done
""",
    "dpkg-maintscript-helper": "exit 0\n",
    "deb-systemd-helper": r"""
echo "deb-systemd-helper $*" >>"$FAKE/log"
[[ $1 == --quiet ]] && shift
unit=$2
case $1 in
was-enabled) [[ ! -e $FAKE/dsh-disabled/$unit ]] ;;
enable) touch "$FAKE/enabled/$unit"; rm -f "$FAKE/dsh-disabled/$unit" ;;
disable) rm -f "$FAKE/enabled/$unit"; touch "$FAKE/dsh-disabled/$unit" ;;
*) exit 0 ;;
esac
""",
    "systemctl": r"""
echo "systemctl $*" >>"$FAKE/log"
args=()
for a in "$@"; do [[ $a == -* ]] || args+=("$a"); done
unit=${args[1]:-}
[[ -z $unit || $unit == *.* ]] || unit=$unit.service
case ${args[0]} in
is-enabled)
	if [[ -e $FAKE/enabled/$unit ]]; then echo enabled; else echo disabled; exit 1; fi ;;
enable) touch "$FAKE/enabled/$unit" ;;
disable) rm -f "$FAKE/enabled/$unit" ;;
start|restart) echo "systemctl $unit" >>"$FAKE/started" ;;
esac
exit 0
""",
    "update-rc.d": r"""
echo "update-rc.d $*" >>"$FAKE/log"
case $2 in
defaults|enable) echo S >"$FAKE/rc/$1" ;;
disable) echo K >"$FAKE/rc/$1" ;;
esac
""",
    "invoke-rc.d": r"""
echo "invoke-rc.d $*" >>"$FAKE/log"
[[ $1 == --* ]] && shift
if [[ -x $UMADFS_POLICY_RC_D ]]; then
	rc=0
	"$UMADFS_POLICY_RC_D" "$1" "$2" || rc=$?
	[[ $rc == 101 ]] && exit 0
fi
case $2 in start|restart) echo "init.d $1" >>"$FAKE/started" ;; esac
""",
    "deb-systemd-invoke": r"""
echo "deb-systemd-invoke $*" >>"$FAKE/log"
if [[ -x $UMADFS_POLICY_RC_D ]]; then
	rc=0
	"$UMADFS_POLICY_RC_D" "$2" "$1" || rc=$?
	[[ $rc == 101 ]] && exit 0
fi
case $1 in start|restart) echo "systemctl $2" >>"$FAKE/started" ;; esac
""",
    "sudo": 'exec "$@"\n',
}


def service_postinst(pkg):
    """The service part of pkg's postinst: debhelper's sections of the
    installed one (the rest may add users, chown...), else ours."""
    real = Path("/var/lib/dpkg/info/%s.postinst" % pkg)
    parts = re.findall(r"^# Automatically added by dh_install(?:init|systemd)/.*?\n"
                       r"(.*?)^# End automatically added section",
                       real.read_text() if real.is_file() else "", re.M | re.S)
    if not parts:
        return OPENSM_POSTINST.replace("opensm", pkg)
    return "#!/bin/sh\nset -e\n" + "".join(parts)


@pytest.fixture
def fakehost(tmp_path):
    """A directory of fakes first on PATH, and their state directory."""
    state = tmp_path / "fake"
    for d in ("installed", "enabled", "dsh-disabled", "rc", "postinst"):
        (state / d).mkdir(parents=True)
    for pkg in HELD:
        (state / "postinst" / pkg).write_text(service_postinst(pkg))
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    for name, body in FAKES.items():
        (bindir / name).write_text("#!/bin/bash\n" + body)
        (bindir / name).chmod(0o755)
    env = dict(os.environ, FAKE=str(state), FAKE_MISSING=" ".join(HELD),
               PATH="%s:%s" % (bindir, os.environ["PATH"]),
               UMADFS_POLICY_RC_D=str(tmp_path / "policy-rc.d"))
    return state, env


def _bash(script, env, timeout=60):
    cp = subprocess.run(["bash", "-c", script], capture_output=True,
                        text=True, env=env, timeout=timeout,
                        stdin=subprocess.DEVNULL)
    return cp


def _services(state):
    """(enabled units, started services, rc links) as the fakes saw them."""
    started = state / "started"
    rc = {p.name: p.read_text().strip() for p in (state / "rc").iterdir()}
    return (sorted(p.name for p in (state / "enabled").iterdir()),
            started.read_text().split("\n")[:-1] if started.exists() else [],
            rc)


def _run_packages(env):
    cp = _bash("source %s; run_packages" % LIB, env)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout.split()


def test_run_packages(tmp_path):
    sysfs = tmp_path / "infiniband"
    (sysfs / "mlx5_0").mkdir(parents=True)
    env = dict(os.environ, UMADFS_IB_SYSFS=str(sysfs))
    env.pop("FORCE_SIM", None)
    env.pop("UMADFS_WITH_DIAGS", None)
    real = _run_packages(env)
    for p in ("libfuse3-dev", "fuse3", "libibumad-dev", "libibmad-dev",
              "libsystemd-dev", "meson", "ninja-build"):
        assert p in real
    for p in ("opensm", "infiniband-diags", "ibsim-utils", "libumad2sim0",
              "valgrind", "clang", "lintian", "python3-pytest", "debhelper"):
        assert p not in real, real
    diags = _run_packages(dict(env, UMADFS_WITH_DIAGS="1"))
    assert sorted(diags) == sorted(real + ["infiniband-diags"])
    for sim_env in (dict(env, UMADFS_IB_SYSFS=str(tmp_path / "none")),
                    dict(env, FORCE_SIM="1")):
        on_sim = _run_packages(sim_env)
        assert set(real) < set(on_sim) and "opensm" in on_sim and \
            "libumad2sim0" in on_sim and "valgrind" not in on_sim, on_sim


@pytest.mark.parametrize("pkg", HELD)
def test_fakes_see_the_service_enabled(fakehost, pkg):
    """The control: a held service's package installed without lib.sh gets
    its service enabled (and, where its init script exists, started): the
    fakes see it, so the next test can fail."""
    state, env = fakehost
    cp = _bash("apt-get install -y %s" % pkg, env)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    enabled, started, rc = _services(state)
    assert enabled == ["%s.service" % pkg]
    if os.access("/etc/init.d/%s" % pkg, os.X_OK):
        assert started == ["init.d %s" % pkg] and rc == {pkg: "S"}


def test_test_sh_installs_every_peer():
    """test.sh's package lists hold the package of every peer a test needs
    (checks.PACKAGE_OF), and the held services are these tests' HELD."""
    cp = _bash("source %s; echo \"${UMADFS_HELD_SERVICES[*]}\"; echo "
               "\"${UMADFS_BUILD_PACKAGES[*]} ${UMADFS_SIM_PACKAGES[*]} "
               "${UMADFS_TEST_PACKAGES[*]}\"" % LIB, dict(os.environ))
    held, pkgs = (l.split() for l in cp.stdout.splitlines())
    assert sorted(held) == sorted(HELD)
    assert set(PACKAGE_OF.values()) <= set(pkgs), set(PACKAGE_OF.values()) - set(pkgs)
    assert set(HELD) <= set(pkgs)


@pytest.mark.parametrize("step", ["run.sh", "test.sh"])
@pytest.mark.parametrize("policy", ["none", "existing"])
def test_install_never_enables_held_services(fakehost, tmp_path, step, policy):
    """lib.sh's install step (run.sh's package list under the simulator,
    or test.sh's full list) installs opensm (and for test.sh prometheus
    and prometheus-node-exporter) with nothing started or left enabled,
    and puts policy-rc.d back as it was."""
    state, env = fakehost
    env.update(FORCE_SIM="1")
    policy_rc = Path(env["UMADFS_POLICY_RC_D"])
    if policy == "existing":
        policy_rc.write_text("#!/bin/sh\n# the admin's\nexit 0\n")
        policy_rc.chmod(0o755)
    call = "ensure_packages $(run_packages)" if step == "run.sh" \
        else "ensure_packages"
    cp = _bash("set -euo pipefail; source %s; %s" % (LIB, call), env)
    out = cp.stdout + cp.stderr
    assert cp.returncode == 0, out
    want = ["opensm"] if step == "run.sh" else list(HELD)
    assert sorted(p.name for p in (state / "installed").iterdir()) == sorted(want), out
    enabled, started, rc = _services(state)
    assert enabled == [], out + (state / "log").read_text()
    assert started == [], out + (state / "log").read_text()
    assert set(rc.values()) <= {"K"}, rc
    if policy == "existing":
        assert "the admin's" in policy_rc.read_text()
        assert not Path(str(policy_rc) + ".umadfs-saved").exists()
    else:
        assert not policy_rc.exists()
    # Already installed: nothing is installed or changed.
    before = (state / "log").read_text()
    cp = _bash("set -euo pipefail; source %s; %s" % (LIB, call), env)
    assert cp.returncode == 0, cp.stderr
    assert "apt-get" not in (state / "log").read_text()[len(before):]


def test_install_fails_if_opensm_stays_enabled(fakehost):
    """If the service is still enabled after the install (a disable that
    does nothing), the install step fails instead of going on."""
    state, env = fakehost
    bindir = Path(env["PATH"].split(":")[0])
    for name in ("deb-systemd-helper", "systemctl"):
        body = (bindir / name).read_text()
        (bindir / name).write_text(body.replace(
            'rm -f "$FAKE/enabled/$unit"', ":"))
    cp = _bash("source %s; ensure_packages opensm" % LIB, env)
    assert cp.returncode != 0
    assert "opensm.service is enabled" in cp.stderr, cp.stderr


def test_run_sh_simulator(tmp_path):
    """run.sh under the simulator, against the build under test: the mount
    has allow_other; its opensm is a umad2sim client; stop ends it all."""
    if os.geteuid() != 0:
        pytest.skip("needs root (allow_other, /run)")
    build = Path(sim.umadfs_bin()).resolve().parent.parent
    if not (build / "build.ninja").is_file():
        pytest.skip("UMADFS_BIN is not in a meson build directory")
    state = tmp_path / "state"
    mnt = tmp_path / "mnt"
    env = dict(os.environ, FORCE_SIM="1", UMADFS_STATE_DIR=str(state),
               UMADFS_BUILD=str(build), UMADFS_BIN=sim.umadfs_bin(),
               IBSIM_SOCKNAME="umadfs-runsh-%d" % os.getpid())
    sm = None
    try:
        cp = subprocess.run(["bash", str(RUN), str(mnt)], env=env,
                            capture_output=True, text=True, timeout=180,
                            stdin=subprocess.DEVNULL)
        assert cp.returncode == 0, cp.stdout + cp.stderr
        e = sim.mount_entry(mnt)
        assert e is not None, cp.stdout + cp.stderr
        assert "allow_other" in e[e.index("-") + 3]
        assert (mnt / "ibsim0" / "ports" / "1" / "state").read_text() == \
            "4: ACTIVE\n"
        sm = int((state / "opensm.pid").read_text())
        assert Path("/proc/%d/comm" % sm).read_text().strip() == "opensm"
        environ = Path("/proc/%d/environ" % sm).read_bytes().split(b"\0")
        assert any(v.startswith(b"LD_PRELOAD=") and b"umad2sim" in v
                   for v in environ)
        assert b"IBSIM_SOCKNAME=" + env["IBSIM_SOCKNAME"].encode() in environ
        # The diags against the same fabric, as the guide runs them: the
        # same NodeInfo one hop out as the mount's MAD files get.
        port = mnt / "ibsim0" / "ports" / "1"
        with Recv(port / "recv") as r:
            write_text(port / "send", "class=smi-dr method=get attr=NodeInfo dr=0,1\n")
            ln = r.line()
        assert ln["status"] == "0x0000", ln
        diag_env = {k: v for k, v in env.items()
                    if k not in ("IBSIM_SOCKNAME", "LD_PRELOAD", "SIM_HOST")}
        cp = subprocess.run(["bash", "-c", 'eval "$(%s env)"; '
                             "smpquery -D nodeinfo 0,1" % RUN],
                            env=diag_env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert cp.returncode == 0, cp.stdout + cp.stderr
        peer = mt.parse_diag(cp.stdout)
        ours = mt.decode_nodeinfo(ln.mad[64:104])
        assert ours["NodeType"] == "Switch", ours
        assert ours == {k: peer.get(k) for k in ours}, (ours, peer)
        assert ln.field("NodeInfo.Guid") == int(peer["Guid"], 16)
        assert ln.field("NodeInfo.NumPorts") == int(peer["NumPorts"])
    finally:
        cp = subprocess.run(["bash", str(RUN), "stop", str(mnt)], env=env,
                            capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert not sim.is_mounted(mnt)
    assert sm is None or not Path("/proc/%d" % sm).exists()


@pytest.mark.parametrize("ci", ["true", None])
def test_missing_peer_fails_under_ci(tmp_path, ci):
    """A test that needs a peer (here promtool, by its marker) is skipped
    without it, naming the package; under CI=true it fails instead."""
    env = dict(os.environ, PATH=str(tmp_path))     # no promtool, nothing
    env.pop("CI", None)
    if ci:
        env["CI"] = ci
    cp = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider",
                         "-rsE", "-q", "%s::test_metrics_pass_promtool"
                         % (REPO / "tests" / "integration" / "test_fabric.py")],
                        cwd=REPO, env=env, capture_output=True, text=True,
                        timeout=60, stdin=subprocess.DEVNULL)
    out = cp.stdout + cp.stderr
    assert "promtool missing: install prometheus" in out, out
    if ci:
        assert cp.returncode != 0 and "1 error" in out and "skipped" not in out, out
    else:
        assert cp.returncode == 0 and "1 skipped" in out, out
