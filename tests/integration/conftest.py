"""pytest fixtures for the umadfs integration tests (see README.md).

fabric        session-scoped: ibsim on two-switch.net, opensm running on
              Hca3 for the whole session (so ports are ACTIVE with LIDs and
              an SA answers).  Tests must not change this fabric's state.
make_fabric   function-scoped factory: make_fabric("dual-port-hca.net") ->
              started Fabric, stopped at teardown.  No SM: the test controls
              opensm itself.
fresh_fabric  function-scoped: make_fabric("two-switch.net").
mount         function-scoped factory on the session fabric:
              mount(sim_host="Hca1", fabric=None, options=(), ...) -> Mount
              mounted at tmp_path/mnt (mnt2, mnt3... for further mounts).
              Teardown always unmounts, and fails the test if the daemon did
              not exit cleanly (status 0, by itself, after fusermount3 -u),
              died of a signal, or its log has 'error:' (unless the test set
              m.allow_log_errors = True), 'AddressSanitizer', 'runtime error:'
              or a valgrind error summary.

Markers (pytest -m): `load` (many MADs or reads: 10-40 s each under
valgrind), `fuzzed` (bad input the fuzzer covers too), `node_exporter`
and `promtool` (the test runs that peer: it needs its package, see
checks.need).  scripts/test.sh's valgrind pass leaves out load, fuzzed
and node_exporter.
"""

import faulthandler
import os
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checks  # noqa: E402
import simfabric as sim  # noqa: E402

TEST_TIMEOUT = float(os.environ.get("UMADFS_TEST_TIMEOUT", "60"))
SM_HOST = "Hca3"    # opensm's node in the session fabric; mounts use others

MARKERS = {
    "load": "many MADs or reads (10-40 s each under valgrind)",
    "fuzzed": "bad input the fuzzer covers too",
    "node_exporter": "runs prometheus-node-exporter (needs it)",
    "promtool": "runs promtool (needs it)",
    "watchdog": "watchdog(SECONDS): the test's own budget, for one that "
                "builds or installs (its time is the machine's load, not a hang)",
}
PEER_MARKERS = {"node_exporter": "prometheus-node-exporter",
                "promtool": "promtool"}


def pytest_configure(config):
    for name, what in MARKERS.items():
        config.addinivalue_line("markers", "%s: %s" % (name, what))


def pytest_runtest_setup(item):
    for name, peer in PEER_MARKERS.items():
        if item.get_closest_marker(name):
            checks.need(peer)


def _fuse_usable():
    return os.path.exists("/dev/fuse") and os.access("/dev/fuse", os.R_OK | os.W_OK)


@pytest.fixture(autouse=True)
def watchdog(request):
    """A test that runs longer than UMADFS_TEST_TIMEOUT s (default 60), or
    its @pytest.mark.watchdog(SECONDS), gets its daemons SIGKILLed: a read
    blocked on a hung FUSE mount then fails with ENOTCONN instead of
    hanging the run.  The stacks are dumped."""
    own = request.node.get_closest_marker("watchdog")
    budget = max(TEST_TIMEOUT, own.args[0]) if own else TEST_TIMEOUT
    fired = []

    def fire():
        fired.append(True)
        faulthandler.dump_traceback(all_threads=True)
        sim.kill_all_mounts()

    t = threading.Timer(budget, fire)
    t.daemon = True
    t.start()
    yield
    t.cancel()
    if fired:
        pytest.fail("watchdog: test ran over %.0fs; daemons were killed"
                    % budget, pytrace=False)


@pytest.fixture(scope="session")
def fabric():
    f = sim.Fabric("two-switch.net").start()
    try:
        f.start_opensm(SM_HOST)
        for host in ("Hca1", "Hca2", "Hca3", "Switch1", "Switch2"):
            f.wait_active(host, timeout=30)
        yield f
    finally:
        f.stop()


@pytest.fixture
def make_fabric():
    made = []

    def make(netfile="two-switch.net"):
        f = sim.Fabric(netfile)
        made.append(f)
        return f.start()

    yield make
    for f in made:
        f.stop()


@pytest.fixture
def fresh_fabric(make_fabric):
    return make_fabric("two-switch.net")


@pytest.fixture
def mount(request, tmp_path, make_fabric):
    # make_fabric is requested so that any function-scoped fabric is torn
    # down after the mounts on it.
    if not _fuse_usable():
        pytest.skip("/dev/fuse missing or not accessible")
    mounts = []

    def make(sim_host="Hca1", fabric=None, options=(), extra_args=(), env=None):
        f = fabric if fabric is not None else request.getfixturevalue("fabric")
        name = "mnt" if not mounts else "mnt%d" % (len(mounts) + 1)
        m = sim.Mount(f, sim_host, tmp_path / name, workdir=tmp_path,
                      options=options, extra_args=extra_args, env=env)
        mounts.append(m)
        return m.start()

    yield make
    problems = []
    for m in mounts:
        m.unmount()
        for p in m.problems():
            problems.append("%s (%s on %s)" % (p, m.mountpoint, m.sim_host))
        if m.problems():
            problems.append("---- daemon log %s ----\n%s" % (m.log_path, m.log_excerpt()))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
